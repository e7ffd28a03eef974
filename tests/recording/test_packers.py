"""Events written by name: every packer writes the layout the event log reads back, and a write with a
field missing, misnamed or out of order fails loudly (inlined writes at import)."""

import dataclasses
import importlib.util
import subprocess
import sys
import textwrap
import traceback

import pytest

from adtrace.recording import eventlog, events, packers
from adtrace.recording.autograd.backward import BackwardQueries
from adtrace.recording.eventlog import EventLog
from adtrace.recording.events import (EVENT_TYPES, FORM_STEP, LABELS, NO_PREVIOUS, ONE_ITEM, PAIR, TAIL, AddOutgrads,
                                      VISITS, Event, Is, NodeCreated, Same, ToposortYielded, VJPCalled, layout)
from adtrace.recording.packers import parameters, write


def sample(event_type, salt=""):
    """An event of ``event_type`` whose every field has a value of its own."""
    fields = {}
    for name, how in layout(event_type):
        if how == PAIR:
            fields[name] = (f"{name}{salt}", name == "result")
        elif how == LABELS:
            fields[name] = (f"v1_{name}{salt}", f"v2_{name}{salt}")
        elif how == TAIL:
            fields[name] = (f"{name}{salt}-0", f"{name}{salt}-1", f"{name}{salt}-2")
        else:
            fields[name] = f"{name}{salt}"
    return event_type(**fields)


def by_name(event):
    """The keywords a recorder writes ``event`` with: a pair as value and flag, labels joined."""
    fields = {}
    for name, how in layout(type(event)):
        value = getattr(event, name)
        if how == PAIR:
            fields[name], fields[f"{name}_flag"] = (None, NO_PREVIOUS) if value is None else value
        elif how == LABELS:
            fields[name] = ",".join(value)
        else:
            fields[name] = value
    return fields


def test_every_packer_writes_what_the_event_log_reads_back():
    events = [sample(t, salt) for salt in ("", "-again") for t in EVENT_TYPES]  # each read where the last ends
    log = EventLog()
    for event in events:
        write(log.values, type(event), **by_name(event))
    assert [log.event(i) for i in range(len(log))] == events


def test_a_first_contribution_has_no_previous_pair():
    event = sample(AddOutgrads)
    first = AddOutgrads(**{**{name: getattr(event, name) for name, _ in layout(AddOutgrads)}, "previous": None})
    log = EventLog()
    write(log.values, AddOutgrads, **by_name(first))
    assert log.event(0).previous is None and log.event(0) == first


def _in_form(event_type, form):
    """A sample event of ``event_type`` whose fields fit ``form`` (a stored form's conditions)."""
    given = by_name(sample(event_type))  # (as written: a pair as value and flag)
    for name, how in form.items():
        if type(how) is Is:
            given[name] = how.value
        elif how is ONE_ITEM:
            given[name] = given[name][:1]
    for name, how in form.items():
        if type(how) is Same:
            given[name] = given[how.name] = 2.5  # (a float: kept as it is)
    fields = {}
    for name, how in layout(event_type):
        if how == PAIR:
            flag = given[f"{name}_flag"]
            fields[name] = None if flag is NO_PREVIOUS else (given[name], flag)
        elif how == LABELS:
            fields[name] = tuple(given[name].split(","))
        else:
            fields[name] = given[name]
    return event_type(**fields)


