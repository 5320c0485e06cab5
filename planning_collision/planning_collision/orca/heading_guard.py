"""A differential drive's forward speed held so that its real motion keeps off the obstacles.

ORCA chooses a holonomic velocity and the obstacle half-planes are hard for it; a
differential drive then tracks that velocity by turning while it drives, and its real motion
goes along its heading, not along the chosen velocity. ORCA's tracking-error allowance covers
one such transient, but step after step the heading lags the chosen velocity on the same side,
and the small sideways drift of each step adds up: along a wall the robot slides into it
(issue #22: clearance -0.05 m at a corridor's entrance).

:func:`guarded_forward_speeds` bounds each robot's forward speed by RVO2's own obstacle rule
applied to the motion the robot will really make: the speed towards any obstacle edge along
the heading is at most ``(distance - clearance) / time_horizon`` (zero once closer than
``clearance``). Turning is never limited, so a robot facing a wall turns on the spot until
its heading leads away or along it. Pure numpy over the edges of an ORCA obstacle set.
"""

from __future__ import annotations

import numpy as np

from .obstacles import ObstacleTree

# Heading components towards an edge below this count as parallel to it (a heading that
# converges onto a wall would otherwise never be allowed to move).
PARALLEL = 1e-3


def edge_distances(points: np.ndarray, obstacles: ObstacleTree) -> tuple[np.ndarray, np.ndarray]:
    """(N, V) distance from each point to each obstacle edge, and (N, V, 2) the unit vector
    from the edge's nearest point to the point (zero where the point is on the edge)."""
    a = obstacles.points
    b = obstacles.points[obstacles.next_vertex]
    ab = b - a
    length2 = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
    rel = points[:, None, :] - a[None, :, :]
    t = np.clip(np.einsum("nvj,vj->nv", rel, ab) / length2, 0.0, 1.0)
    away = rel - t[..., None] * ab[None, :, :]
    distance = np.hypot(away[..., 0], away[..., 1])
    unit = away / np.where(distance > 0.0, distance, 1.0)[..., None]
    return distance, unit


def guarded_forward_speeds(positions, headings, speeds, obstacles: ObstacleTree | None,
                           clearance, time_horizon: float) -> np.ndarray:
    """The forward speeds (N,) at most ``speeds`` (N, >= 0) for robots at ``positions``
    (N, 2) facing ``headings`` (N,): along its heading, no robot approaches an obstacle edge
    faster than ``(distance - clearance) / time_horizon``, and not at all once within
    ``clearance`` (N, or a scalar: the robot's radius and safety margin)."""
    speeds = np.asarray(speeds, dtype=np.float64).copy()
    positions = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
    if obstacles is None or obstacles.num_vertices == 0 or speeds.size == 0:
        return speeds
    headings = np.asarray(headings, dtype=np.float64)
    clearance = np.broadcast_to(np.asarray(clearance, dtype=np.float64), speeds.shape)
    distance, unit = edge_distances(positions, obstacles)
    forward = np.column_stack([np.cos(headings), np.sin(headings)])
    towards = -np.einsum("nvj,nj->nv", unit, forward)  # > 0: the heading leads to the edge
    reach = clearance[:, None] + speeds[:, None] * time_horizon
    relevant = (towards > PARALLEL) & (distance < reach)
    allowed = np.maximum(distance - clearance[:, None], 0.0) / time_horizon
    bound = np.where(relevant, allowed / np.where(relevant, towards, 1.0), np.inf)
    return np.minimum(speeds, bound.min(axis=1, initial=np.inf))
