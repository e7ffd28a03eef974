"""The wrappers at forward mode's binding sites: JVPNode.__init__ and initialize_root (the
add_outgrads calls of sum_outgrads go through the reverse-mode wrapper, tagged by the frame)."""

import functools


def wrap_jvp_node_init(original, active):
    @functools.wraps(original)
    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        recorder = active.get()
        if recorder is None:
            return original(self, value, fun, args, kwargs, parent_argnums, parents)
        # a frame first: the JVP rule's sum_outgrads calls add_outgrads while the node is built
        frame = recorder.begin_jvp_node(fun, parent_argnums, parents)
        try:
            original(self, value, fun, args, kwargs, parent_argnums, parents)
        except BaseException:
            recorder.abort_jvp_node(frame)
            raise
        recorder.end_jvp_node(frame, self, value, args)

    return __init__


def wrap_jvp_initialize_root(original, active):
    @functools.wraps(original)
    def initialize_root(self, g):
        original(self, g)
        recorder = active.get()
        if recorder is not None:
            recorder.on_jvp_root(self, g)

    return initialize_root
