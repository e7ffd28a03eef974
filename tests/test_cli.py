"""The adtrace command line, run as a user would (subprocess)."""

import subprocess
import sys

from adtrace import drift


def adtrace(*args):
    return subprocess.run([sys.executable, "-m", "adtrace.cli", *args], capture_output=True, text=True)


def test_doctor_reports_version_and_every_hook_point():
    out = adtrace("doctor")
    assert out.returncode == 0, out.stderr
    assert f"autograd {drift.installed_version()}" in out.stdout
    for name in ("autograd.core.add_outgrads", "autograd.core.toposort", "autograd.core.backward_pass",
                 "autograd.core.trace", "VJPNode.__init__", "VJPNode.initialize_root",
                 "JVPNode.__init__", "JVPNode.initialize_root"):
        assert name in out.stdout
    assert out.stdout.count("| original |") == 8  # nothing is patched outside record()
    assert "ok: the installed hooks match autograd" in out.stdout


def test_unknown_command_is_a_usage_error():
    out = adtrace("frobnicate")
    assert out.returncode == 2 and "invalid choice" in out.stderr
