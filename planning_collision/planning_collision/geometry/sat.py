"""Separating-axis tests: oriented boxes (Apollo's 4-axis test) and convex polygons.

* Boxes use Apollo's ``Box2d::HasOverlap`` scheme: an axis-aligned bounding-box early-out,
  then the projections of both boxes on the four box axes (two per box, since opposite sides
  are parallel). A bounding-circle rejection runs first; it needs no trigonometry, so far
  pairs cost a few nanoseconds.
* Polygons use all edge normals of both hulls, with exact signs: the edge vector is not
  normalised, so a separation is reported only when every vertex of the other polygon is
  strictly outside an edge line. Touching counts as overlapping, as everywhere in this
  package.
* Shapes with a radius, points and segments go through GJK (:func:`.gjk_distance`), where
  edge normals alone are not enough axes.

:func:`sat_mtv` returns the minimum translation vector, ``depth * normal`` from
:func:`.penetration`: translating B by it (or A by its negative) leaves them touching.
"""

import math

import numpy as np
from numba import njit

from .gjk import _check_shape, distance_pair
from .penetration import penetration_pair


@njit(cache=True)
def box_overlap_cs(cxa, cya, ca, sa, la, wa, cxb, cyb, cb, sb, lb, wb):
    """Oriented-box overlap with headings given as cos/sin (half sizes not yet halved)."""
    dx = cxb - cxa
    dy = cyb - cya
    hla = 0.5 * la
    hwa = 0.5 * wa
    hlb = 0.5 * lb
    hwb = 0.5 * wb
    # AABB early-out (Apollo)
    if abs(dx) > abs(ca) * hla + abs(sa) * hwa + abs(cb) * hlb + abs(sb) * hwb:
        return False
    if abs(dy) > abs(sa) * hla + abs(ca) * hwa + abs(sb) * hlb + abs(cb) * hwb:
        return False
    # 4 axes: A's length/width directions, then B's
    c_uu = abs(ca * cb + sa * sb)  # |u_a . u_b|
    c_uv = abs(sa * cb - ca * sb)  # |u_a . v_b| == |v_a . u_b|
    if abs(dx * ca + dy * sa) > hla + hlb * c_uu + hwb * c_uv:
        return False
    if abs(dy * ca - dx * sa) > hwa + hlb * c_uv + hwb * c_uu:
        return False
    if abs(dx * cb + dy * sb) > hlb + hla * c_uu + hwa * c_uv:
        return False
    if abs(dy * cb - dx * sb) > hwb + hla * c_uv + hwa * c_uu:
        return False
    return True


@njit(cache=True)
def box_overlap(cxa, cya, ha, la, wa, cxb, cyb, hb, lb, wb):
    """Overlap of two oriented boxes (center, heading, length, width); touching overlaps."""
    dx = cxb - cxa
    dy = cyb - cya
    reach = 0.5 * (math.sqrt(la * la + wa * wa) + math.sqrt(lb * lb + wb * wb))
    if dx * dx + dy * dy > reach * reach * (1.0 + 1e-12):
        return False
    return box_overlap_cs(
        cxa, cya, math.cos(ha), math.sin(ha), la, wa, cxb, cyb, math.cos(hb), math.sin(hb), lb, wb
    )


@njit(cache=True)
def _separated_by_edges(ref, nref, other, nother):
    """True if an edge line of CCW hull ``ref`` has all of ``other`` strictly outside."""
    for i in range(nref):
        j = i + 1 if i + 1 < nref else 0
        ex = ref[j, 0] - ref[i, 0]
        ey = ref[j, 1] - ref[i, 1]
        outside = True
        for k in range(nother):
            if ex * (other[k, 1] - ref[i, 1]) - ey * (other[k, 0] - ref[i, 0]) >= 0.0:
                outside = False
                break
        if outside:
            return True
    return False


@njit(cache=True)
def polygons_overlap(ha, na, hb, nb):
    """SAT over all edge normals of two CCW hulls with at least 3 vertices each."""
    if _separated_by_edges(ha, na, hb, nb):
        return False
    return not _separated_by_edges(hb, nb, ha, na)


def sat_overlap(a, b):
    """True if two :class:`ConvexShape` objects overlap or touch.

    Boxes built with :meth:`ConvexShape.box` (and their transforms) use the box test,
    polygons without radius the edge-normal test, anything else GJK.
    """
    _check_shape(a, "a")
    _check_shape(b, "b")
    if a.radius == 0.0 and b.radius == 0.0:
        if a.box_params is not None and b.box_params is not None:
            return bool(box_overlap(*a.box_params, *b.box_params))
        if a.points.shape[0] >= 3 and b.points.shape[0] >= 3:
            return bool(polygons_overlap(a.points, a.points.shape[0], b.points, b.points.shape[0]))
    return bool(distance_pair(a.points, a.radius, b.points, b.radius)[5])


def sat_mtv(a, b):
    """Minimum translation vector (2,): move B by it (or A by its negative) to separate.

    Zero when the shapes are apart or only touch.
    """
    _check_shape(a, "a")
    _check_shape(b, "b")
    depth, nx, ny = penetration_pair(a.points, a.radius, b.points, b.radius)[:3]
    if depth <= 0.0:
        return np.zeros(2)
    return np.array((depth * nx, depth * ny))
