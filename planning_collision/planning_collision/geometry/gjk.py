"""GJK: the closest points of two convex point sets (their hulls, radii ignored), in 2D.

The distance of two convex sets is the distance from the origin to their Minkowski difference
``A - B``. GJK (Gilbert-Johnson-Keerthi) walks a simplex of up to three points of that
difference towards the origin, in the form Box2D gives it (``b2Distance``):

* a simplex vertex (:class:`Vertex`) keeps the support point ``a`` of A, the support point
  ``b`` of B, their indices and ``w = a - b``, so witness points are exact convex combinations
  of input points;
* each iteration finds the point of the simplex nearest the origin by naming the Voronoi
  region of the simplex the origin lies in (:func:`_nearest_on_segment`,
  :func:`_nearest_on_triangle`), keeps only the vertices of that region's feature, and asks
  both shapes for their support point in the direction of the origin;
* it stops when (a) a triangle contains the origin (overlap), (b) the nearest point is within
  the touch tolerance of the origin (touching), (c) the new support pair is already in the
  simplex (exact convergence on polytopes), (d) the distance bounds agree to
  ``GJK_REL_GAP``, (e) the distance failed to decrease (rounding; the previous, better
  simplex is restored) or (f) ``4 (Ka + Kb) + 32`` iterations ran (never reached in tests).

Precision: support dot products are taken relative to each shape's first point, and edge
distances use the perpendicular (cross product) formula, so errors stay near ``EPS`` times
the shapes' sizes and separation, not times their distance from the world origin: a thin
sliver at 1e5 still gets the right support points and a gap of 1e-12 is still resolved
(the witness points themselves are absolute coordinates and round at that magnitude). The
separation normal comes from the Minkowski difference too, never from witness differences.

Conventions: the core distance is 0 and the status TOUCHING or OVERLAPPING when the hulls
touch or overlap (touching means a gap of at most ``TOUCH_REL`` times :func:`pair_scale`,
the largest absolute coordinate of the Minkowski difference, see :mod:`.tolerances`; the
same rule for every contact feature, vertex-vertex included, and the rule the SAT tests
use). Witness points lie on the hulls' boundaries when separated; when they intersect both
witness points are one point that lies in both hulls.

This module is the kernel only; :mod:`.distance` adds the radii and the public API.
"""

import math
from typing import NamedTuple

from numba import njit

from .tolerances import GJK_REL_GAP, TOUCH_REL

SEPARATED = 0
TOUCHING = 1
OVERLAPPING = 2
_TINY = 1e-280  # below this a squared length has lost precision to underflow


class Vertex(NamedTuple):
    """A simplex vertex: support points ``a`` (of A) and ``b`` (of B), ``w = a - b`` (a point
    of the Minkowski difference) and the indices of ``a`` and ``b`` in their point sets."""

    ax: float
    ay: float
    bx: float
    by: float
    wx: float
    wy: float
    ia: int
    ib: int


class Nearest(NamedTuple):
    """The point of a simplex nearest the origin: the feature that holds it (``count``
    vertices ``v1`` (and ``v2``) with barycentric weights ``l1`` (and ``l2``); ``count == 3``
    means the origin is inside the triangle, whose third vertex has weight ``l3``), the point
    ``(vx, vy)``, its squared length ``d2`` and its length ``dist`` (computed without
    underflow)."""

    count: int
    v1: Vertex
    v2: Vertex
    l1: float
    l2: float
    l3: float
    vx: float
    vy: float
    d2: float
    dist: float


class GjkOutput(NamedTuple):
    """Result of :func:`gjk_core` (Box2D's ``b2DistanceOutput``, plus the normal and scale).

    ``distance``: the hulls' distance (0.0 unless ``status`` is SEPARATED); ``(ax, ay)``,
    ``(bx, by)``: the witness points on A and B; ``(nx, ny)``: the unit normal from A to B
    ((0, 0) unless separated); ``status``: SEPARATED, TOUCHING or OVERLAPPING;
    ``iterations``; ``scale``: :func:`pair_scale`, the scale of the relative tolerances.
    """

    distance: float
    ax: float
    ay: float
    bx: float
    by: float
    nx: float
    ny: float
    status: int
    iterations: int
    scale: float


# ----------------------------------------------------------------------------- support
@njit(cache=True)
def argmin_dot(p, n, dx, dy):
    """Index of the point of ``p[:n]`` with the smallest dot product with (dx, dy).

    Dot products are taken relative to ``p[0]``: the differences are exact for nearby
    points, so a thin shape far from the origin still gets its true support point.
    """
    ox = p[0, 0]
    oy = p[0, 1]
    best = 0
    best_val = 0.0
    for i in range(1, n):
        val = (p[i, 0] - ox) * dx + (p[i, 1] - oy) * dy
        if val < best_val:
            best_val = val
            best = i
    return best


