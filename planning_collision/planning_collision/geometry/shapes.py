"""Convex shapes: a convex point set plus a radius (Box2D's "distance proxy" idea).

A :class:`ConvexShape` is the convex hull of ``points`` inflated by ``radius`` (the set of
points at distance <= radius from the hull). Discs, capsules, boxes, polygons, segments and
single points are all the same data structure, so every query in this package is one code
path over plain arrays.

Stored form (the attributes other modules rely on):

* ``points``: (K, 2) float64, C-contiguous, the hull vertices in counter-clockwise order,
  with duplicate and collinear points removed. Degenerate hulls are kept as such: K == 1 for
  a point or disc, K == 2 for a segment or capsule (or a zero-width box). Treat it as
  read-only: shapes are immutable values.
* ``radius``: float >= 0.

Invalid input (NaN or inf, no points, a wrong array shape, a negative radius or size, a
non-convex or self-intersecting polygon given to :meth:`ConvexShape.polygon`) raises
``ValueError`` with a message naming the problem.
"""

import math

import numpy as np

from planning_collision.common.checks import finite_scalar, float_points, float_vector
from planning_collision.common.hull import convex_hull

from .tolerances import CONVEX_SIN_TOL, MAX_COORD


def as_points(points, name="points"):
    """Return ``points`` as a finite, C-contiguous (K, 2) float64 array with K >= 1, within
    ``MAX_COORD`` (:func:`planning_collision.common.checks.float_points`)."""
    return float_points(points, name, min_rows=1, limit=MAX_COORD)


def as_vector(value, name):
    """Return ``value`` as a finite float64 array of shape (2,), within ``MAX_COORD``."""
    return float_vector(value, name, limit=MAX_COORD)


def as_scalar(value, name, nonnegative=False):
    """``value`` as a finite float within +-``MAX_COORD`` (and >= 0 when ``nonnegative``):
    :func:`~planning_collision.common.checks.finite_scalar` with geometry's range."""
    return finite_scalar(value, name, at_least=0.0 if nonnegative else -MAX_COORD,
                         at_most=MAX_COORD)


def check_shape(shape, name):
    """ValueError unless ``shape`` is a :class:`ConvexShape`."""
    if not isinstance(shape, ConvexShape):
        raise ValueError(f"{name} must be a ConvexShape, got {type(shape).__name__}")


def check_convex_polygon(vertices, name="vertices"):
    """Raise ValueError naming the defect unless ``vertices`` make a valid convex polygon
    (what :meth:`ConvexShape.polygon` accepts); plain numpy, so it never waits for numba's
    compiler (collision_server checks its footprint parameter with it at configure time)."""
    _check_convex_polygon(as_points(vertices, name))


def _check_convex_polygon(pts):
    """Validate a convex polygon (either winding); raise ValueError naming the defect."""
    n = pts.shape[0]
    if n < 3:
        raise ValueError(f"polygon needs at least 3 vertices, got {n}")
    keep = np.ones(n, dtype=bool)
    nxt = np.roll(pts, -1, axis=0)
    keep &= ~np.all(pts == nxt, axis=1)  # drop the first of each run of repeated vertices
    index = np.flatnonzero(keep)
    v = pts[index]
    m = v.shape[0]
    if m < 3:
        raise ValueError("polygon has zero area: fewer than 3 distinct vertices")
    rel = v - v[0]
    area2 = float(np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]))
    extent = float(np.max(np.abs(rel)))
    if abs(area2) <= CONVEX_SIN_TOL * extent * extent:
        raise ValueError("polygon has zero area: its vertices are collinear")
    e_in = v - np.roll(v, 1, axis=0)
    e_out = np.roll(v, -1, axis=0) - v
    cross = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
    dot = e_in[:, 0] * e_out[:, 0] + e_in[:, 1] * e_out[:, 1]
    if area2 < 0.0:
        cross = -cross
    scale = np.hypot(e_in[:, 0], e_in[:, 1]) * np.hypot(e_out[:, 0], e_out[:, 1])
    tol = CONVEX_SIN_TOL * scale
    reflex = np.flatnonzero(cross < -tol)
    if reflex.size:
        raise ValueError(f"polygon is not convex: reflex vertex at index {int(index[reflex[0]])}")
    fold = np.flatnonzero((cross <= tol) & (dot < 0.0))
    if fold.size:
        raise ValueError(f"polygon folds back on itself at vertex {int(index[fold[0]])}")
    turning = float(np.sum(np.arctan2(cross, dot)))
    if turning > 3.0 * math.pi:
        raise ValueError("polygon is self-intersecting: its boundary winds more than once")


