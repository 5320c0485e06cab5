"""Separating-axis tests: oriented boxes (Apollo's 4-axis test) and convex polygons.

Touching counts as overlapping, as everywhere in this package, with the same tolerance as
GJK (:mod:`.tolerances`): a gap of at most ``TOUCH_REL`` times the pair's coordinate scale
(the largest absolute coordinate of the Minkowski difference) is a touch. So
``sat_overlap``, ``boxes_overlap_batch`` and ``gjk_distance(...).intersecting`` give the same
answer on touching shapes.

* Polygons use all edge normals of both hulls. An edge normal separates when every vertex of
  the other hull lies beyond the edge line by more than ``TOUCH_REL * s``, ``s`` being the
  pair's scale (:func:`.gjk.pair_scale`, the tolerance GJK applies). Gaps are taken relative
  to the edge's first vertex, so the rounding is relative to the shapes' sizes and
  separation, not to their distance from the world origin. When no axis separates by more
  than the tolerance but one shows a positive gap, the pair is a near touch, possibly at two
  vertices, where the true distance exceeds every axis gap: GJK's distance decides those
  (rare) pairs, so both tests apply the tolerance to the same quantity.
* Boxes use Apollo's ``Box2d::HasOverlap`` scheme on the parameters ``cx, cy, heading,
  length, width``: a bounding-circle rejection (no trigonometry, so far pairs cost a few
  nanoseconds), then (with one branch-free sine-cosine evaluation per heading,
  :func:`fast_sincos`) the axis-aligned bounding-box axes (Apollo's early-out) and the four
  box axes (two per box, since opposite sides are parallel), computed without branches and
  reduced to one maximum, so the batch loop has one data-dependent branch. The largest
  separating excess over these axes decides when it is beyond ``BOX_SLACK_REL * R`` on
  either side (see :mod:`.tolerances`; this covers the rounding between parameters and
  corners). A pair closer to touching than that is decided by the polygon edge test above
  on the box's float64 corners, computed exactly as :meth:`ConvexShape.box` computes them
  (or, for a zero length or width, by GJK on those corners), so the answer is the one GJK
  gives for the same shapes.
* Shapes with a radius, points and segments go through GJK (:func:`.gjk_distance`), where
  edge normals alone are not enough axes.

:func:`sat_mtv` returns the minimum translation vector, ``depth * normal`` from
:func:`.penetration`: translating B by it (or A by its negative) leaves them touching. It is
zero exactly when :func:`.penetration` reports a depth of 0 (apart, or touching within the
tolerance).
"""

import math

import numpy as np
from numba import njit

from planning_collision.common.hull import is_convex_ccw

from .distance import intersects_pair
from .fast_trig import fast_sincos
from .gjk import SEPARATED, gjk_core, pair_scale
from .penetration import penetration
from .shapes import check_shape
from .tolerances import BOX_SLACK_REL, TOUCH_REL


# ----------------------------------------------------------------------------- polygons
@njit(cache=True)
def _edge_gap(ref, nref, other, nother, tol):
    """How far, at most, ``other`` lies beyond an edge line of the CCW hull ``ref``.

    Returns the largest, over the edges of ``ref``, of the smallest outward distance of the
    vertices of ``other`` from that edge's line, as soon as it exceeds ``tol``. Only whether
    the result is > ``tol``, > 0 or <= 0 matters, so an edge stops as soon as a vertex of
    ``other`` shows that it cannot change that. Coordinates are taken relative to the edge's
    first vertex.
    """
    best = -math.inf
    for i in range(nref):
        j = i + 1 if i + 1 < nref else 0
        rx = ref[i, 0]
        ry = ref[i, 1]
        ex = ref[j, 0] - rx
        ey = ref[j, 1] - ry
        length = math.hypot(ex, ey)
        if length == 0.0:
            continue  # a repeated vertex: no axis
        stop = max(best, 0.0) * length
        low = math.inf
        for k in range(nother):
            # (ey, -ex) is the outward normal: the gap beyond the edge line times |e|
            g = ey * (other[k, 0] - rx) - ex * (other[k, 1] - ry)
            low = min(low, g)
            if low <= stop:
                break
        gap = low / length
        if gap > best:
            best = gap
            if best > tol:
                return best
    return best


