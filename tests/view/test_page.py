"""The page (`view/page.py`): deterministic, its text escaped where shown, its data inert and read back whole."""

import html
import json
import os
import re

import pytest
from autograd import grad

import adtrace
from adtrace.compare.traced_call import trace_call
from adtrace.view import page_data, render_page
from adtrace.view.page import embed
from seed import square
from view_cases import HOSTILE, SCRIPT_END, fan_out, hostile_primitive


def test_the_page_is_deterministic_and_has_no_paths():
    first = render_page(page_data(call=trace_call(fan_out, (0.7,))))
    second = render_page(page_data(call=trace_call(fan_out, (0.7,))))
    assert first == second
    assert os.getcwd() not in first and os.path.expanduser("~") + "/" not in first
    assert not re.search(r"0x[0-9a-f]{6,}", first)


@pytest.mark.parametrize("name", [HOSTILE, SCRIPT_END])
def test_labels_and_values_cannot_become_markup(name):
    double = hostile_primitive(name)
    with adtrace.record() as rec:
        grad(lambda x: double(x) * x)(3.0)
    data = page_data(rec, title=name)
    page = render_page(data)
    assert "<img" not in page.replace("&lt;img", "")  # the title is escaped, the data inert
    assert page.count("</script>") == 2  # the data's element and the scripts' element
    found = re.search(r'<script type="application/json" id="adtrace-data">(.*?)</script>', page, re.S)
    assert json.loads(found.group(1)) == data  # and it reads back whole
    assert name in data["graphs"][0]["nodes"]["primitive"]


def test_control_and_bidi_characters_in_the_title_are_shown_as_escapes():
    """A function's name with an ANSI escape, a right-to-left override and a line break: the page's
    <title> and <h1> show them as escapes, and hold none of them raw."""
    def f(x):
        return x * x

    f.__name__ = f.__qualname__ = "red\x1b[31m\u202egnp.exe\nsecond line"
    page = render_page(page_data(call=trace_call(f, (3.0,))))
    head = re.search(r"<title>(.*)</title>", page).group(1)
    heading = re.search(r'<h1 data-testid="title">(.*)</h1>', page).group(1)
    assert head == heading
    assert html.unescape(heading) == "adtrace: red\\x1b[31m\\u202egnp.exe\\nsecond line"
    assert "\x1b" not in page and "\u202e" not in page  # (the data's JSON is ASCII: escaped there too)
    shown = json.loads(re.search(r'id="adtrace-data">(.*?)</script>', page, re.S).group(1))
    assert dict(shown["summary"])["function"] == "red\\x1b[31m\\u202egnp.exe\\nsecond line"
    assert shown["code"] == page_data(call=trace_call(f, (3.0,)))["code"]


def test_text_in_the_page_data_is_shown_with_escapes_and_code_keeps_its_tabs():
    double = hostile_primitive("dbl\u202e\x1b")
    with adtrace.record() as rec:
        grad(lambda x: double(x) * x)(3.0)
    data = page_data(rec)
    data["code"]["rev"]["autograd"]["lines"][0] += "\t# a tab"
    found = re.search(r'id="adtrace-data">(.*?)</script>', render_page(data), re.S).group(1)
    shown = json.loads(found)
    assert "dbl\\u202e\\x1b" in shown["graphs"][0]["nodes"]["primitive"]
    assert shown["code"]["rev"]["autograd"]["lines"][0].endswith("\t# a tab")
    plain = page_data(call=trace_call(square, (3.0,)))
    assert embed(plain) in render_page(plain)  # text with nothing to escape is embedded as it is


def test_embedded_json_escapes_what_ends_a_script():
    text = embed({"a": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!-- & -->"}

