"""ConvexShape constructors, stored form, validation, support, aabb, transforms; hull."""

import math

import numpy as np
import pytest
import shapely

from planning_collision.common.hull import convex_hull, is_convex_ccw
from planning_collision.geometry import ConvexShape


def signed_area(p):
    x, y = p[:, 0], p[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def test_polygon_orders_ccw_and_drops_collinear_and_repeated_vertices():
    cw_square_with_extras = [(0, 0), (0, 1), (0, 2), (2, 2), (2, 2), (2, 0), (1, 0)]
    s = ConvexShape.polygon(cw_square_with_extras)
    assert s.points.shape == (4, 2)
    assert s.points.dtype == np.float64 and s.points.flags.c_contiguous
    assert signed_area(s.points) == pytest.approx(4.0)
    assert sorted(map(tuple, s.points.tolist())) == [(0, 0), (0, 2), (2, 0), (2, 2)]
    assert s.radius == 0.0


def test_hull_matches_shapely_on_random_clouds(rng):
    for _ in range(200):
        pts = rng.normal(size=(int(rng.integers(1, 40)), 2))
        if rng.random() < 0.3:
            pts = np.round(pts * 4) / 4  # exact duplicates and exactly collinear points
        s = ConvexShape.hull(pts)
        ref = shapely.MultiPoint(pts).convex_hull
        if s.points.shape[0] >= 3:
            assert signed_area(s.points) > 0
            assert is_convex_ccw(s.points, s.points.shape[0])
            assert shapely.Polygon(s.points).symmetric_difference(ref).area < 1e-12
            assert len(s.points) == len(ref.exterior.coords) - 1
        else:
            assert s.points.shape[0] == len(shapely.get_coordinates(ref))


def test_hull_of_large_cloud_uses_the_sorting_path(rng):
    pts = rng.normal(size=(500, 2))
    hull = convex_hull(pts)
    ref = shapely.MultiPoint(pts).convex_hull
    assert shapely.Polygon(hull).equals(ref)
    assert signed_area(hull) > 0


def test_degenerate_hulls_are_kept():
    assert ConvexShape([(1.0, 2.0)] * 5).points.tolist() == [[1.0, 2.0]]
    seg = ConvexShape([(0, 0), (2, 2), (1, 1), (3, 3), (3, 3)])
    assert seg.points.tolist() == [[0.0, 0.0], [3.0, 3.0]]
    assert ConvexShape.circle((1, 2), 0.5).points.tolist() == [[1.0, 2.0]]
    cap = ConvexShape.capsule((0, 0), (0, 0), 1.0)
    assert cap.points.shape == (1, 2) and cap.radius == 1.0
    flat_box = ConvexShape.box((0, 0), 0.0, 2.0, 0.0)
    assert flat_box.points.shape == (2, 2)


def test_box_follows_apollo_convention():
    b = ConvexShape.box((1.0, 2.0), math.pi / 2, 4.0, 2.0)  # length along +y
    lo, hi = b.points.min(axis=0), b.points.max(axis=0)
    np.testing.assert_allclose(lo, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(hi, [2.0, 4.0], atol=1e-12)
    assert signed_area(b.points) == pytest.approx(8.0)
    assert b.box_params == (1.0, 2.0, math.pi / 2, 4.0, 2.0)


def test_support_includes_radius_and_needs_a_direction():
    s = ConvexShape.capsule((0, 0), (2, 0), 0.5)
    np.testing.assert_allclose(s.support((1, 0)), [2.5, 0.0])
    np.testing.assert_allclose(s.support((0, -3)), [0.0, -0.5])  # first of tied points
    with pytest.raises(ValueError, match="non-zero"):
        s.support((0, 0))


def test_aabb_includes_radius():
    s = ConvexShape.capsule((0, 0), (2, 1), 0.5)
    np.testing.assert_allclose(s.aabb(), [-0.5, -0.5, 2.5, 1.5])


def test_transformed_rotates_then_translates_and_keeps_box_params():
    b = ConvexShape.box((1.0, 0.0), 0.0, 2.0, 1.0)
    t = b.transformed(10.0, 5.0, math.pi / 2)
    expected = ConvexShape.box((10.0, 6.0), math.pi / 2, 2.0, 1.0)
    assert shapely.Polygon(t.points).equals_exact(shapely.Polygon(expected.points), 1e-12)
    cx, cy, h, length, width = t.box_params
    assert (cx, cy, h, length, width) == pytest.approx((10.0, 6.0, math.pi / 2, 2.0, 1.0))
    assert signed_area(t.points) > 0


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ConvexShape(np.zeros((0, 2))), "empty"),
        (lambda: ConvexShape([(0, 0), (np.nan, 1)]), "NaN or inf"),
        (lambda: ConvexShape([(0, 0), (np.inf, 1)]), "NaN or inf"),
        (lambda: ConvexShape([1, 2, 3]), "shape"),
        (lambda: ConvexShape([(0, 0)], radius=-1),
         r"radius must be finite and in \[0, 1e\+150\], got -1.0"),
        (lambda: ConvexShape([(0, 0)], radius=np.nan), "radius must be finite"),
        (lambda: ConvexShape.circle((0, 0), -0.1), "radius"),
        (lambda: ConvexShape.circle((0, np.nan), 1.0), "center"),
        (lambda: ConvexShape.box((0, 0), 0.0, -1.0, 1.0), "length"),
        (lambda: ConvexShape.box((0, 0), np.inf, 1.0, 1.0), "heading"),
        (lambda: ConvexShape.capsule((0, 0), (1, 1), -2), "radius"),
        (lambda: ConvexShape.polygon([(0, 0), (1, 0)]), "at least 3"),
        (lambda: ConvexShape.polygon([(0, 0), (1, 1), (2, 2)]), "zero area"),
        (lambda: ConvexShape.polygon([(0, 0), (2, 0), (1, 0.2), (2, 2), (0, 2)]), "not convex"),
        (
            lambda: ConvexShape.polygon([(0, 0), (2, 0), (1, 0), (1, 1)]),
            "folds back|not convex",
        ),
        (
            lambda: ConvexShape.polygon(
                [(math.cos(4 * math.pi * k / 5), math.sin(4 * math.pi * k / 5)) for k in range(5)]
            ),
            "self-intersecting",
        ),
        (lambda: ConvexShape(["a", "b"]), "numeric"),
        (lambda: ConvexShape([(1e200, 0.0)]), "beyond"),
        (lambda: ConvexShape.circle((0, 0), 1e200), "radius"),
        (lambda: ConvexShape([(0, 0)]).transformed(0, 0, np.nan), "yaw"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_polygon_accepts_rounding_noise_from_a_rotation():
    ang = np.linspace(0, 2 * np.pi, 13)[:-1]
    ring = np.c_[np.cos(ang), np.sin(ang)]
    # insert the midpoint of one edge, nudged 1e-15 inwards: collinear up to rounding
    mid = 0.5 * (ring[0] + ring[1]) * (1 - 1e-15)
    pts = np.vstack([ring[:1], mid, ring[1:]])
    s = ConvexShape.polygon(pts)
    assert is_convex_ccw(s.points, s.points.shape[0])
    assert s.points.shape[0] in (12, 13)
