"""Input checks the package's modules share."""
import numpy as np

from ._ncpkit import InputError


def vector(name, value, n=None, required=False):
    """value as a contiguous float vector (None stays None unless required); n: its size."""
    if value is None:
        if required:
            raise InputError("%s is required (a vector of numbers), not None" % name)
        return None
    v = np.ascontiguousarray(value, dtype=float).reshape(-1)
    if n is not None and v.size != n:
        raise InputError("%s has %d entries, the problem %d" % (name, v.size, n))
    return v
