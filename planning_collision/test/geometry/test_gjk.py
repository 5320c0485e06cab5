"""GJK distance against shapely (GEOS) and hand-made edge cases."""

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision.geometry import ConvexShape, gjk_distance, penetration

TOL = 1e-9


def run_scalar(a_shapes, b_shapes):
    results = [gjk_distance(a, b) for a, b in zip(a_shapes, b_shapes, strict=True)]
    dist = np.array([r.distance for r in results])
    hit = np.array([r.intersecting for r in results])
    pa = np.array([r.point_a for r in results])
    pb = np.array([r.point_b for r in results])
    iters = np.array([r.iterations for r in results])
    return dist, hit, pa, pb, iters


def check_against_shapely(ga, gb, dist, hit, pa, pb):
    """Flags agree, distances within TOL, witnesses on the boundaries (or common)."""
    ref_d, ref_hit = shapely.distance(ga, gb), shapely.intersects(ga, gb)
    np.testing.assert_array_equal(hit, ref_hit)
    assert np.all(dist[hit] == 0.0)
    sep = ~hit
    assert np.max(np.abs(dist - ref_d)[sep]) <= TOL
    np.testing.assert_allclose(np.hypot(*(pa - pb)[sep].T), dist[sep], atol=TOL, rtol=0)
    assert np.max(shapely.distance(shapely.points(pa[sep]), shapely.boundary(ga[sep]))) <= TOL
    assert np.max(shapely.distance(shapely.points(pb[sep]), shapely.boundary(gb[sep]))) <= TOL
    # intersecting: both witness points are one point inside (or on) both shapes
    np.testing.assert_array_equal(pa[hit], pb[hit])
    both = shapely.points(pa[hit])
    assert np.max(shapely.distance(both, ga[hit])) <= TOL
    assert np.max(shapely.distance(both, gb[hit])) <= TOL
    return ref_hit


def test_polygon_pairs_match_shapely(rng, geo):
    n = 2000
    pa_, ca = geo.random_convex_batch(rng, n)
    pb_, cb = geo.random_convex_batch(rng, n)
    a, b = geo.shapes_from_batch(pa_, ca), geo.shapes_from_batch(pb_, cb)
    ga, gb = geo.polygons_from_batch(pa_, ca), geo.polygons_from_batch(pb_, cb)
    dist, hit, pa, pb, iters = run_scalar(a, b)
    ref_hit = check_against_shapely(ga, gb, dist, hit, pa, pb)
    assert 0.05 < ref_hit.mean() < 0.95  # both outcomes well represented
    assert iters.max() < 40


def test_polygon_disc_pairs_match_shapely(rng, geo):
    n = 2000
    points, counts = geo.random_convex_batch(rng, n)
    polys = geo.shapes_from_batch(points, counts)
    gp = geo.polygons_from_batch(points, counts)
    centers = rng.uniform(-5, 5, (n, 2))
    radii = rng.uniform(0.05, 2.0, n)
    discs = [ConvexShape.circle(c, r) for c, r in zip(centers, radii, strict=True)]
    dist, hit, pa, pb, _ = run_scalar(polys, discs)
    core = shapely.distance(gp, shapely.points(centers))
    ref_hit = core <= radii
    assert 0.05 < ref_hit.mean() < 0.95
    np.testing.assert_array_equal(hit, ref_hit)
    sep = ~hit
    assert np.all(dist[hit] == 0.0)
    assert np.max(np.abs(dist - (core - radii))[sep]) <= TOL
    # disc witness on the circle, polygon witness on the polygon boundary
    assert np.max(np.abs(np.hypot(*(pb - centers).T) - radii)[sep]) <= TOL
    assert np.max(shapely.distance(shapely.points(pa[sep]), shapely.boundary(gp[sep]))) <= TOL
    np.testing.assert_allclose(np.hypot(*(pa - pb)[sep].T), dist[sep], atol=TOL, rtol=0)
    # intersecting: the common point lies in the polygon and in the disc
    assert np.max(shapely.distance(shapely.points(pa[hit]), gp[hit])) <= TOL
    assert np.all(np.hypot(*(pa - centers)[hit].T) <= radii[hit] + TOL)


def test_box_pairs_match_shapely(rng, geo):
    boxes_a = geo.random_boxes(rng, 2000)
    boxes_b = geo.random_boxes(rng, 2000)
    a = [ConvexShape.box(x[:2], *x[2:]) for x in boxes_a]
    b = [ConvexShape.box(x[:2], *x[2:]) for x in boxes_b]
    dist, hit, pa, pb, _ = run_scalar(a, b)
    check_against_shapely(geo.box_polygons(boxes_a), geo.box_polygons(boxes_b), dist, hit, pa, pb)