@njit(cache=True, inline="always")
def _bounds(p, n):
    """Bounding box of ``p[:n]``: (min x, max x, min y, max y)."""
    lx = hx = p[0, 0]
    ly = hy = p[0, 1]
    for i in range(1, n):
        x = p[i, 0]
        y = p[i, 1]
        lx = min(lx, x)
        hx = max(hx, x)
        ly = min(ly, y)
        hy = max(hy, y)
    return lx, hx, ly, hy


@njit(cache=True)
def pair_scale(pa, na, pb, nb):
    """Largest absolute coordinate of the Minkowski difference of ``pa[:na]`` and
    ``pb[:nb]``: ``max |a_i - b_j|`` over both axes and all pairs, from the two bounding
    boxes. It measures the pair's sizes and separation, not its distance from the world
    origin, and is the scale of the touch tolerance (see :mod:`.tolerances`).
    """
    lax, hax, lay, hay = _bounds(pa, na)
    lbx, hbx, lby, hby = _bounds(pb, nb)
    return max(max(hax - lbx, hbx - lax), max(hay - lby, hby - lay))


@njit(cache=True, inline="always")
def _vertex(pa, ia, pb, ib):
    """The simplex vertex of support points ``pa[ia]`` and ``pb[ib]``."""
    ax = pa[ia, 0]
    ay = pa[ia, 1]
    bx = pb[ib, 0]
    by = pb[ib, 1]
    return Vertex(ax, ay, bx, by, ax - bx, ay - by, ia, ib)


# ----------------------------------------------------------------------------- simplex
@njit(cache=True, inline="always")
def _nearest_is_vertex(v):
    """Region "vertex v": the nearest point is ``w`` itself."""
    d2 = v.wx * v.wx + v.wy * v.wy
    # a squared distance that underflows loses its precision: hypot keeps it
    dist = math.sqrt(d2) if d2 > _TINY else math.hypot(v.wx, v.wy)
    return Nearest(1, v, v, 1.0, 0.0, 0.0, v.wx, v.wy, d2, dist)


@njit(cache=True, inline="always")
def _nearest_on_segment(v1, v2):
    """Nearest point to the origin of segment w1-w2, in one of three Voronoi regions."""
    ex = v2.wx - v1.wx
    ey = v2.wy - v1.wy
    u = v2.wx * ex + v2.wy * ey  # weight of w1 times |e|^2
    v = -(v1.wx * ex + v1.wy * ey)  # weight of w2 times |e|^2
    if v <= 0.0:  # region "vertex 1"
        return _nearest_is_vertex(v1)
    if u <= 0.0:  # region "vertex 2"
        return _nearest_is_vertex(v2)
    # region "edge 12": the foot of the perpendicular, as a multiple of the edge normal
    ee = u + v
    cr = ex * v1.wy - ey * v1.wx
    k = cr / ee
    vx = -ey * k
    vy = ex * k
    # a squared length that underflows loses its precision: hypot keeps it
    dist = abs(cr) / (math.sqrt(ee) if ee > _TINY else math.hypot(ex, ey))
    return Nearest(2, v1, v2, u / ee, v / ee, 0.0, vx, vy, vx * vx + vy * vy, dist)


@njit(cache=True, inline="always")
def _nearest_on_triangle(v1, v2, v3):
    """Nearest point to the origin of triangle w1 w2 w3 (w3 the newest vertex).

    The seven Voronoi regions are told apart by the barycentric signs of the three edges
    (``u``, ``v``: weights of an edge's ends times its squared length) and of the triangle
    (``t``: signed areas facing each vertex, times the triangle's area). Returns a
    :class:`Nearest` with ``count`` 1 or 2 for a vertex or edge region, 3 when the origin is
    inside (the weights of ``v1``, ``v2``, ``v3`` in ``l1``, ``l2``, ``l3``).
    """
    e12x = v2.wx - v1.wx
    e12y = v2.wy - v1.wy
    e13x = v3.wx - v1.wx
    e13y = v3.wy - v1.wy
    e23x = v3.wx - v2.wx
    e23y = v3.wy - v2.wy
    u12 = v2.wx * e12x + v2.wy * e12y
    v12 = -(v1.wx * e12x + v1.wy * e12y)
    u13 = v3.wx * e13x + v3.wy * e13y
    v13 = -(v1.wx * e13x + v1.wy * e13y)
    u23 = v3.wx * e23x + v3.wy * e23y
    v23 = -(v2.wx * e23x + v2.wy * e23y)
    area = e12x * e13y - e12y * e13x
    c1 = v2.wx * v3.wy - v2.wy * v3.wx  # twice the signed area of (origin, w2, w3)
    c2 = v3.wx * v1.wy - v3.wy * v1.wx
    c3 = v1.wx * v2.wy - v1.wy * v2.wx
    if v12 <= 0.0 and v13 <= 0.0:
        return _nearest_is_vertex(v1)  # region "vertex 1"
    if u12 > 0.0 and v12 > 0.0 and area * c3 <= 0.0:
        return _nearest_on_segment(v1, v2)  # region "edge 12"
    if u13 > 0.0 and v13 > 0.0 and area * c2 <= 0.0:
        return _nearest_on_segment(v1, v3)  # region "edge 13"
    if u12 <= 0.0 and v23 <= 0.0:
        return _nearest_is_vertex(v2)  # region "vertex 2"
    if u13 <= 0.0 and u23 <= 0.0:
        return _nearest_is_vertex(v3)  # region "vertex 3"
    if u23 > 0.0 and v23 > 0.0 and area * c1 <= 0.0:
        return _nearest_on_segment(v2, v3)  # region "edge 23"
    if area != 0.0:
        # region "inside": barycentric weights c_k / sum(c), all in (0, 1) here since every
        # c_k has the sign of the area
        inv = 1.0 / (c1 + c2 + c3)
        return Nearest(3, v1, v2, c1 * inv, c2 * inv, c3 * inv, 0.0, 0.0, 0.0, 0.0)
    # a flat triangle whose region signs rounding made inconsistent: keep the newest edge;
    # the distance test of the main loop stops any cycling
    return _nearest_on_segment(v2, v3)


