"""Command-line targets and arguments."""

import numpy as np
import pytest

from adtrace.tools.targets import TargetError, load_target, parse_arg


def test_parse_arg():
    assert parse_arg("3") == 3 and isinstance(parse_arg("3"), int)  # an index stays an int
    assert parse_arg("[[1, 2], [3, 4]]").dtype == np.float64
    assert parse_arg("'text'") == "text" and parse_arg("None") is None
    with pytest.raises(TargetError, match="not a Python literal"):
        parse_arg("import os")
    with pytest.raises(TargetError, match="a list must hold numbers"):
        parse_arg("[1, 'a']")


def test_load_target_by_module_and_path(tmp_path, monkeypatch):
    (tmp_path / "mod_for_target.py").write_text("class K:\n    @staticmethod\n    def f(x):\n        return x\n")
    monkeypatch.chdir(tmp_path)
    assert load_target("mod_for_target:K.f")(2.0) == 2.0
    assert load_target(f"{tmp_path}/mod_for_target.py:K.f")(3.0) == 3.0
    with pytest.raises(TargetError, match="has no attribute"):
        load_target("mod_for_target:g")
