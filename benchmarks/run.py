"""adtrace's benchmarks: recording overhead (and what it is made of), memory, report scale, reference
engine, upstream suite.

    python benchmarks/run.py [--quick] [--no-upstream]
    python benchmarks/run.py --only report-scale [--nodes N]   (one report, in this fresh process)
    python benchmarks/run.py --only diff-scale [--nodes N]     (one diff of two recordings, likewise)
    python benchmarks/run.py --only node-memory --capture C [--nodes N]   (B per recorded node, likewise)
    python benchmarks/run.py --only upstream-suite [--quick]  (autograd's own suite alone: plain and --adtrace)

Everything is measured in one process, plain and recorded runs interleaved, medians quoted; no
timing is asserted anywhere (this machine is shared and noisy). BLAS is pinned to one thread
(``BLAS_THREADS``, set before numpy is imported, and inherited by the processes this starts): under
load, OpenBLAS's worker threads made the plain tanh MLP take 0.41-7.47 s instead of 0.21 s, which
turned ratios into noise. Writes reports/benchmarks.md.
"""

import argparse
import contextlib
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))  # (before numpy starts its thread pool)

import numpy as np  # noqa: E402
from autograd import grad  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adtrace  # noqa: E402
from adtrace.compare.traced_call import REFERENCE_LIMIT, trace_call  # noqa: E402
from adtrace.recording.eventlog import collector_paused  # noqa: E402
from adtrace.report import render  # noqa: E402
from adtrace.report.files import write_file  # noqa: E402
from adtrace.report.export import events_json  # noqa: E402
from adtrace.report.tables import table  # noqa: E402
from adtrace.recording.autograd import capture as autograd_capture  # noqa: E402
from adtrace.recording.autograd.recorder import Recorder  # noqa: E402
from adtrace.recording.values import ARRAY_SUMMARY, kept_arrays  # noqa: E402
import peers  # noqa: E402
from workloads import ENGINE_WORKLOADS, WORKLOADS, scalar_chain, tanh_mlp  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CAPTURES = ("auto", "full", "structure")
REPEAT_SMALL = 200  # the small grad(grad(f)) runs this many times per measurement


def timed(fn, collect=True):
    """Wall time of ``fn()``, started from a collected heap: otherwise when Python's full
    collections fall depends on what ran before, and which variant ran first showed in its ratio
    (up to 0.2x on the scalar chain). ``collect=False``: the collector left to run where it falls,
    as in a user's training loop (the recorded run's extra objects make it run more often)."""
    if collect:
        gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def recorded(run, capture, engine="autograd"):
    def go():
        with adtrace.record(capture=capture, engine=engine):
            run()
    return go


def traced(run):
    """A no-op sys.settrace line tracer: what a user would otherwise reach for."""
    def tracer(frame, event, arg):
        return tracer

    def go():
        sys.settrace(tracer)
        try:
            run()
        finally:
            sys.settrace(None)
    return go


# The Recorder's methods the wrappers call (end_jvp_node and abort_jvp_node only with a frame that
# begin_jvp_node returned). Replaced by no-ops under capture structure, what remains is the wrappers'
# own cost: the floor of any recorder that keeps no values behind these hook points (one that keeps
# values is also called before each accumulation, and at the end of each JVP node).
HOOKED_METHODS = ("on_vjp_node", "on_vjp_root", "on_jvp_root", "on_trace", "begin_query", "end_query", "on_toposort",
                  "on_vjp_called", "before_add_outgrads", "after_add_outgrads", "begin_jvp_node")
BREAKDOWN = ("wrappers only", "auto, no statistics", "auto, events read")
UNCOLLECTED = "no gc.collect() before each run"  # (a second row for an engine's workload)
MAIN = 1 + len(CAPTURES) + 1 + len(peers.PEERS)  # an overhead row: the workload, the capture levels, settrace,
# the peers (benchmarks/peers.py); then BREAKDOWN
NAN = float("nan")


