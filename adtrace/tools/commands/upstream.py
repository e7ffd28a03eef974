"""``upstream``: autograd's own test suite without and with ``--adtrace``, or its own examples."""

from ..output import show
from . import UserError
from .files import outputs, write


def upstream_check(args):
    """autograd's own test suite without and with --adtrace: the same outcome, test id by test id;
    with --examples, autograd's own examples reported and checked instead."""
    from ..upstream import UpstreamError, compare

    if args.examples:
        return upstream_examples(args)
    if args.golden:
        return upstream_golden(args)

    try:
        plain, recorded, differences = compare(args.version)
    except UpstreamError as exc:
        raise UserError(str(exc)) from exc
    for name, run in (("plain", plain), ("--adtrace", recorded)):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(run.counts().items()))
        show(f"{name:>9}: {counts} in {run.seconds:.1f} s ({run.cpu_seconds:.1f} s CPU)")
    show(f"wall time ratio --adtrace / plain: {recorded.seconds / plain.seconds:.2f}, "
         f"CPU time ratio {recorded.cpu_seconds / plain.cpu_seconds:.2f}")
    for test_id, before, after in differences:
        show(f"DIFFERS: {test_id}: {before} without adtrace, {after} with it")
    show("same outcome for every test id" if not differences else f"{len(differences)} test ids differ")
    return 1 if differences else 0


def upstream_examples(args):
    """Every example of autograd's sdist through ``adtrace report`` and ``adtrace check``, timed;
    writes the table (reports/examples.md)."""
    from ..autograd_examples import EXAMPLES
    from ..autograd_examples.proof import markdown, run
    from ..upstream import UpstreamError

    unknown = [name for name in args.only or () if name not in EXAMPLES]
    if unknown:
        raise UserError(f"no example named {', '.join(unknown)} (there are: {', '.join(EXAMPLES)})")
    args.output = args.output or "reports/examples.md"
    path = outputs({"-o": args.output})["-o"]  # checked before the examples run (minutes)
    runs = []
    try:
        for name in args.only or EXAMPLES:
            runs.append(run(EXAMPLES[name], rounds=args.rounds))
            r = runs[-1]
            show(f"{name}: report exit {r.report_exit}, check exit {r.check_exit}, {r.report_bytes / 1000:.0f} KB"
                  f"{'' if r.within_size else ' (over the size limit)'}, overhead {r.overhead:.2f}x")
    except UpstreamError as exc:
        raise UserError(str(exc)) from exc
    write(path, markdown(runs, rounds=args.rounds))
    passed = sum(r.passed for r in runs)
    show(f"{passed} of {len(runs)} examples pass every check within the size limit -> {args.output}")
    return 0 if passed == len(runs) else 1




def upstream_golden(args):
    """Every experiment recorded under every supported release, neighbouring releases diffed: the
    report of what changed in autograd's internals (reports/upstream_diff.md)."""
    import time

    from ..golden import markdown, record_all
    from ..releases import supported
    from ..upstream import UpstreamError

    given = args.output or "reports/upstream_diff.md"
    path = outputs({"-o": given})["-o"]
    start = time.perf_counter()
    try:
        recorded = record_all(supported(), args.dir, args.only or ())
    except UpstreamError as exc:
        raise UserError(str(exc)) from exc
    write(path, markdown(recorded), given)
    recordings = sum(map(len, recorded.values()))
    show(f"{len(recorded)} releases, {recordings} recordings, in {time.perf_counter() - start:.0f} s")
    return 0
