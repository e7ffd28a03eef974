"""The ``adtrace`` command line."""

import argparse
import sys

from tabulate import tabulate

from . import drift, hooks


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
    if unknown:
        print(f"UNKNOWN: {len(unknown)} watched function(s) match no known release; recordings may be wrong")
        return 1
    print(f"ok: the installed hooks match autograd {', '.join(exact) or 'a mix of known releases'}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="adtrace", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("doctor", help="check the installed autograd against the hook points adtrace knows")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    handlers = {"doctor": doctor}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