@contextlib.contextmanager
def replaced(owner, names, value):
    """``owner``'s attributes ``names`` set to ``value`` for the block, then restored exactly (an
    inherited method by deleting the shadowing one). A name ``owner`` lacks is an error: a renamed
    method would otherwise be timed as it is."""
    missing = [name for name in names if not hasattr(owner, name)]
    if missing:
        raise AttributeError(f"{owner.__name__} has no {', '.join(missing)}")
    own = {name: owner.__dict__[name] for name in names if name in vars(owner)}
    try:
        for name in names:
            setattr(owner, name, value)
        yield
    finally:
        for name in names:
            if name in own:
                setattr(owner, name, own[name])
            else:
                delattr(owner, name)


def wrappers_only(run):
    """Capture ``structure`` with every recorder method the wrappers call a no-op."""
    def go():
        with replaced(Recorder, HOOKED_METHODS, lambda self, *args: None), adtrace.record(capture="structure"):
            run()
    return go


def without_statistics(run):
    """Capture ``auto`` with an array above the inline size summarized by its shape and dtype only:
    what its min, max and mean (three reductions) cost."""
    def shape_only(array):
        return ARRAY_SUMMARY, array.shape, adtrace.recording.values._dtype_name(array.dtype), NAN, NAN, NAN

    def go():
        with replaced(autograd_capture, ("stored_summary",), shape_only), adtrace.record(capture="auto"):
            run()
    return go


def read_after(run, engine="autograd"):
    """Capture ``auto``, then the recording's events read once the block ended: a value class's calls are told to
    its recorder then (``value_class/deferred.py``), and every engine's events are built from the log then."""
    def go():
        with adtrace.record(capture="auto", engine=engine) as recording:
            run()
        recording.events
    return go


def overhead(rounds, folder):
    """Per workload: the ratio of each capture level, of the settrace baseline and of each installed peer
    (its files written in ``folder``), then of the breakdown variants (``BREAKDOWN``; autograd's recorder
    only: another engine's row has none)."""
    rows = []
    for name, make in WORKLOADS.items():
        if "small" in name:
            make = repeated(make, REPEAT_SMALL)
        run = make()
        variants = {c: recorded(run, c) for c in CAPTURES}
        variants["settrace"] = traced(run)
        variants.update(peers.variants(make, folder))
        variants.update(zip(BREAKDOWN, (wrappers_only(run), without_statistics(run), read_after(run))))
        rows.append((name, *with_peers(ratios(run, variants, rounds), variants)))
    for engine, workloads in ENGINE_WORKLOADS.items():
        for name, make in workloads.items():
            try:
                run = make()
            except ImportError as exc:
                print(f"skipped {name}: {exc}", file=sys.stderr)
                continue
            variants = {c: recorded(run, c, engine) for c in CAPTURES}
            variants["settrace"] = traced(run)
            variants.update(peers.variants(make, folder))
            variants[BREAKDOWN[-1]] = read_after(run, engine)  # (the autograd recorder's breakdown: none here)
            for label, collect in ((name, True), (f"{name}, {UNCOLLECTED}", False)):
                *found, read = with_peers(ratios(run, variants, rounds, collect=collect), variants)
                rows.append((label, *found, *["-"] * (len(BREAKDOWN) - 1), read))
    return rows


def repeated(make, times):
    """``make`` with the workload it builds run ``times`` times per call."""
    def make_repeated(**options):
        single = make(**options)
        return lambda: [single() for _ in range(times)]
    return make_repeated


def with_peers(found, variants):
    """``ratios``' list for ``variants`` with a "not installed" cell where a peer is missing, in the order
    of the table's columns: capture levels, settrace, ``peers.PEERS``, then the rest."""
    by_name = dict(zip(variants, found))
    head = [by_name[c] for c in (*CAPTURES, "settrace")]
    return [*head, *(by_name.get(p, peers.NOT_INSTALLED) for p in peers.PEERS),
            *(by_name[k] for k in variants if k not in (*CAPTURES, "settrace", *peers.PEERS))]