@njit(cache=True, inline="always")
def _witness(near, v3):
    """Witness points ``(ax, ay, bx, by)`` of a simplex feature (``v3`` used when inside)."""
    if near.count == 1:
        return near.v1.ax, near.v1.ay, near.v1.bx, near.v1.by
    l1 = near.l1
    l2 = near.l2
    v1 = near.v1
    v2 = near.v2
    if near.count == 2:
        return (l1 * v1.ax + l2 * v2.ax, l1 * v1.ay + l2 * v2.ay,
                l1 * v1.bx + l2 * v2.bx, l1 * v1.by + l2 * v2.by)
    l3 = near.l3
    return (l1 * v1.ax + l2 * v2.ax + l3 * v3.ax, l1 * v1.ay + l2 * v2.ay + l3 * v3.ay,
            l1 * v1.bx + l2 * v2.bx + l3 * v3.bx, l1 * v1.by + l2 * v2.by + l3 * v3.by)


# ----------------------------------------------------------------------------- the loop
@njit(cache=True)
def gjk_core(pa, na, pb, nb):
    """Closest points of the hulls of ``pa[:na]`` and ``pb[:nb]`` (radii ignored):
    a :class:`GjkOutput`."""
    max_iter = 4 * (na + nb) + 32
    scale = pair_scale(pa, na, pb, nb)
    touch = TOUCH_REL * scale
    v1 = _vertex(pa, 0, pb, 0)
    v2 = v1  # the simplex is v1 .. v<count>; unused slots hold copies
    v3 = v1
    count = 1
    near = _nearest_is_vertex(v1)
    best = near  # the nearest point of the previous iteration
    status = SEPARATED
    it = 0
    while it < max_iter:
        it += 1
        if count == 3:
            near = _nearest_on_triangle(v1, v2, v3)
            if near.count == 3:
                status = OVERLAPPING
                break
        elif count == 2:
            near = _nearest_on_segment(v1, v2)
        else:
            near = _nearest_is_vertex(v1)
        count = near.count
        v1 = near.v1
        v2 = near.v2
        if near.dist <= touch:
            status = TOUCHING
            break
        if near.d2 >= best.d2 and it > 1:
            near = best  # no progress (rounding): the previous simplex was better
            break
        best = near
        # the new support point, in the direction of the origin
        ja = argmin_dot(pa, na, near.vx, near.vy)
        jb = argmin_dot(pb, nb, -near.vx, -near.vy)
        if ja == v1.ia and jb == v1.ib:
            break
        if count == 2 and ja == v2.ia and jb == v2.ib:
            break
        new = _vertex(pa, ja, pb, jb)
        gap = near.d2 - (near.vx * new.wx + near.vy * new.wy)  # upper minus lower bound
        if gap <= GJK_REL_GAP * near.d2:
            break
        if count == 1:
            v2 = new
        else:
            v3 = new
        count += 1
    ax, ay, bx, by = _witness(near, v3)
    if status != SEPARATED:
        return GjkOutput(0.0, ax, ay, bx, by, 0.0, 0.0, status, it, scale)
    # unit normal from A to B = -v / |v|, from Minkowski-difference coordinates (the witness
    # points themselves may be too far from the origin to resolve a tiny gap)
    nx = 0.0
    ny = 0.0
    vn = math.hypot(near.vx, near.vy)
    if vn > 0.0:
        nx = -near.vx / vn
        ny = -near.vy / vn
    return GjkOutput(near.dist, ax, ay, bx, by, nx, ny, status, it, scale)
