"""The package's layout is its pipeline: a stage imports only the stages before it, and only the
recording stage's engine packages (and the tools) know an engine."""

import ast
import re
from pathlib import Path

import pytest

from readme import readme

PACKAGE = Path(__file__).resolve().parents[1] / "adtrace"
STAGES = ["recording", "reference", "compare", "checker", "report", "view", "tools"]  # in pipeline order
# the packages inside recording/: each engine's (autograd/, micrograd/) and value_class/, what engines of a
# value class configure; a third engine's folder is one more
ENGINES = tuple(sorted(f"recording.{p.parent.name}" for p in (PACKAGE / "recording").glob("*/__init__.py")))
# who may reach into an engine package from outside it: the session's registry (it picks the engine),
# the tools (doctor, the self-test, upstream), and the public surface (its exceptions)
MAY_NAME_AN_ENGINE = ("recording.registry", "tools", "__init__")


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield ".".join(parts), path


def imported(module, path):
    """The adtrace modules ``module`` imports (absolute names without the ``adtrace.`` prefix)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if package == ["__init__"]:
        package = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("adtrace"):
                name = node.module[len("adtrace."):] if node.module != "adtrace" else ""
            else:
                continue
            yield from (f"{name}.{alias.name}".strip(".") for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (a.name[len("adtrace."):] for a in node.names if a.name.startswith("adtrace."))


def stage(name):
    head = name.split(".")[0]
    return STAGES.index(head) if head in STAGES else None


@pytest.mark.parametrize("module,path", list(modules()), ids=[m for m, _ in modules()])
def test_a_stage_imports_no_later_stage(module, path):
    own = stage(module)
    for name in imported(module, path):
        other = stage(name)
        if own is not None and other is not None:
            assert other <= own, f"{module} imports {name}: {STAGES[other]} comes after {STAGES[own]}"
        if name.startswith(ENGINES) and not module.startswith(ENGINES):
            assert module.startswith(MAY_NAME_AN_ENGINE), f"{module} reaches into the engine package {name}"


def test_every_package_inside_recording_is_kept_to_itself():
    assert {"recording.autograd", "recording.micrograd", "recording.value_class"} <= set(ENGINES)


def test_the_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "align.py"
    bad.write_text("from ..report.format import fmt\nfrom ..recording.autograd import hooks\n")
    names = list(imported("compare.align", bad))
    assert names == ["report.format.fmt", "recording.autograd.hooks"]
    assert stage(names[0]) > stage("compare.align")


def test_the_tests_mirror_the_package():
    """tests/<stage>/ holds the tests of adtrace/<stage>/ (the shared helpers stay at the top)."""
    tests = Path(__file__).resolve().parent
    folders = {p.parent.relative_to(tests) for p in tests.rglob("test_*.py")} - {Path(".")}
    assert folders, "the tests are in folders"
    for folder in folders:
        assert (PACKAGE / folder / "__init__.py").exists(), f"tests/{folder.as_posix()} mirrors no package of adtrace"
    at_top = sorted(p.name for p in tests.glob("test_*.py"))
    assert at_top == ["test_layout.py", "test_lint.py"], "a test of one stage belongs in its folder"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "test file names are unique (the folders have no __init__.py)"


def test_every_file_the_readme_names_exists():
    """A path into this repository that the README names (``adtrace/...``, ``tests/...``, ``.ci/...``,
    ...) is there; autograd's own files (``autograd's `tests/test_scipy.py` ``) are not ours, and
    ``reports/NAME.md`` is a pattern."""
    repo = PACKAGE.parent
    text = " ".join(readme().split())
    named = [(m.group(1), text[max(0, m.start() - 11):m.start()])
             for m in re.finditer(r"`((?:adtrace|tests|\.ci|experiments|reports|benchmarks)/[\w/.-]*\w)`", text)]
    assert len(named) > 30
    missing = [path for path, before in named
               if before != "autograd's " and "NAME" not in path and not (repo / path).exists()]
    assert missing == []
