"""Footprint collision: does a convex (optionally rounded) footprint overlap a blocked cell?

A footprint is the Minkowski sum of the convex hull of its points (robot frame, metres) and
a disc of ``radius`` metres: one point and a radius is a disc, two points a capsule, three or
more a (rounded) convex polygon. It is given either as any object with ``.points`` (K, 2)
and ``.radius`` (the geometry module's ``ConvexShape``) or as a plain (K, 2) vertex array
(radius 0). The hull of the points is used, so vertex order and orientation do not matter.

A cell collides with the footprint at a pose when the footprint meets the open cell square
(the cell without its boundary): for a footprint with area that is an overlap with positive
area (for radius 0, the open square meets the polygon's interior; for radius r > 0, the
distance between the square and the hull is < r). Cells that only touch the footprint along
an edge or at a corner do not count. A footprint without area (radius 0 and its points all
on one line: a segment, or a point) collides with the cells whose interior it passes
through, and not with a cell it only runs along the boundary of: the same rule, and the
answer a polygon that thin gets (three points off a line by rounding made a sliver polygon
that collided where the exactly collinear points collided nowhere, issue #20), and what
the obstacle layer says of such a footprint. The interior counts too, not only the
perimeter (Nav2's FootprintCollisionChecker checks only the perimeter).

Rasterisation is exact per row of cells: the footprint's x-extent over a row strip
``my <= y <= my + 1`` is convex in y, so it is attained at the strip's bounding lines or at
the footprint's leftmost / rightmost point, each found from the offset edges and vertex
arcs of the rounded hull.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from planning_collision.common.checks import finite_scalar
from planning_collision.common.hull import convex_hull
from planning_collision.common.work_sharing import share_rows, threads_for

from .gridmap import GridMap
from .validation import MAX_CELL_COORD, float_points, out_of_map_blocked

#: Fewest poses worth a thread of their own (about 60 us of work: a pose takes 0.4-0.8 us);
#: batches under twice as many are checked on the calling thread.
POSES_PER_THREAD = 128


class Footprint(NamedTuple):
    """What the kernels read of a footprint: its CCW hull (robot frame, metres) as two
    coordinate arrays, its radius, and whether it has no area (fewer than 3 hull points)."""

    hx: np.ndarray
    hy: np.ndarray
    radius: float
    no_area: bool


class MapFrame(NamedTuple):
    """Where the map lies in the world: origin (ox, oy), cos and sin of its yaw, resolution."""

    ox: float
    oy: float
    cos: float
    sin: float
    resolution: float


# ---------------------------------------------------------------------- shape handling
def convex_hull_ccw(points) -> np.ndarray:
    """Convex hull (M, 2) of points, counter-clockwise, without collinear or repeated points
    (:func:`planning_collision.common.hull.convex_hull`, after the footprint's checks).

    M is 1 for coincident points, 2 for collinear ones, >= 3 otherwise.
    """
    pts = float_points(points, "footprint points")
    if pts.ndim != 2 or pts.shape[0] < 1:
        raise ValueError(f"footprint points must have shape (K, 2) with K >= 1, got {pts.shape}")
    return convex_hull(np.ascontiguousarray(pts, dtype=np.float64))


def footprint_arrays(shape) -> tuple[np.ndarray, float]:
    """(hull (M, 2) CCW float64, radius) of a ConvexShape-like object or a vertex array."""
    if hasattr(shape, "points") and hasattr(shape, "radius"):
        points = shape.points
        radius = finite_scalar(shape.radius, "footprint radius", at_least=0.0)
    else:
        points, radius = shape, 0.0
    return convex_hull_ccw(points), radius


# ---------------------------------------------------------------------- kernels
@numba.njit(cache=True, inline="always")
def _line_range(ylo, yhi, ymin, ymax, j0, nr):
    """Indices q of the lines (y = ymin, j0 + 1, ..., j0 + nr - 1, ymax) within [ylo, yhi]."""
    q0 = max(1, int(math.ceil(ylo)) - j0)
    q1 = min(nr - 1, int(math.floor(yhi)) - j0)
    if ylo <= ymin <= yhi:
        q0 = 0
    if ylo <= ymax <= yhi:
        q1 = nr
    return q0, q1


@numba.njit(cache=True, inline="always")
def _line_y(q, ymin, ymax, j0, nr):
    if q == 0:
        return ymin
    if q == nr:
        return ymax
    return float(j0 + q)


@numba.njit(cache=True, inline="always")
def _extend(lines, q, x0, x1):
    if x0 < lines[q, 0]:
        lines[q, 0] = x0
    if x1 > lines[q, 1]:
        lines[q, 1] = x1


@numba.njit(cache=True)
def _add_edge(lines, ax, ay, bx, by, ymin, ymax, j0, nr):
    """Extend the line extents with segment a-b (a shifted hull edge)."""
    if ay == by:
        q0, q1 = _line_range(ay, ay, ymin, ymax, j0, nr)
        for q in range(q0, q1 + 1):
            if _line_y(q, ymin, ymax, j0, nr) == ay:
                _extend(lines, q, min(ax, bx), max(ax, bx))
        return
    slope = (bx - ax) / (by - ay)
    q0, q1 = _line_range(min(ay, by), max(ay, by), ymin, ymax, j0, nr)
    for q in range(q0, q1 + 1):
        x = ax + (_line_y(q, ymin, ymax, j0, nr) - ay) * slope
        _extend(lines, q, x, x)


@numba.njit(cache=True)
def _rasterise(fp, frame, px, py, pyaw, vx, vy, lines, rows):
    """Rows (my, mx_first, mx_last) of the cells footprint ``fp`` (:class:`Footprint`)
    overlaps at pose (px, py, pyaw) on a map placed by ``frame`` (:class:`MapFrame`).

    The boundary of the rounded hull is covered by the vertex circles (radius r) and the
    hull edges shifted by r along their normals; their x-extents are gathered on the
    horizontal lines bounding each row strip (``lines``), then each strip takes the
    extremes of its two lines and of the hull's leftmost / rightmost point if that lies
    within the strip. Writes into ``rows`` and returns how many rows were written.
    """
    hx, hy = fp.hx, fp.hy
    oc, os_, res = frame.cos, frame.sin, frame.resolution
    k = hx.shape[0]
    pc = math.cos(pyaw)
    ps = math.sin(pyaw)
    for i in range(k):
        wx = px + pc * hx[i] - ps * hy[i] - frame.ox
        wy = py + ps * hx[i] + pc * hy[i] - frame.oy
        vx[i] = (oc * wx + os_ * wy) / res
        vy[i] = (-os_ * wx + oc * wy) / res
    rc = fp.radius / res
    # A segment or a point meets the open cells its x-extent in each row strip reaches:
    # floor(xl) .. ceil(xr) - 1, empty when it lies on a cell boundary (for a shape with
    # area the same cells need xl < xr).
    thin = fp.no_area and rc == 0.0
    ymin = np.inf
    ymax = -np.inf
    il = 0
    ir = 0
    for i in range(k):
        ymin = min(ymin, vy[i])
        ymax = max(ymax, vy[i])
        if vx[i] < vx[il]:
            il = i
        if vx[i] > vx[ir]:
            ir = i
    ymin -= rc
    ymax += rc
    j0 = int(math.floor(ymin))
    nr = int(math.ceil(ymax)) - j0  # row strips j0 .. j0 + nr - 1, lines q = 0 .. nr
    for q in range(nr + 1):
        lines[q, 0] = np.inf
        lines[q, 1] = -np.inf
    if rc > 0.0:
        r2 = rc * rc
        slack = 1e-12 * (1.0 + r2)
        for i in range(k):
            q0, q1 = _line_range(vy[i] - rc, vy[i] + rc, ymin, ymax, j0, nr)
            for q in range(q0, q1 + 1):
                d = _line_y(q, ymin, ymax, j0, nr) - vy[i]
                if d * d <= r2 + slack:
                    half = math.sqrt(max(r2 - d * d, 0.0))
                    _extend(lines, q, vx[i] - half, vx[i] + half)
    if k >= 2:
        n_src = k if k >= 3 else 1
        for i in range(n_src):
            j = i + 1 if i + 1 < k else 0
            ex = vx[j] - vx[i]
            ey = vy[j] - vy[i]
            if rc > 0.0:
                length = math.sqrt(ex * ex + ey * ey)
                ux = rc * ey / length  # outward normal of a CCW edge: (ey, -ex) / length
                uy = -rc * ex / length
                _add_edge(lines, vx[i] + ux, vy[i] + uy, vx[j] + ux, vy[j] + uy,
                          ymin, ymax, j0, nr)
                if k == 2:  # a capsule's segment has two sides
                    _add_edge(lines, vx[i] - ux, vy[i] - uy, vx[j] - ux, vy[j] - uy,
                              ymin, ymax, j0, nr)
            else:
                _add_edge(lines, vx[i], vy[i], vx[j], vy[j], ymin, ymax, j0, nr)
    nrows = 0
    for q in range(nr):
        ylo = _line_y(q, ymin, ymax, j0, nr)
        yhi = _line_y(q + 1, ymin, ymax, j0, nr)
        xl = min(lines[q, 0], lines[q + 1, 0])
        xr = max(lines[q, 1], lines[q + 1, 1])
        if ylo <= vy[il] <= yhi:
            xl = min(xl, vx[il] - rc)
        if ylo <= vy[ir] <= yhi:
            xr = max(xr, vx[ir] + rc)
        if xl < xr or (thin and xl <= xr and math.ceil(xr) - 1 >= math.floor(xl)):
            rows[nrows, 0] = j0 + q
            rows[nrows, 1] = int(math.floor(xl))
            rows[nrows, 2] = int(math.ceil(xr)) - 1
            nrows += 1
    return nrows


@numba.njit(cache=True, nogil=True)
def _footprint_batch(hx, hy, radius, no_area, poses, placement, occ, lo, hi, oob, max_rows, out,
                     begin, end):
    """out[p] for poses ``begin <= p < end``: does the footprint (:class:`Footprint`'s fields)
    overlap a blocked cell (or, when ``oob``, a cell outside the map) at ``poses[p]``?
    ``placement`` is a :class:`MapFrame` as a float64 array. Plain arguments: numba types a
    tuple argument in Python, a few microseconds per call, paid once per chunk."""
    fp = Footprint(hx, hy, radius, no_area)
    frame = MapFrame(placement[0], placement[1], placement[2], placement[3], placement[4])
    k = fp.hx.shape[0]
    vx = np.empty(k)
    vy = np.empty(k)
    rows = np.empty((max_rows, 3), np.int64)
    lines = np.empty((max_rows + 1, 2))
    height, width = occ.shape
    for p in range(begin, end):
        nrows = _rasterise(fp, frame, poses[p, 0], poses[p, 1], poses[p, 2], vx, vy, lines, rows)
        hit = False
        for q in range(nrows):
            j = rows[q, 0]
            i0 = rows[q, 1]
            i1 = rows[q, 2]
            if j < 0 or j >= height or i1 < 0 or i0 >= width:
                if oob:
                    hit = True
                    break
                continue
            if i0 < 0:
                if oob:
                    hit = True
                    break
                i0 = 0
            if i1 >= width:
                if oob:
                    hit = True
                    break
                i1 = width - 1
            for i in range(i0, i1 + 1):
                u = occ[j, i]
                if u >= lo and u <= hi:
                    hit = True
                    break
            if hit:
                break
        out[p] = hit


@numba.njit(cache=True, nogil=True)
def _footprint_rows(fp, frame, pose, max_rows):
    """Rows (M, 3) ``(my, mx_first, mx_last)`` of the cells ``fp`` overlaps at one pose."""
    k = fp.hx.shape[0]
    rows = np.empty((max_rows, 3), np.int64)
    n = _rasterise(fp, frame, pose[0], pose[1], pose[2], np.empty(k), np.empty(k),
                   np.empty((max_rows + 1, 2)), rows)
    return rows[:n]


# ---------------------------------------------------------------------- public API
class Prepared(NamedTuple):
    """A checked footprint query: the footprint, the poses (N, 3), the map frame and the most
    rows of cells the footprint can span."""

    footprint: Footprint
    poses: np.ndarray
    frame: MapFrame
    max_rows: int


def _prepare(grid, shape, poses) -> Prepared:
    if not isinstance(grid, GridMap):
        raise ValueError(f"grid must be a GridMap, got {type(grid).__name__}")
    hull, radius = footprint_arrays(shape)
    p = float_points(poses, "poses", width=3)
    if p.ndim == 1:
        p = p.reshape(1, 3)
    if p.ndim != 2:
        raise ValueError(f"poses must have shape (N, 3) or (3,), got {p.shape}")
    reach = float(np.max(np.hypot(hull[:, 0], hull[:, 1]))) + radius
    ox, oy, oyaw = grid.origin
    if p.shape[0]:
        far = float(np.max(np.hypot(p[:, 0] - ox, p[:, 1] - oy))) + reach
        if far / grid.resolution > MAX_CELL_COORD:
            raise ValueError(f"poses lie more than {MAX_CELL_COORD} cells from the map origin")
    fp = Footprint(np.ascontiguousarray(hull[:, 0]), np.ascontiguousarray(hull[:, 1]), radius,
                   hull.shape[0] < 3)
    frame = MapFrame(ox, oy, math.cos(oyaw), math.sin(oyaw), grid.resolution)
    return Prepared(fp, p, frame, int(math.ceil(2.0 * reach / grid.resolution)) + 3)


def footprint_collides(grid: GridMap, shape, poses, out_of_map: str = "blocked",
                       threads=None) -> np.ndarray:
    """For each pose (x, y, yaw) of poses (N, 3) (or one (3,) pose), whether the footprint
    overlaps a blocked cell with positive area. Returns (N,) bool.

    ``out_of_map="blocked"`` (default) makes any overlap with a cell outside the map a
    collision; ``"free"`` ignores such cells.

    ``threads``: None (the default) shares the poses among every core, an integer caps the
    threads; batches under ``2 * POSES_PER_THREAD`` (256) poses stay on the calling thread.
    The answers are identical for every thread count; the kernel releases the GIL.
    """
    oob = out_of_map_blocked(out_of_map)
    fp, p, frame, max_rows = _prepare(grid, shape, poses)
    out = np.empty(p.shape[0], dtype=np.bool_)
    occ, lo, hi = grid.kernel_args
    placement = np.array(frame)

    def process(begin, end):
        _footprint_batch(*fp, p, placement, occ, lo, hi, oob, max_rows, out, begin, end)

    share_rows(process, p.shape[0], threads_for(threads, p.shape[0], POSES_PER_THREAD))
    return out


def footprint_cells(grid: GridMap, shape, pose) -> np.ndarray:
    """Cells (M, 2) = (mx, my) that the footprint at one pose overlaps with positive area,
    row by row, including cells outside the map (for markers and tests)."""
    fp, p, frame, max_rows = _prepare(grid, shape, pose)
    if p.shape[0] != 1:
        raise ValueError(f"footprint_cells takes one pose (3,), got shape {p.shape}")
    rows = _footprint_rows(fp, frame, p[0], max_rows)
    parts = [
        np.stack([np.arange(i0, i1 + 1), np.full(i1 - i0 + 1, j)], axis=1)
        for j, i0, i1 in rows
    ]
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    return np.concatenate(parts).astype(np.int64)
