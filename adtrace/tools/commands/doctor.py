"""``doctor``: the installed autograd against the hook points adtrace knows, and the self-test."""

from tabulate import tabulate

from ...recording.autograd import drift, hooks
from .. import selftest


def doctor(args):
    """Print the installed autograd version, every hook point and every watched function."""
    version = drift.installed_version()
    releases = list(drift.known_releases())
    print(f"autograd {version} (adtrace knows {', '.join(releases)})")
    print()
    rows = [(p.name, "patched" if hooks.is_patched(p) else "original", p.reason) for p in hooks.HOOK_POINTS]
    print(tabulate(rows, headers=["hook point", "now", "why patched there"], tablefmt="github"))
    print()
    status = drift.status()
    rows = [(key, ", ".join(matches) or "UNKNOWN", reason) for key, reason, matches in status]
    print(tabulate(rows, headers=["watched function", "matches releases", "why watched"], tablefmt="github"))
    unknown = [key for key, _, matches in status if not matches]
    exact = [v for v in releases if all(v in matches for _, _, matches in status)]
    print()
    tests = selftest.run()
    print(tabulate([(name, "ok" if ok else "FAIL", detail) for name, ok, detail in tests],
                   headers=["self-test", "result", "detail"], tablefmt="github"))
    print()
    failed = [name for name, ok, _ in tests if not ok]
    if failed:
        print(f"FAIL: the self-test failed: {', '.join(failed)}")
        return 1
    if unknown:
        print(f"UNKNOWN: {len(unknown)} watched function(s) match no known release; recordings may be wrong")
        return 1
    print(f"ok: the installed hooks match autograd {', '.join(exact) or 'a mix of known releases'}, "
          "and the self-test passes")
    return 0


