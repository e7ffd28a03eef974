"""One venv per autograd release (``.ci/versions.py``, ``adtrace diff --autograd``, ``adtrace upstream
--golden``), cached under ``$ADTRACE_CACHE/venvs`` (default ``~/.cache/adtrace/venvs``), one per Python
version and release. Each has only its own autograd, installed from the package index, and sees after
it the packages of the interpreter running adtrace (numpy, pytest, ...) through a .pth file; adtrace
itself comes from this checkout (``PYTHONPATH``). A release that cannot be installed is an
``UpstreamError`` that says so."""

import os
import subprocess
import sys
import venv
from pathlib import Path

from .sdist import UpstreamError, cache_dir

CHECKOUT = Path(__file__).resolve().parents[2]  # the folder holding the package adtrace/


def supported():
    """The releases pyproject's autograd range covers (those whose hooked functions adtrace knows)."""
    from ..recording.autograd import drift

    return list(drift.known_releases())


def environment(version, cache=None):
    """The python of the venv for one release, rebuilt if an earlier build did not finish or holds another one.

    The venv has no pip of its own (this interpreter's pip installs into it: 1 MB instead of 26)."""
    cache = Path(cache) if cache is not None else cache_dir()
    folder = cache / "venvs" / f"py{sys.version_info.major}.{sys.version_info.minor}-autograd-{version}"
    python = folder / "bin" / "python"
    own = site_packages(python)
    if own is None or not list(own.glob(f"autograd-{version}.dist-info")):
        venv.EnvBuilder(clear=True).create(folder)
        own = site_packages(python)
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(own),
                               f"autograd=={version}"], capture_output=True, text=True)
        if done.returncode != 0 or not list(own.glob(f"autograd-{version}.dist-info")):
            last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise UpstreamError(f"cannot install autograd {version} here (offline, or no such release): {last[0]}")
    theirs = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (own / "running-interpreter.pth").write_text("".join(f"{p}\n" for p in theirs))
    return python


def site_packages(python):
    if not python.exists():
        return None
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True)
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def run_in(version, arguments, cwd=None, cache=None):
    """``python -m adtrace.tools.in_release ARGUMENTS`` under autograd ``version``: the finished process."""
    python = environment(version, cache)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHECKOUT), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([str(python), "-m", "adtrace.tools.in_release", *arguments],
                          capture_output=True, text=True, cwd=cwd, env=env)
