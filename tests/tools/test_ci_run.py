"""``.ci/run``'s legs, run with stand-in Pythons (no venv is made, nothing installed): which Python
each leg uses, the oldest numpy's leg where its wheels exist, and the run's exit code."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLOORS = "numpy==1.25 scipy==1.13"  # pyproject.toml's, as .ci/run reads them
VERSIONS = ["3.10.13", "3.11.7", "3.12.1", "3.13.0"]

# A stand-in `python`: answers .ci/run's version questions, and `-m venv DIR` makes a DIR whose
# activate defines `pip` (failing for the floors where this Python has no wheels: $WHEELS) and
# `python -m pytest` (exit $FLOOR_TESTS with the floors installed, else 0), both logged.
PYTHON = r'''#!/bin/bash
V={version}
case "$1 $2" in
  "-c "*sys.executable*) echo "$0" ;;
  "-c "*platform*) echo "$V" ;;
  "-c "*) echo "${{V%.*}}" ;;
  "-m venv")
    mkdir -p "$3/bin"
    cat > "$3/bin/activate" <<END
pip() {{ echo "\$*" | grep -q numpy== || {{ echo "$V install" >> "$LOG"; return 0; }}
  case " $WHEELS " in *" ${{V%.*}} "*) echo "$V install floors" >> "$LOG"; FLOORS=1 ;; *) return 1 ;; esac; }}
python() {{ echo "$V pytest \${{FLOORS:+floors }}\$*" >> "$LOG"; [ -z "\${{FLOORS:-}}" ] || return "$FLOOR_TESTS"; }}
END
    ;;
esac
'''


def ci_run(tmp_path, main, wheels="3.10 3.11", floor_tests=0):
    """``.ci/run`` with ``main`` as ``python3`` and every version of VERSIONS under ~/.pyenv:
    its exit code, its output, and what each leg's Python did."""
    home, bin_, tmp = tmp_path / "home", tmp_path / "bin", tmp_path / "tmp"
    for folder in (bin_, tmp):
        folder.mkdir()
    for version in VERSIONS:
        python = home / ".pyenv" / "versions" / version / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text(PYTHON.format(version=version))
        python.chmod(0o755)
        if version == main:
            (bin_ / "python3").symlink_to(python)
    for browser in ("chromium", "chromedriver"):  # (found: nothing is installed)
        (bin_ / browser).write_text("#!/bin/sh\n")
        (bin_ / browser).chmod(0o755)
    log = tmp_path / "log"
    log.write_text("")
    env = {"HOME": str(home), "PATH": f"{bin_}:/usr/bin:/bin", "TMPDIR": str(tmp), "LOG": str(log),
           "WHEELS": wheels, "FLOOR_TESTS": str(floor_tests)}
    out = subprocess.run(["bash", str(REPO / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert os.listdir(tmp) == [], "its temporary folder is removed"
    return out.returncode, out.stdout + out.stderr, log.read_text().splitlines()


def test_every_python_runs_and_the_floors_run_on_the_main_python(tmp_path):
    code, output, log = ci_run(tmp_path, main="3.11.7")
    assert code == 0, output
    assert [line for line in log if "pytest" in line] == [
        "3.11.7 pytest -m pytest", *(f"{v} pytest -m pytest -m not slow" for v in ("3.10.13", "3.12.1", "3.13.0")),
        "3.11.7 pytest floors -m pytest -m not slow"]
    assert "Python 3.11.7, numpy 1.25, scipy 1.13 (the floors): ok" in output


def test_a_main_python_without_the_floors_wheels_runs_them_on_an_older_one(tmp_path):
    code, output, log = ci_run(tmp_path, main="3.12.1")
    assert code == 0, output
    assert [line for line in log if "floors" in line] == ["3.10.13 install floors",
                                                          "3.10.13 pytest floors -m pytest -m not slow"]
    assert "Python 3.10.13, numpy 1.25, scipy 1.13 (the floors): ok" in output and "FAILED" not in output


@pytest.mark.parametrize("wheels, floor_tests, said", [
    ("", 0, "no Python here installs them"),  # the floors install nowhere: raise them
    ("3.10 3.11", 1, "Python 3.11.7, numpy 1.25, scipy 1.13 (the floors): FAILED"),  # a test fails with them
])
def test_the_floors_failing_fail_the_run(tmp_path, wheels, floor_tests, said):
    code, output, log = ci_run(tmp_path, main="3.11.7", wheels=wheels, floor_tests=floor_tests)
    assert code == 1 and said in output.split("==== summary")[1], output
    assert sum("pytest floors" in line for line in log) == (1 if wheels else 0)  # one Python's tests, not each
