""".ci/screenshot.py, the README's pictures of the page: run into a temporary folder, each picture is a
1400x900 PNG of the step it claims, its graph drawn (not a blank panel), small enough to commit.

Skipped without a browser, except under ADTRACE_REQUIRE_BROWSER=1 (CI), where that fails."""

import re
import struct
import subprocess
import sys
from pathlib import Path

from PIL import Image  # (matplotlib's dependency, in the [test] extra)

from browser import chromium_for_tests, stop_chromium

REPO = Path(__file__).resolve().parents[2]
SHOTS = ("small_page.png", "big_loop.png", "failing_check.png")
GRAPH = (10, 180, 680, 890)  # the graph panel at 1400x900, under its toolbar: left, top, right, bottom


def colours(image, box=None):
    return len((image.crop(box) if box else image).convert("RGB").getcolors(1 << 20))


def reddish(image):
    """Pixels of the failure red (the FAIL lines, the rings), not of the highlights' yellows."""
    return sum(count for count, (r, g, b) in image.convert("RGB").getcolors(1 << 20) if r > 150 and g < 60 and b < 60)


def test_the_script_takes_the_three_pictures_the_readme_shows(tmp_path):
    stop_chromium(chromium_for_tests())  # (skips without a browser, as the other browser tests do)
    run = subprocess.run([sys.executable, str(REPO / ".ci" / "screenshot.py"), "-o", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    said = dict(re.findall(r"wrote .*/(\w+\.png): (.*)", run.stdout))
    assert list(said) == list(SHOTS)
    assert said["small_page.png"] == ("multiple_paths.html, step 6 of 11, current node v1_multiply: outgrads[parent] "
                                      "= add_outgrads(outgrads.get(parent), ingrad); outgrads v0_root: (6,True)")
    loop = re.fullmatch(r"loop.html, step 8503 of 17006, current node (\w+); boxes in sight: (.*)",
                        said["big_loop.png"])
    assert loop and re.search(r"iteration 50\d of 1,000", loop.group(2))  # the grouped overview
    assert said["failing_check.png"].startswith("wrong_rule.html, step 1 of 19, summary open: 3 checks failed")
    assert said["failing_check.png"].endswith("ringed: v0_root, v1_double")
    images = {}
    for name in SHOTS:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1400, 900)
        assert len(data) < 300_000  # committed: kept small
        images[name] = Image.open(tmp_path / name)
        assert colours(images[name]) > 500  # text, boxes and colours: not a blank page
        assert colours(images[name], GRAPH) > 100  # the graph drawn: labels, edges, filled boxes
    assert reddish(images["failing_check.png"]) > 2000 and reddish(images["small_page.png"]) < 100


def test_the_committed_pictures_are_the_three_the_readme_shows():
    readme = (REPO / "README.md").read_text()
    for name in SHOTS:
        path = REPO / "reports" / "screenshots" / name
        assert f"](reports/screenshots/{name})" in readme
        assert path.stat().st_size < 300_000 and Image.open(path).size == (1400, 900)
