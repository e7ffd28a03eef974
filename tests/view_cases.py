"""Functions the viewer's tests trace, and readers of what they compare: the Markdown report's
state snapshot rows, its forward-mode table, and the page data's deltas replayed in Python."""

import re

import autograd.numpy as anp
from autograd import grad, jacobian
from autograd.extend import defvjp, primitive

import adtrace

HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT_END = "</script><script>alert(2)</script>"


def fan_out(x):
    s = anp.sin(x)
    return s * (anp.exp(x) * anp.cos(s)) + anp.tanh(s)


def triple(x):
    """``3.0 * x``: x is argument 1 of ``multiply`` but its node's only parent (position 0)."""
    return 3.0 * x


def cube(x):
    return x * x * x


def first_derivative(x):
    return grad(cube)(x)


def sum_and_sine(x):
    return x * x + anp.sin(x)


def chain_of_22(x):
    """22 nodes, each layer feeding the next and x feeding every other one: taller than the page."""
    y = x
    for _ in range(4):
        y = anp.tanh(y) * x + anp.sin(y) * 0.5
    return anp.sum(y)


def long_values(x):
    """x (12 elements) used 6 times: its node_to_grad list holds 6 arrays, a long line."""
    return anp.sum(sum(anp.sin(x * k) for k in range(1, 7)))


def two_outputs(x):
    return anp.array([x[0] * x[1], anp.sin(x[2]) + x[0]])


def jacobian_recording():
    with adtrace.record() as rec:
        jacobian(two_outputs)(anp.array([1.0, 2.0, 3.0]))
    return rec


@primitive
def double_wrongly(x):
    return 2 * x


defvjp(double_wrongly, lambda ans, x: lambda g: 3 * g)  # deliberately wrong; the reference engine borrows it


def with_a_wrong_rule(x):
    return anp.sin(double_wrongly(x)) * x


def wrong_rule_call(check_nodes=True):
    """A call whose custom rule is wrong: finite differences fail, the engines agree (both use the rule);
    with ``check_nodes``, the per-node checker run as ``adtrace report`` runs it then."""
    from adtrace.checker import check_if_rule_suspected
    from adtrace.compare.traced_call import trace_call

    call = trace_call(with_a_wrong_rule, (0.7,))
    return check_if_rule_suspected(call, with_a_wrong_rule) if check_nodes else call


def hostile_primitive(name=HOSTILE):
    """``x -> 2x`` as a primitive whose name is markup."""

    @primitive
    def double(x):
        return 2 * x

    defvjp(double, lambda ans, x: lambda g: 2 * g)
    double.__name__ = double.fun.__name__ = name
    double.fun.__qualname__ = name
    return double


@primitive
def inner_grad_rule(x):
    return x ** 3


# The VJP of inner_grad_rule runs a backward pass of its own (a nested query).
defvjp(inner_grad_rule, lambda ans, x: lambda g: g * grad(lambda y: y ** 3)(x))


def nested(x):
    return inner_grad_rule(x) * 2.0


def recording_ended_inside_a_vjp():
    """A recording that ends inside the VJP of ``v1_cut_rule``, after that VJP ran a nested query
    (the recording leaves the VJP unreturned, as a recorder that stops there would)."""
    session = adtrace.record()

    @primitive
    def cut_rule(x):
        return x ** 3

    def vjp_maker(ans, x):
        def vjp(g):
            inner = grad(lambda y: y ** 3)(x)
            session.__exit__(None, None, None)
            return g * inner
        return vjp

    defvjp(cut_rule, vjp_maker)
    rec = session.__enter__()
    grad(lambda x: cut_rule(x) * 2.0)(1.5)
    return rec


def nested_recording():
    """A recording with a query run inside a node's VJP (``Recording.passes`` finds it)."""
    with adtrace.record() as rec:
        grad(nested)(1.5)
    return rec


def twice(a):
    return a + a


def backward_inside(a):
    """A function that calls ``backward()`` itself (on ``a * a``) before the caller's own pass."""
    square = a * a
    square.backward()
    return square * a


