"""The wrappers at forward mode's binding sites: JVPNode.__init__ and initialize_root (the
add_outgrads calls of sum_outgrads go through the reverse-mode wrapper, tagged by the frame)."""

import functools

from .state import state


def wrap_jvp_node_init(original):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorders = state.recorders
        if not recorders:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        if len(recorders) > 1:
            return _init_each(recorders, original, self, value, fun, args, kwargs, parent_argnums, parents)
        r = recorders[0]  # the common case, written out
        # Open a frame first: the JVP rule's sum_outgrads calls add_outgrads during __init__.
        frame = None
        if r.live:
            try:
                frame = r.begin_jvp_node(fun, parent_argnums, parents)
            except Exception as exc:
                r.fail(exc)
        try:
            original(self, value, fun, args, kwargs, parent_argnums, parents)
        except BaseException:
            if frame is not None:
                r.abort_jvp_node(frame)
            raise
        if frame is not None and r.live:
            try:
                r.end_jvp_node(frame, self, value, args)
            except Exception as exc:
                r.fail(exc)

    return __init__


def _init_each(recorders, original, node, value, fun, args, kwargs, parent_argnums, parents):
    frames = []
    for r in recorders:
        frame = None
        if r.live:
            try:
                frame = r.begin_jvp_node(fun, parent_argnums, parents)
            except Exception as exc:
                r.fail(exc)
        frames.append(frame)
    try:
        original(node, value, fun, args, kwargs, parent_argnums, parents)
    except BaseException:
        for r, frame in zip(recorders, frames):
            if frame is not None:
                r.abort_jvp_node(frame)
        raise
    for r, frame in zip(recorders, frames):
        if r.live and frame is not None:
            try:
                r.end_jvp_node(frame, node, value, args)
            except Exception as exc:
                r.fail(exc)


def wrap_jvp_initialize_root(original):
    @functools.wraps(original)
    def initialize_root(self, g):
        original(self, g)
        for r in state.recorders:
            if r.live:
                try:
                    r.on_jvp_root(self, g)
                except Exception as exc:
                    r.fail(exc)

    return initialize_root
