"""The 2-D vector that kernels return (a named tuple, usable inside numba code)."""

from typing import NamedTuple


class Vector(NamedTuple):
    """A 2-D vector (a velocity, an offset or a unit direction)."""

    x: float
    y: float
