"""Growable output buffers for numba kernels that do not know their output size upfront.

Written with explicit loops on purpose: numba compiles slice assignment, ``np.full`` and
array expressions through its generic broadcasting machinery, which costs seconds of
compile time per call site; these helpers compile in a fraction of a second.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def grow_int(buf, used):
    """A copy of int64 ``buf`` with twice the capacity (plus 16); first ``used`` kept."""
    out = np.empty(2 * buf.shape[0] + 16, np.int64)
    for i in range(used):
        out[i] = buf[i]
    return out


@njit(cache=True)
def head_int(buf, used):
    """A new int64 array holding ``buf[:used]``."""
    out = np.empty(used, np.int64)
    for i in range(used):
        out[i] = buf[i]
    return out
