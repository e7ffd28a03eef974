"""The code an engine runs its backward pass with, for reports and the page: which statement each
event stands for.

autograd's statements are fixed (``backward_pass``; each event class names its own). An engine
with its own ``backward()`` (micrograd's shape: ``recording/micrograd/code.py``) reads it from its
source when it is recorded: its ``EngineCode`` (held by the ``Recording``, so no later stage
imports the engine) gives each event the statement of that ``backward()`` that made it, by the
keys below, and carries the engine's operations (``ops``) for the reference and the checker.
"""

from dataclasses import dataclass, field


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
    statements: dict = field(default_factory=dict)  # an event's code_key() -> EngineStatement
    state: str = ".grad"  # what the engine keeps per value during the pass (autograd: outgrads)
    # its operations by the op as nodes name it: ``forward(op, n)``, ``derivatives(op, n)``, ``vjp(op, n)``, ``known``
    ops: object = field(default=None, compare=False, repr=False)
    title: str = ""    # how reports name it: "micrograd" (its own Value), a learner's class by its name ("MyValue")

    def statement_text(self, key):
        """The text of the statement under ``key`` (an event's ``code_key()``), or None."""
        found = self.statements.get(key)
        return None if found is None else found.text

    def statement(self, event):
        """The statement of this engine's ``backward()`` that made ``event`` (its text), or None."""
        return self.statement_text(event.code_key())
