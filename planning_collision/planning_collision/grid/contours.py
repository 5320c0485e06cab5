"""Occupied regions of a GridMap as simple polygons (for ORCA static obstacles).

Tracing. Blocked cells (per the grid's threshold and unknown flag; outside the map is free)
are grouped 4-connectedly and the boundary of each group is followed along the cell edges,
keeping the blocked side on the left, so in the world frame outer boundaries come out
counter-clockwise and holes clockwise (RVO2's convention: obstacles CCW). Two blocked
cells that touch only at a corner belong to different groups; at such a corner each
boundary is cut by 1/64 cell into its own blocked cell, so no two boundaries touch and every
ring is simple. Unsimplified rings thus enclose exactly the blocked cells, less those
corner notches (area 1/8192 cell each); they never reach into free space.

Simplification. Each ring is simplified with Douglas-Peucker at ``simplify_tolerance``
metres (distance of every dropped vertex to its replacing segment <= tolerance, which
bounds the Hausdorff distance between old and new boundary by the tolerance, so a polygon
never reaches into free space, nor uncovers blocked space, by more than the tolerance).
Then any simplified segment that touches another segment, or whose cut-off "bay" contains
another ring, gets its farthest dropped vertex back, until the rings are simple, pairwise
disjoint and nested as before.

Memory: one (height + 2) x (width + 2) uint8 work array (a padded blocked mask that also
holds the visited flags) for the call, plus the traced vertices.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from planning_collision.common.checks import finite_scalar
from planning_collision.common.predicates import orient, segments_meet

from .gridmap import GridMap

#: Corner cut at diagonal contacts, in cells (a power of two: lattice arithmetic stays exact).
CHAMFER = 1.0 / 64.0

# ---------------------------------------------------------------------- tracing
@numba.njit(cache=True, nogil=True)
def _padded_mask(occ, lo, hi):
    h, w = occ.shape
    pad = np.zeros((h + 2, w + 2), np.uint8)
    for j in range(h):
        for i in range(w):
            u = occ[j, i]
            if u >= lo and u <= hi:
                pad[j + 1, i + 1] = 1
    return pad


@numba.njit(cache=True)
def _occ(pad, i, j):
    return (pad[j + 1, i + 1] & 1) != 0


@numba.njit(cache=True)
def _edge_exists(pad, vx, vy, d):
    """Whether a boundary edge (blocked on its left) leaves lattice vertex (vx, vy) in dir d."""
    if d == 0:
        return _occ(pad, vx, vy) and not _occ(pad, vx, vy - 1)
    if d == 1:
        return _occ(pad, vx - 1, vy) and not _occ(pad, vx, vy)
    if d == 2:
        return _occ(pad, vx - 1, vy - 1) and not _occ(pad, vx - 1, vy)
    return _occ(pad, vx, vy - 1) and not _occ(pad, vx - 1, vy - 1)


@numba.njit(cache=True)
def _grow(arr, n):
    """arr with capacity doubled (first n rows kept)."""
    out = np.empty((2 * arr.shape[0], arr.shape[1]), arr.dtype)
    for i in range(n):  # explicit loop: slice assignment costs seconds of compile time
        for k in range(arr.shape[1]):
            out[i, k] = arr[i, k]
    return out


@numba.njit(cache=True)
def _next_direction(pad, vx, vy, d):
    """Direction leaving vertex (vx, vy) after arriving in direction d, and whether the
    vertex is a diagonal contact. Prefers the left turn: blocked cells stay 4-connected."""
    left = (d + 1) % 4
    right = (d + 3) % 4
    el = _edge_exists(pad, vx, vy, left)
    if el:
        return left, _edge_exists(pad, vx, vy, right)
    if _edge_exists(pad, vx, vy, d):
        return d, False
    return right, False


@numba.njit(cache=True, nogil=True)
def _trace_rings(pad):
    """All boundary rings in lattice coordinates: (xs, ys, ring_starts)."""
    dxs = (1, 0, -1, 0)  # E, N, W, S
    dys = (0, 1, 0, -1)
    h = pad.shape[0] - 2
    w = pad.shape[1] - 2
    pts = np.empty((1024, 2), np.float64)
    n = 0
    starts = np.empty((64, 1), np.int64)
    nr = 0
    for j in range(h + 1):
        for i in range(w):
            if (pad[j + 1, i + 1] & 2) != 0:
                continue
            above = _occ(pad, i, j)
            if above == _occ(pad, i, j - 1):
                continue
            if nr + 1 >= starts.shape[0]:
                starts = _grow(starts, nr)
            starts[nr, 0] = n
            nr += 1
            vx0 = i if above else i + 1
            vy0 = j
            d0 = 0 if above else 2
            vx = vx0
            vy = vy0
            d = d0
            while True:
                if d == 0:
                    pad[vy + 1, vx + 1] |= 2
                elif d == 2:
                    pad[vy + 1, vx] |= 2
                vx += dxs[d]
                vy += dys[d]
                dn, contact = _next_direction(pad, vx, vy, d)
                if dn != d:
                    if n + 2 > pts.shape[0]:
                        pts = _grow(pts, n)
                    if contact:
                        # Diagonal contact: cut the corner into the blocked cell on the left.
                        pts[n, 0] = vx - CHAMFER * dxs[d]
                        pts[n, 1] = vy - CHAMFER * dys[d]
                        pts[n + 1, 0] = vx + CHAMFER * dxs[dn]
                        pts[n + 1, 1] = vy + CHAMFER * dys[dn]
                        n += 2
                    else:
                        pts[n, 0] = vx
                        pts[n, 1] = vy
                        n += 1
                d = dn
                if vx == vx0 and vy == vy0 and d == d0:
                    break
    if nr + 1 > starts.shape[0]:
        starts = _grow(starts, nr)
    starts[nr, 0] = n
    xs = np.empty(n, np.float64)
    ys = np.empty(n, np.float64)
    for k in range(n):
        xs[k] = pts[k, 0]
        ys[k] = pts[k, 1]
    ring_starts = np.empty(nr + 1, np.int64)
    for k in range(nr + 1):
        ring_starts[k] = starts[k, 0]
    return xs, ys, ring_starts


# ---------------------------------------------------------------------- simplification
@numba.njit(cache=True)
def _seg_dist2(px, py, ax, ay, bx, by):
    ex = bx - ax
    ey = by - ay
    l2 = ex * ex + ey * ey
    t = 0.0
    if l2 > 0.0:
        t = ((px - ax) * ex + (py - ay) * ey) / l2
        t = min(1.0, max(0.0, t))
    qx = ax + t * ex - px
    qy = ay + t * ey - py
    return qx * qx + qy * qy


@numba.njit(cache=True)
def _farthest(xs, ys, base, n, a, b):
    """Index in (a, b) (ring-local, b may be n meaning 0) farthest from segment a-b."""
    ax = xs[base + a]
    ay = ys[base + a]
    bx = xs[base + (b % n)]
    by = ys[base + (b % n)]
    best = -1.0
    k = -1
    for m in range(a + 1, b):
        dd = _seg_dist2(xs[base + m], ys[base + m], ax, ay, bx, by)
        if dd > best:
            best = dd
            k = m
    return k, best


@numba.njit(cache=True)
def _douglas_peucker(xs, ys, starts, tol, keep):
    tol2 = tol * tol
    for r in range(starts.shape[0] - 1):
        base = starts[r]
        n = starts[r + 1] - base
        keep[base] = True
        # Second anchor: the vertex farthest from vertex 0.
        m = 0
        best = -1.0
        for k in range(1, n):
            dx = xs[base + k] - xs[base]
            dy = ys[base + k] - ys[base]
            if dx * dx + dy * dy > best:
                best = dx * dx + dy * dy
                m = k
        keep[base + m] = True
        stack = np.empty((2 * n + 4, 2), np.int64)
        top = 0
        stack[0, 0] = 0
        stack[0, 1] = m
        stack[1, 0] = m
        stack[1, 1] = n
        top = 2
        while top > 0:
            top -= 1
            a = stack[top, 0]
            b = stack[top, 1]
            if b - a < 2:
                continue
            k, dd = _farthest(xs, ys, base, n, a, b)
            if dd > tol2:
                keep[base + k] = True
                stack[top, 0] = a
                stack[top, 1] = k
                stack[top + 1, 0] = k
                stack[top + 1, 1] = b
                top += 2
        count = 0
        for k in range(n):
            if keep[base + k]:
                count += 1
        if count < 3:
            # Keep a third vertex so the ring stays a polygon.
            k1, d1 = _farthest(xs, ys, base, n, 0, m)
            k2, d2 = _farthest(xs, ys, base, n, m, n)
            if k2 < 0 or (k1 >= 0 and d1 >= d2):
                keep[base + k1] = True
            else:
                keep[base + k2] = True


@numba.njit(cache=True)
def _segments(starts, keep):
    """Simplified segments as rows (ring, a, b) with ring-local a < b (b may wrap past n)."""
    total = 0
    for k in range(keep.shape[0]):
        if keep[k]:
            total += 1
    segs = np.empty((total, 3), np.int64)
    s = 0
    for r in range(starts.shape[0] - 1):
        base = starts[r]
        n = starts[r + 1] - base
        first = -1
        prev = -1
        for k in range(n):
            if keep[base + k]:
                if prev >= 0:
                    segs[s, 0] = r
                    segs[s, 1] = prev
                    segs[s, 2] = k
                    s += 1
                else:
                    first = k
                prev = k
        segs[s, 0] = r
        segs[s, 1] = prev
        segs[s, 2] = first + n
        s += 1
    return segs


@numba.njit(cache=True)
def _endpoints(xs, ys, starts, seg):
    base = starts[seg[0]]
    n = starts[seg[0] + 1] - base
    a = base + seg[1]
    b = base + (seg[2] % n)
    return xs[a], ys[a], xs[b], ys[b]


@numba.njit(cache=True)
def _conflict(xs, ys, starts, s, t):
    """Whether simplified segments s and t (rows of _segments) make the rings non-simple."""
    ax, ay, bx, by = _endpoints(xs, ys, starts, s)
    cx, cy, dx, dy = _endpoints(xs, ys, starts, t)
    if s[0] == t[0]:
        n = starts[s[0] + 1] - starts[s[0]]
        s_a = s[1] % n
        s_b = s[2] % n
        t_a = t[1] % n
        t_b = t[2] % n
        if s_a == t_a and s_b == t_b:
            return False
        if s_b == t_a and s_a == t_b:  # a two-segment ring: always degenerate
            return True
        if s_b == t_a:  # t follows s: only a fold back along s is a conflict
            return orient(ax, ay, bx, by, dx, dy) == 0 and (
                (ax - bx) * (dx - bx) + (ay - by) * (dy - by) > 0.0
            )
        if t_b == s_a:
            return orient(cx, cy, dx, dy, bx, by) == 0 and (
                (cx - dx) * (bx - dx) + (cy - dy) * (by - dy) > 0.0
            )
    return segments_meet(ax, ay, bx, by, cx, cy, dx, dy)


@numba.njit(cache=True)
def _bucket_index(segs, xs, ys, starts, x0, y0, bsize, nbx, nby):
    """CSR bucket grid of segment bounding boxes: (offsets, members)."""
    counts = np.zeros(nbx * nby + 1, np.int64)
    for q in range(segs.shape[0]):
        ax, ay, bx, by = _endpoints(xs, ys, starts, segs[q])
        i0 = int((min(ax, bx) - x0) // bsize)
        i1 = int((max(ax, bx) - x0) // bsize)
        j0 = int((min(ay, by) - y0) // bsize)
        j1 = int((max(ay, by) - y0) // bsize)
        for j in range(j0, j1 + 1):
            for i in range(i0, i1 + 1):
                counts[j * nbx + i + 1] += 1
    for k in range(1, counts.shape[0]):
        counts[k] += counts[k - 1]
    fill = np.empty(nbx * nby, np.int64)
    for k in range(nbx * nby):
        fill[k] = counts[k]
    members = np.empty(counts[-1], np.int64)
    for q in range(segs.shape[0]):
        ax, ay, bx, by = _endpoints(xs, ys, starts, segs[q])
        i0 = int((min(ax, bx) - x0) // bsize)
        i1 = int((max(ax, bx) - x0) // bsize)
        j0 = int((min(ay, by) - y0) // bsize)
        j1 = int((max(ay, by) - y0) // bsize)
        for j in range(j0, j1 + 1):
            for i in range(i0, i1 + 1):
                members[fill[j * nbx + i]] = q
                fill[j * nbx + i] += 1
    return counts, members


@numba.njit(cache=True)
def _point_in_chain(xs, ys, base, n, a, b, px, py):
    """Even-odd test of (px, py) against the closed polygon of ring vertices a..b."""
    inside = False
    for m in range(a, b + 1):
        k0 = base + (m % n)
        k1 = base + (a % n) if m == b else base + ((m + 1) % n)
        x0 = xs[k0]
        y0 = ys[k0]
        x1 = xs[k1]
        y1 = ys[k1]
        if (y0 > py) != (y1 > py):
            xc = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
            if px < xc:
                inside = not inside
    return inside


@numba.njit(cache=True)
def _repair(xs, ys, starts, keep, tol, x0, y0, x1, y1):
    """Restore dropped vertices until rings are simple, disjoint and keep their nesting."""
    bsize = max(8.0, 2.0 * tol)
    nbx = int((x1 - x0) // bsize) + 1
    nby = int((y1 - y0) // bsize) + 1
    tol2 = (tol + 1e-9) * (tol + 1e-9)
    for _ in range(1_000_000):
        segs = _segments(starts, keep)
        offsets, members = _bucket_index(segs, xs, ys, starts, x0, y0, bsize, nbx, nby)
        flag = np.zeros(segs.shape[0], np.bool_)
        for bkt in range(nbx * nby):
            lo = offsets[bkt]
            hi = offsets[bkt + 1]
            for p in range(lo, hi):
                s = members[p]
                for q in range(p + 1, hi):
                    t = members[q]
                    if _conflict(xs, ys, starts, segs[s], segs[t]):
                        flag[s] = True
                        flag[t] = True
        # Nesting: another ring's first vertex (always kept) inside a cut-off bay.
        for r in range(starts.shape[0] - 1):
            px = xs[starts[r]]
            py = ys[starts[r]]
            i0 = int((px - tol - x0) // bsize)
            i1 = int((px + tol - x0) // bsize)
            j0 = int((py - tol - y0) // bsize)
            j1 = int((py + tol - y0) // bsize)
            for j in range(max(j0, 0), min(j1, nby - 1) + 1):
                for i in range(max(i0, 0), min(i1, nbx - 1) + 1):
                    bkt = j * nbx + i
                    for p in range(offsets[bkt], offsets[bkt + 1]):
                        s = members[p]
                        seg = segs[s]
                        if flag[s] or seg[0] == r or seg[2] - seg[1] < 2:
                            continue
                        ax, ay, bx, by = _endpoints(xs, ys, starts, seg)
                        if _seg_dist2(px, py, ax, ay, bx, by) > tol2:
                            continue
                        base = starts[seg[0]]
                        n = starts[seg[0] + 1] - base
                        if _point_in_chain(xs, ys, base, n, seg[1], seg[2], px, py):
                            flag[s] = True
        changed = False
        for s in range(segs.shape[0]):
            seg = segs[s]
            if flag[s] and seg[2] - seg[1] >= 2:
                base = starts[seg[0]]
                n = starts[seg[0] + 1] - base
                k, _ = _farthest(xs, ys, base, n, seg[1], seg[2])
                keep[base + (k % n)] = True
                changed = True
        if not changed:
            return


@numba.njit(cache=True, nogil=True)
def _simplify(xs, ys, starts, tol, w, h):
    keep = np.zeros(xs.shape[0], np.bool_)
    if starts.shape[0] < 2:
        return keep
    _douglas_peucker(xs, ys, starts, tol, keep)
    _repair(xs, ys, starts, keep, tol, -1.0, -1.0, w + 1.0, h + 1.0)
    return keep


# ---------------------------------------------------------------------- public API
def occupied_polygons(grid: GridMap, simplify_tolerance: float) -> list[np.ndarray]:
    """Boundaries of the blocked regions as simple polygons in world coordinates.

    Returns a list of (M, 2) float64 vertex arrays (M >= 3, not closed: the last vertex
    does not repeat the first). Outer boundaries are counter-clockwise, holes (free
    regions enclosed by blocked cells) clockwise; rings never touch each other.
    ``simplify_tolerance`` (metres, >= 0) bounds how far a simplified boundary departs from
    the cell-exact one, into free or into blocked space. See the module docstring.
    """
    if not isinstance(grid, GridMap):
        raise ValueError(f"grid must be a GridMap, got {type(grid).__name__}")
    tol = finite_scalar(simplify_tolerance, "simplify_tolerance", at_least=0.0)
    occ, lo, hi = grid.kernel_args
    pad = _padded_mask(occ, lo, hi)
    xs, ys, starts = _trace_rings(pad)
    del pad
    keep = _simplify(xs, ys, starts, tol / grid.resolution, grid.width, grid.height)
    ox, oy, oyaw = grid.origin
    c, s = math.cos(oyaw), math.sin(oyaw)
    res = grid.resolution
    kx = xs[keep]
    ky = ys[keep]
    world = np.stack([ox + res * (c * kx - s * ky), oy + res * (s * kx + c * ky)], axis=1)
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    bounds = kept_before[starts[1:-1]]
    return np.split(world, bounds) if len(starts) > 1 else []
