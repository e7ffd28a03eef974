"""Mutation testing of every module of adtrace/ (stdlib only).

    python .ci/mutation.py [--module PATH ...] [--sample N | --sample-total N] [--seed S]
                           [--survivors FILE] [--rerun FILE] [--skip FILE] [--done FILE] [--golden]
                           [--shard K/N] [--list]

Each mutant (an operator flipped, a constant changed, a call deleted, ...: ``mutants``) is written
into its module in place, the tests that cover that module (``TESTS``) run on it, and the module is
put back byte for byte (also on Ctrl-C). A mutant the tests do not fail survived: either a test is
missing or the mutant is equivalent (``.ci/mutation_survivors.md`` says which). One process, one
mutant at a time; ``--sample N`` takes N mutants per module, ``--sample-total N`` N mutants in all,
drawn across the modules in proportion to each one's mutants (at least one per module that has
any), the same mutants for the same ``--seed``; ``--rerun FILE`` runs again only the survivors a
``--survivors FILE`` listed (after new tests; with or without ``--module``). ``--skip FILE`` leaves out the
mutants a file lists (what a stopped run killed: the rest of the same sample, on newer code); ``--done FILE``
the same after sharding (one shard resumed where it stopped). Tests marked slow
never run, and the tests that compare committed report bytes (``GOLDEN``) only with ``--golden``:
a score counts the mutants that tests of behaviour kill.
"""

import argparse
import ast
import fnmatch
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RECORDER_TESTS = ["test_recorder", "test_copy_on_write", "test_hooks", "test_session", "test_nesting", "test_registry"]
CLI_TESTS = ["test_experiments", "test_report", "test_cli_arguments", "test_cli", "test_cli_false_greens"]
MICROGRAD_TESTS = ["test_value_class_recorder", "test_value_class_hooks", "test_micrograd_engine",
                   "test_value_class_descriptors", "test_micrograd_code", "test_micrograd_shape",
                   "test_value_class_tracked", "test_traced_engine_call", "test_engines"]
REFERENCE_TESTS = ["test_reference_reverse", "test_reference_forward", "test_reference_graph",
                   "test_reference_jacobian", "test_reference_order", "test_reference_rules", "test_reference_shapes",
                   "test_reference_recorded", "test_reference_corpus", "test_reference_properties", "test_align"]
REPORT_TESTS = ["test_report", "test_document", "test_escaping", "test_abbreviate", "test_collapse", "test_fit",
                "test_nesting", "test_profile", "test_traced_engine_call"]
COMPARE_TESTS = ["test_traced_call", "test_align", "test_checks", "test_report", "test_nesting",
                 "test_cli_false_greens"]


def first(name, tests):
    """``name`` (the module's mirrored test file) first, then the rest of ``tests``."""
    return [name, *(t for t in tests if t != name)]


