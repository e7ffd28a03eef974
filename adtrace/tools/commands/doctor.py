"""``doctor``: the installed autograd against the hook points adtrace knows, and the self-test."""

from tabulate import tabulate

from ...recording import compiled
from ...recording.autograd import drift, hooks
from .. import selftest
from ..output import show


def doctor(args):
    """Print the installed autograd version, every hook point, every watched function, and which compiled
    twins are in use."""
    version = drift.installed_version()
    releases = list(drift.known_releases())
    show(f"autograd {version} (adtrace knows {', '.join(releases)})")
    show("")
    rows = [(p.name, "patched" if hooks.is_patched(p) else "original", p.reason) for p in hooks.HOOK_POINTS]
    show(tabulate(rows, headers=["hook point", "now", "why patched there"], tablefmt="github"))
    show("")
    status = drift.status()
    rows = [(key, ", ".join(matches) or "UNKNOWN", reason) for key, reason, matches in status]
    show(tabulate(rows, headers=["watched function", "matches releases", "why watched"], tablefmt="github"))
    unknown = [key for key, _, matches in status if not matches]
    exact = [v for v in releases if all(v in matches for _, _, matches in status)]
    show("")
    rows = [(name, reference, "yes" if used else "no", why) for name, reference, used, why in compiled.status()]
    show(tabulate(rows, headers=["compiled twin", "of", "in use", "why"], tablefmt="github"))
    show("")
    tests = selftest.run()
    show(tabulate([(name, "ok" if ok else "FAIL", detail) for name, ok, detail in tests],
                   headers=["self-test", "result", "detail"], tablefmt="github"))
    show("")
    failed = [name for name, ok, _ in tests if not ok]
    if failed:
        show(f"FAIL: the self-test failed: {', '.join(failed)}")
        return 1
    if unknown:
        show(f"UNKNOWN: {len(unknown)} watched function(s) match no known release; recordings may be wrong")
        return 1
    show(f"ok: the installed hooks match autograd {', '.join(exact) or 'a mix of known releases'}, "
          "and the self-test passes")
    return 0


