"""A node as the report's tables name it: its label, and beside it the user's variable where the source
assigns the node's value, ``v3_tanh (h@model.py:4)`` (``recording/names.py``'s rule: only the node that is
the assigned expression's value is named, so a name never stands for another node's value)."""

import re

from ..recording.names import named_site, node_site, variable_names


class Namer:
    """``namer(label)``: the label with the user's variable beside it (the label alone for a node without
    one); ``namer.site(label, site)``: a call site with the variable before it (``h@model.py:4``). A node's
    named site is made when a table shows it (tables are capped: a million-node report shows a few hundred)."""

    def __init__(self, recording):
        # (read once per recording: a report names nodes in several sections, each a walk over every node)
        self.names = recording.derived("names", variable_names) if recording is not None else {}
        self.nodes_table = recording.nodes if self.names else {}  # (read once: the property checks the log)
        self.calls_of = recording.calls if self.names else {}

    def __call__(self, label):
        name = self.names.get(label)
        named = name and named_site(name, node_site(self.nodes_table[label], self.calls_of.get(label)))
        return f"{label} ({named})" if named else label

    @property
    def named(self):
        """label -> its named site (``h@model.py:4``), every named node's (the page's table of nodes)."""
        nodes, calls = self.nodes_table, self.calls_of
        return {label: named_site(name, node_site(nodes[label], calls.get(label)))
                for label, name in self.names.items()}

    def site(self, label, site):
        return named_site(self.names.get(label), site)

    def in_cell(self, cell, labels):
        """``cell`` (text naming the nodes ``labels``, ``v4_multiply -> v3_tanh``) with each named one named."""
        for label in dict.fromkeys(labels):
            if label in self.names:
                cell = re.sub(rf"(?<![\w]){re.escape(label)}(?![\w])", lambda _: self(label), cell, count=1)
        return cell
