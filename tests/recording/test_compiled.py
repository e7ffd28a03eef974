"""The compiled twins' switch: each used when built, none under ADTRACE_PURE_PYTHON=1, an unknown name refused.
What each twin does is held to its pure-Python module by that module's own tests, run both ways."""

import importlib
import os

import pytest

from adtrace.recording import compiled

# set by .ci/run: a twin that was not built (the compiler or Python's headers missing) is a failure there
REQUIRED = os.environ.get("ADTRACE_REQUIRE_COMPILED") == "1"


@pytest.mark.parametrize("name", sorted(compiled.TWINS))
def test_each_twin_is_in_use_when_built(name, monkeypatch):
    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    try:
        module = importlib.import_module(name)
    except ImportError:
        if REQUIRED:
            pytest.fail(f"ADTRACE_REQUIRE_COMPILED=1 but {name} was not built")
        pytest.skip(f"{name} was not built (no C compiler): the pure-Python code runs")
    assert compiled.twin(name) is module
    assert (name, compiled.TWINS[name], True, "compiled") in compiled.status()


@pytest.mark.parametrize("name", sorted(compiled.TWINS))
def test_pure_python_asked_for_leaves_every_twin_unused(name, monkeypatch):
    monkeypatch.setenv(compiled.PURE_PYTHON, "1")
    assert compiled.pure_python()
    assert compiled.twin(name) is None
    row = next(row for row in compiled.status() if row[0] == name)
    assert row[2] is False and "ADTRACE_PURE_PYTHON=1" in row[3]


def test_each_twin_mirrors_a_module_and_has_its_source():
    root = os.path.dirname(os.path.dirname(compiled.__file__))  # adtrace/
    for name, reference in compiled.TWINS.items():
        importlib.import_module(reference)
        assert os.path.exists(os.path.join(os.path.dirname(root), *name.split(".")) + ".c"), name


def test_each_header_a_twin_includes_is_package_data():
    """A header a twin includes (``#include "_state.h"``) is in pyproject.toml's package data: without it an sdist
    built with a setuptools that leaves ``Extension.depends`` out (65, which ``>=64`` allows) has no header, and
    every twin built from it fails to compile (optional: silently pure Python)."""
    import fnmatch
    import re
    from pathlib import Path

    repo = Path(compiled.__file__).resolve().parents[2]
    found = re.search(r'^\[tool\.setuptools\.package-data\]\s*adtrace = \[([^\]]*)\]',
                      (repo / "pyproject.toml").read_text(), re.M)
    patterns = re.findall(r'"([^"]+)"', found.group(1))
    included = set()
    for name in compiled.TWINS:
        source = repo.joinpath(*name.split(".")).with_suffix(".c")
        for header in re.findall(r'^#include "([^"]+)"', source.read_text(), re.M):
            path = (source.parent / header).resolve().relative_to(repo / "adtrace").as_posix()
            assert (repo / "adtrace" / path).exists() and any(fnmatch.fnmatch(path, p) for p in patterns), path
            included.add(path)
    assert {"recording/value_class/_state.h", "recording/_labels.h"} <= included


def test_a_twin_not_built_reads_as_not_built(monkeypatch):
    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    monkeypatch.setitem(compiled.TWINS, "adtrace.recording._no_such_twin", "adtrace.recording.values")
    assert compiled.twin("adtrace.recording._no_such_twin") is None
    row = next(row for row in compiled.status() if row[0] == "adtrace.recording._no_such_twin")
    assert row[2] is False and row[3].startswith("not built")


def test_an_unknown_twin_is_refused():
    with pytest.raises(KeyError, match="no compiled twin"):
        compiled.twin("adtrace.recording.values")


def test_without_a_compiler_the_build_goes_on_without_the_twins(tmp_path):
    """What ``pip install`` meets on a machine without a C compiler: each twin's build fails, saying so, and
    the build succeeds (``optional=True``): the install goes on and the pure-Python code runs."""
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("setuptools", reason="this venv has no setuptools (Python 3.12+ venvs): pip brings its own")
    root = Path(compiled.__file__).resolve().parents[2]
    environment = dict(os.environ, CC="false", LDSHARED="false")  # (false: a compiler that always fails)
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-lib", str(tmp_path / "lib"),
                          "--build-temp", str(tmp_path / "temp")], cwd=root, env=environment,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for name in compiled.TWINS:
        assert f'building extension "{name}" failed' in out.stderr
    assert not list(tmp_path.rglob("*.so"))


def test_the_tests_switch_each_twin_off_and_on_again():
    """tests/compiled_twins.py, the one switch the tests run both ways with: a switch per twin, each twin in use
    as built, none in use under its pure_python(), all again after."""
    import compiled_twins

    built = {name.rsplit(".", 1)[1].lstrip("_"): compiled.twin(name) is not None for name in compiled.TWINS}
    assert set(built) == set(compiled_twins.SWITCHES)
    assert {name: compiled_twins.in_use(name) for name in built} == built
    with compiled_twins.pure_python():
        assert not any(compiled_twins.in_use(name) for name in built)
    for name in built:
        with compiled_twins.pure_python(name):
            assert {other: compiled_twins.in_use(other) for other in built} == {**built, name: False}
    assert {name: compiled_twins.in_use(name) for name in built} == built