@pytest.mark.parametrize("event_type, k", [(t, k) for t in EVENT_TYPES for k in range(1, len(t.forms) + 1)])
def test_an_event_in_a_shorter_stored_form_reads_back_the_same(event_type, k, tmp_path):
    """Written by the packer or inline, an event that fits a stored form is stored in that form or an earlier
    one (fewer slots), and read back as the same event, wherever it stands in the log."""
    event = _in_form(event_type, event_type.forms[k - 1])
    writer = load(tmp_path, f"""
        def go(self, values, {', '.join(parameters(event_type))}):
            write(values, {event_type.__name__}, {', '.join(f'{p}={p}' for p in parameters(event_type))})
    """, name=f"form_{event_type.__name__}_{k}")
    for how in (lambda values, fields: write(values, event_type, **fields),
                lambda values, fields: writer().go(values, **fields)):
        log = EventLog()
        how(log.values, by_name(sample(event_type)))  # (whole)
        whole = len(log.values)
        how(log.values, by_name(event))
        assert 0 < log.values[whole][0] // FORM_STEP <= k
        assert len(log.values) - whole < whole
        how(log.values, by_name(sample(event_type, "-again")))
        read = event
        if event_type is ToposortYielded and event.position is VISITS:  # counted: one visit of its query before
            read = dataclasses.replace(event, position=1)
        assert [log.event(i) for i in range(3)] == [sample(event_type), read, sample(event_type, "-again")]
        assert log.events_from(0) == [sample(event_type), read, sample(event_type, "-again")]


def test_a_stored_form_keeps_what_its_values_are():
    """An argnums equal to autograd's (0,) but not the very tuple, a result equal to the contribution but not
    the same array (copy-on-write corrects each apart), a first position 1: stored whole."""
    import numpy as np
    contribution = np.ones(2)
    cases = [sample(NodeCreated), AddOutgrads("rev", 0, 1, "v1_sin", 1, "v0_x", 1, None, 2.5, (2.5, False), False),
             AddOutgrads("rev", 0, 1, "v1_sin", 0, "v0_x", 0, None, contribution, (contribution, False), False)]
    cases[0] = NodeCreated(**{**{n: getattr(cases[0], n) for n, _ in layout(NodeCreated)}, "argnums": (0,),
                              "value": None, "site": None})
    for event in cases:
        log = EventLog()
        write(log.values, type(event), **by_name(event))
        # (field by field as a list: its == takes each array as itself; Python 3.13's dataclass == compares the
        # fields one by one, an array's == then an array of bools)
        read = log.event(0)
        assert log.values[0][0] == type(event).index and type(read) is type(event)
        names = [f.name for f in dataclasses.fields(event)]
        assert [getattr(read, name) for name in names] == [getattr(event, name) for name in names]


def test_an_empty_tail_and_empty_labels():
    vjp = VJPCalled(mode="rev", level=0, query=1, node="v0_root", outgrad=1.0, ingrads=())
    log = EventLog()
    write(log.values, VJPCalled, **by_name(vjp))
    write(log.values, VJPCalled, **by_name(vjp))
    assert len(log) == 2 and log.event(1) == vjp


@pytest.mark.parametrize("change", ["missing", "misnamed", "unknown"])
def test_a_write_with_a_field_missing_or_misnamed_fails(change):
    fields = by_name(sample(AddOutgrads))
    if change == "missing":
        del fields["parent"]
    elif change == "misnamed":
        fields["parents"] = fields.pop("parent")
    else:
        fields["kept"] = None
    values = []
    with pytest.raises(TypeError):
        write(values, AddOutgrads, **fields)
    assert values == []


