"""The step-through page at scale: writing it, stepping near its last step, the browser's heap.

    python benchmarks/viewer.py [--iterations N] [--keys K] [--runs R] [--no-browser]

A loop of N iterations (``x = x * 1.001 + np.sin(x) * 0.001``: 4 nodes each, 17 steps of
``backward_pass`` per iteration) is traced as ``adtrace view`` traces it (``trace_call``, reference
engine and checks), its page written (``call_page``) and opened in headless Chromium (Debian's
``chromium`` and ``chromium-driver``, as tests/view/ drive it). Printed, one row each: the wall time of
tracing and of writing the page; the whole ``adtrace view`` command writing the same loop's page, as a user
runs it (a fresh process each time, its imports included: the median wall and CPU time of R runs); the time
each arrow key takes at the last step (the key's handler, then the style and layout it forces: medians and
the slowest of K keys each way); the JavaScript heap after reaching the last step (``performance.memory``).
Nothing is asserted (this machine is shared and noisy).
"""

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import autograd.numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from adtrace.compare.traced_call import trace_call  # noqa: E402
from adtrace.view import call_page  # noqa: E402
from browser import Page, start_chromium, stop_chromium  # noqa: E402

# one key pressed as a user would, then the style and layout it leaves to do, forced (milliseconds)
KEY = """const t0 = performance.now();
document.dispatchEvent(new KeyboardEvent('keydown', {key: arguments[0], bubbles: true}));
document.body.getBoundingClientRect(); document.querySelector('svg').getBBox();
return performance.now() - t0;"""


def loop(iterations):
    def f(x):
        for _ in range(iterations):
            x = x * 1.001 + np.sin(x) * 0.001
        return x
    return f


def write(iterations, folder):
    start = time.perf_counter()
    call = trace_call(loop(iterations), (0.3,))
    traced = time.perf_counter()
    page = call_page(call)
    written = time.perf_counter()
    path = Path(folder) / f"loop{iterations}.html"
    path.write_text(page)
    nodes = len(call.recording.nodes)
    print(f"loop of {iterations} iterations, {nodes:,} nodes: traced in {traced - start:.2f} s, page written in "
          f"{written - traced:.2f} s ({len(page) / 1e6:.1f} MB)")
    return path


def command(iterations, folder, runs):
    """``adtrace view`` of the same loop in ``runs`` fresh processes: the median wall and CPU time (user and system
    time of the process, ``getrusage``: the part of the wall time this machine's other load does not decide)."""
    source = Path(folder) / "big.py"
    source.write_text(f"import autograd.numpy as np\n\n\ndef f(x):\n    for _ in range({iterations}):\n"
                      "        x = x * 1.001 + np.sin(x) * 0.001\n    return x\n")
    argv = [sys.executable, "-m", "adtrace", "view", "big.py:f", "--at", "0.3", "-o", "page.html"]
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, cwd=folder, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"adtrace view of the loop (a fresh process, imports included), median of {runs}: "
          f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
          f"(wall {min(walls):.2f}-{max(walls):.2f} s, CPU {min(cpus):.2f}-{max(cpus):.2f} s)")


def browse(path, keys):
    driver = start_chromium()
    try:
        start = time.perf_counter()
        page = Page(driver, path)
        opened = time.perf_counter() - start
        driver.set_script_timeout(600)  # (a 100,000-node page takes long to reach its end here)
        steps = driver.execute_script("return adtrace.viewer.count")
        end = driver.execute_script(KEY, "End")
        print(f"opened in {opened:.2f} s; End (step {steps:,}) in {end:.0f} ms")
        for name in ("ArrowLeft", "ArrowRight"):
            times = [driver.execute_script(KEY, name) for _ in range(keys)]
            print(f"{name} at the last steps: median {statistics.median(times):.1f} ms, slowest {max(times):.1f} ms "
                  f"({page.counter()})")
        heap = driver.execute_script("return performance.memory.usedJSHeapSize") / 1e6
        print(f"JavaScript heap at the last step: {heap:.0f} MB")
    finally:
        stop_chromium(driver)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=1000, help="iterations of the loop (4 nodes each)")
    parser.add_argument("--keys", type=int, default=10, help="arrow keys timed each way")
    parser.add_argument("--runs", type=int, default=5, help="fresh runs of the adtrace view command")
    parser.add_argument("--no-browser", action="store_true", help="leave out the browser's rows")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="adtrace-viewer-bench-") as folder:
        path = write(args.iterations, folder)
        command(args.iterations, folder, args.runs)
        if not args.no_browser:
            browse(path, args.keys)


if __name__ == "__main__":
    main()
