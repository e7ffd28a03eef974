"""The command line drives a real model: --args-from, --kw, --dtype, negative and non-finite
literals, --version, help on every option, and the program's own output kept off the report."""

import argparse
import json
import re

import pytest

from adtrace import __version__
from adtrace.recording.values import CAPTURE_LEVELS
from adtrace.tools import commands
from adtrace.tools.cli import build_parser
from cli_run import adtrace
from readme import readme

MODEL = '''
import os
import sys
import autograd.numpy as np

print("loading the model")

def loss(w, x, scale=1.0, bias=0.0):
    print("computing the loss")
    os.write(1, b"written by C-level code\\n")
    return scale * np.sum(np.tanh(np.dot(x, w)) ** 2) + bias

def loss_args():
    return (np.array([0.5, -0.3]), np.array([[1.0, 2.0], [3.0, -1.0]])), {"scale": 2.0}

def positional_args():
    return [np.array([0.5, -0.3]), np.array([[1.0, 2.0], [3.0, -1.0]])]

def one_array():
    return np.array([0.5, -0.3])

def nothing():
    return None

def bad_names():
    return (np.array([0.5]),), {1: 2.0}

def raises():
    raise RuntimeError("no data")

def exits():
    sys.exit(3)

def needs_an_argument(n):
    return (n,)

def square(x):
    return x * x

def typed(x):
    print("called with", x.dtype)
    return np.sum(x * x)
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def summary(report):
    """The summary table's cells by row name."""
    rows = re.findall(r"^\| (.+?) +\| (.*?) +\|$", report.split("### Checks")[0], re.M)
    return {name.strip(): value for name, value in rows}


def test_args_from_a_driver_of_the_examples():
    """The examples' drivers return (args, kwargs): the form --args-from takes."""
    drivers = "adtrace.tools.autograd_examples.drivers"
    out = adtrace("report", f"{drivers}:rosenbrock", "--args-from", f"{drivers}:rosenbrock_args")
    assert out.returncode == 0, out.stderr
    assert summary(out.stdout)["inputs"] == "[0.5 -0.3]"
    at = adtrace("report", f"{drivers}:rosenbrock", "--at", "[0.5, -0.3]")
    assert at.stdout == out.stdout  # the same call, by literal or by driver


def test_args_from_a_file_with_keywords_and_positional_forms(project):
    by_pair = adtrace("report", "model.py:loss", "--args-from", "model.py:loss_args", cwd=project)
    assert by_pair.returncode == 0, by_pair.stderr
    by_list = adtrace("report", "model.py:loss", "--args-from", "model.py:positional_args", "--kw", "scale=2.0",
                      cwd=project)
    assert by_list.returncode == 0, by_list.stderr
    assert by_list.stdout == by_pair.stdout
    unscaled = adtrace("report", "model.py:loss", "--args-from", "model.py:positional_args", cwd=project)
    gradient = summary(by_pair.stdout)["gradient (VJP with a seed of ones)"]
    assert gradient != summary(unscaled.stdout)["gradient (VJP with a seed of ones)"]  # scale=2.0 was passed
    assert summary(by_pair.stdout)["source"] == "model.py:8"  # the user's function, not a wrapper of adtrace
    override = adtrace("report", "model.py:loss", "--args-from", "model.py:loss_args", "--kw", "scale=1.0",
                       cwd=project)
    assert override.stdout == unscaled.stdout  # --kw replaces the driver's keyword argument


@pytest.mark.parametrize("function, message", [
    ("one_array", "--args-from model.py:one_array returned a ndarray: return the arguments as a tuple"),
    ("nothing", "returned a NoneType"),
    ("bad_names", "keyword argument names must be identifiers, got 1"),
    ("raises", "--args-from model.py:raises raised RuntimeError: no data"),
    ("exits", "--args-from model.py:exits called sys.exit(3)"),
    ("needs_an_argument", "--args-from model.py:needs_an_argument raised TypeError"),
    ("absent", "model.py has no attribute 'absent'"),
])
def test_args_from_errors(project, function, message):
    out = adtrace("report", "model.py:loss", "--args-from", f"model.py:{function}", cwd=project)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.splitlines()[-1].startswith("adtrace: ") and message in out.stderr.splitlines()[-1], out.stderr


@pytest.mark.parametrize("args, message", [
    (["--args-from", "model.py:loss_args", "--at", "1.0"], "either with --at or with --args-from"),
    (["--args-from", "model.py:loss_args", "--dtype", "float32"], "--dtype applies to --at and --kw values"),
    (["--at", "[0.5]", "--at", "[[1.0]]", "--kw", "1scale=2"], "--kw '1scale=2' is not NAME=VALUE"),
    (["--at", "[0.5]", "--at", "[[1.0]]", "--kw", "scale"], "is not NAME=VALUE"),
    (["--at", "[0.5]", "--at", "[[1.0]]", "--kw", "scale=2", "--kw", "scale=3"], "--kw scale is given twice"),
    (["--at", "[0.5]", "--at", "[[1.0]]", "--kw", "scale=two"], "--kw scale= 'two' is not a Python literal"),
])
def test_keyword_and_source_errors(project, args, message):
    out = adtrace("report", "model.py:loss", *args, cwd=project)
    assert out.returncode == 2 and message in out.stderr.splitlines()[-1], out.stderr


def test_dtype_float32_applies_to_lists_and_floats(project):
    out = adtrace("report", "model.py:typed", "--dtype", "float32", "--at", "[1, 2, 3]", "--json", "e.json",
                  cwd=project)
    assert out.returncode == 0, out.stderr
    events = json.loads((project / "e.json").read_text())["reverse"]["events"]
    assert next(e for e in events if e["kind"] == "trace")["input"]["dtype"] == "float32"
    assert out.stderr.splitlines()[1] == "called with float32"  # (the first call: autograd's)
    plain = adtrace("report", "model.py:typed", "--at", "[1, 2, 3]", cwd=project)
    assert plain.stderr.splitlines()[1] == "called with float64"
    for scalar in ("0.5", "3"):  # a float, and an int made the differentiated float
        out = adtrace("check", "model.py:typed", "--dtype", "float32", "--at", scalar, cwd=project)
        assert out.returncode == 0 and out.stderr.splitlines()[1] == "called with float32", out.stderr


@pytest.mark.parametrize("literal, shown", [("-1e-3", "-0.001"), ("-1.5j", "0-1.5j"), ("-2", "-2"), ("nan", "nan"),
                                            ("inf", "inf"), ("-inf", "-inf"), ("[-1e-3, nan]", "[-0.001 nan]")])
def test_negative_and_non_finite_literals(project, literal, shown):
    separate = adtrace("report", "model.py:square", "--at", literal, "--mode", "fwd", cwd=project)
    joined = adtrace("report", "model.py:square", f"--at={literal}", "--mode", "fwd", cwd=project)
    assert separate.returncode in (0, 1) and "error" not in separate.stderr, separate.stderr
    assert separate.stdout == joined.stdout
    assert summary(separate.stdout)["inputs"] == shown


def test_a_negative_option_value_is_the_option_error():
    out = adtrace("check", "model.py:square", "--at", "1.0", "--rtol", "-1e-3")
    assert out.returncode == 2 and "argument --rtol: must be a finite positive number, got '-1e-3'" in out.stderr


def test_version():
    out = adtrace("--version")
    assert out.returncode == 0 and re.fullmatch(rf"adtrace {re.escape(__version__)} \(autograd [0-9.]+\)\n", out.stdout)


def test_every_option_has_help_and_every_command_ends_with_an_example():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) == {"report", "view", "check", "explain", "diff", "graph", "experiments", "doctor",
                             "upstream"}
    for name, command in {"adtrace": parser, **commands}.items():
        for action in command._actions:
            assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
    for name in commands:
        out = adtrace(name, "--help")
        assert out.returncode == 0
        lines = out.stdout.rstrip("\n").splitlines()
        example = lines.index("example:")
        assert lines[example + 1:] and all(line.startswith(f"  adtrace {name}") for line in lines[example + 1:])
    assert "3 nothing was checked" in " ".join(adtrace("report", "--help").stdout.split())


def test_the_programs_output_goes_to_stderr_never_into_the_report(project):
    out = adtrace("report", "model.py:loss", "--args-from", "model.py:loss_args", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# adtrace report: loss\n")
    assert "loading the model" not in out.stdout and "computing the loss" not in out.stdout
    assert "written by C-level code" not in out.stdout
    assert "loading the model" in out.stderr and "computing the loss" in out.stderr
    assert "written by C-level code" in out.stderr
    checked = adtrace("check", "model.py:loss", "--args-from", "model.py:loss_args", cwd=project)
    assert checked.returncode == 0 and checked.stdout.startswith("| node "), checked.stdout
    assert "computing the loss" in checked.stderr and "computing" not in checked.stdout


@pytest.mark.parametrize("command, options, calls, helped", [
    ("report", [], 6, "called 6 times"),
    ("report", ["--mode", "fwd"], 2, "--mode fwd: 2"),
    ("report", ["--mode", "both"], 8, "both: 8"),
    ("report", ["--check-nodes"], 7, "--check-nodes: once more"),
    ("report", ["--engine", "micrograd"], 5, "--engine: 5"),
    ("report", ["--engine", "micrograd", "--check-nodes"], 5, "--engine: 5"),
    ("view", ["-o", "p.html"], 6, "called 6 times"),
    ("view", ["-o", "p.html", "--mode", "fwd"], 2, "--mode fwd: 2"),
    ("view", ["-o", "p.html", "--engine", "micrograd"], 5, "--engine: 5"),
    ("check", [], 1, "called once"),
    ("explain", [], 1, "called once (recorded)"),
    ("explain", ["--engine", "micrograd"], 1, "--engine: once"),
    ("graph", ["-o", "g.svg"], 1, "called once (recorded; no check runs)"),
    ("graph", ["-o", "g.svg", "--engine", "micrograd"], 1, "called once (recorded; no check runs)"),
])
def test_the_function_is_called_as_many_times_as_help_says(tmp_path, command, options, calls, helped):
    (tmp_path / "counted.py").write_text("def f(x):\n    print('called')\n    return x * x + x\n")
    out = adtrace(command, "counted.py:f", "--at", "0.5", *options, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr.count("called\n") == calls, out.stderr
    assert helped in " ".join(adtrace(command, "--help").stdout.split())


def test_argnum_and_positive_options_accept_their_least_value():
    """--argnum 0 (the first argument) is a natural number; 1 is the least --max-rows, --sample."""
    args = build_parser().parse_args(["check", "model.py:square", "--at", "1.0", "--argnum", "0", "--sample", "1",
                                      "--max-rows", "1"])
    assert (args.argnum, args.sample, args.max_rows) == (0, 1, 1)


def readme_synopsis():
    """The README's command-line synopsis: ``{command: [line's options, ...]}``, each option as
    ``(name, value or None, optional, repeated)``; ``[ARGUMENTS]`` expanded from its own line."""
    block = readme().split("\n## Command line\n", 1)[1].split("```")[1]
    lines = [line for line in block.splitlines() if line.strip()]
    arguments = next(line for line in lines if line.startswith("ARGUMENTS: "))

    def options(text):
        found = []
        for bracketed, bare in re.findall(r"\[(-[^][]*)\]|(?<![\w-])(-[^\s\][]+(?: [^\s\][-]+)?)", text):
            words = (bracketed or bare).split()
            value = next((w for w in words[1:] if w != "..."), None)
            found.append((words[0], value, bool(bracketed), words[-1] == "..."))
        return found

    commands = {}
    for line in lines:
        if line.startswith("adtrace "):
            rest = line[len("adtrace "):]
            command = "adtrace" if rest.startswith("-") else rest.split()[0]  # "adtrace --version": the program's
            found = options(rest) + (options(arguments[len("ARGUMENTS:"):]) if "[ARGUMENTS]" in rest else [])
            commands.setdefault(command, []).append((found, "TARGET" in rest.split()))
    return commands


def test_the_readme_synopsis_is_every_commands_real_options():
    """Each README synopsis line lists exactly its command's options: every one (no more), with a
    value where the option takes one, its choices where it has some, ``...`` where it repeats, and
    brackets where it is optional; and TARGET where the command has one."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    synopsis = readme_synopsis()
    assert set(synopsis) == {"adtrace", *commands}
    for name, command in {"adtrace": parser, **commands}.items():
        actions = [a for a in command._actions if a.option_strings and not isinstance(a, argparse._HelpAction)
                   and not isinstance(a, argparse._SubParsersAction)]
        positional = [a.dest for a in command._actions if not a.option_strings and a.dest != "command"]
        shown = [option for found, _ in synopsis[name] for option in found]
        for option, value, optional, repeated in shown:
            action = next((a for a in actions if option in a.option_strings), None)
            assert action is not None, f"README: adtrace {name} has no option {option}"
            assert (value is not None) == (action.nargs != 0), f"README: {name} {option} value {value!r}"
            if action.choices:
                assert value.split("|") == list(action.choices), f"README: {name} {option} choices {value!r}"
            assert repeated == isinstance(action, argparse._AppendAction), f"README: {name} {option} ..."
            if name != "adtrace" and len(synopsis[name]) == 1:  # one form of use: brackets say optional
                assert optional == (not action.required), f"README: {name} {option} brackets"
        missing = [a.option_strings[-1] for a in actions if not any(o[0] in a.option_strings for o in shown)]
        assert missing == [], f"README's synopsis of adtrace {name} omits {missing}"
        assert all(has_target == (positional == ["target"]) for _, has_target in synopsis[name]), name


@pytest.mark.parametrize("command", [["report", "model.py:square", "--at", "1.0", "-o"],
                                     ["report", "model.py:square", "--at", "1.0", "--json"],
                                     ["report", "model.py:square", "--at", "1.0", "--html"],
                                     ["view", "model.py:square", "--at", "1.0", "-o"],
                                     ["graph", "model.py:square", "--at", "1.0", "-o"],
                                     ["upstream", "--examples", "-o"]])
def test_an_empty_file_name_is_the_options_error(command, capsys):
    """``--json "$OUT"`` with ``OUT`` unset: an error, not a report with no JSON (nor a traceback)."""
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*command, ""])
    assert exit_.value.code == 2 and "must be a file name, got ''" in capsys.readouterr().err


def exit_codes(text):
    """``{code: meaning}`` from a list ``0 every check passed, 1 ...`` (parentheses left out)."""
    return {int(code): meaning.strip() for code, meaning in re.findall(r"\b(\d) ([a-z][^,;(]*)", text)}


def test_the_readme_exit_codes_are_the_commands_own():
    """The README's exit codes say what ``--help`` says, and are the codes the commands return."""
    (stated,) = re.findall(r"Exit codes of `report`, `view` and `check`: (.*?)\. ", " ".join(readme().split()))
    assert exit_codes(stated) == exit_codes(commands.EXIT_CODES)
    assert exit_codes(stated) == {commands.PASSED: "every check passed", commands.FAILED: "a check failed",
                                  commands.USAGE: "the command line or the target is wrong",
                                  commands.NOTHING_CHECKED: "nothing was checked"}


def test_the_capture_option_offers_every_capture_level():
    """``--capture``'s choices (the README's synopsis shows them) are the recorder's levels, the first the default."""
    for name in ("report", "view"):
        command = build_parser().parse_args([name, "model.py:square", "-o", "out"])
        assert command.capture == CAPTURE_LEVELS[0]
    choices = {tuple(a.choices) for c in ("report", "view") for a in subcommand(c)._actions if "--capture" in
               a.option_strings}
    assert choices == {CAPTURE_LEVELS}


def subcommand(name):
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
