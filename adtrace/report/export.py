"""All events of a recording as JSON: complete where the Markdown tables are capped."""

import dataclasses
import json
import math

import numpy as np

from ..recording.values import ArraySummary, Boxed, ContainerSummary, Sparse


# The keys that make an object a tagged value (``{"array": ..., "dtype": ..., "shape": ...}``); a dict
# holding one is written as ``dict_items``, so an object with one of them is always the tagged value.
TAGS = frozenset({"complex", "array", "summary", "container_summary", "boxed", "sparse", "dict_items"})


def to_jsonable(value):
    """A kept value as plain JSON data (arrays as nested lists, complex as [re, im], a dict with a key
    that is not a string, or one of ``TAGS``, as ``{"dict_items": [[key, value], ...]}``)."""
    kind = type(value)
    if kind is float:  # (a scalar program's every value)
        return value if math.isfinite(value) else repr(value)
    if kind is str or value is None:
        return value
    if kind is tuple or kind is list:  # (not a subclass: a summary is a tuple too)
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if np.isfinite(value) else repr(value)  # "nan", "inf": JSON has no such numbers
    if isinstance(value, (complex, np.complexfloating)):
        return {"complex": [to_jsonable(value.real), to_jsonable(value.imag)]}
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        return {"array": to_jsonable(value.tolist()), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, ArraySummary):
        return {"summary": {"shape": list(value.shape), "dtype": value.dtype, "min": to_jsonable(value.min),
                            "max": to_jsonable(value.max), "mean": to_jsonable(value.mean)}}
    if isinstance(value, ContainerSummary):
        return {"container_summary": {"type": value.type, "length": value.length, "more": value.more,
                                      "leaves": [[path, to_jsonable(leaf)] for path, leaf in value.leaves]}}
    if isinstance(value, Boxed):
        return {"boxed": to_jsonable(value.value), "level": value.level}
    if isinstance(value, Sparse):
        return {"sparse": value.vspace, "index": value.index, "value": to_jsonable(value.value),
                "dense": to_jsonable(value.dense)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not TAGS.intersection(value):
            return {k: to_jsonable(v) for k, v in value.items()}
        # JSON's keys are strings: {1: 10.0, "1": 20.0} as an object would keep one entry of two;
        # and {"array": [1.0]} as an object would read as an array
        return {"dict_items": [[to_jsonable(k), to_jsonable(v)] for k, v in value.items()]}
    return type(value).__name__


def event_dict(event):
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = tuple(f.name for f in dataclasses.fields(event))
    return {"kind": event.kind, **{name: to_jsonable(getattr(event, name)) for name in names}}


_FIELD_NAMES = {}  # event class -> its fields' names (``dataclasses.fields`` per event was a fifth of the export)


def events_json(recording=None, **named):
    """Every event, in order, as a deterministic JSON document; several recordings by name
    (``reverse=..., forward=...``) give one document with one entry each."""
    def document(lazy):
        if recording is not None:
            return _recording_dict(recording, lazy)
        return {name: _recording_dict(r, lazy) for name, r in named.items()}

    parts = []
    try:
        _indented(document(True), parts, "\n")
    except _NotPlain:
        return json.dumps(document(False), indent=1, sort_keys=False) + "\n"
    return "".join(parts) + "\n"


class _Events:
    """A recording's events as ``_indented`` reads the list of their dicts: each made as it is written, then
    dropped (the whole list of a million-node recording's dicts was gigabytes)."""

    __slots__ = ("events",)

    def __init__(self, events):
        self.events = events

    def __len__(self):
        return len(self.events)

    def __iter__(self):
        return map(event_dict, self.events)


class _NotPlain(Exception):
    """A value ``_indented`` does not write (``json.dumps`` then writes the whole document)."""


_STRING = json.encoder.encode_basestring_ascii
_LONG = 1000  # items of a list


def _indented(value, parts, newline):
    """``json.dumps(value, indent=1)``'s text, appended to ``parts`` (json's own writer with an indent is
    pure Python, a generator per container: most of a large recording's export)."""
    if isinstance(value, str):
        parts.append(_STRING(value))
    elif type(value) is float:
        parts.append(float.__repr__(value) if math.isfinite(value) else
                     "NaN" if value != value else "Infinity" if value > 0 else "-Infinity")
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, (list, tuple)) or type(value) is _Events:
        if not len(value):
            parts.append("[]")
            return
        inner = newline + " "
        separator = "[" + inner
        if len(value) > _LONG:  # (each item's text joined: not millions of small strings alive at once)
            for item in value:
                written = [separator]
                _indented(item, written, inner)
                parts.append("".join(written))
                separator = "," + inner
        else:
            for item in value:
                parts.append(separator)
                _indented(item, parts, inner)
                separator = "," + inner
        parts.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + " "
        separator = "{" + inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain
            parts.append(separator + _STRING(key) + ": ")
            _indented(item, parts, inner)
            separator = "," + inner
        parts.append(newline + "}")
    else:
        raise _NotPlain


FORMAT = 1  # of a saved recording (``recording/saved.py`` reads this one; another is refused)


def _recording_dict(recording, lazy=False):
    """``lazy``: the events as ``_Events`` (only ``_indented`` reads them), not a list of their dicts."""
    events = recording.events
    document = {"format": FORMAT, "engine": recording.engine, "capture": recording.capture,
                "failure": recording.failure}
    if recording.argnum is not None:  # (a diff pairs the root with an engine's leaf of that position)
        document["argnum"] = recording.argnum
    document["events"] = _Events(events) if lazy else [event_dict(e) for e in events]
    return document


def save_recording(recording, path):
    """``Recording.save(path)``: every event as JSON (``recording/saved.load`` reads it back)."""
    from .files import write_file

    write_file(path, events_json(recording))
