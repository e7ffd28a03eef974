"""What runs inside one release's venv (``tools/in_release.py``): a target or each experiment recorded and
saved as JSON, read back identical; the autograd version it imported on its first line."""

import json
import textwrap

import adtrace
from adtrace.recording.autograd.drift import installed_version
from adtrace.tools import in_release

EXPERIMENT = textwrap.dedent("""\
    import autograd.numpy as np
    from adtrace.diff.calls import record_call
    from adtrace.tools.experiment import Outcome


    def run():
        print("an experiment's own summary")
        return Outcome(checks={{"ran": True}}, call={call})
    """)


def test_a_target_is_saved_and_reads_back_as_the_same_backward_pass(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.py").write_text("import autograd.numpy as np\n\ndef f(x):\n    return np.sum(np.tanh(x) * x)\n")
    call = {"target": "f.py:f", "at": ["[0.5, -1.0]"], "kw": [], "args_from": None, "dtype": "float64", "argnum": 0,
            "engine": None}
    (tmp_path / "call.json").write_text(json.dumps(call))
    assert in_release.main(["call", "call.json", "saved.json"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == installed_version()
    saved = adtrace.load(tmp_path / "saved.json")
    assert list(saved.nodes) == ["v0_root", "v1_tanh", "v2_multiply", "v3_sum"]
    assert saved.diff(saved).verdict == "identical"
    (tmp_path / "call.json").write_text(json.dumps({**call, "target": "f.py:nope"}))
    assert in_release.main(["call", "call.json", "nope.json"]) == 2
    assert "nope" in capsys.readouterr().err and not (tmp_path / "nope.json").exists()


def test_each_experiment_with_an_autograd_recording_is_saved_and_one_that_raises_says_so(tmp_path, capsys):
    folder, out = tmp_path / "experiments", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    (folder / "on_autograd.py").write_text(EXPERIMENT.format(call="record_call(np.sin, (0.5,))"))
    (folder / "no_call.py").write_text(EXPERIMENT.format(call="None"))
    (folder / "raises.py").write_text("def run():\n    raise ValueError('not under this release')\n")
    assert in_release.main(["experiments", str(folder), str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["on_autograd.json", "raises.error"]
    assert (out / "raises.error").read_text() == "ValueError: not under this release\n"
    assert list(adtrace.load(out / "on_autograd.json").nodes) == ["v0_root", "v1_sin"]
    assert "an experiment's own summary" not in capsys.readouterr().out
