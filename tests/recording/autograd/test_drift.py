"""Upstream drift: canonical-AST fingerprints of the watched autograd functions."""

import ast
import sys

import pytest
from autograd import grad

import adtrace
from adtrace.recording.autograd import drift

SOURCE = '''
class Node:
    """doc"""
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
    assert drift.fingerprint(SOURCE, "Node") == drift.fingerprint(REFORMATTED, "Node")
    assert drift.fingerprint(SOURCE, "Node.method") != drift.fingerprint(CHANGED, "Node.method")
    assert drift.fingerprint(SOURCE, "Node.absent") is None


def test_only_a_docstring_is_left_out():
    plain = drift.fingerprint("def f(g):\n    x = g\n    return x\n", "f")
    assert drift.fingerprint("def f(g):\n    x = g\n    'a string, not a docstring'\n    return x\n", "f") != plain
    assert drift.fingerprint("def f(g):\n    print(g)\n    x = g\n    return x\n", "f") != plain


def test_canonical_text_is_the_same_under_every_python():
    # 3.12 adds type_params=[] to a function, 3.13's ast.dump leaves out empty fields: neither shows
    # here. The None in kw_defaults keeps its place (k has no default, m has one).
    tree = ast.parse("def f(x, *, k, m=2):\n    \"doc\"\n    return x\n").body[0]
    assert drift.canonical(tree) == (
        "FunctionDef(args=arguments(args=[arg(arg=str:'x')], kw_defaults=[NoneType:None, "
        "Constant(value=int:2)], kwonlyargs=[arg(arg=str:'k'), arg(arg=str:'m')]), "
        "body=[Return(value=Name(ctx=Load(), id=str:'x'))], name=str:'f')")


def test_installed_autograd_matches_its_release_under_this_python():
    releases = drift.known_releases()
    assert set(releases) == {"1.7.0", "1.8.0", "1.9.0", "1.9.1"}
    assert all(len(prints) == len(drift.WATCHED) for prints in releases.values())
    installed = drift.installed_version()
    assert installed in releases, f"autograd {installed} is not a release adtrace knows: run .ci/fingerprints.py"
    unknown = [key for key, _, matches in drift.status() if installed not in matches]
    assert unknown == [], f"{unknown} differ from autograd {installed}'s under Python {sys.version.split()[0]}"


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
