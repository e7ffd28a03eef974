"""Stage 1, recording: an engine's real run becomes events.

``session.record()`` patches the engine (``autograd/``; a second engine, ``micrograd/``, sits beside
it, a configuration of ``value_class/``: hooking a class whose values keep their own gradient) for
the ``with`` block; its recorder writes each hooked call as an event of ``events.py`` into
a ``Recording``'s event log, keeping values as ``values.py`` says. Everything above this stage
reads recordings, never the engine's live objects.
"""