class StrayWriteValue:
    """micrograd's ``*`` whose backward also writes into the product's own ``.grad`` (a value that is
    none of its children: the write has no child position)."""

    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._backward = data, 0.0, lambda: None
        self._prev, self._op = set(_children), _op

    def __mul__(self, other):
        out = StrayWriteValue(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
            out.grad += 0.0
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def buggy_twice():
    """``a + a`` at 3 through a class whose ``__add__`` backward assigns (the classic bug)."""
    from adtrace.compare.traced_engine_call import trace_engine_call
    from value_classes import BuggyValue

    return trace_engine_call(twice, (3.0,), engine=BuggyValue)


def micrograd_leaves_made_before():
    """``a * b`` recorded, its leaves made before the recording, and never walked back: only
    ``(c * 4).backward()`` runs, whose ``c`` was made before the recording too."""
    from micrograd.engine import Value

    a, b, c = Value(2.0), Value(3.0), Value(1.0)
    with adtrace.record(engine=Value) as rec:
        a * b
        (c * Value(4.0)).backward()
    return rec


def autograd_node_made_before():
    """``sin(x) * 2`` with ``sin(x)`` made before ``record()`` (entered inside the function being
    differentiated): the product is recorded, its parent is not, and the backward pass runs after."""
    recordings = []

    def f(x):
        s = anp.sin(x)
        with adtrace.record() as rec:
            product = s * 2.0
        recordings.append(rec)
        return product

    grad(f)(1.0)
    return recordings[0]


# -------------------- the Markdown report, read back --------------------


def snapshot_rows(markdown):
    """``{query: [(statement, node label, outgrads after)]}`` from a report's state snapshot tables."""
    tables, query = {}, None
    for line in markdown.splitlines():
        heading = re.match(r"### Query (\d+)", line)
        if heading:
            query = int(heading.group(1))
            tables[query] = []
        elif query is not None and line.startswith("| ") and re.match(r"\| \d+\. ", line):
            cells = _cells(line)
            statement = re.sub(r"^\d+\. `(.*)`$", r"\1", cells[0])
            node = None if cells[1] == "-" else cells[1].split(" (")[0]  # (a named node: v1_sin (s@f.py:3))
            tables[query].append((statement, node, cells[5]))
        elif not line.startswith("|") and line.strip() and not line.startswith("#"):
            query = None
    return tables


def forward_tangents(markdown):
    """``{node: tangent}`` from a report's "Forward mode" table."""
    section = markdown.split("## Forward mode\n", 1)[1].split("\n## ", 1)[0]
    rows = [_cells(line) for line in section.splitlines() if line.startswith("| v")]
    return {cells[0].split(" (")[0]: cells[3] for cells in rows}  # (a named node: v1_sin (s@f.py:3))


def _cells(line):
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [re.sub(r"\\([!-/:-@[-`{-~])", r"\1", c.strip()) for c in cells]  # Markdown's backslash escapes


def dict_text(entries):
    """A dict panel's entries as the report writes ``outgrads``: ``{v0_root:(6,True)}``."""
    return "{" + ", ".join(f"{label}:{text}" for label, text in entries) + "}"


# -------------------- the page data, replayed --------------------


def replay(page_pass, labels):
    """After each step: (autograd's dict, the lecture's dict) as ``[(label, text)]`` lists, by
    applying the deltas as the page does (an independent reading of the data format)."""
    steps = page_pass["steps"]
    state, lecture = {}, {}
    for k in range(len(steps["statement"])):
        change = steps["state"][k]
        if change and change[0] == "pop":
            del state[change[1]]
        elif change and change[0] == "visit":  # (an engine whose .grad stays after the visit)
            pass
        elif change:
            state[change[1]] = change[2]
        change = steps["lecture"][k]
        if change:
            op, node, text = change
            entry = lecture.setdefault(node, {"items": [], "value": None})
            if op == "append":
                entry["items"].append(text)
            else:  # "sum" (reverse mode) or "set" (a tangent)
                entry["value"] = text
        yield ([(labels[n], t) for n, t in state.items()],
               {labels[n]: (list(e["items"]), e["value"]) for n, e in lecture.items()})


def zero_chain(n):
    """A scalar chain of ``4 n`` nodes whose input gradient is 0 (the output selects a constant), recorded
    without calls: explain reads each node's local derivative from its recorded VJP."""
    def f(x):
        y = x
        for _ in range(n):
            y = anp.abs(y) * 1.001 + 0.0 * y  # (abs: piecewise, its derivative not known where 0 reached it)
        return anp.maximum(y, 10.0)
    with adtrace.record(capture="full", sites=True) as rec:
        grad(f)(0.5)
    return rec


def query_scans(monkeypatch, make):
    """How many times ``make()`` reads a query's events (``Recording.query_events``)."""
    from adtrace.recording.recording import Recording

    counted, query_events = [], Recording.query_events

    def counting(self, query):
        counted.append(query)
        return query_events(self, query)
    monkeypatch.setattr(Recording, "query_events", counting)
    make()
    monkeypatch.undo()
    return len(counted)