@njit(cache=True, nogil=True)
def polygons_overlap(ha, na, hb, nb):
    """SAT over all edge normals of two CCW hulls with at least 3 vertices each; touching
    within the touch tolerance counts as overlapping (see the module docstring)."""
    tol = TOUCH_REL * pair_scale(ha, na, hb, nb)
    gap = _edge_gap(ha, na, hb, nb, tol)
    if gap > tol:
        return False
    gap = max(gap, _edge_gap(hb, nb, ha, na, tol))
    if gap > tol:
        return False
    if gap <= 0.0:
        return True
    # apart by at most tol along every edge normal: a near touch, which may be a
    # vertex-vertex contact whose true distance exceeds every axis gap; GJK measures it
    return gjk_core(ha, na, hb, nb).status != SEPARATED


# ----------------------------------------------------------------------------- boxes
@njit(cache=True)
def box_corners_into(out, cx, cy, c, s, length, width):
    """Write the corners of a box into ``out`` (4, 2), CCW, with exactly the float64
    operations of :func:`.shapes.box_corners` (so the same bits as ``ConvexShape.box``)."""
    hl = 0.5 * length
    hw = 0.5 * width
    ux = c * hl
    uy = s * hl
    vx = -s * hw
    vy = c * hw
    out[0, 0] = cx + ux - vx
    out[0, 1] = cy + uy - vy
    out[1, 0] = cx + ux + vx
    out[1, 1] = cy + uy + vy
    out[2, 0] = cx - ux + vx
    out[2, 1] = cy - uy + vy
    out[3, 0] = cx - ux - vx
    out[3, 1] = cy - uy - vy


@njit(cache=True)
def box_excess(cxa, cya, ca, sa, la, wa, cxb, cyb, cb, sb, lb, wb):
    """Largest separating excess of two boxes over the 2 bounding-box axes and the 4 box
    axes (headings given as cos/sin, full sizes): > 0 means separated, <= 0 overlapping.

    Branch-free: all six projections are computed, the largest wins.
    """
    dx = cxb - cxa
    dy = cyb - cya
    hla = 0.5 * la
    hwa = 0.5 * wa
    hlb = 0.5 * lb
    hwb = 0.5 * wb
    aca = abs(ca)
    asa = abs(sa)
    acb = abs(cb)
    asb = abs(sb)
    # bounding boxes (Apollo's early-out, here one more candidate for the maximum)
    g = max(
        abs(dx) - (aca * hla + asa * hwa + acb * hlb + asb * hwb),
        abs(dy) - (asa * hla + aca * hwa + asb * hlb + acb * hwb),
    )
    # 4 axes: A's length/width directions, then B's
    c_uu = abs(ca * cb + sa * sb)  # |u_a . u_b| == |v_a . v_b|
    c_uv = abs(sa * cb - ca * sb)  # |u_a . v_b| == |v_a . u_b|
    g1 = abs(dx * ca + dy * sa) - (hla + hlb * c_uu + hwb * c_uv)
    g2 = abs(dy * ca - dx * sa) - (hwa + hlb * c_uv + hwb * c_uu)
    g3 = abs(dx * cb + dy * sb) - (hlb + hla * c_uu + hwa * c_uv)
    g4 = abs(dy * cb - dx * sb) - (hwb + hla * c_uv + hwa * c_uu)
    return max(max(g, g1), max(max(g2, g3), g4))


@njit(cache=True)
def box_slack(cxa, cya, la, wa, cxb, cyb, lb, wb):
    """``BOX_SLACK_REL * R``: how far from touching the parameter test must be to decide."""
    big = max(max(abs(cxa), abs(cya)), max(abs(cxb), abs(cyb)))
    return BOX_SLACK_REL * (big + 0.5 * (la + wa + lb + wb))


@njit(cache=True)
def corners_overlap(qa, qb):
    """Exact decision on two 4-corner boxes: the edge test, or GJK when a box has no area
    (zero length or width, or corners that rounding made collinear)."""
    if is_convex_ccw(qa, 4) and is_convex_ccw(qb, 4):
        return polygons_overlap(qa, 4, qb, 4)
    return gjk_core(qa, 4, qb, 4).status != SEPARATED


