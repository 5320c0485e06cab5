"""Shared generators and oracles for the geometry tests (shapely is the reference)."""

from types import SimpleNamespace

import numpy as np
import pytest
import shapely

from planning_collision.geometry import ConvexShape


def random_convex_batch(rng, n, k_min=8, k_max=16, spread=5.0, size=(0.3, 2.0)):
    """n random convex polygons as padded arrays ``(points (n, k_max, 2), counts)``.

    Each is k points at sorted random angles on a rotated, stretched ellipse (strictly
    convex, CCW), shifted by up to ``spread``; padding repeats the first vertex.
    """
    counts = rng.integers(k_min, k_max + 1, n)
    valid = np.arange(k_max)[None, :] < counts[:, None]
    ang = np.sort(np.where(valid, rng.uniform(0.0, 2.0 * np.pi, (n, k_max)), np.inf), axis=1)
    ang = np.where(valid, ang, ang[:, :1])
    rx, ry = rng.uniform(*size, (2, n, 1))
    x, y = rx * np.cos(ang), ry * np.sin(ang)
    t = rng.uniform(-np.pi, np.pi, (n, 1))
    c, s = np.cos(t), np.sin(t)
    off = rng.uniform(-spread, spread, (n, 1, 2))
    points = np.stack([c * x - s * y, s * x + c * y], axis=-1) + off
    return points, counts


def random_convex(rng, k_min=8, k_max=16, spread=5.0, size=(0.3, 2.0)):
    """One random convex polygon (see random_convex_batch) as a ConvexShape."""
    points, counts = random_convex_batch(rng, 1, k_min, k_max, spread, size)
    return ConvexShape(points[0, : counts[0]])


def shapes_from_batch(points, counts):
    return [ConvexShape(points[k, : counts[k]]) for k in range(len(counts))]


def polygons_from_batch(points, counts):
    """shapely polygons of padded rows (ConvexShape-independent)."""
    return np.array([shapely.Polygon(points[k, : counts[k]]) for k in range(len(counts))])


def random_boxes(rng, n, area=10.0):
    """Rows cx, cy, heading, length, width like the seed test (Apollo convention)."""
    return np.c_[
        rng.uniform(0.0, area, n),
        rng.uniform(0.0, area, n),
        rng.uniform(-np.pi, np.pi, n),
        rng.uniform(2.0, 4.0, n),
        rng.uniform(1.0, 3.0, n),
    ]


def box_polygons(boxes):
    """shapely polygons for box rows, corners computed independently of the package."""
    c, s = np.cos(boxes[:, 2]), np.sin(boxes[:, 2])
    hl, hw = boxes[:, 3] / 2, boxes[:, 4] / 2
    corners = []
    for sl, sw in ((1, -1), (1, 1), (-1, 1), (-1, -1)):
        corners.append(
            np.c_[boxes[:, 0] + sl * c * hl - sw * s * hw, boxes[:, 1] + sl * s * hl + sw * c * hw]
        )
    return shapely.polygons(np.stack(corners, axis=1))


def to_shapely(shape):
    """shapely geometry of a radius-0 core: Point, LineString or Polygon."""
    p = shape.points
    if p.shape[0] == 1:
        return shapely.Point(p[0])
    if p.shape[0] == 2:
        return shapely.LineString(p)
    return shapely.Polygon(p)


def sat_depth_reference(a, b):
    """Penetration depth of two convex polygons by brute force over all edge normals
    (numpy, independent of the package): min over normals of the projection overlap."""
    best = np.inf
    for p in (a, b):
        e = np.roll(p, -1, axis=0) - p
        n = np.c_[e[:, 1], -e[:, 0]]
        n /= np.hypot(n[:, 0], n[:, 1])[:, None]
        pa, pb = a @ n.T, b @ n.T
        overlap = np.minimum(pa.max(0) - pb.min(0), pb.max(0) - pa.min(0))
        best = min(best, float(overlap.min()))
    return best


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture(scope="session")
def geo():
    """The helpers above, for test modules (importlib mode cannot import conftest)."""
    return SimpleNamespace(
        random_convex=random_convex,
        random_convex_batch=random_convex_batch,
        shapes_from_batch=shapes_from_batch,
        polygons_from_batch=polygons_from_batch,
        random_boxes=random_boxes,
        box_polygons=box_polygons,
        to_shapely=to_shapely,
        sat_depth_reference=sat_depth_reference,
    )
