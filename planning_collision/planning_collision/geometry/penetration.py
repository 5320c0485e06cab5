"""Penetration depth and signed distance of two convex shapes (point set + radius).

Every :class:`ConvexShape` is a convex polygon core (possibly a segment or a point) plus a
radius, so one exact method covers polygons, boxes, discs, capsules and segments:

* cores apart (GJK distance ``d > 0``): the inflated shapes overlap by
  ``depth = radius_a + radius_b - d`` along the GJK witness direction (negative depth means
  separated; this is the analytic disc/capsule answer);
* cores touching or overlapping: the core depth is found by SAT over the edge normals of
  both hulls. The Minkowski difference of two convex polygons has exactly those normals, so
  the minimum overlap over them *is* the penetration depth (EPA would converge to the same
  face); for a segment both of its normals are used, a single point has none. The radii
  then add: ``depth = core_depth + radius_a + radius_b``.

Conventions for :class:`PenetrationResult` ``(depth, normal, point_a, point_b)``:

* ``normal`` is a unit vector pointing from A towards B: translating B by
  ``depth * normal`` (or A by ``-depth * normal``) leaves the shapes just touching;
* ``point_a`` lies on A's boundary, ``point_b`` on B's, and
  ``point_a - point_b == depth * normal``; for polygon contacts the points sit in the middle
  of the contact feature (the overlap of the reference face and the incident feature);
* ``depth`` is ``-distance`` when the shapes are apart, so
  ``signed_distance(a, b) == -penetration(a, b).depth`` always;
* shapes that touch within the tolerance GJK uses (``TOUCH_REL`` times the pair's scale,
  see :mod:`.tolerances`) get a depth of exactly 0, whichever side of zero the
  rounded depth fell on, so ``depth == 0``, ``sat_mtv == 0`` and ``distance == 0`` agree;
* two identical points or discs have no preferred direction: the normal is then (1, 0).
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from planning_collision.common.hull import convex_hull_into, is_convex_ccw

from .distance import core_distance, inflate
from .gjk import SEPARATED, argmin_dot
from .shapes import check_shape
from .tolerances import EPS, TOUCH_REL


class PenetrationResult(NamedTuple):
    """Result of :func:`penetration`."""

    depth: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray


class Contact(NamedTuple):
    """A penetration as the kernels pass it around: ``depth`` along the unit normal ``(nx,
    ny)`` from A to B, and the contact points ``(ax, ay)`` on A and ``(bx, by)`` on B."""

    depth: float
    nx: float
    ny: float
    ax: float
    ay: float
    bx: float
    by: float


@njit(cache=True)
def _face_best(ref, nref, inc, ninc, best):
    """Smallest overlap over the outward edge normals of the CCW hull ``ref``.

    Returns ``(depth, face)``; ``face`` is -1 if no edge beats ``best``. When both hulls
    are proper polygons the deepest point of ``inc`` is tracked with rotating calipers: as
    the edge normals of ``ref`` turn counter-clockwise, the vertex of ``inc`` extreme
    against them moves counter-clockwise too, so the whole pass costs O(nref + ninc).
    """
    face = -1
    if nref < 2:
        return best, face
    walk = nref >= 3 and ninc >= 3
    j = -1
    for i in range(nref):
        k = i + 1 if i + 1 < nref else 0
        rx = ref[i, 0]
        ry = ref[i, 1]
        # unnormalised outward normal (ey, -ex): the walk does not wait for the norm
        nx = ref[k, 1] - ry
        ny = rx - ref[k, 0]
        if nx == 0.0 and ny == 0.0:
            continue
        # dot products relative to the edge's first vertex (exact differences)
        if j < 0 or not walk:
            j = argmin_dot(inc, ninc, nx, ny)
        low = (inc[j, 0] - rx) * nx + (inc[j, 1] - ry) * ny
        if walk:
            for _ in range(ninc):
                jn = j + 1 if j + 1 < ninc else 0
                val = (inc[jn, 0] - rx) * nx + (inc[jn, 1] - ry) * ny
                if val < low:
                    low = val
                    j = jn
                else:
                    break
        norm = math.hypot(nx, ny)  # hypot: no underflow on tiny edges
        if norm == 0.0:
            continue
        depth = -low / norm
        if depth < best:
            best = depth
            face = i
    return best, face


@njit(cache=True)
def _contact_on_face(ref, nref, face, inc, ninc, depth):
    """Contact points for reference face ``face`` of ``ref`` against ``inc``.

    Returns ``(nx, ny, rx, ry, ix, iy)``: the face's outward unit normal, the contact
    point on the reference face and the one on the incident shape (``r - i = depth * n``).
    """
    i = face
    j = i + 1 if i + 1 < nref else 0
    ex = ref[j, 0] - ref[i, 0]
    ey = ref[j, 1] - ref[i, 1]
    length = math.hypot(ex, ey)
    tx = ex / length
    ty = ey / length
    nx = ty
    ny = -tx
    # coordinates along the face (t) and against its normal, relative to ref[i]
    ox = ref[i, 0]
    oy = ref[i, 1]
    t0 = 0.0
    t1 = length
    low = math.inf
    for k in range(ninc):
        low = min(low, (inc[k, 0] - ox) * nx + (inc[k, 1] - oy) * ny)
    # incident feature: the points of inc (nearly) deepest along -n
    size = length
    for k in range(ninc):
        size = max(size, max(abs(inc[k, 0] - ox), abs(inc[k, 1] - oy)))
    tol = 64.0 * EPS * size
    lo = math.inf
    hi = -math.inf
    for k in range(ninc):
        if (inc[k, 0] - ox) * nx + (inc[k, 1] - oy) * ny <= low + tol:
            t = tx * (inc[k, 0] - ox) + ty * (inc[k, 1] - oy)
            lo = min(lo, t)
            hi = max(hi, t)
    a = max(t0, lo)
    b = min(t1, hi)
    if a <= b:
        s = 0.5 * (a + b)
    else:
        s = min(max(0.5 * (lo + hi), t0), t1)
    rx = ox + s * tx
    ry = oy + s * ty
    return nx, ny, rx, ry, rx - depth * nx, ry - depth * ny


@njit(cache=True)
def sat_depth(ha, na, hb, nb, touch):
    """Exact penetration of two CCW hulls that touch or overlap (radii ignored).

    Returns a :class:`Contact` with the normal pointing from A to B. A depth of at most
    ``touch`` (the touch tolerance, see :mod:`.tolerances`) is a touch and reported as
    exactly 0, like GJK reports distance 0 for a gap within it; a negative
    value can only come from rounding, since the caller already knows the hulls intersect.
    """
    best_a, face_a = _face_best(ha, na, hb, nb, math.inf)
    best_b, face_b = _face_best(hb, nb, ha, na, best_a)
    if face_b >= 0:
        depth = best_b if best_b > touch else 0.0
        mx, my, qbx, qby, qax, qay = _contact_on_face(hb, nb, face_b, ha, na, depth)
        return Contact(depth, -mx, -my, qax, qay, qbx, qby)
    if face_a >= 0:
        depth = best_a if best_a > touch else 0.0
        nx, ny, qax, qay, qbx, qby = _contact_on_face(ha, na, face_a, hb, nb, depth)
        return Contact(depth, nx, ny, qax, qay, qbx, qby)
    # two single points (equal, since the caller saw them intersect)
    return Contact(0.0, 1.0, 0.0, ha[0, 0], ha[0, 1], hb[0, 0], hb[0, 1])


@njit(cache=True)
def _from_core(core, ha, na, ra, hb, nb, rb):
    """Finish a penetration query from a core result (:class:`.gjk.GjkOutput`) and the two
    CCW hulls: a :class:`Contact`."""
    if core.status == SEPARATED:
        depth = ra + rb - core.distance
        if inflate(core, ra, rb).intersecting and depth <= TOUCH_REL * max(core.scale, ra + rb):
            depth = 0.0  # within the touch tolerance either way: a touch
        nx = core.nx
        ny = core.ny
        return Contact(depth, nx, ny, core.ax + ra * nx, core.ay + ra * ny, core.bx - rb * nx,
                       core.by - rb * ny)
    c = sat_depth(ha, na, hb, nb, TOUCH_REL * core.scale)
    return Contact(c.depth + ra + rb, c.nx, c.ny, c.ax + ra * c.nx, c.ay + ra * c.ny,
                   c.bx - rb * c.nx, c.by - rb * c.ny)


@njit(cache=True)
def penetration_points(pa, na, ra, pb, nb, rb, ha, hb, order, stack):
    """Penetration (a :class:`Contact`) of point rows ``pa[:na]`` and ``pb[:nb]`` (any
    order) with radii.

    Rows that already are strictly convex CCW polygons are used as they are; otherwise the
    hulls (needed only when the cores intersect) are built in the scratch arrays ``ha``,
    ``hb`` (>= K + 1 rows), ``order`` (>= K + 1) and ``stack`` (>= 2 K + 2).
    """
    core = core_distance(pa, na, pb, nb)
    if core.status == SEPARATED:
        return _from_core(core, pa, na, ra, pb, nb, rb)
    if is_convex_ccw(pa, na):
        ha = pa
        ma = na
    else:
        ma = convex_hull_into(pa, na, ha, order, stack)
    if is_convex_ccw(pb, nb):
        hb = pb
        mb = nb
    else:
        mb = convex_hull_into(pb, nb, hb, order, stack)
    return _from_core(core, ha, ma, ra, hb, mb, rb)


@njit(cache=True, nogil=True)
def penetration_pair(pa, ra, pb, rb):
    """The scalar API's kernel: :func:`penetration_points` for two whole arrays (allocating
    its own scratch), as a plain tuple in :class:`Contact`'s field order (boxing a named
    tuple into Python costs about a microsecond)."""
    na = pa.shape[0]
    nb = pb.shape[0]
    k = max(na, nb)
    ha = np.empty((k + 1, 2))
    hb = np.empty((k + 1, 2))
    order = np.empty(k + 1, np.int64)
    stack = np.empty(2 * k + 2, np.int64)
    c = penetration_points(pa, na, ra, pb, nb, rb, ha, hb, order, stack)
    return c.depth, c.nx, c.ny, c.ax, c.ay, c.bx, c.by


def penetration(a, b):
    """Penetration of two :class:`ConvexShape` objects (see the module docstring).

    Returns :class:`PenetrationResult` ``(depth, normal, point_a, point_b)``; ``depth`` > 0
    when they overlap, 0 when they touch and ``-distance`` when they are apart.
    """
    check_shape(a, "a")
    check_shape(b, "b")
    depth, nx, ny, ax, ay, bx, by = penetration_pair(a.points, a.radius, b.points, b.radius)
    return PenetrationResult(depth, np.array((nx, ny)), np.array((ax, ay)), np.array((bx, by)))


def signed_distance(a, b):
    """Distance when apart, 0 when touching, minus the penetration depth when overlapping."""
    check_shape(a, "a")
    check_shape(b, "b")
    depth = penetration_pair(a.points, a.radius, b.points, b.radius)[0]
    return 0.0 - float(depth)