@njit(cache=True)
def _box_exact(cxa, cya, ha, la, wa, cxb, cyb, hb, lb, wb):
    """The rare close call of :func:`box_overlap`: decide on the float64 corners, computed
    with the same ``math.cos`` / ``math.sin`` as :meth:`ConvexShape.box`."""
    qa = np.empty((4, 2))
    qb = np.empty((4, 2))
    box_corners_into(qa, cxa, cya, math.cos(ha), math.sin(ha), la, wa)
    box_corners_into(qb, cxb, cyb, math.cos(hb), math.sin(hb), lb, wb)
    return corners_overlap(qa, qb)


@njit(cache=True)
def box_overlap(cxa, cya, ha, la, wa, cxb, cyb, hb, lb, wb):
    """Overlap of two oriented boxes (center, heading, length, width); touching overlaps.

    The answer is the one the exact edge test (or GJK) gives on the boxes' corners as
    :meth:`ConvexShape.box` computes them; see the module docstring.
    """
    dx = cxb - cxa
    dy = cyb - cya
    slack = box_slack(cxa, cya, la, wa, cxb, cyb, lb, wb)
    reach = 0.5 * (math.sqrt(la * la + wa * wa) + math.sqrt(lb * lb + wb * wb)) + slack
    if dx * dx + dy * dy > reach * reach:
        return False
    sa, ca = fast_sincos(ha)
    sb, cb = fast_sincos(hb)
    g = box_excess(cxa, cya, ca, sa, la, wa, cxb, cyb, cb, sb, lb, wb)
    if abs(g) > slack:  # one branch for both clear answers
        return g < 0.0
    return _box_exact(cxa, cya, ha, la, wa, cxb, cyb, hb, lb, wb)


@njit(cache=True, nogil=True)
def box_shapes_overlap(cxa, cya, ha, la, wa, pa, cxb, cyb, hb, lb, wb, pb):
    """:func:`box_overlap` for two ``ConvexShape`` boxes with 4 stored corners ``pa``, ``pb``.

    Transformed boxes carry corners that differ from the corners of their (transformed)
    parameters by rounding; that difference is measured and widens the undecided band, and
    close calls are decided on the stored corners, the points GJK sees.
    """
    ca = math.cos(ha)
    sa = math.sin(ha)
    cb = math.cos(hb)
    sb = math.sin(hb)
    q = np.empty((4, 2))
    box_corners_into(q, cxa, cya, ca, sa, la, wa)
    dev = 0.0
    for k in range(4):
        dev = max(dev, max(abs(pa[k, 0] - q[k, 0]), abs(pa[k, 1] - q[k, 1])))
    box_corners_into(q, cxb, cyb, cb, sb, lb, wb)
    for k in range(4):
        dev = max(dev, max(abs(pb[k, 0] - q[k, 0]), abs(pb[k, 1] - q[k, 1])))
    slack = box_slack(cxa, cya, la, wa, cxb, cyb, lb, wb) + 2.0 * dev
    g = box_excess(cxa, cya, ca, sa, la, wa, cxb, cyb, cb, sb, lb, wb)
    if abs(g) > slack:
        return g < 0.0
    return corners_overlap(pa, pb)


# ----------------------------------------------------------------------------- public
def sat_overlap(a, b):
    """True if two :class:`ConvexShape` objects overlap or touch.

    Boxes built with :meth:`ConvexShape.box` (and their transforms) use the box test,
    polygons without radius the edge-normal test, anything else GJK. All three use the touch
    tolerance of :mod:`.tolerances`, so they agree with :func:`.gjk_distance`.
    """
    check_shape(a, "a")
    check_shape(b, "b")
    if a.radius == 0.0 and b.radius == 0.0:
        na = a.points.shape[0]
        nb = b.points.shape[0]
        if a.box_params is not None and b.box_params is not None and na == 4 and nb == 4:
            return bool(box_shapes_overlap(*a.box_params, a.points, *b.box_params, b.points))
        if na >= 3 and nb >= 3:
            return bool(polygons_overlap(a.points, na, b.points, nb))
    return bool(intersects_pair(a.points, a.radius, b.points, b.radius))


def sat_mtv(a, b):
    """Minimum translation vector (2,): move B by it (or A by its negative) to separate.

    Zero when the shapes are apart or only touch.
    """
    check_shape(a, "a")
    check_shape(b, "b")
    c = penetration(a, b)
    if c.depth <= 0.0:
        return np.zeros(2)
    return c.depth * c.normal
