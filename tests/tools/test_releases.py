"""One venv per autograd release (``tools/releases.py``): the releases pyproject supports, a release that
cannot be installed here said so, and each venv imports its own release."""

import re
from pathlib import Path

import pytest

from adtrace.tools import releases
from adtrace.tools.sdist import UpstreamError

REPO = Path(__file__).resolve().parents[2]


def test_the_supported_releases_are_within_pyprojects_range():
    low, high = re.search(r'"autograd>=([\d.]+),<([\d.]+)"', (REPO / "pyproject.toml").read_text()).groups()
    versions = releases.supported()
    key = [tuple(map(int, v.split("."))) for v in versions]
    assert key == sorted(key) and versions[0] == low and key[-1] < tuple(map(int, high.split(".")))


def test_a_release_that_cannot_be_installed_here_is_an_error_saying_so(tmp_path, monkeypatch):
    (tmp_path / "no_wheels").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # (no index, no wheel: as offline without a cache)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no_wheels"))
    with pytest.raises(UpstreamError, match=r"cannot install autograd 1\.8\.0 here \(offline, or no such release\)"):
        releases.environment("1.8.0", tmp_path / "cache")


@pytest.mark.slow
def test_each_release_runs_in_its_own_venv_importing_it(tmp_path):
    from release_venvs import installed_or_skip

    versions = releases.supported()
    installed_or_skip(*versions)
    for version in versions:
        done = releases.run_in(version, ["experiments", str(REPO / "experiments"), str(tmp_path), "none"])
        assert done.returncode == 0 and done.stdout.splitlines()[0] == version, (version, done.stderr[-1000:])
