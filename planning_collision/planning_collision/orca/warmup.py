"""Compile (first run) or load from numba's cache (later runs) every ORCA kernel."""

import time

import numpy as np


def warmup() -> float:
    """Run every kernel once on tiny inputs; returns the seconds it took.

    The ROS node calls this at start-up so that the first control step is not slowed
    down by compilation (the kernels are cached on disk with ``cache=True``). It also runs
    the geometry kernels orca_node's obstacle worker uses besides ORCA's own (a polygon's
    simplicity check by decomposition, the map polygons an obstacle covers): compiled or
    loaded on the worker's first obstacle set, they held the interpreter, and the control
    step with it.
    """
    from planning_collision.geometry import ConvexShape, ObstacleSet, decompose

    from .obstacles import build_obstacles, query_visibility
    from .velocities import compute_velocities

    start = time.perf_counter()
    parts = decompose([(0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 1.0), (1.0, 2.0), (0.0, 2.0)])
    vertices = np.array([[0.5, 0.5], [3.0, 3.0]])
    ObstacleSet.from_shapes([*parts, ConvexShape(vertices)]).nearest(
        vertices[:, None, :], np.ones(2, np.int64), np.zeros(2), max_distance=0.1)
    obstacles = build_obstacles([[(1.0, 1.0), (2.0, 1.0), (2.0, 2.0)], [(-3.0, 0.0), (-3.0, 1.0)]])
    query_visibility(obstacles, (0.0, 0.0), (3.0, 3.0), 0.1)
    positions = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.5]])
    compute_velocities(positions, np.zeros((3, 2)), np.ones((3, 2)), time_step=0.1, radius=0.3,
                       max_speed=1.0, neighbor_dist=5.0, max_neighbors=2, time_horizon=2.0,
                       time_horizon_obst=2.0, obstacles=obstacles, symmetry_breaking=1e-4,
                       return_lines=True, return_neighbors=True)
    return time.perf_counter() - start
