"""The README's pictures of the step-through page: PNGs of real pages, taken by headless Chromium at
1400x900, never drawn by hand.

    python .ci/screenshot.py [-o reports/screenshots]

Three pictures, the same bytes each run (a fixed step of a fixed page, no clock on the page):

- ``small_page.png``: the seed article's ``x*x`` at 3 (``reports/multiple_paths.html``) in the middle
  of its backward pass: the second contribution added into the root, ``(3, False)`` becoming ``(6, True)``;
- ``big_loop.png``: a 1,000-iteration loop (4,001 nodes, its page written here by ``adtrace view`` in a
  temporary folder) at its middle step, the collapsed overview opened down to the current iteration
  ("iteration 500 of 1,000"), the current node drawn with its neighbours;
- ``failing_check.png``: a custom rule that is wrong (``reports/wrong_rule.html``), the summary open on
  the failing check and the node it names ringed on the graph.

It lives beside ``fingerprints.py``: both make files the repository commits from the code (here from
pages ``adtrace experiments`` wrote, and one written on the spot). It drives the browser as the tests
do (``tests/browser.py``: Debian's ``chromium`` and ``chromium-driver``, Python ``selenium``).
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from browser import BrowserMissing, Page, start_chromium, stop_chromium  # noqa: E402

SIZE = (1400, 900)
LOOP = """import autograd.numpy as np


def f(x):
    for _ in range(1000):
        x = x * 1.001 + np.sin(x) * 0.001
    return x
"""
# Open the boxes holding the current node, outermost first, down to its iteration's (as clicks on them would),
# then centre the view on the node (as a drag would): the iterations before it and after it in sight.
OPEN_TO_THE_ITERATION = """const graph = adtrace.viewer.graph;
const node = adtrace.viewer.pass.steps.node[adtrace.viewer.k];
graph.groups.path(node).slice(0, -1).forEach((id) => graph.expand(id));
const box = graph.unitOfNode.get(node).box;
graph.camera.reveal(box.x, box.y, true);"""

# What each picture shows, read from the page as it is taken (printed, and checked by tests/view/test_screenshots.py)
NODE = """return `current node ${document.querySelector('svg [data-node].current').getAttribute('data-node')}: ` +
  document.querySelector('[data-testid=statement]').textContent + '; outgrads ' +
  Array.from(document.querySelectorAll('[data-testid=outgrads] .entry')).map((e) => e.textContent).join(', ');"""
ITERATION = """const current = document.querySelector('svg [data-node].current').getAttribute('data-node');
const view = document.querySelector('svg').getBoundingClientRect();
const inSight = (r) => r.top >= view.top && r.bottom <= view.bottom && r.left >= view.left && r.right <= view.right;
const groups = Array.from(document.querySelectorAll('svg [data-group]'))
  .filter((g) => inSight(g.getBoundingClientRect())).map((g) => g.getAttribute('data-group'));
return `current node ${current}; boxes in sight: ${groups.join(', ')}`;"""
FAILURE = """const box = document.querySelector('[data-testid=summary-box]');
const ringed = Array.from(document.querySelectorAll('svg [data-failing]')).map((e) => e.getAttribute('data-node'));
return `summary ${box.open ? 'open' : 'closed'}: ${document.querySelector('[data-testid=summary-title]')
  .textContent}; ringed: ${ringed.join(', ')}`;"""


def shots(folder):
    """(file name, page, URL fragment, script run before the picture, what it shows) of each picture."""
    reports = REPO / "reports"
    loop = folder / "loop.py"
    loop.write_text(LOOP)
    page = folder / "loop.html"
    subprocess.run([sys.executable, "-m", "adtrace", "view", "loop.py:f", "--at", "0.3", "-o", page.name],
                   cwd=folder, check=True, capture_output=True)
    return [("small_page.png", reports / "multiple_paths.html", "#query=q1&step=6", "", NODE),
            ("big_loop.png", page, "#query=q1&step=8503", OPEN_TO_THE_ITERATION, ITERATION),
            ("failing_check.png", reports / "wrong_rule.html", "", "", FAILURE)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(REPO / "reports" / "screenshots"), help="the folder")
    args = parser.parse_args(argv)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    try:
        driver = start_chromium()
    except BrowserMissing as missing:
        print(f"screenshot: {missing}", file=sys.stderr)
        return 2
    try:
        driver.set_window_size(*SIZE)
        # the window's inner size, as a 1400x900 screen shows the page
        inner = driver.execute_script("return [window.outerWidth - window.innerWidth, "
                                      "window.outerHeight - window.innerHeight]")
        driver.set_window_size(SIZE[0] + inner[0], SIZE[1] + inner[1])
        with tempfile.TemporaryDirectory(prefix="adtrace-screenshot-") as folder:
            for name, path, fragment, script, caption in shots(Path(folder)):
                page = Page(driver, path, fragment)
                if script:
                    driver.execute_script(script)
                errors = page.console_errors()
                if errors:
                    print(f"screenshot: {path.name} logged errors: {errors}", file=sys.stderr)
                    return 1
                (output / name).write_bytes(driver.get_screenshot_as_png())
                print(f"wrote {output / name}: {path.name}, {page.counter()}, {driver.execute_script(caption)}")
    finally:
        stop_chromium(driver)
    return 0


if __name__ == "__main__":
    sys.exit(main())
