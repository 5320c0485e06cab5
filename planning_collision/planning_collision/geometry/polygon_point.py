"""Closest points of a convex polygon and a point in closed form (the polygon-disc fast path).

A disc, a footprint's corner or a robot centre against a polygon is the commonest distance
query; GJK spends several support scans of the polygon and their data-dependent branches on
it. One branch-free pass is enough: a point is inside a convex polygon when it lies on the
inner side of every edge; otherwise its nearest point lies on the edge whose line it is
farthest beyond, clamped to that edge's ends. The same pass checks that the polygon is
strictly convex and counter-clockwise (every turn strictly left, the edge directions
winding once, the test of :func:`.hull.is_convex_ccw`), and the edge found must not meet
its neighbours at a turn flatter than :data:`_MIN_TURN_SIN`; any other row goes to GJK.

The arithmetic is GJK's (:mod:`.gjk`) on the same Minkowski-difference points ``w = a - b``:
the vertex and edge formulas of :func:`.gjk._nearest_is_vertex` and
:func:`.gjk._nearest_on_segment`, the same touch tolerance and scale, and the normal from
the nearest point of ``A - B``. So the results agree with GJK's to rounding (the
cross-checks against shapely hold to 1e-9, as for GJK) and every convention of
:class:`.gjk.GjkOutput` holds; ``iterations`` is 1.
"""

import math

from numba import njit

from .gjk import _TINY, OVERLAPPING, SEPARATED, TOUCHING, GjkOutput
from .tolerances import TOUCH_REL

#: ``status`` of a :class:`.gjk.GjkOutput` this module returns when the closed form does not
#: apply (the polygon row is not strictly convex and counter-clockwise, or its squared
#: lengths would underflow or overflow): the caller must use GJK.
USE_GJK = -1
#: The closed form squares lengths without GJK's underflow guards: it takes pairs whose
#: coordinates (relative to the point) lie within [_SMALL, _LARGE] in magnitude and whose
#: squared edge lengths exceed _SMALL ** 2, and leaves the rest to GJK.
_SMALL = 1e-100
_LARGE = 1e100
#: The turns at both ends of the edge found must be sharper than this (|sin| of the turning
#: angle), else the pair goes to GJK: the lines of two edges meeting at a flatter turn are
#: the same line to rounding, so which of them lies farther beyond the point is rounding's
#: choice, and the clamp to the wrong one missed by up to its length (a sliver triangle
#: from three almost collinear footprint points, issue #20).
_MIN_TURN_SIN = 1e-6


@njit(cache=True, inline="always")
def _flat_turn(ax, ay, bx, by):
    """Whether edge a then edge b turn by less than :data:`_MIN_TURN_SIN` (as a sine)."""
    turn = ax * by - ay * bx
    return turn * turn <= _MIN_TURN_SIN * _MIN_TURN_SIN * (ax * ax + ay * ay) * (bx * bx + by * by)


