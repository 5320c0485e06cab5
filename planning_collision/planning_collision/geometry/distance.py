"""Distance between two convex shapes (point set + radius): the core query and its public API.

The kernels work on the *core* point sets (the hulls without their radii) and subtract the
radii afterwards, as Box2D does: the core distance of two point sets is the distance from
the origin to their Minkowski difference ``A - B``, and the inflated shapes are ``radius_a +
radius_b`` closer.

:func:`core_distance` finds the cores' closest points: in closed form for a strictly convex
polygon and a point (:mod:`.polygon_point`, the polygon-disc case, about three times faster
than GJK), with GJK (:mod:`.gjk`) otherwise; :func:`inflate` applies the radii.
:func:`gjk_distance` is the scalar API on :class:`ConvexShape` objects; the batch,
penetration and obstacle kernels call :func:`core_distance` and :func:`inflate` directly.

Conventions: ``distance == 0`` and ``intersecting`` when the shapes touch or overlap
(touching: see :mod:`.tolerances`). Separated shapes: ``point_a`` and ``point_b`` lie on the
boundaries, ``point_b - point_a == distance * normal`` with ``normal`` the unit vector from
A to B, computed from the Minkowski difference (not from the witness points, which round at
the magnitude of their coordinates). Intersecting shapes: both witness points are one point
that lies in both shapes; ``normal`` is still GJK's separating direction of the cores when
only the radii overlap (it is then the direction :func:`.penetration` reports too), and
NaN when the cores themselves touch or overlap (no direction is defined there: ask
:func:`.penetration` for the minimum translation).
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .gjk import SEPARATED, gjk_core
from .polygon_point import USE_GJK, polygon_point
from .shapes import check_shape
from .tolerances import TOUCH_REL


class DistanceResult(NamedTuple):
    """Result of :func:`gjk_distance` (see the module docstring for the conventions)."""

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    intersecting: bool
    iterations: int
    #: Unit normal (2,) from A to B; NaN when the cores touch or overlap.
    normal: np.ndarray


class Distance(NamedTuple):
    """Distance of two shapes, radii applied (what the kernels pass around): the distance,
    the witness points ``(ax, ay)`` and ``(bx, by)``, the unit normal ``(nx, ny)`` from A to
    B (NaN when the cores touch or overlap), ``intersecting`` and GJK's iteration count."""

    distance: float
    ax: float
    ay: float
    bx: float
    by: float
    nx: float
    ny: float
    intersecting: bool
    iterations: int


@njit(cache=True, inline="always")
def core_distance(pa, na, pb, nb):
    """Closest points of the hulls of ``pa[:na]`` and ``pb[:nb]`` (radii ignored): a
    :class:`.gjk.GjkOutput`."""
    if nb == 1 and na >= 3:
        out = polygon_point(pa, na, pb[0, 0], pb[0, 1], True)
        if out.status != USE_GJK:
            return out
    elif na == 1 and nb >= 3:
        out = polygon_point(pb, nb, pa[0, 0], pa[0, 1], False)
        if out.status != USE_GJK:
            return out
    return gjk_core(pa, na, pb, nb)


@njit(cache=True, inline="always")
def inflate(core, ra, rb):
    """Apply the radii ``ra``, ``rb`` to a core result (:class:`.gjk.GjkOutput`): a
    :class:`Distance`."""
    if core.status != SEPARATED:
        mx = 0.5 * (core.ax + core.bx)
        my = 0.5 * (core.ay + core.by)
        return Distance(0.0, mx, my, mx, my, math.nan, math.nan, True, core.iterations)
    nx = core.nx
    ny = core.ny
    gap = core.distance - (ra + rb)
    if gap > TOUCH_REL * max(core.scale, ra + rb):
        return Distance(gap, core.ax + ra * nx, core.ay + ra * ny, core.bx - rb * nx,
                        core.by - rb * ny, nx, ny, False, core.iterations)
    # the inflated shapes touch or overlap: one common point on the witness segment
    s = min(max(0.5 * (core.distance + ra - rb), 0.0), core.distance)
    cx = core.ax + s * nx
    cy = core.ay + s * ny
    return Distance(0.0, cx, cy, cx, cy, nx, ny, True, core.iterations)


@njit(cache=True, nogil=True)
def distance_pair(pa, ra, pb, rb):
    """The scalar API's kernel: the :class:`Distance` of two whole hull arrays with radii, as
    a plain tuple in :class:`Distance`'s field order (boxing a named tuple into Python costs
    about a microsecond, as much as the query itself)."""
    r = inflate(core_distance(pa, pa.shape[0], pb, pb.shape[0]), ra, rb)
    return r.distance, r.ax, r.ay, r.bx, r.by, r.nx, r.ny, r.intersecting, r.iterations


@njit(cache=True, nogil=True)
def intersects_pair(pa, ra, pb, rb):
    """Whether two whole hull arrays with radii touch or overlap (a bool)."""
    return inflate(core_distance(pa, pa.shape[0], pb, pb.shape[0]), ra, rb).intersecting


def gjk_distance(a, b):
    """Distance between two :class:`ConvexShape` objects, with witness points and normal.

    Returns :class:`DistanceResult` ``(distance, point_a, point_b, intersecting, iterations,
    normal)``. ``distance`` is 0 and ``intersecting`` is True when the shapes touch or
    overlap; otherwise ``point_a`` (on A's boundary) and ``point_b`` (on B's boundary) are
    closest points with ``point_b - point_a == distance * normal``. ``normal`` is the unit
    vector from A to B, NaN when the cores touch or overlap (see the module docstring).
    """
    check_shape(a, "a")
    check_shape(b, "b")
    d, ax, ay, bx, by, nx, ny, hit, it = distance_pair(a.points, a.radius, b.points, b.radius)
    # tuple.__new__ skips NamedTuple's Python-level __new__ (the scalar API is per call)
    return tuple.__new__(DistanceResult, (d, np.array((ax, ay)), np.array((bx, by)), hit, it,
                                          np.array((nx, ny))))
