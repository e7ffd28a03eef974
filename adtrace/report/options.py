"""What a report shows of a recording: how many rows, when a graph is grouped."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportOptions:
    max_rows: int = 200  # per table; the JSON export has every event
    collapse_above: int = 60  # graphs with more nodes are grouped by the user's source line
    max_groups: int = 40  # boxes of a collapsed graph (the smallest groups share one past this)
    max_queries: int = 10  # state-snapshot tables shown
