"""Exact convex decomposition of a simple polygon (ear clipping + Hertel-Mehlhorn).

``decompose(vertices)`` splits a simple polygon (convex or not, either winding, no holes)
into convex pieces whose union is exactly the polygon and whose interiors are disjoint, so
an L-shaped wall stays an L (two pieces), never its hull.

1. Clean-up: repeated consecutive vertices and vertices exactly on the line through their
   neighbours are removed (they do not change the region).
2. Validation (``ValueError``): fewer than 3 vertices left, zero area, a spike (an edge
   folding back on the previous one) or any two non-adjacent edges that intersect or touch
   (a self-intersecting or self-touching boundary). Orientation tests are exact float64
   cross products.
3. Ear clipping triangulates the polygon (O(n^2) typical): a convex vertex is clipped when
   no other vertex lies inside *or on* its triangle, so diagonals never graze the boundary.
4. Hertel-Mehlhorn removes every diagonal whose two sides merge into a convex polygon
   (angles of exactly 180 degrees count as convex). The result has at most four times the
   minimum number of convex pieces, and one piece if the input is convex.
"""

import numpy as np
from numba import njit

from .hull import convex_hull
from .shapes import ConvexShape, as_points


@njit(cache=True)
def _orient(ax, ay, bx, by, cx, cy):
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


@njit(cache=True)
def _on_segment(ax, ay, bx, by, px, py):
    """p is collinear with a-b (checked by the caller): is it within the segment's box?"""
    return min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


@njit(cache=True)
def _segments_meet(p, i, j):
    """True if edges i (p[i]-p[i+1]) and j (p[j]-p[j+1]) intersect or touch."""
    n = p.shape[0]
    i2 = (i + 1) % n
    j2 = (j + 1) % n
    ax, ay, bx, by = p[i, 0], p[i, 1], p[i2, 0], p[i2, 1]
    cx, cy, dx, dy = p[j, 0], p[j, 1], p[j2, 0], p[j2, 1]
    o1 = _orient(ax, ay, bx, by, cx, cy)
    o2 = _orient(ax, ay, bx, by, dx, dy)
    o3 = _orient(cx, cy, dx, dy, ax, ay)
    o4 = _orient(cx, cy, dx, dy, bx, by)
    if ((o1 > 0 and o2 < 0) or (o1 < 0 and o2 > 0)) and (
        (o3 > 0 and o4 < 0) or (o3 < 0 and o4 > 0)
    ):
        return True
    if o1 == 0 and _on_segment(ax, ay, bx, by, cx, cy):
        return True
    if o2 == 0 and _on_segment(ax, ay, bx, by, dx, dy):
        return True
    if o3 == 0 and _on_segment(cx, cy, dx, dy, ax, ay):
        return True
    if o4 == 0 and _on_segment(cx, cy, dx, dy, bx, by):
        return True
    return False


@njit(cache=True)
def _first_crossing(p):
    """First pair of non-adjacent edges that meet, or (-1, -1) for a simple polygon."""
    n = p.shape[0]
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # adjacent through the closing vertex
            if _segments_meet(p, i, j):
                return i, j
    return -1, -1


@njit(cache=True)
def _ear_clip(p):
    """Triangulate the simple CCW polygon ``p`` (n >= 3); (n - 2, 3) vertex indices.

    Returns an empty array if no ear can be found (only possible through rounding on an
    almost degenerate polygon).
    """
    n = p.shape[0]
    prv = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    for i in range(n):
        prv[i] = (i - 1) % n
        nxt[i] = (i + 1) % n
    tris = np.empty((n - 2, 3), np.int64)
    t = 0
    remaining = n
    i = 0
    misses = 0
    while remaining > 3:
        a = prv[i]
        c = nxt[i]
        ax, ay = p[a, 0], p[a, 1]
        bx, by = p[i, 0], p[i, 1]
        cx, cy = p[c, 0], p[c, 1]
        ear = _orient(ax, ay, bx, by, cx, cy) > 0.0
        if ear:
            k = nxt[c]
            while k != a:
                px, py = p[k, 0], p[k, 1]
                if (
                    _orient(ax, ay, bx, by, px, py) >= 0.0
                    and _orient(bx, by, cx, cy, px, py) >= 0.0
                    and _orient(cx, cy, ax, ay, px, py) >= 0.0
                ):
                    ear = False
                    break
                k = nxt[k]
        if ear:
            tris[t, 0] = a
            tris[t, 1] = i
            tris[t, 2] = c
            t += 1
            nxt[a] = c
            prv[c] = a
            remaining -= 1
            misses = 0
            i = c
        else:
            misses += 1
            if misses > remaining:
                return np.empty((0, 3), np.int64)
            i = nxt[i]
    tris[t, 0] = prv[i]
    tris[t, 1] = i
    tris[t, 2] = nxt[i]
    return tris


