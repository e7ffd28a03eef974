"""Text from the user's program cannot be turned against the reader: a hostile names corpus
(script tags, event handlers, comments, ANSI escapes, NUL, bidirectional overrides, line breaks,
links) through every place a report puts a name, rendered by a CommonMark renderer with raw HTML
on; and through the terminal."""

import re

import pytest
from autograd.extend import defjvp, defvjp, primitive
from autograd import grad
from markdown_it import MarkdownIt
from html import escape as escape_html

from adtrace import record
from adtrace.compare.traced_call import trace_call
from adtrace.report import render, render_recording
from adtrace.report.format import cell, code, text, visible
from adtrace.report.mermaid import escape
from cli_run import adtrace

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<!-- the rest is hidden",
    "--> <!--",
    "\x1b[31mred\x1b[0m\x1b]0;title\x07",
    "nul\x00byte\x08\x7f\x85",
    "\u202eevil\u202c \u2066isolated\u2069 \u200fmark",
    "line\nbreak\n# Injected heading\n\n## Another",
    "carriage\rreturn\r\n### Heading",
    "pipe|cell || two",
    "`tick` ``two`` ```",
    "[link](javascript:alert(1)) ![image](x.png)",
    "&lt;script&gt; &#60;b&#62;",
    "back\\slash\\<b>",
    "line\u2028separator\u2029paragraph",
    "*emphasis* _under_ <https://example.com>",
]
INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
COMMONMARK = MarkdownIt("commonmark").enable("table")  # raw HTML passes through, as in many viewers


def hostile_call(name):
    @primitive
    def hostile(x):
        return 2.0 * x

    hostile.__name__ = name
    defvjp(hostile, lambda ans, x: lambda g: 2.0 * g)
    defjvp(hostile, lambda g, ans, x: 2.0 * g)

    def f(d):
        return hostile(d[name]) * d[name]

    f.__qualname__ = name
    return trace_call(f, ({name: 1.5},), mode="both")


def assert_harmless(markdown, expected_headings):
    assert not INVISIBLE.search(markdown), INVISIBLE.search(markdown)
    html = COMMONMARK.render(markdown)
    for tag in ("<script", "<img", "<!--", "<a ", "<b>"):
        assert tag not in html, (tag, html[max(0, html.find(tag) - 300):html.find(tag) + 300])
    assert headings(html) == expected_headings
    for block in markdown.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        assert len({len(re.findall(r"(?<!\\)\|", row)) for row in rows}) <= 1, block  # one column count per table


def headings(html):
    return re.findall(r"<h[1-6]>(.*?)</h[1-6]>", html)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_everywhere_in_a_report(name):
    markdown = render(hostile_call(name))
    expected = headings(COMMONMARK.render(render(hostile_call("benign"))))
    assert_harmless(markdown, [escape_html(f"adtrace report: {visible(name)}")] + expected[1:])


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_title_of_a_recording(name):
    with record() as rec:
        grad(lambda x: x * x)(3.0)
    expected = headings(COMMONMARK.render(render_recording(rec, title="benign")))
    title = f"adtrace recording of failing test {name}"
    assert_harmless(render_recording(rec, title=title), [escape_html(visible(title))] + expected[1:])


def test_visible_shows_what_would_hide_or_reorder_text():
    assert visible("a\x1b[31mb\x00c\u202ed\u2066e\nf\tg") == "a\\x1b[31mb\\x00c\\u202ed\\u2066e\\nf\\tg"
    assert visible("a\nb\tc", keep="\n\t") == "a\nb\tc"
    assert visible("plain · text ü") == "plain · text ü"


def test_each_escape_for_its_place():
    assert text("a\n# b <script> & `c` [d](e) \\") == "a\\\\n# b \\<script> \\& \\`c\\` [d\\](e) \\\\"
    assert cell("a|b\nc\\") == "a\\|b<br>c\\\\"
    assert cell("`x<y|z` <b>") == "`x<y\\|z` \\<b>"  # code stays code (shown literally), text is escaped
    assert cell("``a`b`` <i>") == "``a`b`` \\<i>"
    assert cell("open ` only <i>") == "open \\` only \\<i>"
    assert code("a`b") == "`` a`b ``" and code("a``b`") == "``` a``b` ```" and code("plain") == "`plain`"
    assert code("x\ny") == "`x\\ny`"
    assert escape('x"]\n\x1b') == "x#quot;#93;<br/>\\x1b"


def test_the_terminal_gets_no_control_characters(tmp_path):
    (tmp_path / "hostile.py").write_text('''
import autograd.numpy as np
from autograd.extend import defjvp, defvjp, primitive

NAME = "\\x1b[2J\\x1b[31mred\\u202e\\x00<script>"

@primitive
def hostile(x):
    return 2.0 * x

hostile.__name__ = NAME
defvjp(hostile, lambda ans, x: lambda g: 2.0 * g)

def f(x):
    return hostile(x) * x

f.__qualname__ = NAME

def fails(x):
    raise ValueError(NAME)
''')
    for args in (["report", "hostile.py:f", "--at", "1.5"], ["check", "hostile.py:f", "--at", "1.5"],
                 ["report", "hostile.py:fails", "--at", "1.5"]):
        out = adtrace(*args, cwd=tmp_path)
        assert out.returncode in (0, 2), out.stderr
        assert not INVISIBLE.search(out.stdout) and not INVISIBLE.search(out.stderr), (out.stdout, out.stderr)
        assert re.search(r"\\+x1b\[31mred\\+u202e\\+x00", out.stdout + out.stderr)  # shown, as Markdown escapes it