def test_segments_against_polygons_match_shapely(rng, geo):
    """Line of sight: a 2-point shape against obstacles, crossing or not."""
    for _ in range(500):
        poly = geo.random_convex(rng, spread=2.0)
        p0, p1 = rng.uniform(-6, 6, (2, 2))
        seg = ConvexShape.segment(p0, p1)
        r = gjk_distance(seg, poly)
        line, gp = shapely.LineString([p0, p1]), shapely.Polygon(poly.points)
        assert r.intersecting == line.intersects(gp)
        assert abs(r.distance - line.distance(gp)) <= TOL
        if not r.intersecting:
            assert shapely.distance(shapely.Point(r.point_a), line) <= TOL
            assert shapely.distance(shapely.Point(r.point_b), gp.boundary) <= TOL


def square(x0, y0, x1, y1):
    return ConvexShape.polygon([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])


@pytest.mark.parametrize(
    "a, b",
    [
        (square(0, 0, 1, 1), square(1, 0, 2, 1)),  # shared edge
        (square(0, 0, 1, 1), square(1, 0.5, 2, 3)),  # partly shared edge
        (square(0, 0, 1, 1), square(1, 1, 2, 2)),  # corner to corner
        (square(0, 0, 2, 2), ConvexShape.polygon([(1, 2), (2, 3), (0, 3)])),  # vertex on edge
        (square(0, 0, 1, 1), ConvexShape.segment((1, -1), (1, 3))),  # segment along an edge
        (square(0, 0, 1, 1), ConvexShape.point((1, 0.25))),  # point on an edge
        (ConvexShape.circle((0, 0), 1.0), ConvexShape.circle((3, 0), 2.0)),  # discs touch
        (square(0, 0, 1, 1), ConvexShape.circle((1.5, 0.5), 0.5)),  # disc touches an edge
        (ConvexShape.capsule((0, 0), (4, 0), 0.5), ConvexShape.capsule((2, 1), (2, 5), 0.5)),
    ],
)
def test_touching_counts_as_intersecting(a, b):
    for x, y in ((a, b), (b, a)):
        r = gjk_distance(x, y)
        assert r.intersecting
        assert r.distance == 0.0
        np.testing.assert_array_equal(r.point_a, r.point_b)


@pytest.mark.parametrize("gap", [1e-9, 1e-12, 3e-13])
def test_tiny_gaps_are_measured(gap):
    cases = [
        (square(0, 0, 1, 1), square(1 + gap, 0, 2, 1)),
        (square(0, 0, 1, 1), square(1 + gap, 1 + gap, 2, 2)),
        (ConvexShape.circle((0, 0), 1.0), ConvexShape.circle((3 + gap, 0), 2.0)),
        (square(0, 0, 1, 1), ConvexShape.polygon([(0.5, 1 + gap), (1, 2), (0, 2)])),
    ]
    for a, b in cases:
        r = gjk_distance(a, b)
        assert not r.intersecting
        expected = gap * (math.sqrt(2) if np.allclose(b.points.min(0), 1 + gap) else 1.0)
        assert r.distance == pytest.approx(expected, rel=1e-3, abs=1e-15)


def test_cross_overlap_without_vertex_inside():
    bar = square(-5, -0.1, 5, 0.1)
    post = square(-0.1, -5, 0.1, 5)
    for a, b in ((bar, post), (post, bar)):
        assert not any(shapely.Polygon(b.points).contains(shapely.Point(p)) for p in a.points)
        r = gjk_distance(a, b)
        assert r.intersecting and r.distance == 0.0
        assert shapely.Polygon(a.points).covers(shapely.Point(r.point_a))
        assert shapely.Polygon(b.points).covers(shapely.Point(r.point_a))


def test_thin_needles(rng):
    for _ in range(300):
        width = 10.0 ** rng.uniform(-9, -4)
        c = rng.uniform(-3, 3, 2)
        a = ConvexShape.box(c, rng.uniform(-np.pi, np.pi), rng.uniform(2, 8), width)
        b = ConvexShape.box(rng.uniform(-3, 3, 2), rng.uniform(-np.pi, np.pi), 5.0, width)
        ga, gb = shapely.Polygon(a.points), shapely.Polygon(b.points)
        r = gjk_distance(a, b)
        assert r.intersecting == ga.intersects(gb)
        assert abs(r.distance - ga.distance(gb)) <= TOL


