"""Mutation testing of the recorder, the alignment, the checker and the command line (stdlib only).

    python .ci/mutation.py [--module PATH ...] [--sample N --seed S] [--survivors FILE] [--rerun FILE] [--list]

Each mutant (an operator flipped, a constant changed, a call deleted, ...: ``mutants``) is written
into its module in place, the tests that cover that module (``TESTS``) run on it, and the module is
put back byte for byte (also on Ctrl-C). A mutant the tests do not fail survived: either a test is
missing or the mutant is equivalent (``.ci/mutation_survivors.md`` says which). One process, one
mutant at a time; ``--sample N`` takes N mutants per module, the same N for the same ``--seed``;
``--rerun FILE`` runs again only the survivors a ``--survivors FILE`` listed (after new tests).
"""

import argparse
import ast
import fnmatch
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RECORDER_TESTS = ["test_recorder", "test_history", "test_hooks", "test_session", "test_nesting", "test_registry"]
CLI_TESTS = ["test_experiments", "test_report", "test_cli_arguments", "test_cli", "test_cli_false_greens"]

# module (glob, relative to the repository; the first pattern that matches) -> the test files that cover it
# (basenames, found anywhere under tests/; ``name::test`` for one test), fastest killers first: the test files
# that import the module or run what it does (grep -l).
TESTS = {
    "adtrace/recording/autograd/wrappers.py": RECORDER_TESTS,
    "adtrace/recording/autograd/recorder.py": RECORDER_TESTS,
    "adtrace/recording/fanout.py": RECORDER_TESTS + ["test_fault_injection"],
    "adtrace/recording/autograd/copy_on_write.py": RECORDER_TESTS,
    "adtrace/compare/align.py": ["test_align", "test_micrograd_call", "test_traced_call", "test_report",
                                 "test_cli_false_greens"],
    "adtrace/compare/checks.py": ["test_checks", "test_align", "test_traced_call", "test_report",
                                  "test_cli_false_greens"],
    "adtrace/checker/local.py": ["test_checker", "test_micrograd_call", "test_report", "test_cli"],
    "adtrace/checker/flags.py": ["test_checker", "test_report"],
    "adtrace/tools/cli.py": CLI_TESTS,
    # (the upstream command's own test runs one example, 4 s; the rest of its file takes minutes)
    "adtrace/tools/commands/upstream.py": [
        *CLI_TESTS, "test_autograd_examples::test_upstream_examples_writes_the_table"],
    "adtrace/tools/commands/*.py": CLI_TESTS,
    "adtrace/tools/options.py": CLI_TESTS,
}

# calls whose arguments are messages (their strings and numbers are not mutated)
MESSAGE_CALLS = {"warn", "debug", "info", "warning", "error", "exception", "critical", "log"}


@dataclass
class Mutant:
    path: str  # relative to the repository
    line: int
    start: int  # character offsets of the replaced text in the source
    end: int
    replacement: str
    original: str  # for the report: the code before and after
    mutated: str

    def label(self):
        return f"{self.path}:{self.line}: {self.original} -> {self.mutated}"


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
        found.append(Mutant(path, node.lineno, start, end, replacement, _short(original), _short(mutated)))
    found.sort(key=lambda m: (m.line, m.start, m.end))
    return found


# -------------------- running --------------------


def test_files(path):
    names = next(tests for pattern, tests in TESTS.items() if fnmatch.fnmatch(path, pattern))
    files = []
    for name in names:
        name, _, test = name.partition("::")  # (a file, or one test of it)
        hits = sorted((REPO / "tests").rglob(f"{name}.py"))
        if not hits:
            raise SystemExit(f"mutation: no test file {name}.py under tests/ (for {path})")
        files += [str(h.relative_to(REPO)) + (f"::{test}" if test else "") for h in hits]
    return files


def targets(modules):
    paths = []
    for pattern in modules or TESTS:
        found = sorted(str(p.relative_to(REPO)) for p in REPO.glob(pattern))
        if not found:
            raise SystemExit(f"mutation: no module {pattern}")
        paths += [p for p in found if p not in paths]
    return paths