def load(tmp_path, body, name="writers", indent=True, names=()):
    """A module whose class ``Writer`` is compiled by ``inline_writes`` (it needs its source in a file);
    ``body`` indented into the class (or, with ``indent=False``, written as it is), ``names`` its globals."""
    path = tmp_path / f"{name}.py"
    path.write_text("from adtrace.recording.events import *\n"
                    "from adtrace.recording.packers import inline_writes, write\n\n"
                    "@inline_writes\nclass Writer:\n"
                    + (textwrap.indent(textwrap.dedent(body), "    ") if indent else body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    vars(module).update(names)
    spec.loader.exec_module(module)
    return module.Writer


def test_inlined_writes_are_the_packers_own_statements(tmp_path):
    """One method per event type, each write compiled inline: no call left, the same slots written."""
    methods = "".join(
        f"def write_{t.__name__}(self, values, {', '.join(parameters(t))}):\n"
        f"    write(values, {t.__name__}, {', '.join(f'{p}={p}' for p in parameters(t))})\n"
        for t in EVENT_TYPES)
    writer = load(tmp_path, methods)
    for event_type in EVENT_TYPES:
        method = getattr(writer, f"write_{event_type.__name__}")
        assert "write" not in method.__code__.co_names
        fields = by_name(sample(event_type))
        inlined, called = [], []
        method(writer(), inlined, **fields)
        write(called, event_type, **fields)
        assert inlined == called


def test_inlined_writes_evaluate_their_fields_once_in_order(tmp_path):
    writer = load(tmp_path, """
        def go(self, values, seen):
            write(values, ToposortYielded, mode=seen("mode"), level=seen("level"), query=seen("query"),
                  node=seen("node"), position=seen("position"))
    """)
    seen, values = [], []
    writer().go(values, lambda name: seen.append(name) or name)
    assert seen == ["mode", "level", "query", "node", "position"]
    assert values == [(ToposortYielded.index, *seen[:3]), *seen[3:]]


def test_an_inlined_write_reads_a_local_name_as_it_was_before_a_later_field_rebinds_it(tmp_path):
    """A local given as a field is read in place (no copy into a name of its own), unless a field's own
    expression rebinds it (a walrus): then it is read in order, as a call would."""
    writer = load(tmp_path, """
        def plain(self, values, level, query):
            node = "n"
            write(values, AddOutgrads, mode="rev", level=level, query=query, node=node, position=abs(0), parent="p",
                  argnum=0, previous=None, previous_flag=None, contribution=None, result=None, result_flag=False,
                  replaced=False)

        def rebound(self, values, level, query):
            node = "before"
            write(values, AddOutgrads, mode="rev", level=level, query=query, node=node, position=(node := 0),
                  parent="p", argnum=0, previous=None, previous_flag=None, contribution=None, result=None,
                  result_flag=False, replaced=False)
    """)
    plain, called = [], []
    writer().plain(plain, 0, 7)  # (position tested and no name: evaluated first, after node)
    write(called, AddOutgrads, mode="rev", level=0, query=7, node="n", position=0, parent="p", argnum=0,
          previous=None, previous_flag=None, contribution=None, result=None, result_flag=False, replaced=False)
    assert plain == called
    assert not any(name.startswith("_adtrace_node") for name in writer.plain.__code__.co_varnames)
    rebound = []
    writer().rebound(rebound, 0, 7)
    assert rebound == [called[0], "before", *called[2:]]


@pytest.mark.parametrize("keywords, complaint", [
    ("mode=1, level=2, query=3, position=5", "takes mode, level, query, node, position"),  # missing
    ("mode=1, level=2, query=3, nod=4, position=5", "got mode, level, query, nod, position"),  # misnamed
    ("mode=1, level=2, query=3, position=5, node=4", "in this order"),  # out of order
])
def test_an_inlined_write_that_does_not_match_its_declaration_fails_at_import(tmp_path, keywords, complaint):
    with pytest.raises(TypeError, match=complaint) as raised:
        load(tmp_path, f"""
            def go(self, values):
                write(values, ToposortYielded, {keywords})
        """)
    lines = (tmp_path / "writers.py").read_text().splitlines()
    where = f"{tmp_path / 'writers.py'}:{next(n for n, line in enumerate(lines, 1) if 'write(values' in line)}"
    assert str(raised.value).startswith(where + " (Writer.go): ")  # the file and line, as a traceback says


def test_an_inlined_tail_must_be_a_name(tmp_path):
    """The tail is read twice (its count, then its items): an expression would run twice."""
    with pytest.raises(TypeError, match="give it as a name"):
        load(tmp_path, """
            def go(self, values, ingrads):
                write(values, VJPCalled, mode=1, level=2, query=3, node=4, outgrad=5, ingrads=tuple(ingrads))
        """)


def test_an_inlined_write_appends_to_a_name_or_an_attribute(tmp_path):
    """The values a write appends to are read as the tail is: an expression is refused at import."""
    with pytest.raises(TypeError, match="a name or an attribute"):
        load(tmp_path, """
            def go(self, values):
                write(self.target(values), ToposortYielded, mode=1, level=2, query=3, node=4, position=5)
        """)
    writer = load(tmp_path, """
        def go(self, values, ingrads):
            self.values = values
            write(self.values, VJPCalled, mode=1, level=2, query=3, node=4, outgrad=5, ingrads=ingrads)
    """, name="attribute")
    values = []
    writer().go(values, ())
    assert values == [(VJPCalled.index, 1, 2, 3), 4, 5, 0] and "write" not in writer.go.__code__.co_names


@pytest.fixture
def noted():
    """A kind declared after import, for this test only (the event types, layouts and packers put back)."""
    before = events.EVENT_TYPES

    @events.event
    class Noted(Event):
        kind = "test_packers_noted"
        node: str
        texts: tuple = events.stored(TAIL)

    yield Noted
    events.EVENT_TYPES = before
    eventlog.LAYOUTS.pop(Noted.index, None)
    packers.PACKERS.pop(Noted.index, None)


def test_a_kind_declared_after_import_is_written_by_name_and_inline(noted, tmp_path):
    log = EventLog()
    write(log.values, noted, mode="rev", level=0, query=1, node="v1", texts=("a", "b"))
    writer = load(tmp_path, """
        def go(self, values, texts):
            write(values, Noted, mode="rev", level=0, query=2, node="v2", texts=texts)
    """, name="noted", names={"Noted": noted})
    assert "write" not in writer.go.__code__.co_names
    writer().go(log.values, ("c",))
    assert [log.event(i) for i in range(len(log))] == [noted("rev", 0, 1, "v1", ("a", "b")),
                                                      noted("rev", 0, 2, "v2", ("c",))]


def test_inlined_code_keeps_its_lines_and_columns(tmp_path):
    """A traceback through an inlined method names the line and column of the file (its carets)."""
    writer = load(tmp_path, """
        def go(self, values):
            write(values, ToposortYielded, mode=1, level=2, query=3, node=4, position=5)
            return 1 + values[0].missing
    """, name="lines")
    assert "write" not in writer.go.__code__.co_names
    with pytest.raises(AttributeError) as raised:
        writer().go([])
    frame = traceback.extract_tb(raised.value.__traceback__)[-1]
    lines = (tmp_path / "lines.py").read_text().splitlines()
    assert frame.lineno == next(n for n, line in enumerate(lines, 1) if "missing" in line)
    if sys.version_info >= (3, 11):
        assert frame.colno == lines[frame.lineno - 1].index("values[0].missing")


def test_an_inlined_method_keeps_its_private_names_mangled(tmp_path):
    writer = load(tmp_path, """
        def go(self, values):
            self.__secret = 7
            write(values, ToposortYielded, mode=self.__secret, level=2, query=3, node=4, position=5)
    """, name="mangled")
    assert "write" not in writer.go.__code__.co_names
    values, instance = [], writer()
    instance.go(values)
    assert values[0][1] == 7 and instance._Writer__secret == 7


def test_an_inlined_method_may_call_super(tmp_path):
    writer = load(tmp_path, """
        def __repr__(self):
            values = []
            write(values, ToposortYielded, mode=1, level=2, query=3, node=4, position=5)
            return super().__repr__() + str(values)
    """, name="with_super")
    assert "write" not in writer.__repr__.__code__.co_names
    assert repr(writer()).endswith(str([(ToposortYielded.index, 1, 2, 3), 4, 5]))


def test_a_string_at_column_zero_inside_a_method(tmp_path):
    """A method with a multi-line string whose lines start at column 0 is inlined as the others."""
    writer = load(tmp_path, (
        "    def go(self, values):\n"
        "        text = '''first\n"
        "second'''\n"
        "        write(values, ToposortYielded, mode=text, level=2, query=3, node=4, position=5)\n"), indent=False,
        name="column_zero")
    values = []
    writer().go(values)
    assert values == [(ToposortYielded.index, "first\nsecond", 2, 3), 4, 5]
    assert "write" not in writer.go.__code__.co_names


def test_a_decorated_method(tmp_path):
    """A method a decorator returns as it is, is inlined (its lines kept); one a decorator wraps keeps the
    wrapper, which calls it with its writes as calls: the same values either way."""
    writer = load(tmp_path, """
        def same(method):
            return method

        def wrapping(method):
            import functools

            @functools.wraps(method)
            def wrapper(*args):
                return method(*args)
            return wrapper

        @same
        def kept(self, values):
            write(values, ToposortYielded, mode=1, level=2, query=3, node=4, position=5)
            return values[5]

        @wrapping
        def wrapped(self, values):
            write(values, ToposortYielded, mode=1, level=2, query=3, node=4, position=5)
    """, name="decorated")
    assert "write" not in writer.kept.__code__.co_names
    values = []
    with pytest.raises(IndexError) as raised:
        writer().kept(values)
    lines = (tmp_path / "decorated.py").read_text().splitlines()
    assert traceback.extract_tb(raised.value.__traceback__)[-1].lineno == lines.index("        return values[5]") + 1
    writer().wrapped(values)
    assert values == [(ToposortYielded.index, 1, 2, 3), 4, 5] * 2


RECORD = r"""
import sys, linecache
if sys.argv[1] == "no-source":  # the recorder modules' source cannot be read: their writes stay calls
    read = linecache.getlines
    def getlines(filename, module_globals=None):
        if "recording/autograd/" in filename.replace("\\", "/"):
            raise OSError("no source")
        return read(filename, module_globals)
    linecache.getlines = getlines
import autograd.numpy as anp
from autograd import grad, make_jvp
import adtrace
from adtrace.recording.autograd.backward import BackwardQueries
from adtrace.report.export import events_json
print("write" in BackwardQueries.on_vjp_called.__code__.co_names)
with adtrace.record() as rec:
    grad(grad(lambda x: anp.sin(x) * x))(0.5)
    grad(lambda x: anp.sum(x * x))(anp.array([1.0, 2.0]))
    make_jvp(lambda x: anp.tanh(x) * 2.0)(anp.array([1.0, 2.0]))(anp.array([1.0, 1.0]))
print(events_json(rec))
"""


def test_recorder_modules_without_their_source_write_the_same_events():
    """The fallback: a method whose source cannot be read keeps its ``write`` calls, and they write
    what the inlined statements do (each in a fresh interpreter, the recorder modules imported anew)."""
    runs = {}
    for how in ("no-source", "source"):
        done = subprocess.run([sys.executable, "-c", RECORD, how], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        runs[how] = done.stdout.split("\n", 1)
    assert runs["no-source"][0] == "True" and runs["source"][0] == "False"
    assert '"kind": "vjp"' in runs["source"][1] and '"kind": "jvp_node"' in runs["source"][1]
    assert runs["no-source"][1] == runs["source"][1]
    assert "write" not in BackwardQueries.on_vjp_called.__code__.co_names


class Appends(list):
    """A list that keeps each ``extend`` it is given."""

    def __init__(self):
        super().__init__()
        self.extends = []

    def extend(self, items):
        self.extends.append(list(items))
        super().extend(items)


def test_an_event_with_a_tail_is_appended_by_one_extend(tmp_path):
    """Its count and items in the same call as its other fields: a reader never sees half of it."""
    writer = load(tmp_path, """
        def go(self, values, ingrads):
            write(values, VJPCalled, mode=1, level=2, query=3, node=4, outgrad=5, ingrads=ingrads)
    """, name="one_extend")
    for how in (lambda values: write(values, VJPCalled, mode=1, level=2, query=3, node=4, outgrad=5, ingrads=(6, 7)),
                lambda values: writer().go(values, (6, 7))):
        values = Appends()
        how(values)
        assert values.extends == [[(VJPCalled.index, 1, 2, 3), 4, 5, 2, 6, 7]]


class CountedHeads(eventlog._Heads):
    """``HEADS`` that counts its lookups (given to an inlined writer's module as its heads)."""

    def __init__(self):
        super().__init__()
        self.lookups = 0

    def __getitem__(self, key):
        self.lookups += 1
        return super().__getitem__(key)


def test_an_inlined_write_looks_its_head_up_once_per_query_and_type(tmp_path):
    """A query's events of one type share a head: the second and later ones reuse it without building, hashing and
    comparing a key tuple; a new query, level or mode looks it up again."""
    heads = CountedHeads()
    writer = load(tmp_path, """
        def go(self, values, mode, level, query, node):
            write(values, ToposortYielded, mode=mode, level=level, query=query, node=node, position=VISITS)
    """, name="head_cells", names={packers.HEADS_NAME: heads})()
    first, second = int("1000"), int("1001")  # (query numbers: not ints Python keeps one object of)
    values, lookups = [], []
    for mode, level, query in [("rev", 0, first), ("rev", 0, first), ("rev", 0, first), ("rev", 0, second),
                               ("rev", 0, second), ("rev", 1, second), ("fwd", 1, second), ("fwd", 1, second),
                               ("rev", 0, first)]:
        writer.go(values, mode, level, query, "v1")
        lookups.append(heads.lookups)
    assert lookups == [1, 1, 1, 2, 2, 3, 4, 4, 5]
    tag = ToposortYielded.index + FORM_STEP
    assert values[::2] == [(tag, "rev", 0, 1000)] * 3 + [(tag, "rev", 0, 1001)] * 2 + [
        (tag, "rev", 1, 1001), (tag, "fwd", 1, 1001), (tag, "fwd", 1, 1001), (tag, "rev", 0, 1000)]


@pytest.mark.parametrize("inline", [True, False])
def test_each_event_gets_its_own_head_whatever_was_written_before(inline, tmp_path):
    """Heads cached per type and stored form stay right when queries, levels, modes and forms interleave, and
    when a field is a different object equal to the last one's: each head is the one ``HEADS`` keeps for its
    fields (one tuple per distinct head)."""
    writer = load(tmp_path, """
        def add(self, values, mode, level, query, contribution):
            write(values, AddOutgrads, mode=mode, level=level, query=query, node="v2", position=0, parent="v1",
                  argnum=0, previous=None, previous_flag=NO_PREVIOUS, contribution=contribution, result=contribution,
                  result_flag=False, replaced=False)

        def add_rev(self, values, level, query, contribution):
            write(values, AddOutgrads, mode="rev", level=level, query=query, node="v2", position=0, parent="v1",
                  argnum=0, previous=None, previous_flag=NO_PREVIOUS, contribution=contribution, result=contribution,
                  result_flag=False, replaced=False)
    """, name="head_fields")()
    if not inline:
        writer.add = writer.add_rev = None  # (the packers, called by keywords)
    sequence = [("rev", 0, int("300")), ("rev", 0, int("300")), ("fwd", 0, int("300")), ("rev", 1, int("300")),
                ("rev", 1, None), ("rev", 1, int("301")), ("rev", 0, int("300")), ("fwd", 1, None),
                ("rev", 1, int("301")), ("rev", 1, int("302")), ("rev", 1, int("302")), ("rev", 1, int("303"))]
    values, expected = [], []
    for k, (mode, level, query) in enumerate(sequence):
        contribution = None if k % 3 == 0 else 2.5  # (two stored forms, each with its own head)
        if inline and mode == "rev" and k % 2:  # (a write whose mode is a constant: a cell of its own)
            writer.add_rev(values, level, query, contribution)
        elif inline:
            writer.add(values, mode, level, query, contribution)
        else:
            write(values, AddOutgrads, mode=mode, level=level, query=query, node="v2", position=0, parent="v1",
                  argnum=0, previous=None, previous_flag=NO_PREVIOUS, contribution=contribution, result=contribution,
                  result_flag=False, replaced=False)
        tag = AddOutgrads.index + FORM_STEP * (1 if contribution is None else 2)
        expected.append((tag, mode, level, query))
    heads = [v for v in values if type(v) is tuple]
    assert heads == expected
    assert all(eventlog.HEADS.get(head) is head for head in heads)
    log = EventLog()
    log.values.extend(values)
    assert [(e.mode, e.level, e.query) for e in log.events_from(0)] == [h[1:] for h in expected]