# module (glob, relative to the repository; the first pattern that matches) -> the test files that cover it
# (basenames, found anywhere under tests/; ``name::test`` for one test), fastest killers first: the test files
# that import the module or run what it does (grep -l). Every module of adtrace/ matches one (``unmapped``).
TESTS = {
    # recording: autograd's hooks and recorder, the engine-neutral core, micrograd's hooks
    "adtrace/recording/autograd/wrappers.py": RECORDER_TESTS,
    "adtrace/recording/autograd/recorder.py": RECORDER_TESTS,
    "adtrace/recording/fanout.py": RECORDER_TESTS + ["test_fault_injection"],
    "adtrace/recording/autograd/copy_on_write.py": RECORDER_TESTS,
    "adtrace/recording/autograd/drift.py": ["test_drift", "test_selftest", "test_cli"],
    "adtrace/recording/autograd/hooks.py": ["test_hooks", "test_drift", "test_selftest", *RECORDER_TESTS,
                                            "test_fault_injection"],
    "adtrace/recording/autograd/sparse.py": ["test_sparse", "test_pinned", *RECORDER_TESTS],
    "adtrace/recording/autograd/forward.py": ["test_pinned", "test_traced_call", *RECORDER_TESTS],
    "adtrace/recording/autograd/*.py": ["test_capture", "test_sparse", *RECORDER_TESTS, "test_fault_injection",
                                        "test_engines"],
    "adtrace/recording/micrograd/ops.py": ["test_micrograd_ops", "test_reference_recorded", "test_checker",
                                           "test_traced_engine_call"],
    "adtrace/recording/micrograd/*.py": MICROGRAD_TESTS + ["test_fault_injection"],
    "adtrace/recording/value_class/*.py": MICROGRAD_TESTS + ["test_fault_injection"],
    "adtrace/recording/callsite.py": ["test_callsite", "test_traced_call", "test_report"],
    "adtrace/recording/engine_code.py": ["test_micrograd_code", "test_traced_engine_call", "test_view"],
    "adtrace/recording/engines.py": ["test_engines"],
    "adtrace/recording/eventlog.py": ["test_eventlog", "test_values", *RECORDER_TESTS],
    "adtrace/recording/events.py": ["test_eventlog", "test_values", *RECORDER_TESTS],
    "adtrace/recording/labels.py": ["test_labels", *RECORDER_TESTS],
    "adtrace/recording/passes.py": ["test_passes", "test_view", *RECORDER_TESTS],
    "adtrace/recording/patching.py": ["test_patching", "test_session", "test_fault_injection",
                                      "test_value_class_hooks"],
    "adtrace/recording/recording.py": ["test_recording", "test_snapshots", "test_passes", *RECORDER_TESTS, "test_view"],
    "adtrace/recording/snapshots.py": ["test_snapshots", "test_report", "test_view"],
    "adtrace/recording/values.py": ["test_values", "test_capture", "test_copy_on_write", "test_align",
                                    "test_abbreviate"],
    "adtrace/recording/session.py": [*RECORDER_TESTS, "test_value_class_recorder", "test_fault_injection",
                                     "test_pytest_plugin"],
    "adtrace/recording/*.py": [*RECORDER_TESTS, "test_value_class_recorder", "test_fault_injection"],
    # the reference engine
    "adtrace/reference/recorded.py": ["test_reference_recorded", "test_traced_engine_call", *REFERENCE_TESTS],
    "adtrace/reference/*.py": REFERENCE_TESTS,
    # comparing and checking
    "adtrace/compare/align.py": ["test_align", "test_traced_engine_call", "test_traced_call", "test_report",
                                 "test_cli_false_greens"],
    "adtrace/compare/checks.py": ["test_checks", "test_align", "test_traced_call", "test_report",
                                  "test_cli_false_greens"],
    "adtrace/compare/grad_align.py": ["test_grad_align", "test_traced_engine_call", "test_engine_call"],
    "adtrace/compare/traced_engine_call.py": ["test_traced_engine_call", "test_view", "test_engine_call"],
    "adtrace/compare/*.py": COMPARE_TESTS,
    "adtrace/checker/local.py": ["test_checker", "test_traced_engine_call", "test_report", "test_cli"],
    "adtrace/checker/flags.py": ["test_checker", "test_report"],
    "adtrace/checker/engine_rules.py": ["test_engine_rules", "test_traced_engine_call", "test_checker"],
    "adtrace/checker/*.py": ["test_checker", "test_traced_engine_call", "test_cli"],
    # the reports and the page
    **{f"adtrace/report/{name}.py": first(f"test_{name}", REPORT_TESTS)
       for name in ("abbreviate", "collapse", "fit", "nesting", "profile")},
    "adtrace/report/format.py": first("test_escaping", REPORT_TESTS) + ["test_view"],
    "adtrace/report/*.py": REPORT_TESTS,
    "adtrace/view/page.py": ["test_page", "test_view", "test_view_browser"],
    "adtrace/view/source.py": ["test_source", "test_view", "test_view_browser"],
    "adtrace/view/*.py": ["test_view", "test_page", "test_source", "test_view_browser"],
    # the command line and the tools
    "adtrace/tools/cli.py": CLI_TESTS,
    # (the upstream command's own test runs one example, 4 s; the rest of its file takes minutes)
    "adtrace/tools/commands/upstream.py": [
        *CLI_TESTS, "test_autograd_examples::test_upstream_examples_writes_the_table"],
    "adtrace/tools/commands/*.py": CLI_TESTS,
    "adtrace/tools/options.py": CLI_TESTS,
    "adtrace/tools/output.py": ["test_output", "test_cli"],
    "adtrace/tools/targets.py": ["test_targets", "test_cli_false_greens", "test_cli"],
    "adtrace/tools/engine_call.py": ["test_engine_call"],
    "adtrace/tools/experiment.py": ["test_experiments", "test_cli"],
    "adtrace/tools/package_index.py": ["test_package_index"],
    "adtrace/tools/sdist.py": ["test_sdist", "test_upstream"],
    "adtrace/tools/selftest.py": ["test_selftest", "test_cli"],
    "adtrace/tools/upstream.py": ["test_upstream", "test_autograd_examples"],
    "adtrace/tools/pytest_plugin.py": ["test_pytest_plugin"],
    "adtrace/tools/autograd_examples/*.py": ["test_autograd_examples"],
    "adtrace/tools/*.py": CLI_TESTS,
    "adtrace/__main__.py": ["test_cli"],
    "adtrace/__init__.py": ["test_session", "test_recorder", "test_cli"],
}

