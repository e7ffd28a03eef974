"""``experiments``: run the scripts of ``experiments/``, write or check their reports."""

from ..output import read_file, show
from . import FAILED, PASSED, UserError
from .files import write


def experiments(args):
    from ..experiment import discover, load, outputs, report_path

    scripts = _chosen(discover(args.dir), args)
    failed, stale = [], []
    for name, path in scripts.items():
        target = report_path(args.reports, name)
        try:
            outcome = load(path).run()
        except ModuleNotFoundError as exc:  # an optional dependency (micrograd_engine needs adtrace[micrograd])
            show(f"{name}: FAILED: needs the module {exc.name!r}, which is not installed")
            failed.append(name)
            continue
        except (Exception, SystemExit) as exc:
            show(f"{name}: raised {type(exc).__name__}: {exc}")
            failed.append(name)
            continue
        ok = not outcome.failed and outcome.checks  # an experiment that checks nothing fails
        for path, text in outputs(args.reports, name, outcome).items():  # the report and its page
            if args.check:
                if not path.exists() or read_file(path) != text:
                    stale.append(str(path))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                write(path, text)
        status = "all checks passed" if ok else f"FAILED: {'; '.join(outcome.failed) or 'checked nothing'}"
        show(f"{name}: {status} -> {target}")
        if not ok:
            failed.append(name)
    for path in stale:
        show(f"report differs from the committed one: {path} (run `adtrace experiments` and commit it)")
    passed = len(scripts) - len(failed)
    show(f"{passed} of {len(scripts)} experiments passed" + (f"; {len(stale)} report(s) stale" if stale else ""))
    return FAILED if failed or stale else PASSED


def _chosen(scripts, args):
    if args.only:
        missing = [name for name in args.only if name not in scripts]
        if missing:
            raise UserError(f"no experiment named {', '.join(missing)} in {args.dir}/ "
                            f"(there are: {', '.join(scripts) or 'none'})")
        scripts = {name: scripts[name] for name in args.only}
    if not scripts:
        raise UserError(f"no experiment scripts in {args.dir}/")
    return scripts