def ratios(run, variants, rounds, collect=True):
    """The median ratio of each variant to the plain ``run``, in the order of ``variants`` (``collect``:
    each run started from a collected heap, ``timed``)."""
    with warnings.catch_warnings():  # a recorder stopped by an error would time a floor that does not exist
        warnings.simplefilter("error", adtrace.RecorderWarning)
        run(), [v() for v in variants.values()]  # warm up
        found = {k: [] for k in variants}
        keys = list(variants)
        for round_ in range(rounds):
            for key in keys[round_ % len(keys):] + keys[:round_ % len(keys)]:  # each first in turn
                base = timed(run, collect)  # interleaved: plain, variant, plain, variant...
                found[key].append(timed(variants[key], collect) / base)
    return [f"{statistics.median(found[k]):.2f}x" for k in variants]


def memory():
    """Peak memory of a recorded run above a plain one, per 10,000 events; what the finished
    recording keeps per event; the largest array it keeps (the inline size is 64)."""
    rows = []
    for name, make in (("scalar chain (10,000 nodes)", scalar_chain), ("tanh MLP (100x100, 200 layers)", tanh_mlp)):
        run = make()
        run()
        plain_peak = _traced(run)[0]
        for capture in CAPTURES:
            recordings = []

            def go():
                with adtrace.record(capture=capture) as rec:
                    run()
                recordings.append(rec)

            peak, kept = _traced(go)
            rec = recordings[0]
            events = len(rec.events)
            largest = max((a.size for e in rec.events for a in kept_arrays(e)), default=0)
            rows.append((name, capture, events, f"{(peak - plain_peak) / events * 1e4 / 1024:.0f} KiB",
                         f"{kept / events:.0f} B", largest))
    return rows


NODE_MEMORY_NODES = 100_000  # nodes of the scalar chain whose memory per node is measured


def node_memory():
    """What a recorded node costs: the scalar chain of ``NODE_MEMORY_NODES`` nodes recorded under each capture
    level, each in a fresh process (``one_node_memory``)."""
    rows = []
    for capture in CAPTURES:
        out = subprocess.run([sys.executable, __file__, "--only", "node-memory", "--capture", capture,
                              "--nodes", str(NODE_MEMORY_NODES)], capture_output=True, text=True, check=True)
        m = json.loads(out.stdout.splitlines()[-1])
        rows.append((m["nodes"], capture, f"{m['plain_b'] / m['nodes']:.0f} B", f"{m['traced_b'] / m['nodes']:.0f} B",
                     f"{m['rss_b'] / m['nodes']:.0f} B", f"{m['kept_b'] / m['nodes']:.0f} B"))
    return rows


def one_node_memory(nodes, capture):
    """The scalar chain of ``nodes`` nodes, plain then recorded under ``capture``, in this process: the peak
    RSS the recorded run adds to the plain run's (``peak_rss_kib``, first: tracemalloc's own tables would
    raise it); then the plain run's peak (tracemalloc), the recorded run's peak above it and what the
    finished recording keeps."""
    run = scalar_chain(nodes)
    recordings = []

    def go():
        with adtrace.record(capture=capture) as rec:
            run()
        recordings.append(rec)

    run()
    plain_rss = peak_rss_kib()
    go()
    rss = peak_rss_kib()
    recordings.clear()
    plain_peak = _traced(run)[0]
    peak, kept = _traced(go)
    return {"nodes": len(recordings[0].nodes), "plain_b": plain_peak, "traced_b": peak - plain_peak,
            "rss_b": (rss - plain_rss) * 1024, "kept_b": kept}


def peak_rss_kib():
    """This process's peak RSS in KiB: Linux's ``VmHWM``, which starts again at ``exec``. ``ru_maxrss`` does not: a
    process this benchmark starts (fork, then exec) inherits its parent's peak, and one smaller than that read 0 B
    above plain. ``ru_maxrss`` where there is no ``/proc``."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _traced(fn):
    """(peak, still allocated at the end) bytes while ``fn`` runs, by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    fn()
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, current



REPORT_SCALE = (10_000, 200_000, 1_000_000)  # nodes of the scalar chain reported


