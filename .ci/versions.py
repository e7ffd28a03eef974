"""The recorder's own tests against every supported autograd release, one venv per release.

    python .ci/versions.py [1.7.0 1.8.0 1.9.0 1.9.1]

Each venv (adtrace/tools/releases.py: cached under $ADTRACE_CACHE/venvs, default ~/.cache/adtrace/venvs,
one per Python version and release) has only its own autograd installed from the package index and sees, after
it, the packages of the interpreter running this script (numpy, pytest, hypothesis, tabulate)
through a .pth file: that interpreter may itself be a fresh venv (.ci/run), whose packages a
venv's system-site-packages would not see. adtrace is taken from this checkout. Prints one line
per release and exits non-zero if any fails.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from adtrace.tools.releases import environment  # noqa: E402  (the venvs adtrace diff --autograd uses too)
RELEASES = ("1.7.0", "1.8.0", "1.9.0", "1.9.1")
RECORDER_TESTS = ("recording/autograd/test_recorder.py", "recording/autograd/test_copy_on_write.py",
                  "recording/test_session.py", "recording/autograd/test_hooks.py", "recording/test_snapshots.py",
                  "recording/test_values.py", "recording/test_recording.py", "recording/test_patching.py",
                  "recording/test_labels.py", "recording/autograd/test_pinned.py", "tools/test_selftest.py",
                  "recording/autograd/test_drift.py")


def run(version, cache):
    start = time.perf_counter()
    python = environment(version, cache)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:adtrace",
               *(str(REPO / "tests" / t) for t in RECORDER_TESTS)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env)
    probe = "import autograd, importlib.metadata as m; print(m.version('autograd'))"
    found = subprocess.run([str(python), "-c", probe],
                           capture_output=True, text=True, env=env).stdout.strip()
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:]
    return done.returncode == 0 and found == version, found, last, time.perf_counter() - start, done.stdout


def main(versions):
    cache = Path(os.environ.get("ADTRACE_CACHE", Path.home() / ".cache" / "adtrace"))
    failed = []
    for version in versions:
        ok, found, last, seconds, output = run(version, cache)
        print(f"autograd {version} (imported {found}): {'ok' if ok else 'FAILED'}: {last} [{seconds:.0f} s]")
        if not ok:
            failed.append(version)
            print(output[-3000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or RELEASES))
