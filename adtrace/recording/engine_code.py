"""The code an engine runs its backward pass with, for reports and the page: which statement each
event stands for.

autograd's statements are fixed (``backward_pass``; each event class names its own). An engine of
micrograd's shape has its own ``backward()``, read from its source when it is recorded: its
``EngineCode`` (held by the ``Recording``, so no later stage imports the engine) gives each event
the statement of that ``backward()`` that made it. For micrograd 0.1.0:

    backward_start   self.grad = 1
    toposort         for v in reversed(topo):     (the loop that calls each _backward: the visit order)
    vjp              v._backward()
    add_outgrads     v._backward()                (the closure's write into a child's .grad)
    write            v.grad = 0                   (a write by backward() itself, if it makes one)
    backward_end     def backward(self):          (it returns; the gradients stay on the values)
    node             Value(data, _children, _op)  (not in backward(): a value made by an operation)
"""

from dataclasses import dataclass, field

# the keys of EngineCode.statements: event kinds, and "write" (add_outgrads by backward() itself)
KEYS = ("node", "backward_start", "toposort", "vjp", "add_outgrads", "write", "backward_end")


@dataclass(frozen=True)
class EngineStatement:
    text: str    # as the source writes it (a compound statement: its header line)
    line: object  # its index in EngineCode.lines, None when the source was not readable


@dataclass(frozen=True)
class EngineCode:
    engine: str        # the engine's name, as record(engine=...) takes it: "micrograd"
    name: str          # what ran: "Value.backward"
    location: str      # where it is defined, "path:line" (relative) or "module:line"
    lines: tuple       # its source, dedented
    statements: dict = field(default_factory=dict)  # KEYS -> EngineStatement
    state: str = ".grad"  # what the engine keeps per value during the pass (autograd: outgrads)
    # its operations by the op as nodes name it: ``forward(op, n)``, ``derivatives(op, n)``, ``known``
    ops: object = field(default=None, compare=False, repr=False)

    def statement_text(self, key):
        """The text of the statement under ``key`` (``KEYS``), or None."""
        found = self.statements.get(key)
        return None if found is None else found.text

    def statement(self, event):
        """The statement of this engine's ``backward()`` that made ``event`` (its text), or None."""
        return self.statement_text("write" if event.kind == "add_outgrads" and event.node is None else event.kind)