def report_scale():
    """``adtrace report`` of the scalar chain (``trace_call`` and ``render``, as the command does)
    at each size of ``REPORT_SCALE``, each in a fresh process: its peak RSS is the report's own."""
    rows = []
    for nodes in REPORT_SCALE:
        out = subprocess.run([sys.executable, __file__, "--only", "report-scale", "--nodes", str(nodes)],
                             capture_output=True, text=True, check=True)
        m = json.loads(out.stdout.splitlines()[-1])
        rows.append((m["nodes"], m["events"], f"{m['seconds']:.1f} s", f"{m['cpu']:.1f} s", f"{m['peak_mb']:.0f} MB",
                     f"{m['report_kb']:.0f} KB", f"{m['json_seconds']:.1f} s", f"{m['json_mb']:.1f} MB"))
    return rows


def one_report(nodes):
    """One report of a scalar chain of ``nodes`` nodes, measured in this process: the figures as JSON."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    with collector_paused():  # (as ``adtrace report`` runs its steps)
        call = trace_call(_chain(nodes // 2), (0.3,))
        text = render(call)
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_SELF)
        figures = {"nodes": len(call.recording.nodes), "events": len(call.recording.events), "seconds": seconds,
                   "cpu": usage.ru_utime + usage.ru_stime - cpu, "peak_mb": peak_rss_kib() / 1024,
                   "report_kb": len(text.encode()) / 1000}
        start = time.perf_counter()
        exported = events_json(call.recording)
        figures.update(json_seconds=time.perf_counter() - start, json_mb=len(exported.encode()) / 1e6)
    return figures


DIFF_SCALE = (20_000, 100_000)  # scalar nodes of each of the two recordings diffed


def diff_scale():
    """``Recording.diff`` of two recordings of the scalar chain at each size of ``DIFF_SCALE``, each in a
    fresh process."""
    rows = []
    for nodes in DIFF_SCALE:
        out = subprocess.run([sys.executable, __file__, "--only", "diff-scale", "--nodes", str(nodes)],
                             capture_output=True, text=True, check=True)
        m = json.loads(out.stdout.splitlines()[-1])
        rows.append((m["nodes"], m["verdict"], f"{m['read_seconds']:.1f} s", f"{m['seconds']:.1f} s",
                     f"{m['cpu']:.1f} s", f"{m['peak_mb']:.0f} MB", f"{m['peak_mb'] * 1e6 / m['nodes']:.0f} B"))
    return rows


def one_diff(nodes):
    """Two recordings of a scalar chain of ``nodes`` nodes (``adtrace diff``'s own ``record_call``, capture
    ``full``) read and diffed, measured in this process: the figures as JSON. Times first, then the peak
    memory (tracemalloc's, which slows what it watches several times over) of the diff run again."""
    from adtrace.diff.calls import record_call

    a, b = (record_call(_chain(nodes // 2), (0.3,)) for _ in range(2))
    gc.collect()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    len(a.events), len(b.events)  # (events are decoded from the log when first read)
    read = time.perf_counter() - start
    result = a.diff(b)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu
    del result
    gc.collect()
    tracemalloc.start()
    result = a.diff(b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"nodes": len(a.nodes), "verdict": result.verdict, "read_seconds": read, "seconds": seconds,
            "cpu": cpu, "peak_mb": peak / 1e6}


def reference_engine(rounds):
    import adtrace.reference as ref

    rows = []
    for name, f, x in (("scalar chain (2,000 nodes)", _chain(1000), 0.3),
                       ("tanh MLP (100x100, 20 layers)", *_mlp(20))):
        autograd_run, reference_run = (lambda: grad(f)(x)), (lambda: ref.grad(f)(x))
        autograd_run(), reference_run()
        ratios = [timed(reference_run) / timed(autograd_run) for _ in range(rounds)]
        rows.append((name, f"{statistics.median(ratios):.2f}x"))
    return rows


def _chain(n):
    import autograd.numpy as anp

    def f(x):
        for _ in range(n):
            x = anp.sin(x) * 1.0001
        return x
    return f


def _mlp(layers):
    import autograd.numpy as anp

    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((100, 100)) / 10.0 for _ in range(layers)]
    inputs = rng.standard_normal((100, 100))

    def f(scale):
        h = inputs * scale
        for w in ws:
            h = anp.tanh(anp.dot(h, w))
        return anp.sum(h * h)
    return f, 1.0


def upstream_suite(pairs):
    """Its wall and CPU time plain and with --adtrace, ``pairs`` times interleaved: medians, and the
    median of the pairs' ratios with their range (one slow run on a shared machine moves a single
    wall-time ratio by 0.2x; CPU time, the pytest process's user + system time, moves less); the
    test ids whose outcome differed in any pair."""
    from adtrace.tools import upstream

    source = upstream.fetch_sdist()
    runs, differing = [], set()  # (plain, recorded) per pair
    for _ in range(pairs):
        p = upstream.run_suite(source)
        r = upstream.run_suite(source, adtrace=True)
        runs.append((p, r))
        differing |= {test_id for test_id, _, _ in upstream.differences(p, r)}

    def columns(time_of):
        ratios = [time_of(r) / time_of(p) for p, r in runs]
        return (f"{statistics.median(time_of(p) for p, _ in runs):.1f} s",
                f"{statistics.median(time_of(r) for _, r in runs):.1f} s",
                f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")

    return [("CPU", *columns(lambda run: run.cpu_seconds), len(differing)),
            ("wall", *columns(lambda run: run.seconds), len(differing))]


def machine():
    import numpy

    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"autograd {adtrace.recording.autograd.drift.installed_version()}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--no-upstream", action="store_true", help="skip autograd's own test suite")
    parser.add_argument("--only", choices=("report-scale", "diff-scale", "node-memory", "upstream-suite"),
                        help="one measurement, printed as JSON (not written); upstream-suite: autograd's own "
                             "test suite alone (with --quick, one pair)")
    parser.add_argument("--nodes", type=int, help="with --only: nodes")
    parser.add_argument("--capture", choices=CAPTURES, default="auto", help="with --only node-memory: capture level")
    args = parser.parse_args(argv)
    if args.only == "report-scale":
        print(json.dumps(one_report(args.nodes or REPORT_SCALE[-1])))
        return
    if args.only == "diff-scale":
        print(json.dumps(one_diff(args.nodes or DIFF_SCALE[-1])))
        return
    if args.only == "node-memory":
        print(json.dumps(one_node_memory(args.nodes or NODE_MEMORY_NODES, args.capture)))
        return
    rounds = 3 if args.quick else 7
    pairs = 1 if args.quick else 5  # (3 pairs: one slow run moved the median by 0.1x)
    if args.only == "upstream-suite":
        print(json.dumps(upstream_suite(pairs)))
        return
    with tempfile.TemporaryDirectory() as folder:
        ratios = overhead(rounds, folder)
    sections = [
        "# adtrace benchmarks", "",
        f"Machine: {machine()}. Generated by `python benchmarks/run.py`; every figure is a median of "
        f"{rounds} rounds in one process, plain and recorded runs interleaved (the variants in a new order "
        "each round, each run started from a collected heap). Ratios are recorded / plain.", "",
        "## Recording overhead", "",
        "Capture level per column (`auto` is the default); `settrace` is a no-op `sys.settrace` line "
        f"tracer on the same workload. The small `grad(grad(f))` runs {REPEAT_SMALL} times per measurement. The "
        "micrograd row is one training step of micrograd's own MLP, recorded with `engine=\"micrograd\"` (skipped "
        "when micrograd is not installed), twice: each run started from a collected heap as every other row, "
        f"then with `{UNCOLLECTED}` (the collector runs where it falls, as in a training loop: a recording's "
        "values are objects it walks). BLAS is pinned to one thread (`OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`, "
        "`MKL_NUM_THREADS` set to 1 before numpy is imported). The peers (`pip install -e '.[bench]'`): "
        "viztracer records every function call of the run (its trace not saved); PySnooper and snoop decorate the "
        "workload's own function (the loss, `f`, the training step) as a user would, writing every line and its "
        "variables to a file.", "",
        table(["workload", *CAPTURES, "settrace", *peers.PEERS], [row[:MAIN] for row in ratios]), "",
        "What the overhead is made of, in the same rounds: `wrappers only` is capture `structure` with "
        "every recorder method the wrappers call replaced by a no-op (the cost of the hook points "
        "themselves: the floor of any recorder that keeps no values); `auto, no statistics` is capture "
        "`auto` with each array above the inline size summarized by shape and dtype only (its difference "
        "to `auto` is what the summaries' min, max and mean cost: three reductions per summary); `auto, events read` "
        "is capture `auto` and then, once the block ended, `recording.events` read (the events built from the log; "
        "a value class recompiled by adtrace has its calls told to its recorder then: `value_class/deferred.py`).", "",
        table(["workload", *BREAKDOWN], [(row[0], *row[MAIN:]) for row in ratios]), "",
        "## Memory", "",
        "Peak memory (tracemalloc) of a recorded run above a plain one, per 10,000 events; what the "
        "finished recording keeps per event; the largest array any event holds (the inline size is 64).", "",
        table(["workload", "capture", "events", "peak per 10,000 events", "kept per event", "largest array kept"],
              memory()), "",
        f"What a recorded node costs: the scalar chain of {NODE_MEMORY_NODES:,} nodes, plain then recorded, each "
        "capture level in a fresh process (`python benchmarks/run.py --only node-memory --capture C --nodes N`): the "
        "plain run's peak per node (tracemalloc), the recorded run's peak above it per node (tracemalloc, and the "
        "peak RSS it adds, measured first, untraced), and what the finished recording keeps per node.", "",
        table(["nodes", "capture", "plain peak per node", "recorded peak above plain", "RSS above plain",
               "kept per node"], node_memory()), "",
        "## Report scale", "",
        "`adtrace report` of the scalar chain (`trace_call` and `render` with the default options, capture "
        "`auto`), each size in a fresh process (`python benchmarks/run.py --only report-scale --nodes N`): wall "
        "and CPU time, peak RSS of the process, the report's size; then the JSON export of every event. Above "
        f"{REFERENCE_LIMIT:,} nodes (`--reference-limit`) the report runs no reference engine and says so.", "",
        table(["nodes", "events", "report time", "CPU time", "peak RSS", "report size", "JSON time", "JSON size"],
              report_scale()), "",
        "## Diff scale", "",
        "`Recording.diff` of two recordings of the scalar chain (`adtrace diff`'s recording: capture `full`, "
        "the user's lines), each size in a fresh process (`python benchmarks/run.py --only diff-scale --nodes N`): "
        "the time to read both recordings' events, the total with the diff (wall and CPU), and the diff's peak "
        "memory (tracemalloc, the diff run again), in all and per node of one side.", "",
        table(["nodes (each side)", "verdict", "read", "read and diff", "CPU time", "peak memory", "peak per node"],
              diff_scale()), "",
        "## Reference engine against autograd", "",
        "Time of `adtrace.reference.grad` over `autograd.grad` on the same function.", "",
        table(["graph", "reference / autograd"], reference_engine(rounds)), "",
    ]
    if not args.no_upstream:
        sections += ["## autograd's own test suite", "",
                     "CPU time (the pytest process's user + system time, which other processes on a shared "
                     "machine move less) and wall time of its `tests/` (sdist of the installed version), plain and "
                     f"with `--adtrace` (capture `auto`), {pairs} interleaved pairs: median times, the median of the "
                     "pairs' ratios (their range in brackets), and the number of test ids whose outcome differed.", "",
                     table(["time", "plain", "--adtrace", "ratio", "outcomes differing"], upstream_suite(pairs)), ""]
    text = "\n".join(sections)
    write_file(REPO / "reports" / "benchmarks.md", text)
    print(text)


if __name__ == "__main__":
    main()