@njit(cache=True, error_model="numpy")
def polygon_point(p, n, qx, qy, polygon_is_a):
    """Closest points of the polygon ``p[:n]`` (n >= 3) and the point ``(qx, qy)``: a
    :class:`.gjk.GjkOutput` for the pair (polygon, point) when ``polygon_is_a``, else for
    (point, polygon); its status is :data:`USE_GJK` when the closed form does not apply."""
    # Work on d = vertex - q. The Minkowski difference A - B is w = d (polygon first) or
    # w = -d (point first): a point reflection, which keeps the polygon counter-clockwise and
    # leaves every cross product, dot product and length below unchanged, so ``sign`` only
    # turns the final point and normal.
    sign = 1.0 if polygon_is_a else -1.0
    # One pass over the edges i -> j = i + 1, without data-dependent branches (mispredicted
    # branches made a first version slower than GJK): the edge whose line lies farthest from
    # q on the outer side (its signed distance squared, as a running maximum), the convexity
    # test and the scale.
    dix = p[n - 1, 0] - qx
    diy = p[n - 1, 1] - qy
    ex_in = dix - (p[n - 2, 0] - qx)  # the edge into vertex i
    ey_in = diy - (p[n - 2, 1] - qy)
    farthest = -math.inf
    nearest = 0  # that edge, as the index of its end vertex j
    left_turns = True
    wraps = 0
    scale = 0.0  # pair_scale: the largest |coordinate| of the Minkowski difference
    shortest = math.inf  # smallest squared edge length
    for j in range(n):
        djx = p[j, 0] - qx
        djy = p[j, 1] - qy
        ex = djx - dix
        ey = djy - diy
        left_turns &= ex_in * ey - ey_in * ex > 0.0
        # the edge direction turns through +x (with every turn strictly left and below a
        # half turn, from below the x axis to on or above it means exactly that)
        wraps += (ey_in < 0.0) & (ey >= 0.0)
        cr = ex * diy - ey * dix  # |e| times the distance of q beyond the edge's line
        ee = ex * ex + ey * ey
        beyond = cr * (abs(cr) / ee)
        shortest = min(shortest, ee)
        nearest = j if beyond > farthest else nearest
        farthest = max(farthest, beyond)
        scale = max(scale, max(abs(djx), abs(djy)))
        dix = djx
        diy = djy
        ex_in = ex
        ey_in = ey
    if not (left_turns and wraps == 1 and _SMALL <= scale <= _LARGE
            and shortest > _SMALL * _SMALL):
        return GjkOutput(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, USE_GJK, 0, 0.0)
    if farthest <= 0.0:  # q is on the inner side of every edge: inside the polygon
        return GjkOutput(0.0, qx, qy, qx, qy, 0.0, 0.0, OVERLAPPING, 1, scale)
    # The nearest point of the polygon lies on that edge, clamped to its ends: in the region
    # of a vertex, the edge whose line lies farthest from q is one of the vertex's two edges
    # (their normals bound the vertex's normal cone, and every other edge's normal is
    # farther from q's direction). Then GJK's Voronoi regions and formulas for the point v
    # of A - B nearest the origin; the normal from A to B is -v / |v|.
    j = nearest
    i = j - 1 if j > 0 else n - 1
    dix = p[i, 0] - qx
    diy = p[i, 1] - qy
    djx = p[j, 0] - qx
    djy = p[j, 1] - qy
    ex = djx - dix
    ey = djy - diy
    h = i - 1 if i > 0 else n - 1  # the edges h -> i and j -> k meet this one
    k = j + 1 if j + 1 < n else 0
    if _flat_turn(p[i, 0] - p[h, 0], p[i, 1] - p[h, 1], ex, ey) or \
            _flat_turn(ex, ey, p[k, 0] - p[j, 0], p[k, 1] - p[j, 1]):
        return GjkOutput(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, USE_GJK, 0, 0.0)
    u = djx * ex + djy * ey  # weight of vertex i times |e|^2
    v = -(dix * ex + diy * ey)  # weight of vertex j times |e|^2
    if v <= 0.0 or u <= 0.0:  # region "vertex i" or "vertex j"
        k = i if v <= 0.0 else j
        cx = p[k, 0]
        cy = p[k, 1]
        dx = cx - qx
        dy = cy - qy
        d2 = dx * dx + dy * dy
        dist = math.sqrt(d2) if d2 > _TINY else math.hypot(dx, dy)
        inv = sign / dist
        nx = -dx * inv
        ny = -dy * inv
    else:  # region "edge ij": the foot of the perpendicular
        ee = u + v
        inv = 1.0 / math.sqrt(ex * ex + ey * ey)  # >= _SMALL ** 2: no underflow
        dist = (ex * diy - ey * dix) * inv  # > 0: q is beyond this edge
        nx = sign * ey * inv
        ny = -sign * ex * inv
        l1 = u / ee
        l2 = v / ee
        cx = l1 * p[i, 0] + l2 * p[j, 0]
        cy = l1 * p[i, 1] + l2 * p[j, 1]
    ax, ay, bx, by = (cx, cy, qx, qy) if polygon_is_a else (qx, qy, cx, cy)
    if dist <= TOUCH_REL * scale:
        return GjkOutput(0.0, ax, ay, bx, by, 0.0, 0.0, TOUCHING, 1, scale)
    return GjkOutput(dist, ax, ay, bx, by, nx, ny, SEPARATED, 1, scale)
