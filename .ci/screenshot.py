"""The README's picture of the step-through page: a PNG of a real page (``reports/fan_out.html``),
taken by headless Chromium, never drawn by hand.

    python .ci/screenshot.py [--page reports/fan_out.html] [--fragment '#query=q1&step=24'] [-o reports/viewer.png]

It lives beside ``fingerprints.py``: both make a file the repository commits from the code (here
from a page ``adtrace experiments`` wrote). It drives the browser as the tests do (``tests/browser.py``:
Debian's ``chromium`` and ``chromium-driver``, Python ``selenium``). The default step is the third
contribution arriving at ``v1_sin``, the node the fan-out experiment is about.
"""

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from browser import BrowserMissing, Page, start_chromium, stop_chromium  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default=str(REPO / "reports" / "fan_out.html"))
    parser.add_argument("--fragment", default="#query=q1&step=24")
    parser.add_argument("-o", "--output", default=str(REPO / "reports" / "viewer.png"))
    parser.add_argument("--size", default="1280x1000", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    try:
        driver = start_chromium()
    except BrowserMissing as missing:
        print(f"screenshot: {missing}", file=sys.stderr)
        return 2
    try:
        width, height = (int(n) for n in args.size.split("x"))
        driver.set_window_size(width, height)
        page = Page(driver, args.page, args.fragment)
        errors = page.console_errors()
        if errors:
            print(f"screenshot: the page logged errors: {errors}", file=sys.stderr)
            return 1
        driver.save_screenshot(args.output)
        print(f"wrote {args.output} ({page.counter()} of {Path(args.page).name})")
    finally:
        stop_chromium(driver)
    return 0


if __name__ == "__main__":
    sys.exit(main())