def test_thin_slivers_far_from_the_origin(rng):
    """Nearly collinear shapes at |x| ~ 5e4: supports must not drown in absolute rounding."""
    a = ConvexShape(
        [
            (3468.9994477171704, -50479.17488780434),
            (3469.000484763797, -50479.174576690355),
            (3469.0096249994854, -50479.17183461964),
            (3469.004484504293, -50479.1733767682),
            (3469.0002229587035, -50479.17465523188),
        ]
    )
    b = ConvexShape(
        [
            (3469.0007341265373, -50479.17450188153),
            (3469.0065225372073, -50479.17276535833),
            (3469.0065198174016, -50479.17276617427),
        ]
    )
    assert shapely.Polygon(a.points).intersects(shapely.Polygon(b.points))
    assert gjk_distance(a, b).intersecting

    def sliver(scale, off):
        t = rng.uniform(-1, 1, int(rng.integers(2, 7)))
        return ConvexShape(np.c_[t, 0.3 * t + rng.normal(0, 1e-12, t.size)] * scale + off)

    for _ in range(300):
        off = rng.uniform(-1, 1, 2) * 10 ** rng.uniform(2, 6)
        scale = 10 ** rng.uniform(-3, 1)
        x, y = sliver(scale, off), sliver(scale, off)
        ref = to_core(x).distance(to_core(y))
        r = gjk_distance(x, y)
        assert abs(r.distance - ref) <= 1e-13 * scale
        if ref == 0.0:
            assert r.intersecting


def to_core(s):
    p = s.points
    if len(p) == 1:
        return shapely.Point(p[0])
    return shapely.LineString(p) if len(p) == 2 else shapely.Polygon(p)


def test_identical_and_contained_shapes(rng, geo):
    for _ in range(50):
        a = geo.random_convex(rng)
        r = gjk_distance(a, a)
        assert r.intersecting and r.distance == 0.0
        small = ConvexShape.polygon(a.points * 0.1 + 0.9 * a.points.mean(axis=0))
        r = gjk_distance(a, small)
        assert r.intersecting and r.distance == 0.0
        assert shapely.Polygon(small.points).distance(shapely.Point(r.point_b)) <= 1e-12
        assert shapely.Polygon(a.points).distance(shapely.Point(r.point_a)) <= 1e-12


def test_duplicate_and_collinear_points_do_not_change_the_answer(rng, geo):
    for _ in range(100):
        a, b = geo.random_convex(rng), geo.random_convex(rng)
        p = a.points
        mids = 0.5 * (p + np.roll(p, -1, axis=0))
        noisy = np.vstack([p, p, mids])[rng.permutation(3 * len(p))]
        r1, r2 = gjk_distance(a, b), gjk_distance(ConvexShape.hull(noisy), b)
        assert r1.intersecting == r2.intersecting
        assert abs(r1.distance - r2.distance) <= 1e-12


def test_points_and_segments():
    p, q = ConvexShape.point((0, 0)), ConvexShape.point((3, 4))
    r = gjk_distance(p, q)
    assert r.distance == 5.0 and not r.intersecting
    assert gjk_distance(p, p).intersecting
    s1 = ConvexShape.segment((0, 0), (4, 0))
    s2 = ConvexShape.segment((2, 3), (2, 1))
    r = gjk_distance(s1, s2)
    assert r.distance == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(r.point_a, [2, 0], atol=1e-15)
    np.testing.assert_allclose(r.point_b, [2, 1], atol=1e-15)
    # parallel overlapping segments, collinear disjoint, collinear overlapping
    assert gjk_distance(s1, ConvexShape.segment((1, 2), (6, 2))).distance == pytest.approx(2.0)
    assert gjk_distance(s1, ConvexShape.segment((5, 0), (9, 0))).distance == pytest.approx(1.0)
    assert gjk_distance(s1, ConvexShape.segment((3, 0), (9, 0))).intersecting
    # crossing segments
    assert gjk_distance(s1, ConvexShape.segment((1, -1), (2, 1))).intersecting


@pytest.mark.parametrize("offset", [1e3, 1e5, 1e6, -1e6])
def test_large_coordinates(rng, geo, offset):
    for _ in range(100):
        a, b = geo.random_convex(rng), geo.random_convex(rng)
        a2, b2 = a.transformed(offset, -offset, 0.0), b.transformed(offset, -offset, 0.0)
        r, r2 = gjk_distance(a, b), gjk_distance(a2, b2)
        ref = shapely.Polygon(a2.points).distance(shapely.Polygon(b2.points))
        assert np.isfinite(r2.distance) and np.all(np.isfinite(r2.point_a))
        assert abs(r2.distance - ref) <= 1e-15 * abs(offset) * 64
        assert abs(r2.distance - r.distance) <= 1e-15 * abs(offset) * 64
        if abs(r.distance) > 1e-6:
            assert r2.intersecting == r.intersecting


