"""Segment casting: where a segment first meets a convex shape (line of sight past obstacles).

A shape is ``S = hull(points) + disc(radius)``. For the segment ``s(t) = a + t (b - a)``,
``t`` in [0, 1], the cast returns the smallest ``t`` with ``s(t)`` in ``S`` (touching counts), or
``inf`` when the segment misses ``S``.

Exact construction, no iteration: ``S``'s boundary is the hull's edges pushed outwards by
``radius`` plus arcs of that radius around the hull's vertices, all of which lie in ``S``. So
the first entry is ``t = 0`` when ``a`` is already in ``S``, and otherwise the first hit of one
of those edges or circles. With radius 0 the edges alone suffice (a single point is hit when
it lies on the segment).

Tolerance: a contact closer than ``TOUCH_REL`` times the pair's coordinate scale (see
:mod:`.tolerances`) counts as touching, as in :func:`.gjk_distance`.

:func:`segment_cast` casts against one :class:`.ConvexShape`; :func:`cast_segments` casts many
segments against an :class:`.ObstacleSet`, walking its BVH with a slab test and skipping every
node that cannot hold a hit earlier than the best found so far.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from planning_collision.common.work_sharing import share_rows, threads_for

from .broadphase import _STACK
from .shapes import ConvexShape, as_vector
from .tolerances import TOUCH_REL

#: Fewest segments worth a thread of their own (about 50 us of work: a cast through a BVH
#: takes 0.5-5 us); batches under twice as many run on the calling thread.
SEGMENTS_PER_THREAD = 64


class CastResult(NamedTuple):
    """Per segment: the first-hit parameter ``t`` (inf: no hit), the obstacle index (-1) and
    the hit point (NaN when none)."""

    t: np.ndarray
    index: np.ndarray
    point: np.ndarray


@njit(cache=True)
def _dist2_point_segment(px, py, ax, ay, bx, by):
    ex = bx - ax
    ey = by - ay
    wx = px - ax
    wy = py - ay
    ee = ex * ex + ey * ey
    u = 0.0
    if ee > 0.0:
        u = min(1.0, max(0.0, (wx * ex + wy * ey) / ee))
    dx = wx - u * ex
    dy = wy - u * ey
    return dx * dx + dy * dy


@njit(cache=True)
def _dist_point_hull(p, n, x, y):
    """Distance from (x, y) to the convex hull of ``p[:n]`` (CCW); 0 inside."""
    if n == 1:
        return math.hypot(x - p[0, 0], y - p[0, 1])
    if n == 2:
        return math.sqrt(_dist2_point_segment(x, y, p[0, 0], p[0, 1], p[1, 0], p[1, 1]))
    inside = True
    best = np.inf
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        ex = p[j, 0] - p[i, 0]
        ey = p[j, 1] - p[i, 1]
        if ex * (y - p[i, 1]) - ey * (x - p[i, 0]) < 0.0:
            inside = False
        best = min(best, _dist2_point_segment(x, y, p[i, 0], p[i, 1], p[j, 0], p[j, 1]))
    return 0.0 if inside else math.sqrt(best)


@njit(cache=True)
def _cast_circle(ax, ay, dx, dy, cx, cy, r):
    """First t in [0, 1] where a + t d enters the disc (c, r); inf if never."""
    wx = ax - cx
    wy = ay - cy
    aa = dx * dx + dy * dy
    bb = wx * dx + wy * dy
    cc = wx * wx + wy * wy - r * r
    if cc <= 0.0:
        return 0.0
    if aa == 0.0 or bb > 0.0:
        return np.inf
    disc = bb * bb - aa * cc
    if disc < 0.0:
        return np.inf
    t = (-bb - math.sqrt(disc)) / aa
    return t if t <= 1.0 else np.inf


@njit(cache=True)
def _cast_edge(ax, ay, dx, dy, cx, cy, ex, ey, tol):
    """First t in [0, 1] where a + t d meets the segment c + u e, u in [0, 1]; inf if never."""
    wx = cx - ax
    wy = cy - ay
    den = dx * ey - dy * ex
    scale = math.sqrt((dx * dx + dy * dy) * (ex * ex + ey * ey))
    if abs(den) > tol * scale and scale > 0.0:
        t = (wx * ey - wy * ex) / den
        u = (wx * dy - wy * dx) / den
        slack = tol
        if -slack <= t <= 1.0 + slack and -slack <= u <= 1.0 + slack:
            return min(1.0, max(0.0, t))
        return np.inf
    # Parallel (or a degenerate segment): only a collinear overlap can hit.
    dd = dx * dx + dy * dy
    if dd == 0.0:
        return np.inf
    off = (wx * dy - wy * dx) / math.sqrt(dd)
    if abs(off) > tol * (1.0 + math.sqrt(wx * wx + wy * wy) + math.sqrt(ex * ex + ey * ey)):
        return np.inf
    t0 = (wx * dx + wy * dy) / dd
    t1 = ((wx + ex) * dx + (wy + ey) * dy) / dd
    lo = min(t0, t1)
    hi = max(t0, t1)
    if hi < 0.0 or lo > 1.0:
        return np.inf
    return max(lo, 0.0)


@njit(cache=True)
def cast_core(p, n, r, ax, ay, bx, by):
    """First-hit parameter of segment a-b against hull(p[:n]) + disc(r); inf if it misses."""
    dx = bx - ax
    dy = by - ay
    scale = abs(ax) + abs(ay) + abs(bx) + abs(by) + r
    for i in range(n):
        scale = max(scale, abs(p[i, 0]) + abs(p[i, 1]))
    tol = TOUCH_REL * scale
    if _dist_point_hull(p, n, ax, ay) <= r + tol:
        return 0.0
    best = np.inf
    if r > 0.0:
        for i in range(n):
            best = min(best, _cast_circle(ax, ay, dx, dy, p[i, 0], p[i, 1], r + tol))
    elif n == 1:
        best = _cast_edge(ax, ay, dx, dy, p[0, 0], p[0, 1], 0.0, 0.0, TOUCH_REL)
        if best == np.inf and dx * dx + dy * dy > 0.0:
            # A point lies on the segment when the segment passes within tol of it.
            if math.sqrt(_dist2_point_segment(p[0, 0], p[0, 1], ax, ay, bx, by)) <= tol:
                dd = dx * dx + dy * dy
                best = max(0.0, ((p[0, 0] - ax) * dx + (p[0, 1] - ay) * dy) / dd)
        return best
    if n == 1:
        return best
    edges = n if n >= 3 else 1
    for i in range(edges):
        j = i + 1 if i + 1 < n else 0
        ex = p[j, 0] - p[i, 0]
        ey = p[j, 1] - p[i, 1]
        length = math.hypot(ex, ey)
        if length == 0.0:
            continue
        # Outward normal of a CCW edge, times the radius.
        ox = ey / length * r
        oy = -ex / length * r
        best = min(best, _cast_edge(ax, ay, dx, dy, p[i, 0] + ox, p[i, 1] + oy, ex, ey, TOUCH_REL))
        if n == 2 and r > 0.0:
            best = min(
                best, _cast_edge(ax, ay, dx, dy, p[i, 0] - ox, p[i, 1] - oy, ex, ey, TOUCH_REL)
            )
    return best


@njit(cache=True)
def _slab_entry(box, k, ax, ay, dx, dy, t_max):
    """Entry t of the segment into node box k if it enters before t_max, else inf."""
    t0 = 0.0
    t1 = t_max
    for axis in range(2):
        o = ax if axis == 0 else ay
        d = dx if axis == 0 else dy
        lo = box[k, axis]
        hi = box[k, axis + 2]
        if d == 0.0:
            if o < lo or o > hi:
                return np.inf
        else:
            ta = (lo - o) / d
            tb = (hi - o) / d
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
            if t0 > t1:
                return np.inf
    return t0


@njit(cache=True, nogil=True)
def _cast_rows(tree, obstacles, starts, goals, out_t, out_i, begin, end):
    """First hit of segments ``begin <= q < end`` among ``obstacles`` (:class:`.ShapeBatch`),
    walking ``tree`` (:class:`.Bvh`); writes the parameter ``t`` and the obstacle index."""
    points, counts, radii = obstacles
    stack = np.empty(_STACK, np.int64)
    for q in range(begin, end):
        ax = starts[q, 0]
        ay = starts[q, 1]
        dx = goals[q, 0] - ax
        dy = goals[q, 1] - ay
        best = np.inf
        best_i = -1
        top = 1 if points.shape[0] > 0 else 0
        stack[0] = 0
        while top > 0:
            top -= 1
            node = stack[top]
            limit = 1.0 if best == np.inf else best
            # boxes inflated by a hair (in t) so that touching contacts are never pruned
            if _slab_entry(tree.node_box, node, ax, ay, dx, dy, limit + 1e-12) == np.inf:
                continue
            child = tree.node_child[node]
            if child >= 0:
                stack[top] = child
                stack[top + 1] = child + 1
                top += 2
                continue
            for s in range(tree.node_start[node], tree.node_start[node] + tree.node_count[node]):
                j = tree.order[s]
                t = cast_core(points[j], counts[j], radii[j], ax, ay, ax + dx, ay + dy)
                if t < best or (t == best and t != np.inf and j < best_i):
                    best = t
                    best_i = j
        out_t[q] = best
        out_i[q] = best_i


def segment_cast(shape: ConvexShape, start, goal) -> float:
    """First-hit parameter ``t`` in [0, 1] of the segment ``start``-``goal`` against ``shape``
    (``inf`` when it misses); the hit point is ``start + t (goal - start)``."""
    a = as_vector(start, "start")
    b = as_vector(goal, "goal")
    return float(
        cast_core(shape.points, shape.points.shape[0], shape.radius, a[0], a[1], b[0], b[1])
    )


def cast_segments(obstacles, starts, goals, threads=None) -> CastResult:
    """First obstacle each segment meets: :class:`CastResult` (ties: lowest index).

    ``threads``: None (the default) shares the segments among every core, an integer caps
    the threads; batches under twice :data:`SEGMENTS_PER_THREAD` segments stay on the calling
    thread. The answers are the same for any thread count; the kernel releases the GIL.
    """
    s = _segments(starts, "starts")
    g = _segments(goals, "goals")
    if s.shape != g.shape:
        raise ValueError(f"starts {s.shape} and goals {g.shape} must have the same shape")
    n = s.shape[0]
    t = np.empty(n)
    index = np.empty(n, np.int64)
    tree = obstacles.index.tree
    share_rows(lambda begin, end: _cast_rows(tree, obstacles.shapes, s, g, t, index, begin, end),
               n, threads_for(threads, n, SEGMENTS_PER_THREAD))
    point = np.full(s.shape, np.nan)
    hit = index >= 0
    point[hit] = s[hit] + t[hit, None] * (g[hit] - s[hit])
    return CastResult(t, index, point)


def _segments(values, name):
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (N, 2), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr
