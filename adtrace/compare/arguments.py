"""The argument a gradient is taken with respect to, and the function of it alone."""


def differentiated(args, argnum):
    """``args[argnum]``, or a clear error when it is out of range or cannot be differentiated."""
    if not 0 <= argnum < len(args):
        raise ValueError(f"argnum {argnum} is out of range for {len(args)} argument(s)")
    x = args[argnum]
    if x is None or isinstance(x, (bool, str, bytes, int)):
        raise TypeError(f"cannot differentiate with respect to a {type(x).__name__} ({x!r}): give a float, "
                        "a float array, or a tuple/list/dict of them")
    return x


def unary(f, args, argnum):
    """``f`` as a function of argument ``argnum`` alone, the others fixed (autograd's unary_f)."""

    def of_one(x):
        return f(*args[:argnum], x, *args[argnum + 1:])

    of_one.__name__ = getattr(f, "__name__", "f")
    return of_one