# tests that compare what the code writes with committed report bytes (reports/): deselected unless
# --golden (node id prefixes, as pytest's --deselect reads them: the second also deselects its _pages_too)
GOLDEN = ["tests/tools/test_experiments.py::test_experiment_passes_its_claims_and_its_report_is_committed",
          "tests/tools/test_cli.py::test_experiments_write_and_check",
          "tests/tools/test_cli.py::test_committed_reports_are_current"]

# calls whose arguments are messages (their strings and numbers are not mutated)
MESSAGE_CALLS = {"warn", "debug", "info", "warning", "error", "exception", "critical", "log"}


@dataclass
class Mutant:
    path: str  # relative to the repository
    line: int
    column: int  # (1-based: two mutants of one line differ by it)
    start: int  # character offsets of the replaced text in the source
    end: int
    replacement: str
    original: str  # for the report: the code before and after
    mutated: str

    def label(self):
        return f"{self.path}:{self.line}:{self.column}: {self.original} -> {self.mutated}"


# -------------------- mutants --------------------


def _flip(mapping):
    return {**mapping, **{v: k for k, v in mapping.items()}}


COMPARE = _flip({ast.Lt: ast.LtE, ast.Gt: ast.GtE, ast.Eq: ast.NotEq, ast.Is: ast.IsNot, ast.In: ast.NotIn})
ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
              ast.Pow: ast.Mult}


def changed_number(value):
    """The constant a mutant puts in place of ``value``: 0 <-> 1, n -> n + 1, a small tolerance
    loosened (1e-9 -> 1e-3), other floats + 1."""
    if isinstance(value, bool):
        return not value
    if value == 0:
        return type(value)(1)
    if value == 1:
        return type(value)(0)
    if isinstance(value, float) and 0 < abs(value) < 1:
        return 1e-3 if abs(value) < 1e-3 else value * 10
    return value + 1


def _short(text, limit=90):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Finder(ast.NodeVisitor):
    """Collects ``(node, kind, how)`` for every mutation point, skipping docstrings, ``__all__``,
    annotations, f-strings, message calls and ``if __name__ == "__main__"`` blocks."""

    def __init__(self):
        self.points = []

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns", "type_comment"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(child)

    def _body(self, body):  # a docstring is not a statement to delete
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        for statement in body:
            self.visit(statement)

    def visit_Module(self, node):
        self._body(node.body)

    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        self._body(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for child in (*node.decorator_list, *node.bases, *node.keywords):
            self.visit(child)
        self._body(node.body)

    def visit_If(self, node):
        test = node.test
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
            return
        self.generic_visit(node)

    def visit_Assign(self, node):
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)

    def visit_JoinedStr(self, node):
        return

    def visit_Call(self, node):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in MESSAGE_CALLS:
            return
        self.generic_visit(node)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call):
            self.points.append((node, "delete", None))
        self.generic_visit(node)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self.points.append((node.value, "return", None))
        self.generic_visit(node)

    def visit_Compare(self, node):
        for i, op in enumerate(node.ops):
            if type(op) in COMPARE:
                self.points.append((node, "compare", i))
        self.generic_visit(node)

    def visit_BinOp(self, node):
        strings = any(isinstance(side, ast.JoinedStr) or (isinstance(side, ast.Constant) and isinstance(
            side.value, (str, bytes))) for side in (node.left, node.right))
        if type(node.op) in ARITHMETIC and not strings:
            self.points.append((node, "arithmetic", None))
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        self.points.append((node, "boolop", None))
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            self.points.append((node, "not", None))
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, (bool, int, float)) and not isinstance(node.value, complex):
            self.points.append((node, "constant", None))


