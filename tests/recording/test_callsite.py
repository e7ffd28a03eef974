"""The user's line as ``path:line``, relative to a root or the working folder, never absolute."""

import os

from adtrace.recording.callsite import relative_location


def test_a_location_is_relative_to_the_working_folder_of_each_call(tmp_path, monkeypatch):
    path = str(tmp_path / "pkg" / "model.py")
    (tmp_path / "pkg").mkdir()
    monkeypatch.chdir(tmp_path)
    assert relative_location(path, 7, "model") == "pkg/model.py:7"
    monkeypatch.chdir(tmp_path / "pkg")  # the same call, another working folder: not an answer kept from before
    assert relative_location(path, 7, "model") == "model.py:7"
    assert relative_location(path, 7, "model", relative_to=str(tmp_path)) == "pkg/model.py:7"
    assert relative_location(os.sep + "elsewhere.py", 3, "other") == "other:3"  # outside the folder: by module
    assert relative_location(None, 3, None) == "unknown:3"


def test_an_installed_package_is_named_by_module_even_inside_the_project(tmp_path):
    """A venv inside the project holds micrograd: its location must not depend on where the venv is."""
    from adtrace.recording.callsite import relative_location

    engine = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "micrograd" / "engine.py"
    assert relative_location(str(engine), 54, "micrograd.engine", relative_to=str(tmp_path)) == "micrograd.engine:54"
    mine = tmp_path / "model.py"
    assert relative_location(str(mine), 3, "model", relative_to=str(tmp_path)) == "model.py:3"


def test_a_warning_through_an_exit_stack_points_at_the_users_line():
    """``record()`` entered through ``contextlib.ExitStack`` (or a ``contextmanager``): a warning
    it gives when it ends names the user's line, not contextlib's."""
    import contextlib

    import autograd.core as core
    import pytest

    import adtrace

    original = core.add_outgrads
    try:
        with pytest.warns(adtrace.PatchConflictWarning) as caught:
            with contextlib.ExitStack() as stack:
                stack.enter_context(adtrace.record())
                core.add_outgrads = lambda prev, g: original(prev, g)
    finally:
        core.add_outgrads = original
    assert [w.filename for w in caught] == [__file__]
