"""GJK distance between two convex shapes (point set + radius), in 2D.

The kernel works on the *core* point sets (the hulls without their radii) and subtracts the
radii afterwards, as Box2D does: the core distance of two point sets is the distance from
the origin to their Minkowski difference ``A - B``, and the inflated shapes are ``radius_a +
radius_b`` closer.

Algorithm (Gilbert-Johnson-Keerthi with a closed-form sub-simplex solver):

* the simplex holds up to three Minkowski-difference points ``w = a - b``, each with the
  indices of the shape points it came from (so witness points are exact convex
  combinations of input points);
* each iteration finds the point of the current simplex closest to the origin by testing
  the Voronoi regions of its vertices and edges (barycentric signs), drops the vertices
  that do not support it, and asks both shapes for their support point in the opposite
  direction;
* it stops when (a) a triangle contains the origin (overlap), (b) the closest point is
  within the touch tolerance of the origin (touching), (c) the new support pair is already
  in the simplex (exact convergence on polytopes), (d) the distance bounds agree to
  ``GJK_REL_GAP``, (e) the distance failed to decrease (rounding; the previous, better
  simplex is restored) or (f) ``4 (Ka + Kb) + 32`` iterations ran (never reached in tests).

Precision: support dot products are taken relative to each shape's first point, and edge
distances use the perpendicular (cross product) formula, so errors stay near ``EPS`` times
the shapes' sizes and separation, not times their distance from the world origin: a thin
sliver at 1e5 still gets the right support points and a gap of 1e-12 is still resolved
(the witness points themselves are absolute coordinates and round at that magnitude). The
separation normal comes from the Minkowski difference too, never from witness differences.

Conventions: ``distance == 0`` and ``intersecting`` when the shapes touch or overlap
(touching means a core gap of at most ``TOUCH_REL`` times :func:`pair_scale`, the largest
absolute coordinate of the Minkowski difference, see :mod:`.tolerances`; the same rule for
every contact feature, vertex-vertex included, and the rule the SAT tests use). Witness
points lie on the shapes' boundaries when separated; when they intersect both witness points
are the same point, one that lies in both shapes.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .shapes import ConvexShape
from .tolerances import GJK_REL_GAP, TOUCH_REL

SEPARATED = 0
TOUCHING = 1
OVERLAPPING = 2
_TINY = 1e-280  # below this a squared length has lost precision to underflow


class DistanceResult(NamedTuple):
    """Result of :func:`gjk_distance`."""

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    intersecting: bool
    iterations: int


def _new_distance_result(values):
    # tuple.__new__ skips NamedTuple's Python-level __new__ (the scalar API is per call)
    return tuple.__new__(DistanceResult, values)


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


@njit(cache=True)
def gjk_core(pa, na, pb, nb):
    """Closest points of the hulls of ``pa[:na]`` and ``pb[:nb]`` (radii ignored).

    Returns ``(dist, pax, pay, pbx, pby, nx, ny, status, iterations, scale)``: the core
    distance (0.0 unless ``status`` is SEPARATED), the witness points, the unit normal from
    A to B (0, 0 unless separated), SEPARATED / TOUCHING / OVERLAPPING, the iteration count
    and :func:`pair_scale` (the scale of the relative tolerances).
    """
    max_iter = 4 * (na + nb) + 32
    # simplex slots: shape points a_k, b_k, their indices, barycentric weight l_k
    i1a = 0
    i1b = 0
    a1x = pa[0, 0]
    a1y = pa[0, 1]
    b1x = pb[0, 0]
    b1y = pb[0, 1]
    i2a = -1
    i2b = -1
    a2x = 0.0
    a2y = 0.0
    b2x = 0.0
    b2y = 0.0
    i3a = -1
    i3b = -1
    a3x = 0.0
    a3y = 0.0
    b3x = 0.0
    b3y = 0.0
    l1 = 1.0
    l2 = 0.0
    l3 = 0.0
    count = 1
    # saved simplex (count <= 2) of the previous iteration
    s_count = 0
    s_i1a = 0
    s_i1b = 0
    s_a1x = 0.0
    s_a1y = 0.0
    s_b1x = 0.0
    s_b1y = 0.0
    s_i2a = 0
    s_i2b = 0
    s_a2x = 0.0
    s_a2y = 0.0
    s_b2x = 0.0
    s_b2y = 0.0
    s_l1 = 1.0
    s_l2 = 0.0
    s_dist = 0.0
    s_vx = 0.0
    s_vy = 0.0
    prev_d2 = math.inf
    dist = 0.0
    d2 = 0.0
    vx = 0.0
    vy = 0.0
    scale = pair_scale(pa, na, pb, nb)
    touch = TOUCH_REL * scale
    status = SEPARATED
    it = 0
    while it < max_iter:
        it += 1
        # ---------------------------------------------------------- triangle
        if count == 3:
            w1x = a1x - b1x
            w1y = a1y - b1y
            w2x = a2x - b2x
            w2y = a2y - b2y
            w3x = a3x - b3x
            w3y = a3y - b3y
            e12x = w2x - w1x
            e12y = w2y - w1y
            e13x = w3x - w1x
            e13y = w3y - w1y
            e23x = w3x - w2x
            e23y = w3y - w2y
            u12 = w2x * e12x + w2y * e12y
            v12 = -(w1x * e12x + w1y * e12y)
            u13 = w3x * e13x + w3y * e13y
            v13 = -(w1x * e13x + w1y * e13y)
            u23 = w3x * e23x + w3y * e23y
            v23 = -(w2x * e23x + w2y * e23y)
            area = e12x * e13y - e12y * e13x
            c1 = w2x * w3y - w2y * w3x
            c2 = w3x * w1y - w3y * w1x
            c3 = w1x * w2y - w1y * w2x
            t1 = area * c1
            t2 = area * c2
            t3 = area * c3
            if v12 <= 0.0 and v13 <= 0.0:
                count = 1
            elif u12 > 0.0 and v12 > 0.0 and t3 <= 0.0:
                count = 2
            elif u13 > 0.0 and v13 > 0.0 and t2 <= 0.0:
                i2a = i3a
                i2b = i3b
                a2x = a3x
                a2y = a3y
                b2x = b3x
                b2y = b3y
                count = 2
            elif u12 <= 0.0 and v23 <= 0.0:
                i1a = i2a
                i1b = i2b
                a1x = a2x
                a1y = a2y
                b1x = b2x
                b1y = b2y
                count = 1
            elif u13 <= 0.0 and u23 <= 0.0:
                i1a = i3a
                i1b = i3b
                a1x = a3x
                a1y = a3y
                b1x = b3x
                b1y = b3y
                count = 1
            elif u23 > 0.0 and v23 > 0.0 and t1 <= 0.0:
                i1a = i2a
                i1b = i2b
                a1x = a2x
                a1y = a2y
                b1x = b2x
                b1y = b2y
                i2a = i3a
                i2b = i3b
                a2x = a3x
                a2y = a3y
                b2x = b3x
                b2y = b3y
                count = 2
            elif area != 0.0:
                # the origin is inside the triangle: barycentric weights c_k / sum(c); all
                # c_k share the sign of the area here, so the weights are in (0, 1)
                inv = 1.0 / (c1 + c2 + c3)
                l1 = c1 * inv
                l2 = c2 * inv
                l3 = c3 * inv
                status = OVERLAPPING
                break
            else:
                # flat triangle whose region signs rounding made inconsistent: keep the
                # newest edge; the distance test below stops any cycling
                i1a = i2a
                i1b = i2b
                a1x = a2x
                a1y = a2y
                b1x = b2x
                b1y = b2y
                i2a = i3a
                i2b = i3b
                a2x = a3x
                a2y = a3y
                b2x = b3x
                b2y = b3y
                count = 2
        # ---------------------------------------------------------- segment / vertex
        w1x = a1x - b1x
        w1y = a1y - b1y
        if count == 2:
            w2x = a2x - b2x
            w2y = a2y - b2y
            ex = w2x - w1x
            ey = w2y - w1y
            u = w2x * ex + w2y * ey  # weight of w1 times |e|^2
            v = -(w1x * ex + w1y * ey)  # weight of w2 times |e|^2
            if v <= 0.0:
                count = 1
            elif u <= 0.0:
                i1a = i2a
                i1b = i2b
                a1x = a2x
                a1y = a2y
                b1x = b2x
                b1y = b2y
                w1x = w2x
                w1y = w2y
                count = 1
            else:
                ee = u + v
                l1 = u / ee
                l2 = v / ee
                cr = ex * w1y - ey * w1x
                # closest point on the line, written as a multiple of the edge normal
                k = cr / ee
                vx = -ey * k
                vy = ex * k
                d2 = vx * vx + vy * vy
                if ee > _TINY:
                    dist = abs(cr) / math.sqrt(ee)
                else:  # squared length underflows: hypot keeps the precision
                    dist = abs(cr) / math.hypot(ex, ey)
        if count == 1:
            l1 = 1.0
            vx = w1x
            vy = w1y
            d2 = vx * vx + vy * vy
            if d2 > _TINY:
                dist = math.sqrt(d2)
            else:  # squared distance underflows: hypot keeps the precision
                dist = math.hypot(vx, vy)
        # ---------------------------------------------------------- stopping tests
        if dist <= touch:
            status = TOUCHING
            break
        if d2 >= prev_d2 and s_count > 0:
            # no progress (rounding): go back to the previous, better simplex
            count = s_count
            i1a = s_i1a
            i1b = s_i1b
            a1x = s_a1x
            a1y = s_a1y
            b1x = s_b1x
            b1y = s_b1y
            i2a = s_i2a
            i2b = s_i2b
            a2x = s_a2x
            a2y = s_a2y
            b2x = s_b2x
            b2y = s_b2y
            l1 = s_l1
            l2 = s_l2
            dist = s_dist
            vx = s_vx
            vy = s_vy
            break
        prev_d2 = d2
        s_count = count
        s_i1a = i1a
        s_i1b = i1b
        s_a1x = a1x
        s_a1y = a1y
        s_b1x = b1x
        s_b1y = b1y
        s_i2a = i2a
        s_i2b = i2b
        s_a2x = a2x
        s_a2y = a2y
        s_b2x = b2x
        s_b2y = b2y
        s_l1 = l1
        s_l2 = l2
        s_dist = dist
        s_vx = vx
        s_vy = vy
        # ---------------------------------------------------------- new support point
        ja = argmin_dot(pa, na, vx, vy)
        jb = argmin_dot(pb, nb, -vx, -vy)
        if ja == i1a and jb == i1b:
            break
        if count == 2 and ja == i2a and jb == i2b:
            break
        nax = pa[ja, 0]
        nay = pa[ja, 1]
        nbx = pb[jb, 0]
        nby = pb[jb, 1]
        gap = d2 - (vx * (nax - nbx) + vy * (nay - nby))
        if gap <= GJK_REL_GAP * d2:
            break
        if count == 1:
            i2a = ja
            i2b = jb
            a2x = nax
            a2y = nay
            b2x = nbx
            b2y = nby
        else:
            i3a = ja
            i3b = jb
            a3x = nax
            a3y = nay
            b3x = nbx
            b3y = nby
        count += 1
    # -------------------------------------------------------------- witness points
    if count == 1:
        pax = a1x
        pay = a1y
        pbx = b1x
        pby = b1y
    elif count == 2:
        pax = l1 * a1x + l2 * a2x
        pay = l1 * a1y + l2 * a2y
        pbx = l1 * b1x + l2 * b2x
        pby = l1 * b1y + l2 * b2y
    else:
        pax = l1 * a1x + l2 * a2x + l3 * a3x
        pay = l1 * a1y + l2 * a2y + l3 * a3y
        pbx = l1 * b1x + l2 * b2x + l3 * b3x
        pby = l1 * b1y + l2 * b2y + l3 * b3y
    nx = 0.0
    ny = 0.0
    if status != SEPARATED:
        dist = 0.0
    else:
        # unit normal from A to B = -v / |v|, from Minkowski-difference coordinates (the
        # witness points themselves may be too far from the origin to resolve a tiny gap)
        vn = math.hypot(vx, vy)
        if vn > 0.0:
            nx = -vx / vn
            ny = -vy / vn
    return dist, pax, pay, pbx, pby, nx, ny, status, it, scale


@njit(cache=True)
def inflate(dist, pax, pay, pbx, pby, nx, ny, status, scale, ra, rb):
    """Apply the radii to a core result (see :func:`gjk_core` for the arguments).

    Returns ``(distance, pax, pay, pbx, pby, intersecting)``.
    """
    rsum = ra + rb
    if status != SEPARATED:
        mx = 0.5 * (pax + pbx)
        my = 0.5 * (pay + pby)
        return 0.0, mx, my, mx, my, True
    gap = dist - rsum
    if gap > TOUCH_REL * max(scale, rsum):
        return gap, pax + ra * nx, pay + ra * ny, pbx - rb * nx, pby - rb * ny, False
    # the inflated shapes touch or overlap: one common point on the witness segment
    s = 0.5 * (dist + ra - rb)
    if s < 0.0:
        s = 0.0
    elif s > dist:
        s = dist
    cx = pax + s * nx
    cy = pay + s * ny
    return 0.0, cx, cy, cx, cy, True


@njit(cache=True)
def distance_pair(pa, ra, pb, rb):
    """GJK distance for two hull arrays with radii; tuple of scalars (see gjk_distance)."""
    dist, pax, pay, pbx, pby, nx, ny, status, it, scale = gjk_core(pa, pa.shape[0], pb, pb.shape[0])
    d, qax, qay, qbx, qby, inter = inflate(dist, pax, pay, pbx, pby, nx, ny, status, scale, ra, rb)
    return d, qax, qay, qbx, qby, inter, it


def _check_shape(shape, name):
    if not isinstance(shape, ConvexShape):
        raise ValueError(f"{name} must be a ConvexShape, got {type(shape).__name__}")


def gjk_distance(a, b):
    """Distance between two :class:`ConvexShape` objects, with witness points.

    Returns :class:`DistanceResult` ``(distance, point_a, point_b, intersecting,
    iterations)``. ``distance`` is 0 and ``intersecting`` is True when the shapes touch or
    overlap; otherwise ``point_a`` (on A's boundary) and ``point_b`` (on B's boundary) are
    closest points with ``|point_a - point_b| == distance``.
    """
    _check_shape(a, "a")
    _check_shape(b, "b")
    d, ax, ay, bx, by, inter, it = distance_pair(a.points, a.radius, b.points, b.radius)
    return _new_distance_result((d, np.array((ax, ay)), np.array((bx, by)), inter, it))