def _offsets(source):
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def mutants(path):
    """Every mutant of the module at ``path`` (relative to the repository), in source order."""
    source = (REPO / path).read_text(encoding="utf-8")
    finder = _Finder()
    finder.visit(ast.parse(source))
    starts = _offsets(source)
    found = []
    for node, kind, how in finder.points:
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        lines = node.end_lineno - node.lineno  # kept: the lines after a mutant keep their numbers
        original = ast.unparse(node)
        if kind == "delete":
            replacement, mutated, original = "pass" + "\n" * lines, "pass", ast.unparse(node.value)
        else:
            if kind == "return":
                new = ast.Constant(None)
            elif kind == "compare":
                new = ast.Compare(node.left, [type(op)() if i != how else COMPARE[type(op)]()
                                              for i, op in enumerate(node.ops)], node.comparators)
            elif kind == "arithmetic":
                new = ast.BinOp(node.left, ARITHMETIC[type(node.op)](), node.right)
            elif kind == "boolop":
                new = ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
            elif kind == "not":
                new = node.operand
            else:
                new = ast.Constant(changed_number(node.value))
            mutated = ast.unparse(new)
            replacement = f"({mutated}{chr(10) * lines})"
        if kind == "return":
            original, mutated = f"return {original}", "return None"
        candidate = source[:start] + replacement + source[end:]
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue
        found.append(Mutant(path, node.lineno, node.col_offset + 1, start, end, replacement, _short(original),
                            _short(mutated)))
    found.sort(key=lambda m: (m.line, m.start, m.end))
    return found


# -------------------- running --------------------


def modules():
    """Every module of adtrace/, relative to the repository."""
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "adtrace").rglob("*.py"))


def unmapped():
    """The modules of adtrace/ no pattern of ``TESTS`` matches."""
    return [path for path in modules() if not any(fnmatch.fnmatch(path, pattern) for pattern in TESTS)]


def importers(path):
    """The test files that import the module at ``path`` by name (``import adtrace.a.b``, ``from adtrace.a.b
    import ...``, ``from adtrace.a import b``): they test it even where ``TESTS`` does not list them."""
    dotted = ".".join(Path(path).with_suffix("").parts)
    if dotted.endswith(".__init__"):
        dotted = dotted[:-len(".__init__")]
    parent, _, stem = dotted.rpartition(".")
    found = []
    for file in sorted((REPO / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Import) and any(a.name == dotted for a in node.names)) or (
                    isinstance(node, ast.ImportFrom) and node.level == 0 and (
                        node.module == dotted or (node.module == parent and any(a.name == stem for a in node.names)))):
                found.append(str(file.relative_to(REPO)))
                break
    return found


def test_files(path):
    """The test files of ``path``: its mirrored test file first (tests/<stage>/test_<module>.py, if
    there is one), then those ``TESTS`` lists, then every other test file that imports it (``importers``)."""
    names = next(tests for pattern, tests in TESTS.items() if fnmatch.fnmatch(path, pattern))
    module = Path(path)
    mirror = REPO / "tests" / module.parent.relative_to("adtrace") / f"test_{module.stem}.py"
    files = [str(mirror.relative_to(REPO))] if mirror.exists() else []
    for name in names:
        name, _, test = name.partition("::")  # (a file, or one test of it)
        hits = sorted((REPO / "tests").rglob(f"{name}.py"))
        if not hits:
            raise SystemExit(f"mutation: no test file {name}.py under tests/ (for {path})")
        files += [str(h.relative_to(REPO)) + (f"::{test}" if test else "") for h in hits]
    files += [f for f in importers(path) if f not in files]
    return list(dict.fromkeys(files))  # (a file listed twice runs once)


def targets(patterns):
    """The modules ``--module`` names (globs), else every module of adtrace/."""
    if not patterns:
        return modules()
    paths = []
    for pattern in patterns:
        found = sorted(str(p.relative_to(REPO)) for p in REPO.glob(pattern))
        if not found:
            raise SystemExit(f"mutation: no module {pattern}")
        paths += [p for p in found if p not in paths]
    return paths


def stratified(counts, total, seed=0):
    """``path -> how many mutants`` to draw, ``total`` in all (fewer if there are fewer): one from each
    module whose share would be less than one, the rest in proportion to each module's count, by
    largest remainders. A ``total`` below the number of modules with mutants (a trial run) draws
    ``total`` of all the mutants at random instead (``seed``): in proportion on average."""
    share = {path: 0 for path in counts}
    rest = {path: n for path, n in counts.items() if n}
    left = min(total, sum(rest.values()))
    if left < len(rest):
        pool = [path for path, n in sorted(rest.items()) for _ in range(n)]
        for path in random.Random(f"{seed}:stratified").sample(pool, max(left, 0)):
            share[path] += 1
        return share
    while rest:
        small = [path for path, n in rest.items() if left * n < sum(rest.values())]  # a share below one
        if not small:
            break
        for path in small:
            share[path] = 1
            del rest[path]
        left = max(0, left - len(small))
    if rest:
        whole = sum(rest.values())
        quota = {path: left * n / whole for path, n in rest.items()}
        share.update({path: int(q) for path, q in quota.items()})
        by_remainder = sorted(rest, key=lambda path: (quota[path] - int(quota[path]), path), reverse=True)
        for path in by_remainder[:left - sum(share[p] for p in rest)]:
            share[path] = min(rest[path], share[path] + 1)
    return share