class ConvexShape:
    """A convex point set plus a radius; see the module docstring for the stored form.

    ``ConvexShape(points, radius=0.0)`` takes any finite point set (K >= 1) and keeps its
    convex hull: it is the same as :meth:`ConvexShape.hull`.
    """

    __slots__ = ("points", "radius", "_box")

    def __init__(self, points, radius=0.0):
        pts = as_points(points)
        r = as_scalar(radius, "radius", nonnegative=True)
        self.points = np.ascontiguousarray(convex_hull(pts))
        self.radius = r
        self._box = None

    @classmethod
    def _trusted(cls, points, radius, box=None):
        """Build from an already-valid CCW hull without checks (internal fast path)."""
        shape = cls.__new__(cls)
        shape.points = points
        shape.radius = radius
        shape._box = box
        return shape

    # ------------------------------------------------------------------ constructors
    @classmethod
    def hull(cls, points, radius=0.0):
        """The convex hull of ``points`` (any finite (K, 2) set), inflated by ``radius``."""
        return cls(points, radius)

    @classmethod
    def polygon(cls, vertices, radius=0.0):
        """A convex polygon given by its vertices in order (CW or CCW).

        Repeated and collinear vertices are allowed and dropped. Raises ``ValueError`` if the
        polygon has fewer than 3 distinct vertices, zero area, a reflex vertex, a fold-back
        spike, or winds more than once.
        """
        pts = as_points(vertices, "vertices")
        r = as_scalar(radius, "radius", nonnegative=True)
        _check_convex_polygon(pts)
        return cls._trusted(np.ascontiguousarray(convex_hull(pts)), r)

    @classmethod
    def circle(cls, center, radius):
        """A disc: a single point with a radius (radius 0 gives a point)."""
        c = as_vector(center, "center")
        r = as_scalar(radius, "radius", nonnegative=True)
        return cls._trusted(c.reshape(1, 2).copy(), r)

    @classmethod
    def point(cls, p):
        """A single point (a disc of radius 0)."""
        return cls.circle(p, 0.0)

    @classmethod
    def segment(cls, p0, p1):
        """The segment from ``p0`` to ``p1`` (a capsule of radius 0)."""
        return cls.capsule(p0, p1, 0.0)

    @classmethod
    def capsule(cls, p0, p1, radius):
        """The segment ``p0``-``p1`` inflated by ``radius`` (p0 == p1 gives a disc)."""
        a = as_vector(p0, "p0")
        b = as_vector(p1, "p1")
        r = as_scalar(radius, "radius", nonnegative=True)
        return cls._trusted(np.ascontiguousarray(convex_hull(np.stack([a, b]))), r)

    @classmethod
    def box(cls, center, heading, length, width):
        """An oriented box, Apollo ``Box2d`` convention: ``length`` runs along ``heading``.

        Zero length or width is allowed and gives a segment (or a point).
        """
        c = as_vector(center, "center")
        h = as_scalar(heading, "heading")
        length = as_scalar(length, "length", nonnegative=True)
        width = as_scalar(width, "width", nonnegative=True)
        pts = box_corners(c[0], c[1], h, length, width)
        if length == 0.0 or width == 0.0:
            pts = np.ascontiguousarray(convex_hull(pts))
        return cls._trusted(pts, 0.0, (float(c[0]), float(c[1]), h, length, width))

    # ------------------------------------------------------------------ queries
    @property
    def box_params(self):
        """``(cx, cy, heading, length, width)`` if built by :meth:`box`, else ``None``."""
        return self._box

    def support(self, direction):
        """The point of the shape farthest along ``direction`` (a non-zero 2-vector)."""
        d = as_vector(direction, "direction")
        norm = math.hypot(d[0], d[1])
        if norm == 0.0:
            raise ValueError("direction must be non-zero")
        dots = self.points @ d
        p = self.points[int(np.argmax(dots))].copy()
        if self.radius > 0.0:
            p += (self.radius / norm) * d
        return p

    def aabb(self):
        """Axis-aligned bounds ``[minx, miny, maxx, maxy]`` including the radius."""
        lo = self.points.min(axis=0) - self.radius
        hi = self.points.max(axis=0) + self.radius
        return np.array([lo[0], lo[1], hi[0], hi[1]])

    def transformed(self, x, y, yaw):
        """This shape rotated by ``yaw`` about the origin, then translated by ``(x, y)``."""
        x = as_scalar(x, "x")
        y = as_scalar(y, "y")
        yaw = as_scalar(yaw, "yaw")
        c = math.cos(yaw)
        s = math.sin(yaw)
        p = self.points
        out = np.empty_like(p)
        out[:, 0] = c * p[:, 0] - s * p[:, 1] + x
        out[:, 1] = s * p[:, 0] + c * p[:, 1] + y
        box = None
        if self._box is not None:
            bx, by, h, length, width = self._box
            box = (c * bx - s * by + x, s * bx + c * by + y, h + yaw, length, width)
        return ConvexShape._trusted(out, self.radius, box)

    def __repr__(self):
        return f"ConvexShape(points={self.points.tolist()!r}, radius={self.radius!r})"


def box_corners(cx, cy, heading, length, width):
    """Corners (4, 2) of an oriented box in CCW order, Apollo convention."""
    c = math.cos(heading)
    s = math.sin(heading)
    hl = 0.5 * length
    hw = 0.5 * width
    ux, uy = c * hl, s * hl
    vx, vy = -s * hw, c * hw
    return np.array(
        [
            [cx + ux - vx, cy + uy - vy],
            [cx + ux + vx, cy + uy + vy],
            [cx - ux + vx, cy - uy + vy],
            [cx - ux - vx, cy - uy - vy],
        ]
    )
