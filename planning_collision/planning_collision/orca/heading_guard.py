"""A differential drive's forward speed held so that its real motion keeps off the obstacles.

ORCA chooses a holonomic velocity and the obstacle half-planes are hard for it; a
differential drive then tracks that velocity by turning while it drives, and its real motion
goes along its heading, not along the chosen velocity. ORCA's tracking-error allowance covers
one such transient, but step after step the heading lags the chosen velocity on the same side,
and the small sideways drift of each step adds up: along a wall the robot slides into it
(issue #22: clearance -0.05 m at a corridor's entrance).

:func:`guarded_forward_speeds` bounds each robot's speed along its heading (or against it,
when reversing) by RVO2's obstacle rule applied to the motion the robot will really make:
driving straight at that speed for ``time_horizon`` keeps the disc at least a floor away from
every obstacle edge. The floor is ``clearance`` (the robot's radius and safety margin), or,
for the edges of an obstacle the robot is already closer to than that, its distance to that
obstacle now: the robot never gets closer to an obstacle it is within ``clearance`` of, but it
may slide along it and round its corners. For an edge met face on this is RVO2's rule, an
approach speed of at most ``(distance - floor) / time_horizon``; for an edge's end (a
vertex) it is the exact distance driven before the disc reaches the floor, so passing a
corner at the same distance is not an approach. Turning is never limited: a robot facing a
wall turns on the spot until its heading leads along or away from it.

Why the floor is per obstacle and not per edge: an edge's distance is its nearest point's,
and beside a corner (or where the obstacle tree split a straight face) the nearest point of
the next edge is the shared vertex; driving parallel to the face, past it, the distance to
that vertex falls to the distance to the face. Held per edge, a robot within ``clearance``
of a face could never pass its end: it stood for good (issue #22), while its heading already
led along the wall. Pure numpy over the edges of an ORCA obstacle set.
"""

from __future__ import annotations

import numpy as np

from .obstacles import ObstacleTree

# Heading components towards an edge's face below this count as parallel to it (a heading
# that converges onto a wall would otherwise never be allowed to move): at most 1 mm closer
# per metre driven, while the controller turns the heading onto ORCA's velocity.
PARALLEL = 1e-3
# A straight path that passes a vertex less than this deeper than the floor grazes it.
GRAZE = 1e-6


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


def obstacle_floors(distance: np.ndarray, polygon: np.ndarray, clearance) -> np.ndarray:
    """(N, V) how close each edge may come: ``clearance`` (N,), or the robot's distance to
    the edge's obstacle (every edge of the same input polygon) when that is less."""
    order = np.argsort(polygon, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(polygon[order]) != 0])
    nearest = np.minimum.reduceat(distance[:, order], starts, axis=1)  # (N, obstacles)
    group = np.empty_like(polygon)
    group[order] = np.cumsum(np.r_[False, np.diff(polygon[order]) != 0])
    return np.minimum(nearest[:, group], np.asarray(clearance, dtype=np.float64)[:, None])


def free_run(points: np.ndarray, directions: np.ndarray, obstacles: ObstacleTree,
             floors: np.ndarray, edges: np.ndarray | None = None) -> np.ndarray:
    """(N, E) how far each point may go straight along its unit direction before its distance
    to each edge (``edges``, indices of the obstacles' edges; default all) falls below that
    edge's floor (``floors`` (N, E); inf: never; 0: it is getting closer now). The edge's
    floor region is a capsule: a band along the face and a disc at each end."""
    edges = np.arange(obstacles.num_vertices) if edges is None else edges
    a = obstacles.points[edges]
    b = obstacles.points[obstacles.next_vertex[edges]]
    edge = obstacles.directions[edges]  # unit, a -> b
    normal = np.column_stack([-edge[:, 1], edge[:, 0]])
    rel = points[:, None, :] - a[None, :, :]
    along = np.einsum("nvj,vj->nv", rel, edge)
    side = np.einsum("nvj,vj->nv", rel, normal)
    length = np.einsum("vj,vj->v", b - a, edge)
    # The band: approach the face's line from the robot's side, landing within the edge.
    closing = -np.sign(side) * np.einsum("nj,vj->nv", directions, normal)
    hits = (closing > PARALLEL) & (np.abs(side) >= floors - GRAZE)  # else the ends decide
    s_face = np.where(hits, np.maximum(np.abs(side) - floors, 0.0)
                      / np.where(hits, closing, 1.0), 0.0)
    land = along + s_face * np.einsum("nj,vj->nv", directions, edge)
    run = np.where(hits & (land >= 0.0) & (land <= length[None, :]), s_face, np.inf)
    for end in (a, b):  # the discs at the two ends
        w = points[:, None, :] - end[None, :, :]
        towards = np.einsum("nvj,nj->nv", w, directions)  # < 0: heading for the vertex
        passing2 = np.einsum("nvj,nvj->nv", w, w) - towards ** 2
        enters = (towards < 0.0) & (passing2 < (floors - GRAZE).clip(0.0) ** 2)
        depth = np.sqrt(np.maximum(floors ** 2 - passing2, 0.0))
        run = np.minimum(run, np.where(enters, np.maximum(-towards - depth, 0.0), np.inf))
    return run


def guarded_forward_speeds(positions, headings, speeds, obstacles: ObstacleTree | None,
                           clearance, time_horizon: float) -> np.ndarray:
    """The forward speeds (N,) no faster than ``speeds`` (N; negative: reversing) for robots
    at ``positions`` (N, 2) facing ``headings`` (N,): driving straight at that speed for
    ``time_horizon`` keeps each robot ``clearance`` (N, or a scalar: its radius and safety
    margin) off every obstacle edge, or no closer than now to an obstacle it is already
    within ``clearance`` of (:func:`obstacle_floors`, :func:`free_run`)."""
    speeds = np.asarray(speeds, dtype=np.float64).copy()
    positions = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
    if obstacles is None or obstacles.num_vertices == 0 or speeds.size == 0:
        return speeds
    headings = np.asarray(headings, dtype=np.float64)
    clearance = np.broadcast_to(np.asarray(clearance, dtype=np.float64), speeds.shape)
    distance, _ = edge_distances(positions, obstacles)
    # Only an edge within clearance + the distance driven over the horizon can limit a robot.
    near = distance < (clearance + np.abs(speeds) * time_horizon)[:, None] + GRAZE
    rows = np.flatnonzero(near.any(axis=1))
    if not rows.size:
        return speeds
    edges = np.flatnonzero(near[rows].any(axis=0))
    floors = obstacle_floors(distance[rows], obstacles.polygon, clearance[rows])[:, edges]
    sign = np.where(speeds[rows] < 0.0, -1.0, 1.0)
    directions = sign[:, None] * np.column_stack([np.cos(headings[rows]),
                                                  np.sin(headings[rows])])
    run = free_run(positions[rows], directions, obstacles, floors, edges).min(axis=1)
    speeds[rows] = sign * np.minimum(np.abs(speeds[rows]), run / time_horizon)
    return speeds
