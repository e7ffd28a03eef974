"""A recording read back from its JSON export (``Recording.save(path)``, ``adtrace report --json``):
``load(path)`` gives a ``Recording`` whose events are the saved ones, so a recording made in another
process (another Python, another autograd) can be diffed, reported or replayed here.

The export (``report/export.py``) writes each kept value as plain JSON data: arrays as
``{"array": ..., "dtype": ..., "shape": ...}``, complex numbers as ``{"complex": [re, im]}``, summaries,
``Boxed`` and ``Sparse`` values tagged by key, a non-finite float as ``"nan"``/``"inf"``, tuples as
lists. Reading it back gives those values again; a tuple comes back as a tuple where the event declares
one (its parents, its pairs, its ``ingrads``), as a list inside a value (JSON cannot tell them apart).
"""

import json
from pathlib import Path

import numpy as np

from . import events
from .events import LABELS, PAIR, TAIL, layout
from .packers import parameters, write
from .recording import Recording, RecordingWriter
from .values import ArraySummary, Boxed, ContainerSummary, Sparse

_FLOATS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


class SavedRecordingError(ValueError):
    """A file that is not a recording adtrace saved (the message says why)."""


def load(source):
    """The ``Recording`` saved at ``source`` (a path), or in ``source`` itself (the JSON text, or the
    parsed document). A document of several recordings by name (``adtrace report --json``:
    ``reverse`` and ``forward``) gives its ``reverse`` one."""
    document = source
    if isinstance(source, (str, Path)) and not str(source).lstrip().startswith("{"):
        try:
            source = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SavedRecordingError(f"cannot read {source}: {exc}") from exc
    if isinstance(source, str):
        try:
            document = json.loads(source)
        except json.JSONDecodeError as exc:
            raise SavedRecordingError(f"not JSON: {exc}") from exc
    if isinstance(document, dict) and "events" not in document:
        named = [value for value in document.values() if isinstance(value, dict) and "events" in value]
        document = document.get("reverse", named[0] if named else None)
    if not isinstance(document, dict) or not isinstance(document.get("events"), list):
        raise SavedRecordingError("not a recording saved by adtrace (no list of events: save one with "
                                  "Recording.save(path) or adtrace report --json FILE)")
    return _recording(document)


FORMAT = 1  # (report/export.py writes it: a saved file without one is from before it, the same layout)
ENGINES, CAPTURES = ("autograd", "micrograd"), ("auto", "full", "structure")


def _recording(document):
    if document.get("format", FORMAT) != FORMAT:
        raise SavedRecordingError(f"saved in format {document['format']!r}; this adtrace reads format {FORMAT} "
                                  "(save it again with this version)")
    engine, capture = document.get("engine", "autograd"), document.get("capture", "auto")
    if engine not in ENGINES or capture not in CAPTURES:
        raise SavedRecordingError(f"engine {engine!r}, capture {capture!r}: adtrace records {' or '.join(ENGINES)} "
                                  f"at capture {', '.join(CAPTURES)}")
    recording = Recording(capture, engine)
    writer = RecordingWriter(recording)
    kinds = {t.kind: t for t in events.EVENT_TYPES}
    for number, saved in enumerate(document["events"]):
        event_type = kinds.get(saved.get("kind") if isinstance(saved, dict) else None)
        if event_type is None:
            raise SavedRecordingError(f"event {number}: not an event adtrace records: {str(saved)[:80]}")
        try:
            write(writer.values, event_type, **_stored(event_type, saved))
        except KeyError as exc:
            raise SavedRecordingError(f"event {number} ({event_type.kind}): no field {exc}") from exc
        except (TypeError, ValueError) as exc:
            raise SavedRecordingError(f"event {number} ({event_type.kind}): {exc!r}") from exc
    if document.get("failure"):
        writer.fail(document["failure"])
    argnum = document.get("argnum")
    if argnum is not None and (type(argnum) is not int or argnum < 0):
        raise SavedRecordingError(f"argnum {argnum!r}: not the number of an argument")
    recording.argnum = argnum
    return recording


def _stored(event_type, saved):
    """The fields of one saved event, as its packer takes them."""
    known = {"kind", *(name for name, _ in layout(event_type))}
    unknown = sorted(set(saved) - known)
    if unknown:
        raise ValueError(f"fields adtrace does not record: {', '.join(map(str, unknown))}")
    fields = {}
    for name, how in layout(event_type):
        value = saved[name]
        if how == PAIR:
            pair = None if value is None else tuple(value)
            fields[name], fields[f"{name}_flag"] = (None, None) if pair is None else (from_jsonable(pair[0]), pair[1])
        elif how == LABELS:
            fields[name] = ",".join(value)
        elif how == TAIL:
            fields[name] = tuple(from_jsonable(v) for v in value)
        else:
            value = from_jsonable(value)
            fields[name] = tuple(value) if name == "argnums" and value is not None else value
    assert set(fields) == set(parameters(event_type))
    return fields


def from_jsonable(data):
    """A kept value from its JSON form (``report.export.to_jsonable``'s inverse, tuples as lists)."""
    if isinstance(data, str):
        return _FLOATS.get(data, data)
    if isinstance(data, list):
        return [from_jsonable(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "array" in data:
        return np.array(from_jsonable(data["array"]), dtype=data["dtype"]).reshape(data["shape"])
    if "complex" in data:
        real, imag = (from_jsonable(v) for v in data["complex"])
        return complex(real, imag)
    if "summary" in data:
        s = data["summary"]
        return ArraySummary(tuple(s["shape"]), s["dtype"], *(from_jsonable(s[k]) for k in ("min", "max", "mean")))
    if "container_summary" in data:
        s = data["container_summary"]
        leaves = tuple((path, from_jsonable(leaf)) for path, leaf in s["leaves"])
        return ContainerSummary(s["type"], s["length"], leaves, s["more"])
    if "boxed" in data:
        return Boxed(from_jsonable(data["boxed"]), data["level"])
    if "sparse" in data:
        return Sparse(data["sparse"], data["index"], from_jsonable(data["value"]), from_jsonable(data["dense"]))
    if "dict_items" in data:
        return {_key(from_jsonable(k)): from_jsonable(v) for k, v in data["dict_items"]}
    return {k: from_jsonable(v) for k, v in data.items()}


def _key(key):
    return tuple(key) if isinstance(key, list) else key
