"""``adtrace upstream --golden``: every experiment with an autograd recording, recorded under every
supported release (each in its own venv, ``releases.py``), the recordings of neighbouring releases
diffed (``adtrace/diff/``), and what changed in autograd's internals written as events
(``reports/upstream_diff.md``): a node added or removed, values that moved (by how many ulps), a
visit order that parted, an experiment that fails under a release. Deterministic: no path, no time."""

import tempfile
from pathlib import Path

import numpy as np

from ..diff import NothingToDiff
from ..recording.saved import load
from . import releases
from .sdist import UpstreamError

RTOL = 0.0  # bit for bit: a value that moved by one ulp is a change


def record_all(versions, folder, names=(), cache=None):
    """``{version: {experiment: Recording | "error text"}}``: each release's recordings, made in its venv."""
    recorded = {}
    folder = Path(folder).resolve()
    for version in versions:
        with tempfile.TemporaryDirectory() as out:
            done = releases.run_in(version, ["experiments", str(folder), out, *names], cwd=folder.parent, cache=cache)
            imported = done.stdout.split("\n", 1)[0].strip()
            if done.returncode != 0 or imported != version:
                raise UpstreamError(f"recording the experiments under autograd {version} failed (imported "
                                    f"{imported or 'nothing'}): {done.stderr.strip()[-500:]}")
            recorded[version] = {p.stem: (load(p) if p.suffix == ".json" else p.read_text(encoding="utf-8").strip())
                                 for p in sorted(Path(out).iterdir())}
    return recorded


def changes(a_name, b_name, a, b, rtol=RTOL):
    """The events that changed from release ``a_name``'s recording ``a`` to ``b_name``'s ``b`` (either may
    be the text of the error the experiment raised, or None: no recording): a list of sentences."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        same = isinstance(a, str) and a == b or a is None and b is None
        return [] if same else [f"{_state(a_name, a)}; {_state(b_name, b)}"]
    try:
        d = a.diff(b, rtol=rtol)
    except NothingToDiff:  # (independent_output: an output that does not depend on the input has no pass)
        passes = [r.user_query() is not None for r in (a, b)]
        return [] if not any(passes) else [f"a backward pass under {a_name if passes[0] else b_name} only"]
    found = []
    for row in d.rows:
        where = f" ({row.line})" if row.line else ""
        if row.status == "only in A":
            found.append(f"node removed in {b_name}: `{row.a}` ({row.primitive}){where}")
        elif row.status == "only in B":
            found.append(f"node added in {b_name}: `{row.b}` ({row.primitive}){where}")
        elif row.status == "values differ":
            found.append(f"`{row.a}` ({row.primitive}){where}: {', '.join(row.differs)} moved")
    if d.first is not None and d.first.a is not None and d.first.b is not None:
        ulps = ulps_between(d.first.a.value, d.first.b.value)
        moved = f", by {ulps} ulp" if ulps is not None else ""
        found.append(f"first divergence: {d.first.kind}, {d.first.what} of `{d.first.a.node}` "
                     f"({d.first.a.primitive}){moved}")
    if d.order is not None:
        step, x, y = d.order
        found.append(f"visit order parts at visit {step + 1}: {a_name} visits `{x}`, {b_name} `{y}`")
    return found


def ulps_between(x, y):
    """The largest distance in units in the last place between two float values of one shape, else None."""
    try:
        x, y = np.asarray(x), np.asarray(y)
    except Exception:
        return None
    if x.shape != y.shape or x.dtype != y.dtype or x.dtype not in (np.float64, np.float32) or x.size == 0:
        return None
    ints = np.int64 if x.dtype == np.float64 else np.int32
    ix, iy = (v.astype(x.dtype).view(ints).astype(np.int64) for v in (x, y))
    ix, iy = (np.where(v < 0, np.iinfo(ints).min - v, v) for v in (ix, iy))  # lexicographic order of floats
    return int(np.max(np.abs(ix - iy)))


def _state(name, x):
    return (f"under {name} no autograd recording" if x is None else
            f"under {name} it raises {x}" if isinstance(x, str) else f"under {name} it records")


def markdown(recorded, rtol=RTOL):
    """The report: per pair of neighbouring releases, per experiment, the events that changed."""
    versions = list(recorded)
    names = sorted({name for by_name in recorded.values() for name in by_name})
    lines = ["# What changed in autograd's internals between releases", "",
             f"Every experiment with an autograd recording ({len(names)}: {', '.join(names)}) recorded under each "
             f"supported release ({', '.join(versions)}), each in its own venv, and the recordings of neighbouring "
             f"releases diffed node by node (`adtrace diff`, rtol {rtol:g}: values compared bit for bit). "
             "Regenerate with `adtrace upstream --golden`; "
             "`tests/tools/test_golden.py` fails when a difference appears that this file does not list.", ""]
    for a_name, b_name in zip(versions, versions[1:]):
        lines += [f"## autograd {a_name} -> {b_name}", ""]
        found = [(name, event) for name in names
                 for event in changes(a_name, b_name, recorded[a_name].get(name), recorded[b_name].get(name), rtol)]
        if not found:
            lines += ["No change: every experiment's backward pass is the same, structure and values.", ""]
            continue
        lines += [f"- {name}: {event}" for name, event in found] + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def listed(markdown_text):
    """The events a report lists, as ``(section, line)``: what the regression test compares."""
    section, found = None, set()
    for line in markdown_text.splitlines():
        if line.startswith("## "):
            section = line
        elif line.startswith("- "):
            found.add((section, line))
    return found