def _clean(pts):
    """Drop repeated and exactly collinear vertices; raise on spikes."""
    while True:
        n = pts.shape[0]
        if n < 3:
            return pts
        nxt = np.roll(pts, -1, axis=0)
        same = np.all(pts == nxt, axis=1)
        if same.any():
            pts = pts[~same]
            continue
        prv = np.roll(pts, 1, axis=0)
        e_in = pts - prv
        e_out = nxt - pts
        cross = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
        dot = e_in[:, 0] * e_out[:, 0] + e_in[:, 1] * e_out[:, 1]
        flat = cross == 0.0
        if not flat.any():
            return pts
        if (flat & (dot < 0.0)).any():
            k = int(np.flatnonzero(flat & (dot < 0.0))[0])
            raise ValueError(
                f"polygon is self-intersecting: the boundary folds back at vertex {pts[k].tolist()}"
            )
        pts = pts[~flat]


def _merge_convex(pts, pieces):
    """Hertel-Mehlhorn: merge pieces across diagonals while the union stays convex."""
    owner = {}
    for pid, piece in enumerate(pieces):
        for k in range(3):
            owner[(piece[k], piece[(k + 1) % 3])] = pid
    diagonals = [(u, v) for (u, v) in owner if u < v and (v, u) in owner]
    alive = dict(enumerate(pieces))

    def turn(o, a, b):
        return float(_orient(pts[o, 0], pts[o, 1], pts[a, 0], pts[a, 1], pts[b, 0], pts[b, 1]))

    for u, v in diagonals:
        p_id = owner[(u, v)]
        q_id = owner[(v, u)]
        p_cyc = alive[p_id]
        q_cyc = alive[q_id]
        pu = p_cyc.index(u)  # in P the edge runs u -> v, in Q it runs v -> u
        qv = q_cyc.index(v)
        np_, nq = len(p_cyc), len(q_cyc)
        before_u = p_cyc[(pu - 1) % np_]
        after_v = p_cyc[(pu + 2) % np_]
        before_v = q_cyc[(qv - 1) % nq]
        after_u = q_cyc[(qv + 2) % nq]
        if turn(before_u, u, after_u) < 0.0 or turn(before_v, v, after_v) < 0.0:
            continue
        # merged cycle: P from v round to u, then Q from u round to v (endpoints once)
        merged = [p_cyc[(pu + 1 + k) % np_] for k in range(np_)]
        merged += [q_cyc[(qv + 2 + k) % nq] for k in range(nq - 2)]
        del alive[q_id]
        alive[p_id] = merged
        for k in range(len(merged)):
            owner[(merged[k], merged[(k + 1) % len(merged)])] = p_id
    return list(alive.values())


def decompose(vertices):
    """Split a simple polygon into convex :class:`ConvexShape` pieces (see module doc)."""
    pts = as_points(vertices, "vertices")
    if pts.shape[0] < 3:
        raise ValueError(f"polygon needs at least 3 vertices, got {pts.shape[0]}")
    if convex_hull(pts).shape[0] < 3:
        raise ValueError("polygon has zero area: all vertices are collinear")
    pts = _clean(pts)
    if pts.shape[0] < 3:
        raise ValueError("polygon has zero area: fewer than 3 non-collinear vertices")
    i, j = _first_crossing(pts)
    if i >= 0:
        raise ValueError(f"polygon is self-intersecting: edges {i} and {j} meet")
    rel = pts - pts[0]
    area2 = float(np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]))
    if area2 == 0.0:
        raise ValueError("polygon has zero area")
    if area2 < 0.0:
        pts = np.ascontiguousarray(pts[::-1])
    tris = _ear_clip(pts)
    if tris.shape[0] == 0:
        raise ValueError("polygon is too close to degenerate to triangulate in float64")
    pieces = _merge_convex(pts, [list(map(int, t)) for t in tris])
    return [ConvexShape._trusted(np.ascontiguousarray(convex_hull(pts[p])), 0.0) for p in pieces]
