"""Batch kernels: agreement with shapely and the scalar API, padding, validation."""

import numpy as np
import pytest
import shapely

from planning_collision.geometry import (
    ConvexShape,
    boxes_overlap_batch,
    gjk_distance,
    gjk_distance_batch,
    pack_shapes,
    penetration,
    penetration_batch,
    sat_overlap,
    signed_distance_batch,
)

TOL = 1e-9


def test_pack_shapes_layout():
    shapes = [
        ConvexShape.circle((1, 2), 0.5),
        ConvexShape.box((0, 0), 0.2, 2, 1),
        ConvexShape.segment((0, 0), (1, 1)),
    ]
    points, counts, radii = pack_shapes(shapes)
    assert points.shape == (3, 4, 2) and points.dtype == np.float64
    assert counts.tolist() == [1, 4, 2] and counts.dtype == np.int64
    assert radii.tolist() == [0.5, 0.0, 0.0]
    for k, s in enumerate(shapes):
        np.testing.assert_array_equal(points[k, : counts[k]], s.points)
        np.testing.assert_array_equal(
            points[k, counts[k] :], np.repeat(s.points[:1], 4 - counts[k], 0)
        )
    with pytest.raises(ValueError, match="shapes\\[1\\]"):
        pack_shapes([shapes[0], np.zeros((3, 2))])


def test_polygon_batch_matches_shapely_and_scalar(rng, geo):
    n = 3000
    pa, ca = geo.random_convex_batch(rng, n)
    pb, cb = geo.random_convex_batch(rng, n)
    zeros = np.zeros(n)
    res = gjk_distance_batch(pa, ca, zeros, pb, cb, zeros)
    ga, gb = geo.polygons_from_batch(pa, ca), geo.polygons_from_batch(pb, cb)
    ref_hit = shapely.intersects(ga, gb)
    np.testing.assert_array_equal(res.intersecting, ref_hit)
    assert np.max(np.abs(res.distance - shapely.distance(ga, gb))) <= TOL
    sep = ~ref_hit
    assert (
        np.max(shapely.distance(shapely.points(res.point_a[sep]), shapely.boundary(ga[sep]))) <= TOL
    )
    assert (
        np.max(shapely.distance(shapely.points(res.point_b[sep]), shapely.boundary(gb[sep]))) <= TOL
    )
    for k in range(0, n, 37):
        # the scalar API stores the hull from its lowest vertex: same answer up to rounding
        r = gjk_distance(ConvexShape(pa[k, : ca[k]]), ConvexShape(pb[k, : cb[k]]))
        assert r.intersecting == res.intersecting[k]
        assert r.distance == pytest.approx(res.distance[k], abs=1e-12)
        if not r.intersecting:  # closest points are unique; a common point is not
            np.testing.assert_allclose(r.point_a, res.point_a[k], atol=1e-9)
            np.testing.assert_allclose(r.point_b, res.point_b[k], atol=1e-9)


def test_polygon_disc_batch_matches_shapely(rng, geo):
    n = 3000
    pts, counts = geo.random_convex_batch(rng, n)
    centers = rng.uniform(-5, 5, (n, 1, 2))
    r = rng.uniform(0.05, 2.0, n)
    res = gjk_distance_batch(pts, counts, 0.0, centers, np.ones(n, np.int64), r)
    core = shapely.distance(geo.polygons_from_batch(pts, counts), shapely.points(centers[:, 0]))
    np.testing.assert_array_equal(res.intersecting, core <= r)
    assert np.max(np.abs(res.distance - np.maximum(core - r, 0.0))) <= TOL


def test_unordered_rows_and_garbage_padding(rng, geo):
    """Rows are point sets (any order, duplicates); entries past the count are ignored."""
    n = 500
    pa, ca = geo.random_convex_batch(rng, n)
    pb, cb = geo.random_convex_batch(rng, n, spread=1.0)
    ra = rb = np.zeros(n)
    kmax = pa.shape[1] + 8
    messy = np.full((n, kmax, 2), np.nan)
    messy_counts = np.empty(n, np.int64)
    for k in range(n):
        p = pa[k, : ca[k]]
        cloud = np.vstack([p, p[:3], p.mean(axis=0, keepdims=True)])[rng.permutation(ca[k] + 4)]
        messy[k, : len(cloud)] = cloud
        messy_counts[k] = len(cloud)
    clean = gjk_distance_batch(pa, ca, ra, pb, cb, rb)
    res = gjk_distance_batch(messy, messy_counts, ra, pb, cb, rb)
    np.testing.assert_array_equal(res.intersecting, clean.intersecting)
    assert np.max(np.abs(res.distance - clean.distance)) <= 1e-12
    depth_clean = penetration_batch(pa, ca, ra, pb, cb, rb).depth
    depth_messy = penetration_batch(messy, messy_counts, ra, pb, cb, rb).depth
    assert np.max(np.abs(depth_clean - depth_messy)) <= 1e-12


