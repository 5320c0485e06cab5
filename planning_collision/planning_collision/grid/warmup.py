"""Compile (or load from numba's on-disk cache) every grid kernel on tiny inputs.

Nodes call :func:`warmup` at start so the first real query does not pay the compile time.
All kernels use ``numba.njit(cache=True)``: the first run in a fresh environment compiles
and writes the cache (``__pycache__`` beside the modules, or ``NUMBA_CACHE_DIR``); later
processes load the compiled code from it.
"""

from __future__ import annotations

import time

import numpy as np

from planning_collision.common.work_sharing import start_helpers

from .contours import occupied_polygons
from .footprint import footprint_cells, footprint_collides
from .gridmap import GridMap
from .line_of_sight import line_of_sight, line_of_sight_batch, traversed_cells
from .sensor_layer import SensorLayer
from .validation import MODES


def warmup() -> float:
    """Run every kernel once on a 4 x 4 map; returns the seconds it took."""
    t0 = time.perf_counter()
    data = np.zeros((4, 4), dtype=np.int8)
    data[1, 2] = 100
    grid = GridMap(data, 0.5)
    starts = np.array([[0, 0], [3, 3]], dtype=np.int64)
    goals = np.array([[3, 2], [0, 1]], dtype=np.int64)
    for mode in MODES:
        traversed_cells((0, 0), (3, 2), mode)
        line_of_sight(grid, (0, 0), (3, 2), mode=mode)
        line_of_sight_batch(grid, starts, goals, mode=mode)
    box = np.array([[-0.3, -0.2], [0.3, -0.2], [0.3, 0.2], [-0.3, 0.2]])
    poses = np.array([[1.0, 1.0, 0.3], [0.2, 1.5, -1.0]])
    footprint_collides(grid, box, poses)
    footprint_cells(grid, box, poses[0])
    occupied_polygons(grid, 0.1)
    sensors = SensorLayer(2.0, 2.0, 0.5)
    sensors.add_rays((0.1, 0.1), [[1.7, 1.2]], [True], 0.0)
    sensors.add_points([[0.6, 0.6]], 0.0)
    start_helpers()  # the threads that large batches share their rows with
    return time.perf_counter() - t0
