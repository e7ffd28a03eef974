"""Command-line targets and arguments."""

import sys

import numpy as np
import pytest

from adtrace.tools.targets import TargetError, arguments_from, load_target, parse_arg, parse_keyword


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


@pytest.fixture
def unloaded(tmp_path):
    """``tmp_path``; the modules loaded from it are taken out of ``sys.modules`` after the test."""
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.mark.parametrize("engine_first", [False, True])
def test_a_file_is_loaded_once_whichever_loads_it_first(unloaded, engine_first):
    (unloaded / "engine_once.py").write_text("class Value:\n    pass\n")
    (unloaded / "model_once.py").write_text("from engine_once import Value\n\ndef made():\n    return Value\n")
    path = list(sys.path)
    engine = load_target(f"{unloaded}/engine_once.py:Value") if engine_first else None
    made = load_target(f"{unloaded}/model_once.py:made")
    engine = engine or load_target(f"{unloaded}/engine_once.py:Value")
    assert made() is engine and load_target(f"{unloaded}/model_once.py:made") is made  # one module per file
    assert sys.path == path  # the files' folder was on it while they loaded


def test_a_file_named_as_a_standard_module_does_not_take_its_name(unloaded):
    assert "tabnanny" not in sys.modules  # (a standard module nothing here imports)
    (unloaded / "tabnanny.py").write_text("def f():\n    return 1\n")
    assert load_target(f"{unloaded}/tabnanny.py:f").__module__ == "adtrace_target_tabnanny"
    assert "tabnanny" not in sys.modules  # `import tabnanny` still gives the standard library's


def test_parse_arg_nan_inf_negative_and_dtype():
    assert np.isnan(parse_arg("nan")) and parse_arg("-inf") == -np.inf and parse_arg("-1e-3") == -0.001
    assert parse_arg("-1.5j") == -1.5j
    assert parse_arg("0.5", np.float32).dtype == np.float32 and parse_arg("3", np.float32) == 3  # an int stays
    assert parse_arg("[1j, 2]", np.float32).dtype == np.complex64
    # a scalar as a list's elements are: complex64 and float32 under float32; under float64 Python's own numbers stay
    assert type(parse_arg("1.5j", np.float32)) is np.complex64 and type(parse_arg("2.5", np.float32)) is np.float32
    assert type(parse_arg("1.5j", np.float64)) is complex and type(parse_arg("2.5", np.float64)) is float
    params = parse_arg("([1, 2], {'b': [[0.5]]})", np.float32)  # lists inside a tuple or dict: arrays too
    assert params[0].dtype == np.float32 and params[1]["b"].shape == (1, 1)
    with pytest.raises(TargetError, match="nest evenly"):
        parse_arg("[[1, 2], [3]]")
    with pytest.raises(TargetError, match="a list must hold numbers"):
        parse_arg("[None]")  # (numpy would make it nan)


@pytest.mark.parametrize("text, message", [
    ("[" * 65 + "]" * 65, "nested deeper than 64 levels"),
    ("-" * 50000 + "1", "is not a Python literal"),
    ("1" + "+1" * 20000, "is not a Python literal|nested deeper than 64 levels"),  # (3.10 parses it)
    ("[" + "1," * 60000 + "]", "longer than 100000"),
    ("os", "is not a Python literal"),
])
def test_parse_arg_bounds_a_literal_before_evaluating_it(text, message):
    with pytest.raises(TargetError, match=message) as raised:
        parse_arg(text)
    assert len(str(raised.value)) < 200  # the literal is abbreviated in the message


NUMPY_MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32  # (numpy 2.0 raised it from 32)


def test_a_literal_nests_up_to_64_levels_exactly():
    lists = min(63, NUMPY_MAX_DIMS)  # 63 lists in a literal of 64 levels (numpy 1.x: its arrays' 32 dimensions)
    assert parse_arg("[" * lists + "1.0" + "]" * lists).ndim == lists
    assert parse_arg("(" * 64 + "1.0" + ",)" * 64) is not None  # (tuples: no array, whatever numpy's limit)
    for deeper in ("(" * 65 + "1.0" + ",)" * 65, "[" * 65 + "1.0" + "]" * 65):
        with pytest.raises(TargetError, match="nested deeper than 64 levels"):
            parse_arg(deeper)


@pytest.mark.skipif(NUMPY_MAX_DIMS >= 64, reason="numpy 2's 64 dimensions: a deeper literal is refused first")
def test_lists_deeper_than_numpy_allows_are_told_so():
    """numpy 1.x: 33 even lists are over its 32 dimensions, not lists that do not nest evenly."""
    with pytest.raises(TargetError, match=f"{NUMPY_MAX_DIMS + 1} lists deep: numpy .* at most {NUMPY_MAX_DIMS}"):
        parse_arg("[" * (NUMPY_MAX_DIMS + 1) + "1.0" + "]" * (NUMPY_MAX_DIMS + 1))


def test_parse_keyword():
    assert parse_keyword("scale=-2.5") == ("scale", -2.5)
    for bad in ("scale", "=1", "2x=1", "a-b=1"):
        with pytest.raises(TargetError, match="is not NAME=VALUE"):
            parse_keyword(bad)


def test_arguments_from_forms(tmp_path, monkeypatch):
    (tmp_path / "drivers_for_target.py").write_text(
        "def pair():\n    return (1.0, 2.0), {'scale': 3.0}\n"
        "def listed():\n    return [1.0, {'not': 'keywords'}]\n"
        "def positional_pair():\n    return ((1.0,), {'a': 2.0}), {}\n"
        "def scalar():\n    return 1.0\n")
    monkeypatch.chdir(tmp_path)
    assert arguments_from("drivers_for_target:pair") == ((1.0, 2.0), {"scale": 3.0})
    assert arguments_from("drivers_for_target:listed") == ((1.0, {"not": "keywords"}), {})
    assert arguments_from("drivers_for_target:positional_pair") == (((1.0,), {"a": 2.0}), {})
    with pytest.raises(TargetError, match="returned a float"):
        arguments_from("drivers_for_target:scalar")


def test_a_value_named_in_a_message_is_its_repr_cut_after_60_characters():
    from adtrace.tools.targets import _shown

    exactly = "a" * 58  # repr adds the two quotes: 60 characters
    assert _shown(exactly) == repr(exactly)
    assert _shown(exactly + "b") == repr(exactly + "b")[:60] + "...'"


@pytest.mark.parametrize("line", ["from pkg_hint.engine import Value", "from .engine import Value"])
def test_a_file_of_a_package_importing_its_package_is_told_its_module_form(unloaded, monkeypatch, line):
    """``pkg/model.py`` importing its own package by name (``from pkg.engine import ...``), as ``python -m``
    or an import from the project's folder runs it: loaded as a file, its folder first on ``sys.path``, the
    package is not found, and the error says to give it as ``pkg.model:NAME`` (it did for a relative import only)."""
    (unloaded / "pkg_hint").mkdir()
    (unloaded / "pkg_hint" / "__init__.py").write_text("")
    (unloaded / "pkg_hint" / "engine.py").write_text("class Value:\n    pass\n")
    (unloaded / "pkg_hint" / "model.py").write_text(f"{line}\n\n\ndef f(x):\n    return x\n")
    monkeypatch.chdir(unloaded)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(unloaded))])
    with pytest.raises(TargetError, match=r"\(a module of package pkg_hint: give it as pkg_hint\.model:NAME\)"):
        load_target("pkg_hint/model.py:f")
    monkeypatch.syspath_prepend(str(unloaded))
    assert load_target("pkg_hint.model:f")(2.0) == 2.0
