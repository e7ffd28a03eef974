"""``adtrace graph``: the recorded graph of one call written as SVG, DOT or JSON, run as a user runs it."""

import json
import os
import stat
import tty
import xml.etree.ElementTree as ET

import pytest

from cli_run import adtrace, one_error_line, read_fifo

FUNCS = "import autograd.numpy as np\n\ndef f(x, y):\n    z = np.sin(x) * y\n    print('computing')\n    return z + x\n"
MICRO = "def h(a, b):\n    z = a * b + a\n    return z.relu() * z\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "funcs.py").write_text(FUNCS)
    (tmp_path / "micro.py").write_text(MICRO)
    return tmp_path


def test_each_format_is_written_to_its_file(project):
    for fmt, name in (("svg", "g.svg"), ("dot", "g.dot"), ("json", "g.json")):
        out = adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "--format", fmt, "-o", name, cwd=project)
        assert out.returncode == 0 and out.stdout == "", out.stderr
        assert out.stderr == f"computing\nwrote {name}\n"  # the program's print, once: no check runs
    svg = ET.parse(project / "g.svg").getroot()
    assert svg.tag.endswith("svg") and svg.find("{http://www.w3.org/2000/svg}title").text == "adtrace graph: funcs.py:f"
    assert (project / "g.dot").read_text().startswith('digraph "adtrace" {')
    data = json.loads((project / "g.json").read_text())
    assert [(n["label"], n["line"], n["value"]) for n in data["nodes"]] == [
        ("v0_root", None, "0.5"), ("v1_sin", "funcs.py:4", "0.479425538604203"),
        ("v2_multiply", "funcs.py:4", "1.438276615812609"),
        ("v3_add", "funcs.py:6", "1.938276615812609")]  # whole: every digit
    assert {"parent": "v0_root", "child": "v3_add", "argnum": 1} in data["edges"]


def test_svg_is_the_default_and_dash_is_standard_output_with_the_same_bytes(project):
    to_file = adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "-o", "g.svg", cwd=project)
    to_stdout = adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "-o", "-", cwd=project)
    assert to_file.returncode == to_stdout.returncode == 0
    assert to_stdout.stdout == (project / "g.svg").read_text() and to_stdout.stdout.startswith("<svg ")
    assert "computing" not in to_stdout.stdout and str(project) not in to_stdout.stdout  # no absolute path


def test_argnum_mode_and_capture_are_the_reports(project):
    out = adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "--argnum", "1", "--mode", "fwd",
                  "--capture", "structure", "--format", "json", "-o", "-", cwd=project)
    data = json.loads(out.stdout)
    assert [(n["primitive"], n["mode"], n["value"]) for n in data["nodes"]] == [
        ("(input)", "fwd", None), ("multiply", "fwd", None), ("add", "fwd", None)]


def test_arguments_from_a_function_and_keywords(project):
    (project / "args.py").write_text("def point():\n    return (0.5,), {'y': 3.0}\n")
    out = adtrace("graph", "funcs.py:f", "--args-from", "args.py:point", "--format", "json", "-o", "-", cwd=project)
    assert out.returncode == 0, out.stderr
    assert [n["value"] for n in json.loads(out.stdout)["nodes"]] == [
        "0.5", "0.479425538604203", "1.438276615812609", "1.938276615812609"]
    keyword = adtrace("graph", "funcs.py:f", "--at", "0.5", "--kw", "y=3.0", "--format", "json", "-o", "-", cwd=project)
    assert keyword.stdout == out.stdout


def test_a_micrograd_engine_graph(project):
    pytest.importorskip("micrograd")
    out = adtrace("graph", "micro.py:h", "--at", "3.0", "--at", "2", "--engine", "micrograd", "--format", "json",
                  "-o", "-", cwd=project)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["engine"] == "micrograd"
    assert [(n["label"], n["primitive"], n["line"], n["value"]) for n in data["nodes"]] == [
        ("v0_leaf", "(leaf)", None, "3.0"), ("v1_leaf", "(leaf)", None, "2.0"), ("v2_mul", "*", "micro.py:2", "6.0"),
        ("v3_add", "+", "micro.py:2", "9.0"), ("v4_ReLU", "ReLU", "micro.py:3", "9.0"),
        ("v5_mul", "*", "micro.py:3", "81.0")]
    refused = adtrace("graph", "micro.py:h", "--at", "3.0", "--at", "2", "--engine", "micrograd", "--mode", "fwd",
                      "-o", "g.svg", cwd=project)
    one_error_line(refused, "reverse mode only")


@pytest.mark.parametrize("command, fragments", [
    (["graph", "funcs.py:nothing", "--at", "1.0", "-o", "g.svg"], ["funcs.py has no attribute 'nothing'"]),
    (["graph", "funcs.py:f", "--at", "1.0", "-o", "g.svg"], ["funcs.py:f raised TypeError"]),
    (["graph", "funcs.py:f", "-o", "g.svg"], ["give the point to differentiate at"]),
    (["graph", "funcs.py:f", "--at", "1.0", "--at", "2.0", "-o", "funcs.py"], ["would overwrite TARGET's source"]),
    (["graph", "funcs.py:f", "--at", "1.0", "--at", "2.0", "-o", "."], ["cannot write -o ."]),
])
def test_a_wrong_command_line_or_target_is_one_line_and_exit_2(project, command, fragments):
    one_error_line(adtrace(*command, cwd=project), *fragments)
    assert sorted(os.listdir(project)) == ["funcs.py", "micro.py"]  # nothing written (funcs.py untouched)
    assert (project / "funcs.py").read_text() == FUNCS


def test_the_options_error_is_exit_2(project):
    out = adtrace("graph", "funcs.py:f", "--at", "1.0", "--format", "png", "-o", "g.png", cwd=project)
    assert out.returncode == 2 and "invalid choice: 'png'" in out.stderr
    assert adtrace("graph", "funcs.py:f", "--at", "1.0", cwd=project).returncode == 2  # -o is required


def test_a_device_is_written_into_streamed_as_every_output_is(project):
    """A terminal given as ``-o`` gets the graph, as ``report -o`` streams into one; it stays a device."""
    leader, follower = os.openpty()  # a terminal: a character device that is not the machine's /dev/null
    try:
        tty.setraw(follower)
        device = os.ttyname(follower)
        out = adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "--format", "dot", "-o", device,
                      cwd=project)
        assert out.returncode == 0, out.stderr
        assert stat.S_ISCHR(os.stat(device).st_mode)
        received = b""
        while not received.rstrip().endswith(b"}"):
            received += os.read(leader, 65536)
        assert received.startswith(b"digraph") and b"sin" in received
    finally:
        os.close(leader)
        os.close(follower)


def test_a_fifo_is_written_into_and_a_link_written_through(project):
    fifo = project / "pipe"
    os.mkfifo(fifo)
    run = []
    got = read_fifo(fifo, lambda: run.append(adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "--format",
                                                     "dot", "-o", "pipe", cwd=project)))
    assert run[0].returncode == 0 and got.decode().startswith('digraph "adtrace" {')
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # not replaced by a regular file
    (project / "target.dot").write_text("old")
    (project / "link.dot").symlink_to("target.dot")
    assert adtrace("graph", "funcs.py:f", "--at", "0.5", "--at", "3.0", "--format", "dot", "-o", "link.dot",
                   cwd=project).returncode == 0
    assert (project / "link.dot").is_symlink() and (project / "target.dot").read_text() == got.decode()