def test_distance_batch_carries_the_scalar_normal(rng, geo):
    n = 600
    a = geo.shapes_from_batch(*geo.random_convex_batch(rng, n, 1, 8, spread=3.0))
    b = geo.shapes_from_batch(*geo.random_convex_batch(rng, n, 1, 8, spread=3.0))
    b = [ConvexShape(s.points, r) for s, r in zip(b, rng.choice([0.0, 0.5], n), strict=True)]
    res = gjk_distance_batch(*pack_shapes(a), *pack_shapes(b))
    assert res.normal.shape == (n, 2)
    assert 0.1 < res.intersecting.mean() < 0.9
    for k in range(n):
        r = gjk_distance(a[k], b[k])
        np.testing.assert_array_equal(res.normal[k], r.normal)
        if not r.intersecting:
            np.testing.assert_allclose(res.point_b[k] - res.point_a[k],
                                       res.distance[k] * res.normal[k], atol=1e-12)


def test_penetration_and_signed_batches_match_scalar(rng, geo):
    n = 1000
    a = geo.shapes_from_batch(*geo.random_convex_batch(rng, n, 3, 10, spread=1.5))
    b = geo.shapes_from_batch(*geo.random_convex_batch(rng, n, 3, 10, spread=1.5))
    radii = rng.choice([0.0, 0.0, 0.3], n)
    a = [ConvexShape(s.points, r) for s, r in zip(a, radii, strict=True)]
    a += [ConvexShape.circle((0, 0), 1.0), ConvexShape.point((5, 5))]
    b += [ConvexShape.circle((0, 0), 1.0), ConvexShape.segment((4, 5), (6, 5))]
    pen = penetration_batch(*pack_shapes(a), *pack_shapes(b))
    sd = signed_distance_batch(*pack_shapes(a), *pack_shapes(b))
    assert (pen.depth > 0).mean() > 0.2
    np.testing.assert_array_equal(sd, 0.0 - pen.depth)
    for k in range(len(a)):
        r = penetration(a[k], b[k])
        assert r.depth == pytest.approx(pen.depth[k], abs=1e-12)
        np.testing.assert_allclose(r.normal, pen.normal[k], atol=1e-12)
        np.testing.assert_allclose(r.point_a, pen.point_a[k], atol=1e-12)
        np.testing.assert_allclose(r.point_b, pen.point_b[k], atol=1e-12)


def test_scalar_radii_broadcast():
    p = np.array([[[0.0, 0.0]], [[0.0, 0.0]]])
    q = np.array([[[3.0, 0.0]], [[0.0, 4.0]]])
    c = np.ones(2, np.int64)
    res = gjk_distance_batch(p, c, 0.5, q, c, 1.0)
    np.testing.assert_allclose(res.distance, [1.5, 2.5])


def test_boxes_overlap_batch_matches_shapely(rng, geo):
    n = 100_000
    a, b = geo.random_boxes(rng, n), geo.random_boxes(rng, n)
    got = boxes_overlap_batch(a, b)
    ref = shapely.intersects(geo.box_polygons(a), geo.box_polygons(b))
    assert got.dtype == np.bool_ and got.shape == (n,)
    np.testing.assert_array_equal(got, ref)


def test_empty_batches():
    res = gjk_distance_batch(np.zeros((0, 3, 2)), [], [], np.zeros((0, 1, 2)), [], [])
    assert res.distance.shape == (0,) and res.point_a.shape == (0, 2)
    assert boxes_overlap_batch(np.zeros((0, 5)), np.zeros((0, 5))).shape == (0,)


def _nan_in_row_1(p, c, r):
    q = p.copy()
    q[1, 0, 0] = np.nan
    return q, c, r


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda p, c, r: (p, np.array([0, 1]), r), "row 0: count out of range"),
        (lambda p, c, r: (p, np.array([1, 4]), r), "row 1: count out of range"),
        (lambda p, c, r: (p, c, np.array([0.0, -1.0])), "row 1: radius"),
        (lambda p, c, r: (p, c, np.array([np.inf, 0.0])), "row 0: radius"),
        (_nan_in_row_1, "row 1: NaN or inf"),
        (lambda p, c, r: (p * 1e160, c, r), "row 0: NaN or inf \\(or a coordinate beyond"),
        (lambda p, c, r: (p[:, :, 0], c, r), "shape"),
        (lambda p, c, r: (p, c[:1], r), "counts must have shape"),
        (lambda p, c, r: (p, c, r[:1]), "radii must be"),
    ],
)
def test_bad_batches_raise(mutate, message):
    p = np.zeros((2, 3, 2))
    p[:, :, 0] = [0, 1, 2]
    c = np.array([3, 2])
    r = np.zeros(2)
    args = mutate(p, c, r)
    with pytest.raises(ValueError, match=message):
        gjk_distance_batch(*args, p + 5.0, c, r)


