"""The package's layout is its pipeline: a stage imports only the stages before it, and only the
recording stage's engine packages (and the tools) know an engine, each its own (and value_class/, which knows
none)."""

import ast
import re
from pathlib import Path

import pytest

from readme import readme

PACKAGE = Path(__file__).resolve().parents[1] / "adtrace"
TESTS = Path(__file__).resolve().parent
# in pipeline order
STAGES = ["recording", "reference", "compare", "checker", "diff", "report", "explain", "view", "tools"]
# the packages inside recording/: each engine's (autograd/, micrograd/) and value_class/, what engines of a
# value class configure; a third engine's folder is one more
ENGINES = tuple(sorted(f"recording.{p.parent.name}" for p in (PACKAGE / "recording").glob("*/__init__.py")))
# who may reach into an engine package from outside it: the session's registry (it picks the engine),
# the tools (doctor, the self-test, upstream), and the public surface (its exceptions)
MAY_NAME_AN_ENGINE = ("recording.registry", "tools", "__init__")
# the packages inside recording/ that engines share: they import no engine package, and an engine package imports
# no other engine's but these
SHARED = ("recording.value_class",)


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


def engine_package(name):
    """The package inside recording/ that ``name`` is in (None: none)."""
    package = ".".join(name.split(".")[:2])
    return package if package in ENGINES else None


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
        inside, reached = engine_package(module), engine_package(name)
        if reached is not None and inside is None:
            assert module.startswith(MAY_NAME_AN_ENGINE), f"{module} reaches into the engine package {name}"
        if inside is not None and reached not in (None, inside):
            assert reached in SHARED and inside not in SHARED, f"{module} reaches into another engine's {name}"


def test_every_package_inside_recording_is_kept_to_itself():
    assert {"recording.autograd", "recording.micrograd", "recording.value_class"} <= set(ENGINES)
    assert set(SHARED) <= set(ENGINES)


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


# A module whose tests are in another module's file, as it is tested through that module: the file, and why.
# Every other module has its mirror file (see mirror_files).
TESTED_THROUGH = {
    # recording/
    "recording/autograd/backward.py": ("tests/recording/autograd/test_recorder.py", "the Recorder's reverse mode"),
    "recording/autograd/forward.py": ("tests/recording/autograd/test_recorder.py", "the Recorder's forward mode"),
    "recording/autograd/nodes.py": ("tests/recording/autograd/test_recorder.py", "the Recorder's node mixin"),
    "recording/autograd/state.py": ("tests/recording/autograd/test_recorder.py", "the trace levels the wrappers keep"),
    "recording/autograd/wrappers.py": ("tests/recording/autograd/test_hooks.py", "what each hook point puts there"),
    "recording/engine_code.py": ("tests/recording/micrograd/test_micrograd_code.py", "an engine's own backward()"),
    "recording/fanout.py": ("tests/recording/test_session.py", "nested recordings fanned out, guarded callbacks"),
    "recording/recorder.py": ("tests/recording/test_engines.py", "what every engine's recorder shares"),
    # reference/
    "reference/jvp_rules.py": ("tests/reference/test_reference_corpus.py", "each own rule, run on the corpus"),
    "reference/vjp_rules.py": ("tests/reference/test_reference_corpus.py", "each own rule, run on the corpus"),
    "reference/steps.py": ("tests/reference/test_reference_reverse.py", "the step log run_gradient returns"),
    # compare/
    "compare/arguments.py": ("tests/compare/test_traced_call.py", "the differentiated argument of a traced call"),
    # report/: its sections are read in whole reports
    "report/compared.py": ("tests/report/test_report.py", "the summary and side-by-side sections of a report"),
    "report/graph.py": ("tests/report/test_report.py", "the graph section of a report"),
    "report/mermaid.py": ("tests/report/test_escaping.py", "labels escaped in the Mermaid graph"),
    "report/tables.py": ("tests/report/test_fit.py", "tables with cells fitted"),
    # tools/
    "tools/autograd_examples/drivers.py": ("tests/tools/test_autograd_examples.py", "each example run"),
    "tools/autograd_examples/more_drivers.py": ("tests/tools/test_autograd_examples.py", "each example run"),
    "tools/autograd_examples/load.py": ("tests/tools/test_autograd_examples.py", "the examples loaded from the sdist"),
    "tools/autograd_examples/registry.py": ("tests/tools/test_autograd_examples.py", "the examples' table"),
    "tools/commands/doctor.py": ("tests/tools/test_cli.py", "the command, run"),
    "tools/commands/experiments.py": ("tests/tools/test_cli.py", "the command, run"),
    "tools/commands/files.py": ("tests/tools/test_cli_arguments.py", "the output files the commands refuse or write"),
    "tools/commands/upstream.py": ("tests/tools/test_upstream.py", "the command, run"),
    "tools/experiment.py": ("tests/tools/test_experiments.py", "the harness, running every experiment"),
    "tools/options.py": ("tests/tools/test_cli_arguments.py", "the options, parsed"),
    # view/
    "view/data.py": ("tests/view/test_view.py", "the page's data, read as the page reads it"),
    "view/passes.py": ("tests/view/test_view.py", "the steps the page plays, in the page's data"),
}


def mirror_files(module):
    """Where the tests of ``adtrace/<path>/<module>.py`` go: ``tests/<path>/test_<module>.py``, or
    ``test_<package>_<module>.py`` where another module's tests have that name (file names are unique)."""
    folder = TESTS / module.parent
    return folder / f"test_{module.stem}.py", folder / f"test_{module.parent.name}_{module.stem}.py"


def test_every_module_has_its_test_file_or_is_declared_tested_through_another():
    modules = [p.relative_to(PACKAGE) for p in sorted(PACKAGE.rglob("*.py"))
               if p.name not in ("__init__.py", "__main__.py")]
    missing = [m.as_posix() for m in modules
               if not any(f.exists() for f in mirror_files(m)) and m.as_posix() not in TESTED_THROUGH]
    assert missing == [], "a module without tests/<stage>/test_<module>.py: write it, or declare it in TESTED_THROUGH"
    for module, (test_file, reason) in TESTED_THROUGH.items():
        assert (PACKAGE / module).exists(), f"TESTED_THROUGH names {module}: gone"
        assert not any(f.exists() for f in mirror_files(Path(module))), f"{module} has its own test file now"
        assert (TESTS.parent / test_file).exists() and reason, f"{module}: {test_file}"


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


@pytest.mark.parametrize("module, path", list(modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_module_takes_no_private_name_of_another(module, path):
    """What a module shares is public (no leading underscore); its privates stay in its file."""
    private = [name for name in imported(module, path) if re.match(r"_(?!_)", name.rsplit(".", 1)[-1])]
    assert not private, f"{module} imports private names of other modules: {private}"
