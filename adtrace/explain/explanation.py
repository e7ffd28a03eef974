"""What an explanation says, typed: ``Explanation`` per input element, its ``Cause``s and the
per-line ``Share``s of its gradient; ``to_json()`` gives issue 27's field names (``selector``,
``gradient`` as a number or ``"nan"``/``"inf"``/``"-inf"``, ``verdict``, ``causes``, ``attribution``)."""

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

VERDICTS = ("contributions", "zero", "nonfinite")


@dataclass(frozen=True)
class Cause:
    """A node that made the gradient what it is. ``reason``, a short kebab word: for a zero,
    ``relu-off`` (max/min against 0), ``saturated`` (against another constant), ``not-selected`` (the other
    of two traced values; not the maximum of ``np.max``), ``where-unselected-branch``, ``clip-saturated``,
    ``tanh-saturated`` (a value class's tanh at exactly +-1), ``zero-derivative``, ``comparison``
    (a non-differentiable primitive: ``node`` is ``"floor (no node)"``), ``independent``,
    ``left-trace``, ``nondeterministic`` (the output changes from call to call: cannot tell),
    ``cancellation``, ``unknown`` (a node that could not be followed); for a NaN or
    Inf, ``where-unselected-branch``, ``log-of-zero``, ``sqrt-at-zero``, ``division-by-zero``,
    ``power-at-zero``, ``norm-at-zero``, ``infinite-derivative``, ``overflow``, ``nonfinite-input``,
    ``nonfinite-seed``, and for a forward origin the domain errors ``sqrt-of-negative``,
    ``log-of-negative``, ``power-of-negative``, ``domain-error`` and ``inf-minus-inf``,
    ``zero-times-inf``, ``inf-over-inf``; beside a gradient's contributions, ``integer-cast`` (autograd's
    VJP passes the gradient through ``x.astype(int)``, whose derivative is 0), and for a value class
    ``grad-replaced`` (a ``_backward`` assigned ``.grad = c`` over a value not 0, which was lost).
    ``fraction``: the share of the element's maximal paths it cut (zero verdicts); ``values``: the
    numbers that did it, by name (``outgrad``, ``ingrad``, ``input[argnum]``, ``derivative``, ``output``)."""

    node: str
    primitive: str
    argnum: Optional[int]
    line: Optional[str]
    reason: str
    fraction: Optional[float] = None
    detail: str = ""
    values: dict = field(default_factory=dict)
    forward: bool = False  # the forward value was already non-finite here (the forward origin)
    name: Optional[str] = None  # the user's variable the node's value is assigned to (``h``), where there is one

    def to_json(self):
        out = {"node": self.node, "primitive": self.primitive, "argnum": self.argnum, "line": self.line,
               "reason": self.reason}
        if self.fraction is not None:
            out["fraction"] = self.fraction
        if self.detail:
            out["detail"] = self.detail
        if self.values:
            out["values"] = {name: number(v) for name, v in self.values.items()}
        if self.forward:
            out["forward"] = True
        if self.name:
            out["name"] = self.name
        return out


@dataclass(frozen=True)
class Path:
    """One path from the input to the output (labels, input first) and its product of local partials."""

    nodes: tuple
    value: Any


@dataclass(frozen=True)
class Explanation:
    selector: str
    gradient: Any
    verdict: str
    causes: tuple = ()
    attribution: tuple = ()  # contributions.Share per line, largest first
    contributions: tuple = ()  # contributions.Contribution, in the recorded order
    exact: Optional[bool] = None  # the contributions fold to the recorded gradient bit for bit
    rounding: Any = None  # gradient - sum of the shares, exactly (a Fraction), when finite
    paths: tuple = ()  # Path, largest magnitude first (scalar graphs)
    more_paths: int = 0  # paths left out
    more_paths_sum: Any = None  # their products' sum

    def to_json(self):
        return {
            "selector": self.selector,
            "gradient": number(self.gradient),
            "verdict": self.verdict,
            "causes": [c.to_json() for c in self.causes],
            "attribution": [{"line": s.line, "share": number(s.share), "contributions": s.contributions}
                            for s in self.attribution],
            "exact": self.exact,
            "rounding": None if self.rounding is None else float(self.rounding),
            "paths": [{"nodes": list(p.nodes), "value": number(p.value)} for p in self.paths],
            "more_paths": self.more_paths,
            "paths_differ": self.paths_sum()[1],
        }

    def paths_sum(self):
        """``(total, differs)``: the paths' products summed (the listed ones and the rest), and whether that
        sum is not the recorded gradient beyond rounding (the table shows the derivative, the gradient is
        what the pass wrote: a lost write, a wrong rule); ``(None, None)`` without paths or where a value is
        not finite or not known."""
        values = [p.value for p in self.paths] + ([self.more_paths_sum] if self.more_paths else [])
        if not self.paths or self.gradient is None or any(v is None for v in values):
            return None, None
        with np.errstate(all="ignore"):
            values = np.asarray(values, dtype=complex)
            total, gradient = values.sum(), complex(np.asarray(self.gradient)[()])
            if not (np.isfinite(total) and np.isfinite(gradient)):
                return None, None
            if not values.imag.any() and gradient.imag == 0:  # (a real graph's: a real number)
                total = float(total.real)
            return total, bool(abs(total - gradient) > 1e-6 * max(np.abs(values).sum(), abs(gradient)))


class Explanations(list):
    """The ``Explanation``s of one recorded gradient, with its scale: ``lines`` (``scale.Scale`` per
    source line, in the program's order) and ``leaves`` (per part of the input)."""

    lines = ()
    leaves = ()
    summed = None  # the output's number of elements when more than one: the gradient is its sum's


def number(value):
    """A number for JSON: a float, or ``"nan"``, ``"inf"``, ``"-inf"``; None stays None."""
    if value is None:
        return None
    value = np.asarray(value)[()]
    if np.iscomplexobj(value):
        return str(value)
    value = float(value)
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def verdict_of(gradient):
    if gradient is None or not np.isfinite(gradient):
        return "nonfinite"
    return "zero" if gradient == 0 else "contributions"
