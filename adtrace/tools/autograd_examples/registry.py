"""The registry of examples: per example of autograd's sdist, the function a user differentiates,
the arguments it is called with (``() -> (args, kwargs)``, the form ``--args-from`` takes), and the
tolerance its own numerics allow."""

from dataclasses import dataclass
from typing import Callable, Optional

import autograd.numpy as np


@dataclass(frozen=True)
class Example:
    name: str  # examples/NAME.py
    function: Callable  # what is differentiated
    arguments: Callable  # () -> (args, kwargs)
    argnum: int = 0
    rtol: Optional[float] = None  # the tolerance the example's own numerics allow (None: the default)
    what: str = ""


EXAMPLES = {}  # name -> Example, in the order registered (drivers, then more_drivers)


def example(name, arguments, argnum=0, rtol=None):
    """Register the decorated function as the one differentiated for ``examples/NAME.py``."""
    def register(function):
        what = (function.__doc__ or "").strip().splitlines()[0]
        EXAMPLES[name] = Example(name, function, arguments, argnum, rtol, what)
        return function
    return register


def one_hot(rs, shape, classes):
    """Random one-hot rows: the labels or characters an example would read from its data set."""
    return np.eye(classes)[rs.randint(classes, size=shape)]