def draw(chosen, n, seed, path):
    """``n`` of ``chosen``, the same ones for the same seed and module, in source order."""
    if len(chosen) <= n:
        return chosen
    return [chosen[i] for i in sorted(random.Random(f"{seed}:{path}").sample(range(len(chosen)), n))]


def run_tests(files, timeout, cache, golden=False):
    """``killed``, ``survived`` or ``timeout``, and the seconds taken."""
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=cache,
                       PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    deselect = [] if golden else [f"--deselect={test}" for test in GOLDEN]
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *deselect,
               *files]
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timeout", time.monotonic() - start
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if code == 5:  # pytest: no test collected (a file whose tests are all marked slow)
        return "empty", time.monotonic() - start
    return ("survived" if code == 0 else "killed"), time.monotonic() - start


def with_source(path, text, run):
    """``run()`` while the module at ``path`` reads ``text``; the original bytes are put back after."""
    file = REPO / path
    original = file.read_bytes()
    try:
        file.write_text(text, encoding="utf-8")
        return run()
    finally:
        file.write_bytes(original)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", metavar="PATH",
                        help="mutate only this module (a glob, repeatable; default: every module of adtrace/)")
    parser.add_argument("--sample", type=int, metavar="N", help="N mutants per module, drawn with --seed")
    parser.add_argument("--sample-total", type=int, metavar="N",
                        help="N mutants in all, by module in proportion (at least 1 each), drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", metavar="LINE", type=int,
                        help="only the mutants on this line (repeatable; with one --module)")
    parser.add_argument("--rerun", metavar="FILE",
                        help="only the mutants a --survivors FILE lists (no sample drawn)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 x the clean run + 30)")
    parser.add_argument("--survivors", metavar="FILE", help="write the survivors here, one per line")
    parser.add_argument("--golden", action="store_true", help="also run the tests of committed report bytes (GOLDEN)")
    parser.add_argument("--skip", metavar="FILE",
                        help="leave out the mutants this file lists, one label per line (those a stopped run "
                             "already killed: resuming the same sample on newer code)")
    parser.add_argument("--done", metavar="FILE",
                        help="leave out the mutants this file lists, after sharding (a shard resumed where it "
                             "stopped)")
    parser.add_argument("--shard", metavar="K/N", type=shard,
                        help="every N-th mutant of the plan from the K-th (1 <= K <= N): N processes "
                             "(one per core, each in its own checkout) share one sample")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    args = parser.parse_args()
    if args.sample is not None and args.sample_total is not None:
        parser.error("--sample and --sample-total: one or the other")
    signal.signal(signal.SIGTERM, _interrupt)  # (Ctrl-C raises KeyboardInterrupt already)
    if unmapped():
        raise SystemExit(f"mutation: no TESTS entry for {', '.join(unmapped())}")

    paths = targets(args.module)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=REPO, capture_output=True,
                           text=True).stdout
    if dirty and not args.list:
        raise SystemExit(f"mutation: commit or stash the modules first (a mutant left by a killed run?):\n{dirty}")
    every = {path: mutants(path) for path in paths}
    plan = plan_mutants(every, args)
    if args.list:
        for path, chosen in plan.items():
            print(f"{path}: {len(chosen)} of {len(every[path])} mutants ({', '.join(test_files(path))})")
            for m in chosen:
                print(f"  {m.label()}")
        print(f"TOTAL: {sum(map(len, plan.values()))} of {sum(map(len, every.values()))} mutants, "
              f"{sum(1 for c in plan.values() if c)} modules")
        return 0
    return run_plan(plan, args)


