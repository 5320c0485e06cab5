"""Compile (first run) or load from numba's on-disk cache (later runs) every kernel.

All kernels are ``@njit(cache=True)`` and the public wrappers convert inputs to one
canonical dtype/layout, so each kernel has a single specialisation and running every
public entry point once on tiny inputs is enough: a node calls :func:`warmup` at start and
no user request ever waits for the compiler.

Note for developers: numba checks a cached kernel against its *own* source file only.
Kernels that call kernels of other modules (the batch, penetration and obstacle kernels all
inline ``gjk_core``) keep a stale copy after an edit of ``gjk.py``; delete
``geometry/__pycache__/*.nbi`` and ``*.nbc`` after editing a kernel. Installed packages
are not affected: an install rewrites every file, which invalidates every entry.
"""

import time

import numpy as np

from planning_collision.common.work_sharing import start_helpers


def warmup():
    """Run every geometry kernel once on tiny inputs; returns the seconds it took."""
    from .batch import (
        boxes_overlap_batch,
        gjk_distance_batch,
        pack_shapes,
        penetration_batch,
        signed_distance_batch,
    )
    from .decompose import decompose
    from .distance import gjk_distance
    from .obstacles import ObstacleSet
    from .penetration import penetration, signed_distance
    from .sat import sat_mtv, sat_overlap
    from .shapes import ConvexShape

    t0 = time.perf_counter()
    a = ConvexShape.box((0.0, 0.0), 0.3, 2.0, 1.0)
    b = ConvexShape.polygon([(0.5, 0.0), (2.0, 0.2), (1.0, 1.5)])
    c = ConvexShape.circle((3.0, 0.0), 0.5)
    for x, y in ((a, b), (a, c), (b, c)):
        gjk_distance(x, y)
        penetration(x, y)
        signed_distance(x, y)
        sat_overlap(x, y)
        sat_mtv(x, y)
    sat_overlap(a, a.transformed(0.5, 0.0, 0.1))
    sat_overlap(b, b.transformed(0.5, 0.0, 0.1))
    pieces = decompose([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
    shapes = [a, b, c, *pieces]
    points, counts, radii = pack_shapes(shapes)
    other = points[::-1].copy(), counts[::-1].copy(), radii[::-1].copy()
    gjk_distance_batch(points, counts, radii, *other)
    signed_distance_batch(points, counts, radii, *other)
    penetration_batch(points, counts, radii, *other)
    boxes = np.array([[0.0, 0.0, 0.1, 2.0, 1.0], [9.0, 0.0, 0.0, 1.0, 1.0]])
    boxes_overlap_batch(boxes, boxes[::-1])
    obstacles = ObstacleSet(points, counts, radii)
    obstacles.index.query(np.array([0.0, 0.0, 1.0, 1.0]))
    obstacles.index.query_pairs(np.array([[0.0, 0.0, 1.0, 1.0]]))
    obstacles.nearest(points, counts, radii)
    obstacles.nearest(points, counts, radii, signed=True)
    obstacles.colliding(points, counts, radii, margin=0.1)
    # line-of-sight casting (raycast.py) rides on the same obstacle arrays
    from .raycast import cast_segments, segment_cast

    starts = np.array([[-5.0, -5.0], [0.0, 0.0]])
    goals = np.array([[5.0, 5.0], [0.1, 0.0]])
    cast_segments(obstacles, starts, goals)
    segment_cast(c, starts[0], goals[0])
    start_helpers()  # the threads that large batches share their rows with
    return time.perf_counter() - t0
