"""The closed-form polygon-point distance against GJK (the general path) and shapely."""

import numpy as np
import pytest
import shapely

from planning_collision.geometry import ConvexShape, gjk_distance, gjk_distance_batch
from planning_collision.geometry.gjk import OVERLAPPING, SEPARATED, TOUCHING, gjk_core
from planning_collision.geometry.polygon_point import USE_GJK, polygon_point

TOL = 1e-9


def both_ways(p, q):
    """The closed form for (polygon, point) and (point, polygon), and GJK for each."""
    n = p.shape[0]
    point = np.array([q])
    return (polygon_point(p, n, q[0], q[1], True), gjk_core(p, n, point, 1),
            polygon_point(p, n, q[0], q[1], False), gjk_core(point, 1, p, n))


def test_agrees_with_gjk_and_shapely(rng, geo):
    points, counts = geo.random_convex_batch(rng, 3000, 3, 16)
    queries = rng.uniform(-6, 6, (3000, 2))
    kinds = set()
    for k in range(3000):
        p = ConvexShape(points[k, : counts[k]]).points  # the CCW hull, as pack_shapes stores
        q = queries[k]
        ref = shapely.Polygon(p).distance(shapely.Point(q))
        fast, slow, fast_ba, slow_ba = both_ways(p, q)
        assert fast.status != USE_GJK and fast_ba.status != USE_GJK
        kinds.add(fast.status)
        assert (fast.status == SEPARATED) == (slow.status == SEPARATED) == (ref > 0.0)
        assert fast.iterations == 1
        for f, s in ((fast, slow), (fast_ba, slow_ba)):
            assert abs(f.distance - ref) <= TOL
            np.testing.assert_allclose([f.ax, f.ay, f.bx, f.by], [s.ax, s.ay, s.bx, s.by],
                                       atol=1e-12)
            np.testing.assert_allclose([f.nx, f.ny], [s.nx, s.ny], atol=1e-12)
            assert f.scale == s.scale
        if fast.status == SEPARATED:
            assert abs(np.hypot(fast.nx, fast.ny) - 1.0) <= 1e-15
            # the witness lies on the polygon's boundary, q is the point's witness
            assert shapely.Polygon(p).exterior.distance(shapely.Point(fast.ax, fast.ay)) <= TOL
            assert (fast.bx, fast.by) == (q[0], q[1]) == (fast_ba.ax, fast_ba.ay)
            np.testing.assert_array_equal([fast_ba.nx, fast_ba.ny], [-fast.nx, -fast.ny])
    assert kinds == {SEPARATED, OVERLAPPING}


def test_points_on_edges_and_vertices_touch():
    square = ConvexShape.polygon([(0, 0), (2, 0), (2, 2), (0, 2)]).points
    for q in [(1.0, 0.0), (2.0, 1.0), (2.0, 2.0), (0.0, 0.0), (1.0, 2.0 + 1e-17)]:
        fast, slow, _, _ = both_ways(square, np.array(q))
        assert fast.status in (TOUCHING, OVERLAPPING) and fast.distance == 0.0
        assert slow.status in (TOUCHING, OVERLAPPING)
    fast = both_ways(square, np.array([1.0, 2.0 + 1e-12]))[0]
    assert fast.status == SEPARATED and fast.distance == pytest.approx(1e-12, rel=1e-3)


@pytest.mark.parametrize("offset", [1e3, 1e6, -1e6])
def test_far_from_the_origin(rng, geo, offset):
    for _ in range(300):
        p = geo.random_convex(rng).points + offset
        q = rng.uniform(-6, 6, 2) + offset
        fast, slow, _, _ = both_ways(p, q)
        assert fast.status != USE_GJK
        assert abs(fast.distance - slow.distance) <= 64e-16 * abs(offset)
        assert (fast.status == SEPARATED) == (slow.status == SEPARATED) or slow.distance < 1e-8


def test_rows_it_does_not_take_go_to_gjk(rng, geo):
    p = geo.random_convex(rng).points
    q = np.array([9.0, 9.0])
    cases = [
        p[::-1],  # clockwise
        np.vstack([p, p[:1]]),  # a repeated vertex: a zero-length edge
        np.array([[0, 0], [1, 0], [2, 0], [2, 2], [0, 2]], float),  # a collinear vertex
        np.array([[0, 0], [2, 0], [1, 1], [2, 2], [0, 2]], float),  # a reflex vertex
        np.array([[np.cos(a), np.sin(a)] for a in np.arange(5) * 4 * np.pi / 5]),  # a star
        p * 1e-120,  # squared lengths would underflow
        p * 1e120,  # or overflow
    ]
    for rows in cases:
        rows = np.ascontiguousarray(rows, dtype=float)
        assert polygon_point(rows, rows.shape[0], q[0], q[1], True).status == USE_GJK
    # and the public API still answers them, through GJK
    star = cases[4]
    d = gjk_distance_batch(star[None], [5], 0.0, q[None, None], [1], 0.5).distance[0]
    ref = shapely.MultiPoint(star).convex_hull.distance(shapely.Point(q)) - 0.5
    assert d == pytest.approx(ref, abs=TOL)


def test_scalar_and_batch_use_it_for_discs_either_way(rng, geo):
    poly = geo.random_convex(rng)
    disc = ConvexShape.circle((4.0, 5.0), 0.5)
    ab, ba = gjk_distance(poly, disc), gjk_distance(disc, poly)
    assert ab.iterations == ba.iterations == 1
    assert ab.distance == ba.distance
    np.testing.assert_array_equal(ab.point_a, ba.point_b)
    np.testing.assert_array_equal(ab.normal, -ba.normal)


def test_a_sliver_polygon_goes_to_gjk_and_gets_the_right_distance():
    """Issue #20: three almost collinear points (a footprint's, after a pose's rotation)
    make a sliver triangle with strict left turns; the closed form chose between its two
    short edges, on one line to rounding, by rounding, and the clamp to the wrong one gave
    3.36 instead of 3.33."""
    sliver = np.array([[1.4153809497863101, -0.7760984712760193],
                       [1.9862004200125138, 0.7010280697974585],
                       [1.7548983408501821, 0.10248079179244413]])
    shape = ConvexShape(sliver)
    assert shape.points.shape[0] == 3
    want = shapely.LineString(sliver[[0, 1]]).distance(shapely.Point(-2.0, 1.0)) - 0.5
    got = gjk_distance(shape, ConvexShape.circle((-2.0, 1.0), 0.5))
    assert got.distance == pytest.approx(want, abs=1e-12)
    out = polygon_point(shape.points, 3, -2.0, 1.0, True)
    assert out.status == USE_GJK


def test_slivers_from_collinear_points_agree_with_shapely(rng):
    checked = 0
    for _ in range(3000):
        a, b = rng.normal(size=(2, 2)) + rng.uniform(-3.0, 3.0, 2)
        points = np.array([a, a + rng.uniform(0.2, 0.8) * (b - a), b])
        shape = ConvexShape(points)
        q = rng.uniform(-4.0, 4.0, 2)
        line = shapely.LineString(points[[np.argmin(points[:, 0]), np.argmax(points[:, 0])]])
        want = line.distance(shapely.Point(q))
        if want < 1e-6:
            continue
        dot = ConvexShape([q])
        for result in (gjk_distance(shape, dot), gjk_distance(dot, shape)):
            assert result.distance == pytest.approx(want, rel=1e-9, abs=1e-12)
        checked += shape.points.shape[0] == 3
    assert checked > 1000