def test_normal_points_from_a_to_b_along_the_witness_segment(rng, geo):
    """Separated: a unit normal with point_b - point_a == distance * normal, the direction
    penetration() reports (its depth is -distance there)."""
    seen = 0
    for _ in range(400):
        a = ConvexShape(geo.random_convex(rng).points, rng.choice([0.0, 0.4]))
        b = ConvexShape(geo.random_convex(rng).points, rng.choice([0.0, 0.4]))
        r = gjk_distance(a, b)
        if r.intersecting:
            continue
        seen += 1
        assert np.hypot(*r.normal) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(r.point_b - r.point_a, r.distance * r.normal, atol=1e-12)
        np.testing.assert_array_equal(r.normal, penetration(a, b).normal)
    assert seen > 100


def test_normal_when_intersecting():
    """Only the radii overlap: GJK's core direction, which is penetration's normal. The cores
    themselves touch or overlap: NaN (GJK has no direction there)."""
    disc = ConvexShape.circle((0.0, 0.0), 1.0)
    box = square(0.8, -1.0, 3.0, 1.0)
    r = gjk_distance(disc, box)
    assert r.intersecting and r.distance == 0.0
    np.testing.assert_array_equal(r.normal, [1.0, 0.0])
    np.testing.assert_array_equal(r.normal, penetration(disc, box).normal)
    capsules = (ConvexShape.capsule((0, 0), (4, 0), 0.5),
                ConvexShape.capsule((2, 0.8), (2, 5), 0.5))
    r = gjk_distance(*capsules)
    assert r.intersecting
    np.testing.assert_allclose(r.normal, [0.0, 1.0], atol=1e-15)
    np.testing.assert_array_equal(r.normal, penetration(*capsules).normal)
    for a, b in ((square(0, 0, 2, 2), square(1, 1, 3, 3)), (square(0, 0, 1, 1), square(1, 0, 2, 1)),
                 (ConvexShape.point((0, 0)), ConvexShape.circle((0, 0), 1.0))):
        r = gjk_distance(a, b)
        assert r.intersecting and np.isnan(r.normal).all()


def test_rejects_non_shapes():
    with pytest.raises(ValueError, match="ConvexShape"):
        gjk_distance(np.zeros((3, 2)), ConvexShape.point((0, 0)))


# ---------------------------------------------------------------------------- properties
coord = st.floats(-20, 20, allow_nan=False, allow_infinity=False)
point = st.tuples(coord, coord)


@st.composite
def shapes(draw):
    pts = draw(st.lists(point, min_size=1, max_size=10))
    radius = draw(st.sampled_from([0.0, 0.0, 0.5, draw(st.floats(0, 3))]))
    return ConvexShape.hull(pts, radius)


def core_geometry(s):
    p = s.points
    if len(p) == 2 and shapely.LineString(p).length == 0.0:
        # GEOS measures every distance to a segment whose length underflows (say 1e-170)
        # as inf; the segment's first point is within that length of all of it
        return shapely.Point(p[0])
    g = (
        shapely.Point(p[0])
        if len(p) == 1
        else (shapely.LineString(p) if len(p) == 2 else shapely.Polygon(p))
    )
    return g


@settings(max_examples=80, deadline=None)
@given(shapes(), shapes())
def test_property_symmetry_and_shapely_agreement(a, b):
    r1, r2 = gjk_distance(a, b), gjk_distance(b, a)
    assert r1.intersecting == r2.intersecting
    assert abs(r1.distance - r2.distance) <= 1e-9
    for r in (r1, r2):
        assert np.isfinite(r.distance) and np.all(np.isfinite(r.point_a))
        assert np.all(np.isfinite(r.point_b))
        assert r.distance >= 0.0
        assert (r.distance == 0.0) == r.intersecting
    core = core_geometry(a).distance(core_geometry(b))
    expected = max(core - a.radius - b.radius, 0.0)
    assert abs(r1.distance - expected) <= 1e-9
    if abs(core - a.radius - b.radius) > 1e-9:
        assert r1.intersecting == (core < a.radius + b.radius)


@settings(max_examples=60, deadline=None)
@given(shapes(), shapes(), coord, coord, st.floats(-math.pi, math.pi))
def test_property_rigid_motion_invariance(a, b, x, y, yaw):
    r = gjk_distance(a, b)
    moved = gjk_distance(a.transformed(x, y, yaw), b.transformed(x, y, yaw))
    assert abs(r.distance - moved.distance) <= 1e-9
    if r.distance > 1e-9:
        assert not moved.intersecting
        c, s = math.cos(yaw), math.sin(yaw)
        rot = np.array([[c, -s], [s, c]])
        # the witness points move with the shapes (when the closest pair is unique)
        gap = moved.point_b - moved.point_a
        np.testing.assert_allclose(gap, rot @ (r.point_b - r.point_a), atol=1e-7)
