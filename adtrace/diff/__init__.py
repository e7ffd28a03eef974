"""Diff two backward passes (``Recording.diff``, ``adtrace diff A B``): their nodes aligned by structure
(``align.py``) from each side's view (``sides.py``), values compared within a relative tolerance
(``values.py``), the first divergence and the counts (``divergence.py``); ``calls.py`` records a call
to diff (autograd's VJP, or an engine's ``backward()``)."""

from .divergence import Diff, Divergence, NothingToDiff, diff

__all__ = ["diff", "Diff", "Divergence", "NothingToDiff"]
