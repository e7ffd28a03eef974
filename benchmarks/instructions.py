"""Instructions executed per autograd node, recorded against plain, counted by valgrind's callgrind.

    python benchmarks/instructions.py [--workload chain|forward|jvp|gradgrad|systematic|mlp|lstm|micrograd]
                                      [--captures structure,auto]
                                      [--noop [on_vjp_node,on_toposort,...]]

``forward`` is ``make_jvp`` through a chain of small-array operations: the JVP nodes that
autograd's ``check_grads`` makes as many of as VJP nodes; ``jvp`` is the same on a scalar (each tangent a float:
forward mode's recording beside little of autograd's own work). ``systematic`` runs every 20th test of
autograd's own ``tests/test_systematic.py`` (7 tests, from the sdist ``adtrace.tools.upstream`` fetches),
each in its own ``record()`` as ``--adtrace`` runs them: a realistic mix of forward and reverse
mode, higher order, boxes, containers and sparse values, counted per run rather than per node.
``mlp``, ``lstm`` and ``micrograd`` are ``run.py``'s tanh MLP, LSTM-like recurrence and micrograd MLP
step, one run each, counted per run (BLAS's work is counted too: their ratios are not wall-time ratios).

Wall-time ratios on a shared machine move by +-0.05x from run to run; instruction counts do not,
once the sources of variation are pinned: OpenBLAS worker threads (they spin, and callgrind counts
every thread: 30M instructions of difference between two runs of the same code), the hash seed and
address-space randomisation (``setarch -R``); then three runs of the same code agree to about 2,000
instructions in 2.2 billion, and a hot-path change of 1% shows. Needs ``valgrind``; prints, writes
nothing. ``--noop`` replaces recorder methods by no-ops (given alone, every one the wrappers call,
``run.py``'s ``HOOKED_METHODS``): what the wrappers cost without the recorder's work.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {"chain": 3, "forward": 3, "jvp": 3, "gradgrad": 300, "systematic": 1, "mlp": 1, "lstm": 1, "micrograd": 1}
# autograd nodes per run (28: both traces of grad(grad(f))); None: counted per run
NODES = {"chain": 2000, "forward": 2000, "jvp": 2000, "gradgrad": 28, "systematic": None, "mlp": None, "lstm": None,
         "micrograd": None}

CHILD = """
import sys
import warnings
sys.path.insert(0, {here!r})
from workloads import forward_chain, lstm_like, micrograd_mlp, scalar_chain, second_derivative, tanh_mlp
import adtrace
from adtrace.recording.autograd.recorder import Recorder

workload, mode, noop = sys.argv[1], sys.argv[2], sys.argv[3]
if workload == "systematic":
    sys.path.insert(0, {tests!r})
    warnings.simplefilter("ignore")
    import numpy.random as npr
    import test_systematic
    tests = [getattr(test_systematic, n) for n in sorted(dir(test_systematic)) if n.startswith("test_")][::20]

    def run(capture, runs={runs}):
        for _ in range(runs):
            npr.seed(0)
            for test in tests:
                if capture is None:
                    test()
                else:
                    with adtrace.record(capture=capture):  # one recording per test, as --adtrace
                        test()
else:
    makers = {{"chain": scalar_chain, "forward": forward_chain, "jvp": lambda n: forward_chain(n, size=None)}}
    others = {{"gradgrad": second_derivative, "mlp": tanh_mlp, "lstm": lstm_like, "micrograd": micrograd_mlp}}
    once = makers[workload]({nodes}) if workload in makers else others[workload]()
    engine = "micrograd" if workload == "micrograd" else "autograd"

    def run(capture, runs={runs}):
        if capture is None:
            for _ in range(runs):
                once()
        else:
            with adtrace.record(capture=capture, engine=engine):
                for _ in range(runs):
                    once()
# a recorder that stops (after an error, e.g. a no-op method leaving a table the others read
# empty) records nothing more: its count would be a floor that does not exist
warnings.simplefilter("error", adtrace.RecorderWarning)
run(None, 1)  # imports and first-call caches, outside the comparison
run("structure", 1)
for name in filter(None, noop.split(",")):
    setattr(Recorder, name, lambda self, *args: None)
if mode == "plain":
    run(None)
elif mode != "none":
    run(mode)
"""


def count(workload, mode, noop=""):
    """Instructions of one child process (``mode`` "none" runs only the set-up)."""
    tests = ""
    if workload == "systematic":
        from adtrace.tools.upstream import fetch_sdist

        tests = str(fetch_sdist() / "tests")
    code = CHILD.format(here=str(HERE), nodes=NODES[workload], runs=RUNS[workload], tests=tests)
    with tempfile.TemporaryDirectory() as folder:  # callgrind's profile, unread (the count is in its log)
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.out", sys.executable,
                   "-c", code, workload, mode, noop]
        if shutil.which("setarch"):
            command = ["setarch", os.uname().machine, "-R"] + command
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
        done = subprocess.run(command, capture_output=True, text=True, env=env)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"callgrind run failed ({workload}, {mode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv=None):
    from run import HOOKED_METHODS  # this folder is on the path of a script run from it

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=sorted(RUNS), default="chain")
    parser.add_argument("--captures", default="structure,auto", help="comma-separated capture levels")
    parser.add_argument("--noop", nargs="?", default="", const=",".join(HOOKED_METHODS), metavar="METHODS",
                        help="recorder methods to replace by no-ops (comma-separated; alone: every one the wrappers "
                             "call)")
    args = parser.parse_args(argv)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed: this benchmark counts instructions with callgrind")
    base = count(args.workload, "none")
    plain = count(args.workload, "plain") - base
    if NODES[args.workload] is None:
        scale, suffix, unit = 1e6, "M", "run"
    else:
        scale, suffix, unit = RUNS[args.workload] * NODES[args.workload] * 1000, "k", "node"
    print(f"{args.workload}: plain {plain / scale:.1f}{suffix} instructions per {unit}")
    for capture in filter(None, args.captures.split(",")):
        extra = count(args.workload, capture, args.noop) - base - plain
        label = capture + (f" (no-op: {args.noop})" if args.noop else "")
        print(f"{label}: {extra / scale:.1f}{suffix} more per {unit}, {1 + extra / plain:.3f}x plain")


if __name__ == "__main__":
    main()