def plan_mutants(every, args):
    """``path -> the mutants to run`` of ``every`` (``path -> its mutants``), as the options choose them."""
    if args.only:
        every = {path: [m for m in chosen if m.line in args.only] for path, chosen in every.items()}
    if args.rerun:  # (the labels name the mutants: no sample needed, and any --module subset works)
        listed = set(Path(args.rerun).read_text(encoding="utf-8").splitlines())
        return {path: [m for m in chosen if m.label() in listed] for path, chosen in every.items()}
    if args.sample_total is not None:
        shares = stratified({path: len(chosen) for path, chosen in every.items()}, args.sample_total, args.seed)
        every = {path: draw(chosen, shares[path], args.seed, path) for path, chosen in every.items()}
    elif args.sample is not None:
        every = {path: draw(chosen, args.sample, args.seed, path) for path, chosen in every.items()}
    if args.skip:  # (before sharding: the shards share what is left evenly)
        skipped = set(Path(args.skip).read_text(encoding="utf-8").splitlines())
        every = {path: [m for m in chosen if m.label() not in skipped] for path, chosen in every.items()}
    if args.shard:
        k, n = args.shard
        ordered = [(path, m) for path, chosen in every.items() for m in chosen]
        mine = {id(m) for i, (_, m) in enumerate(ordered) if i % n == k - 1}
        every = {path: [m for m in chosen if id(m) in mine] for path, chosen in every.items()}
    if args.done:  # (after sharding: a shard resumed where it stopped)
        done = set(Path(args.done).read_text(encoding="utf-8").splitlines())
        every = {path: [m for m in chosen if m.label() not in done] for path, chosen in every.items()}
    return every


def shard(text):
    """``K/N`` -> ``(K, N)``."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N, two whole numbers") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: 1 <= K <= N")
    return k, n


def run_plan(plan, args):
    totals, survivors, taken, began = dict(mutants=0, killed=0, survived=0, timeout=0), [], [], time.monotonic()
    clean = {}  # test file -> seconds of its run without a mutant (once per file)
    with tempfile.TemporaryDirectory(prefix="adtrace-mutation-") as cache:
        for path, chosen in plan.items():
            if not chosen:
                continue
            files = test_files(path)
            source = (REPO / path).read_text(encoding="utf-8")
            for file in files:
                if file not in clean:
                    status, clean[file] = run_tests([file], None, cache, args.golden)
                    if status == "empty":
                        clean[file] = None  # runs no test of behaviour here: left out
                    elif status != "survived":
                        raise SystemExit(f"mutation: the tests of {path} fail without any mutant: {file}")
            files = [file for file in files if clean[file] is not None]
            seconds = sum(clean[file] for file in files)
            timeout = args.timeout or 3 * seconds + 30
            # the same number of bytes, raising at import: the tests must see the file as written
            size = len(source.encode("utf-8"))
            lethal = 'raise RuntimeError("mutation sanity check")\n'
            lethal += "#" * (size - len(lethal) - 1) + "\n"
            if with_source(path, lethal, lambda: run_tests(files, timeout, cache, args.golden))[0] == "survived":
                raise SystemExit(f"mutation: a module that raises at import passes {' '.join(files)}: "
                                 "the tests do not run the file written (bytecode cache? another install?)")
            counts = dict(mutants=len(chosen), killed=0, survived=0, timeout=0)
            print(f"{path}: {len(chosen)} mutants, clean run {seconds:.1f} s, tests: {' '.join(files)}", flush=True)
            for m in chosen:
                text = source[:m.start] + m.replacement + source[m.end:]
                status, spent = with_source(path, text, lambda: run_tests(files, timeout, cache, args.golden))
                status = "killed" if status == "empty" else status  # (the mutant left no test to collect)
                counts[status] += 1
                taken.append(spent)
                if status == "survived":
                    survivors.append(m.label())
                print(f"  {status.upper() if status == 'survived' else status} {m.label()} ({spent:.1f} s)", flush=True)
            score = 100 * (counts["killed"] + counts["timeout"]) / max(counts["mutants"], 1)
            print(f"{path}: {counts['mutants']} mutants, {counts['killed']} killed, {counts['survived']} survived, "
                  f"{counts['timeout']} timeout, score {score:.1f}%", flush=True)
            for key in totals:
                totals[key] += counts[key]
    score = 100 * (totals["killed"] + totals["timeout"]) / max(totals["mutants"], 1)
    median = statistics.median(taken) if taken else 0.0
    print(f"TOTAL: {totals['mutants']} mutants, {totals['killed']} killed, {totals['survived']} survived, "
          f"{totals['timeout']} timeout, score {score:.1f}% in {time.monotonic() - began:.0f} s "
          f"(median {median:.1f} s per mutant)")
    if args.survivors:
        Path(args.survivors).write_text("".join(f"{line}\n" for line in survivors), encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # (with_source has put the module back)
        sys.exit("mutation: interrupted; the module being mutated is restored")