def run_tests(files, timeout, cache):
    """``killed``, ``survived`` or ``timeout``, and the seconds taken."""
    environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=cache,
                       PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *files]
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
    parser.add_argument("--module", action="append", metavar="PATH", help="mutate only this module (repeatable)")
    parser.add_argument("--sample", type=int, metavar="N", help="N mutants per module, drawn with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", metavar="LINE", type=int,
                        help="only the mutants on this line (repeatable; with one --module)")
    parser.add_argument("--rerun", metavar="FILE",
                        help="only the mutants a --survivors FILE lists (with the --sample and --seed that found them)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 x the clean run + 30)")
    parser.add_argument("--survivors", metavar="FILE", help="write the survivors here, one per line")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # (Ctrl-C raises KeyboardInterrupt already)

    paths = targets(args.module)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=REPO, capture_output=True,
                           text=True).stdout
    if dirty and not args.list:
        raise SystemExit(f"mutation: commit or stash the modules first (a mutant left by a killed run?):\n{dirty}")
    plan = {}
    for path in paths:
        chosen = mutants(path)
        if args.only:
            chosen = [m for m in chosen if m.line in args.only]
        if args.sample is not None and len(chosen) > args.sample:
            picked = sorted(random.Random(f"{args.seed}:{path}").sample(range(len(chosen)), args.sample))
            chosen = [chosen[i] for i in picked]
        if args.rerun:
            listed = set(Path(args.rerun).read_text(encoding="utf-8").splitlines())
            chosen = [m for m in chosen if m.label() in listed]
        plan[path] = chosen
    if args.list:
        for path, chosen in plan.items():
            print(f"{path}: {len(chosen)} mutants ({', '.join(test_files(path))})")
            for m in chosen:
                print(f"  {m.label()}")
        return 0

    totals, survivors, began = dict(mutants=0, killed=0, survived=0, timeout=0), [], time.monotonic()
    clean = {}  # the test files -> seconds of their run without a mutant (once per set of files)
    with tempfile.TemporaryDirectory(prefix="adtrace-mutation-") as cache:
        for path, chosen in plan.items():
            if not chosen:
                continue
            files = test_files(path)
            source = (REPO / path).read_text(encoding="utf-8")
            if tuple(files) not in clean:
                status, clean[tuple(files)] = run_tests(files, None, cache)
                if status != "survived":
                    raise SystemExit(f"mutation: the tests of {path} fail without any mutant: {' '.join(files)}")
            seconds = clean[tuple(files)]
            timeout = args.timeout or 3 * seconds + 30
            # the same number of bytes, raising at import: the tests must see the file as written
            size = len(source.encode("utf-8"))
            lethal = 'raise RuntimeError("mutation sanity check")\n'
            lethal += "#" * (size - len(lethal) - 1) + "\n"
            if with_source(path, lethal, lambda: run_tests(files, timeout, cache))[0] == "survived":
                raise SystemExit(f"mutation: a module that raises at import passes {' '.join(files)}: "
                                 "the tests do not run the file written (bytecode cache? another install?)")
            counts = dict(mutants=len(chosen), killed=0, survived=0, timeout=0)
            print(f"{path}: {len(chosen)} mutants, clean run {seconds:.1f} s, tests: {' '.join(files)}", flush=True)
            for m in chosen:
                text = source[:m.start] + m.replacement + source[m.end:]
                status, taken = with_source(path, text, lambda: run_tests(files, timeout, cache))
                counts[status] += 1
                if status == "survived":
                    survivors.append(m.label())
                    print(f"  SURVIVED {m.label()} ({taken:.0f} s)", flush=True)
            score = 100 * (counts["killed"] + counts["timeout"]) / max(counts["mutants"], 1)
            print(f"{path}: {counts['mutants']} mutants, {counts['killed']} killed, {counts['survived']} survived, "
                  f"{counts['timeout']} timeout, score {score:.1f}%", flush=True)
            for key in totals:
                totals[key] += counts[key]
    score = 100 * (totals["killed"] + totals["timeout"]) / max(totals["mutants"], 1)
    print(f"TOTAL: {totals['mutants']} mutants, {totals['killed']} killed, {totals['survived']} survived, "
          f"{totals['timeout']} timeout, score {score:.1f}% in {time.monotonic() - began:.0f} s")
    if args.survivors:
        Path(args.survivors).write_text("".join(f"{line}\n" for line in survivors), encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # (with_source has put the module back)
        sys.exit("mutation: interrupted; the module being mutated is restored")