def test_bad_boxes_raise():
    ok = np.array([[0.0, 0.0, 0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="box row 0"):
        boxes_overlap_batch(ok, np.array([[0.0, np.nan, 0.0, 1.0, 1.0]]))
    with pytest.raises(ValueError, match="box row 0"):
        boxes_overlap_batch(np.array([[0.0, 0.0, 0.0, -1.0, 1.0]]), ok)
    with pytest.raises(ValueError, match="shape"):
        boxes_overlap_batch(ok, np.zeros((2, 5)))
    with pytest.raises(ValueError, match="shape"):
        boxes_overlap_batch(np.zeros((1, 4)), np.zeros((1, 4)))
    with pytest.raises(ValueError, match="rows"):
        gjk_distance_batch(np.zeros((2, 1, 2)), [1, 1], 0.0, np.zeros((3, 1, 2)), [1, 1, 1], 0.0)


# ----------------------------------------------------------------------------- far away
# Rows near (offset, -offset); the oracles see the same stored floats shifted back by the
# offset (exact, see test_penetration.py): distances and depths keep a 1e-12 tolerance
# (FAR_TOL), witness points (absolute coordinates) FAR_ULPS = 8 float spacings of the
# offset (9.3e-10 at 1e6).
FAR_TOL = 1e-12
FAR_ULPS = 8


@pytest.mark.parametrize("offset", [1e5, 1e6, -1e6])
def test_distance_batches_at_large_coordinates(rng, geo, offset):
    shift = np.array([offset, -offset])
    tol_pt = FAR_ULPS * np.spacing(abs(offset))
    n = 2000
    pa, ca = geo.random_convex_batch(rng, n, spread=2.0)
    pb, cb = geo.random_convex_batch(rng, n, spread=2.0)
    pa, pb = pa + shift, pb + shift
    ga = geo.polygons_from_batch(pa - shift, ca)
    gb = geo.polygons_from_batch(pb - shift, cb)
    zeros = np.zeros(n)
    res = gjk_distance_batch(pa, ca, zeros, pb, cb, zeros)
    hit = shapely.intersects(ga, gb)
    assert 0.2 < hit.mean() < 0.8
    np.testing.assert_array_equal(res.intersecting, hit)
    assert np.max(np.abs(res.distance - shapely.distance(ga, gb))) <= FAR_TOL
    sep = ~hit
    wa, wb = res.point_a - shift, res.point_b - shift
    assert np.max(shapely.distance(shapely.points(wa[sep]), shapely.boundary(ga[sep]))) <= tol_pt
    assert np.max(shapely.distance(shapely.points(wb[sep]), shapely.boundary(gb[sep]))) <= tol_pt
    np.testing.assert_allclose(np.hypot(*(res.point_a - res.point_b)[sep].T), res.distance[sep],
                               atol=tol_pt, rtol=0)
    # signed distance: -depth (exact SAT depth, numpy brute force) or the distance
    sd = signed_distance_batch(pa, ca, zeros, pb, cb, zeros)
    ref = np.array([
        -geo.sat_depth_reference(pa[k, : ca[k]] - shift, pb[k, : cb[k]] - shift) if hit[k]
        else res.distance[k] for k in range(n)
    ])
    assert np.max(np.abs(sd - ref)) <= FAR_TOL
    # the scalar API on the same rows gives the same answers
    for k in range(0, n, 41):
        a, b = ConvexShape(pa[k, : ca[k]]), ConvexShape(pb[k, : cb[k]])
        r = gjk_distance(a, b)
        assert r.intersecting == res.intersecting[k]
        assert r.distance == pytest.approx(res.distance[k], abs=FAR_TOL)
        assert penetration(a, b).depth == pytest.approx(-sd[k], abs=FAR_TOL)
    # polygon-disc pairs
    centres = rng.uniform(-5, 5, (n, 1, 2)) + shift
    radii = rng.uniform(0.05, 2.0, n)
    disc = gjk_distance_batch(pa, ca, 0.0, centres, np.ones(n, np.int64), radii)
    core = shapely.distance(ga, shapely.points(centres[:, 0] - shift))
    np.testing.assert_array_equal(disc.intersecting, core <= radii)
    assert np.max(np.abs(disc.distance - np.maximum(core - radii, 0.0))) <= FAR_TOL
    sd_disc = signed_distance_batch(pa, ca, 0.0, centres, np.ones(n, np.int64), radii)
    far = core > 0
    assert np.max(np.abs(sd_disc[far] - (core[far] - radii[far]))) <= FAR_TOL


@pytest.mark.parametrize("offset", [1e5, 1e6, -1e6])
def test_boxes_overlap_batch_at_large_coordinates(rng, geo, offset):
    n = 20_000
    a, b = geo.random_boxes(rng, n), geo.random_boxes(rng, n)
    a[:, :2] += (offset, -offset)
    b[:, :2] += (offset, -offset)
    got = boxes_overlap_batch(a, b)
    # shapely's predicates are exact on the (independently computed) corners; a random pair
    # within their 1e-10 rounding of touching has probability ~1e-10
    ref = shapely.intersects(geo.box_polygons(a), geo.box_polygons(b))
    assert 0.05 < ref.mean() < 0.95
    np.testing.assert_array_equal(got, ref)
    for k in range(0, n, 97):  # the scalar box test on ConvexShape.box agrees exactly
        x = ConvexShape.box(a[k, :2], *a[k, 2:])
        y = ConvexShape.box(b[k, :2], *b[k, 2:])
        assert sat_overlap(x, y) == got[k] == gjk_distance(x, y).intersecting
