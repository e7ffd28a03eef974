"""Upstream drift: normalized-AST fingerprints of the watched autograd functions."""

import pytest
from autograd import grad

import adtrace
from adtrace.recording.autograd import drift

SOURCE = '''
class Node:
    def method(self, g):
        """doc"""
        return g + 1
'''
REFORMATTED = '''
class Node:
    def method(self,   g):  # a comment
        return (g
                + 1)
'''
CHANGED = '''
class Node:
    def method(self, g):
        return g - 1
'''


def test_fingerprint_ignores_formatting_and_docstrings():
    assert drift.fingerprint(SOURCE, "Node.method") == drift.fingerprint(REFORMATTED, "Node.method")
    assert drift.fingerprint(SOURCE, "Node.method") != drift.fingerprint(CHANGED, "Node.method")
    assert drift.fingerprint(SOURCE, "Node.absent") is None


def test_known_releases_and_installed_version_match():
    releases = drift.known_releases()
    assert set(releases) == {"1.7.0", "1.8.0", "1.9.0", "1.9.1"}
    assert all(len(prints) == len(drift.WATCHED) for prints in releases.values())
    assert all(matches for _, _, matches in drift.status())
    installed = drift.installed_version()
    if installed in releases:
        assert all(installed in matches for _, _, matches in drift.status())


@pytest.fixture
def unknown_autograd(monkeypatch):
    drift.status.cache_clear()
    monkeypatch.setattr(drift, "known_releases", lambda: {"0.0.1": {}})
    yield
    drift.status.cache_clear()


def test_unknown_upstream_warns_naming_function_and_version(unknown_autograd):
    with pytest.warns(adtrace.UnknownAutogradWarning) as caught:
        with adtrace.record() as rec:
            grad(lambda x: x * x)(3.0)
    message = str(caught[0].message)
    assert f"autograd {drift.installed_version()}" in message and "autograd.core:add_outgrads" in message
    assert rec.gradient(1) == 6.0


def test_unknown_upstream_strict_raises_and_patches_nothing(unknown_autograd):
    from adtrace.recording.autograd import hooks
    from adtrace.recording import session

    with pytest.raises(adtrace.UnknownAutogradError, match="backward_pass"):
        with adtrace.record(strict=True):
            pass
    assert session.active_recordings() == 0
    assert not any(hooks.is_patched(p) for p in hooks.HOOK_POINTS)
