"""Compile (first run) or load from numba's cache (later runs) the fleet's own kernels: the
route map's distance transform and cost-to-go, and the passage map's labelling (routes.py,
passages.py), which orca_node builds from each map when route planning is on."""

import time

import numpy as np


def warmup() -> float:
    """Build a route map and a passage map of a tiny room with a door and ask them once;
    returns the seconds it took."""
    from .passages import coordination_world

    start = time.perf_counter()
    blocked = np.zeros((12, 12), dtype=bool)
    blocked[[0, -1], :] = blocked[:, [0, -1]] = True
    blocked[:, 6] = True
    blocked[5:7, 6] = False  # a door two cells wide
    coordination_world(blocked, 0.1, (0.0, 0.0, 0.0), 0.05)
    return time.perf_counter() - start
