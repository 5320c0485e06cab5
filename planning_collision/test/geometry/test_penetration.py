"""Penetration depth (exact SAT / analytic) and signed distance."""

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision.geometry import (
    ConvexShape,
    gjk_distance,
    penetration,
    sat_mtv,
    sat_overlap,
    signed_distance,
)

TOL = 1e-9


def test_polygon_depth_equals_brute_force_sat(rng, geo):
    n = 2000
    pa, ca = geo.random_convex_batch(rng, n, spread=1.5)
    pb, cb = geo.random_convex_batch(rng, n, spread=1.5)
    a, b = geo.shapes_from_batch(pa, ca), geo.shapes_from_batch(pb, cb)
    ga, gb = geo.polygons_from_batch(pa, ca), geo.polygons_from_batch(pb, cb)
    res = [penetration(x, y) for x, y in zip(a, b, strict=True)]
    depth = np.array([r.depth for r in res])
    normal = np.array([r.normal for r in res])
    qa = np.array([r.point_a for r in res])
    qb = np.array([r.point_b for r in res])
    np.testing.assert_allclose(np.hypot(*normal.T), 1.0, atol=1e-12)
    np.testing.assert_allclose(qa - qb, depth[:, None] * normal, atol=TOL)
    hit = shapely.intersects(ga, gb)
    assert hit.sum() > 1000
    assert np.max(np.abs(-depth - shapely.distance(ga, gb))[~hit]) <= TOL
    ref = np.array([geo.sat_depth_reference(x.points, y.points) for x, y in zip(a, b, strict=True)])
    assert np.max(np.abs(depth - ref)[hit]) <= TOL
    assert np.max(shapely.distance(shapely.points(qa[hit]), shapely.boundary(ga[hit]))) <= TOL
    assert np.max(shapely.distance(shapely.points(qb[hit]), shapely.boundary(gb[hit]))) <= TOL
    # moving B by depth * normal leaves the pair touching, a little more separates it
    k = np.flatnonzero(hit)
    touching = np.array([shapely.Polygon(b[i].points + depth[i] * normal[i]) for i in k])
    apart = np.array([shapely.Polygon(b[i].points + (depth[i] + 1e-6) * normal[i]) for i in k])
    assert np.max(shapely.distance(touching, ga[k])) <= TOL
    assert np.min(shapely.distance(apart, ga[k])) > 0.5e-6
    sd = np.array([signed_distance(x, y) for x, y in zip(a, b, strict=True)])
    np.testing.assert_array_equal(sd, 0.0 - depth)


def test_depth_is_minimal_over_random_directions(rng, geo):
    for _ in range(200):
        a = geo.random_convex(rng, spread=1.0)
        b = geo.random_convex(rng, spread=1.0)
        r = penetration(a, b)
        if r.depth <= 0:
            continue
        ang = rng.uniform(0, 2 * np.pi, 64)
        u = np.c_[np.cos(ang), np.sin(ang)]
        # translation of B along u that separates: max_a u.a - min_b u.b
        needed = (a.points @ u.T).max(0) - (b.points @ u.T).min(0)
        assert np.all(needed >= r.depth - TOL)


def test_discs_and_capsules_are_analytic(rng):
    for _ in range(500):
        c1, c2 = rng.uniform(-2, 2, (2, 2))
        r1, r2 = rng.uniform(0.1, 2, 2)
        d = float(np.hypot(*(c2 - c1)))
        res = penetration(ConvexShape.circle(c1, r1), ConvexShape.circle(c2, r2))
        assert res.depth == pytest.approx(r1 + r2 - d, abs=1e-12)
        np.testing.assert_allclose(res.normal, (c2 - c1) / d, atol=1e-12)
        np.testing.assert_allclose(res.point_a, c1 + r1 * res.normal, atol=1e-12)
        np.testing.assert_allclose(res.point_b, c2 - r2 * res.normal, atol=1e-12)
    # parallel capsules overlapping by 0.25
    a = ConvexShape.capsule((0, 0), (4, 0), 0.5)
    b = ConvexShape.capsule((1, 0.75), (6, 0.75), 0.5)
    res = penetration(a, b)
    assert res.depth == pytest.approx(0.25)
    np.testing.assert_allclose(res.normal, [0, 1], atol=1e-12)
    # crossing capsules: cores intersect, depth = core SAT depth + both radii
    c = ConvexShape.capsule((2, -3), (2, 3), 0.25)
    res = penetration(a, c)
    # core SAT: along x the segments overlap by min(4 - 2, 2 - 0) = 2, along y by 3
    assert res.depth == pytest.approx(2.0 + 0.5 + 0.25, abs=1e-12)
    assert abs(res.normal[0]) == pytest.approx(1.0)


def test_rounded_polygon_depth_adds_radii(rng, geo):
    for _ in range(300):
        a, b = geo.random_convex(rng, spread=1.0), geo.random_convex(rng, spread=1.0)
        ra, rb = rng.uniform(0, 0.5, 2)
        core = penetration(a, b)
        rounded = penetration(ConvexShape(a.points, ra), ConvexShape(b.points, rb))
        if core.depth > 0:
            assert rounded.depth == pytest.approx(core.depth + ra + rb, abs=1e-12)
            np.testing.assert_allclose(rounded.normal, core.normal, atol=1e-12)
        else:
            # inflated shapes: depth = ra + rb - core distance
            assert rounded.depth == pytest.approx(ra + rb + core.depth, abs=1e-12)


def test_cross_shapes_and_identical_shapes():
    bar = ConvexShape.box((0, 0), 0.0, 10.0, 0.2)
    post = ConvexShape.box((0, 0), math.pi / 2, 10.0, 0.3)
    r = penetration(bar, post)
    # pushing the post along y takes 5 + 0.1, along x 5 + 0.15
    assert r.depth == pytest.approx(5.1)
    assert abs(r.normal[1]) == pytest.approx(1.0)
    sq = ConvexShape.box((1, 1), 0.3, 2.0, 1.0)
    r = penetration(sq, sq)
    assert r.depth == pytest.approx(1.0)
    disc = ConvexShape.circle((1, 1), 1.5)
    r = penetration(disc, disc)
    assert r.depth == 3.0 and r.normal.tolist() == [1.0, 0.0]


def test_touching_has_zero_depth():
    a = ConvexShape.box((0, 0), 0.0, 2.0, 2.0)
    b = ConvexShape.box((2, 0.5), 0.0, 2.0, 2.0)
    r = penetration(a, b)
    assert r.depth == 0.0
    np.testing.assert_allclose(r.normal, [1, 0], atol=1e-15)
    assert signed_distance(a, b) == 0.0
    assert sat_mtv(a, b).tolist() == [0.0, 0.0]


def test_signed_distance_and_mtv_agree_with_distance(rng, geo):
    for _ in range(500):
        a, b = geo.random_convex(rng, spread=2), geo.random_convex(rng, spread=2)
        sd = signed_distance(a, b)
        d = gjk_distance(a, b)
        if d.intersecting:
            assert sd <= 0.0
            mtv = sat_mtv(a, b)
            assert np.hypot(*mtv) == pytest.approx(-sd, abs=1e-12)
            moved = ConvexShape(b.points + mtv)
            assert gjk_distance(a, moved).distance <= 1e-9
        else:
            assert sd == pytest.approx(d.distance, abs=1e-12)
            assert sat_mtv(a, b).tolist() == [0.0, 0.0]


def test_tiny_shapes_keep_unit_normals(rng):
    """Shapes of size 1e-160: squared lengths underflow, norms must not."""
    for _ in range(300):
        s = 10.0 ** rng.uniform(-165, -150)
        a = ConvexShape.hull(rng.normal(size=(int(rng.integers(1, 5)), 2)) * s)
        b = ConvexShape.hull(rng.normal(size=(int(rng.integers(1, 5)), 2)) * s + s)
        r = penetration(a, b)
        assert np.isfinite(r.depth) and np.all(np.isfinite(r.point_a))
        assert abs(np.hypot(*r.normal) - 1.0) <= 1e-12
        assert np.isfinite(gjk_distance(a, b).distance)


coord = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(coord, coord), min_size=1, max_size=8),
    st.lists(st.tuples(coord, coord), min_size=1, max_size=8),
    st.floats(0, 2),
    st.floats(0, 2),
)
def test_property_antisymmetric_normal_and_finite(pa, pb, ra, rb):
    a, b = ConvexShape.hull(pa, ra), ConvexShape.hull(pb, rb)
    r1, r2 = penetration(a, b), penetration(b, a)
    for r in (r1, r2):
        assert np.isfinite(r.depth)
        assert np.all(np.isfinite(r.normal)) and np.all(np.isfinite(r.point_a))
        assert abs(np.hypot(*r.normal) - 1.0) <= 1e-9
    assert abs(r1.depth - r2.depth) <= 1e-9
    if abs(r1.depth) > 1e-9 and r1.depth < 0:
        np.testing.assert_allclose(r1.normal, -r2.normal, atol=1e-6)
    assert (r1.depth >= 0) == gjk_distance(a, b).intersecting or abs(r1.depth) <= 1e-12


# ----------------------------------------------------------------------------- far away
# Shapes near (offset, -offset). Their stored coordinates are rounded to the float spacing
# there (np.spacing(1e6) ~ 1.2e-10); the oracles see the very same floats shifted back by
# the offset, a subtraction that is exact (Sterbenz: every coordinate is within a factor 2
# of the offset), so they measure the same geometry at unit scale. Depths and distances are
# computed from coordinate differences, so their error stays about EPS times the pair's size
# wherever the pair is: FAR_TOL = 1e-12, tighter than TOL. Contact and witness points are
# absolute coordinates, rounded to the float spacing of the offset: FAR_ULPS = 8 spacings
# (9.3e-10 at 1e6).
FAR_TOL = 1e-12
FAR_ULPS = 8


@pytest.mark.parametrize("offset", [1e3, 1e5, 1e6, -1e6])
def test_penetration_and_mtv_at_large_coordinates(rng, geo, offset):
    shift = np.array([offset, -offset])
    tol_pt = FAR_ULPS * np.spacing(abs(offset))
    n = 400
    pa, ca = geo.random_convex_batch(rng, n, 3, 10, spread=1.5)
    pb, cb = geo.random_convex_batch(rng, n, 3, 10, spread=1.5)
    hits = 0
    for k in range(n):
        a = ConvexShape(pa[k, : ca[k]] + shift)
        b = ConvexShape(pb[k, : cb[k]] + shift)
        la, lb = a.points - shift, b.points - shift  # exact: the same geometry at unit scale
        ga, gb = shapely.Polygon(la), shapely.Polygon(lb)
        r = penetration(a, b)
        hit = ga.intersects(gb)
        ref = geo.sat_depth_reference(la, lb) if hit else -ga.distance(gb)
        assert abs(r.depth - ref) <= FAR_TOL, (k, r.depth, ref)
        assert abs(np.hypot(*r.normal) - 1.0) <= 1e-12
        np.testing.assert_allclose(r.point_a - r.point_b, r.depth * r.normal, atol=tol_pt, rtol=0)
        assert signed_distance(a, b) == 0.0 - r.depth
        assert sat_overlap(a, b) == hit == (r.depth >= 0.0)
        mtv = sat_mtv(a, b)
        if not hit:
            assert mtv.tolist() == [0.0, 0.0]
            continue
        hits += 1
        assert ga.boundary.distance(shapely.Point(r.point_a - shift)) <= tol_pt
        assert gb.boundary.distance(shapely.Point(r.point_b - shift)) <= tol_pt
        np.testing.assert_allclose(mtv, r.depth * r.normal, atol=1e-12, rtol=0)
        # moving B by the MTV leaves it touching (up to the rounding of the moved
        # coordinates), a little more separates it
        assert gjk_distance(a, ConvexShape(b.points + mtv)).distance <= tol_pt
        apart = gjk_distance(a, ConvexShape(b.points + mtv + 1e-6 * r.normal))
        assert not apart.intersecting and apart.distance >= 1e-6 - tol_pt
    assert 100 < hits < n - 50


@pytest.mark.parametrize("offset", [1e5, 1e6, -1e6])
def test_rounded_shapes_at_large_coordinates(rng, offset):
    """Discs, capsules and rounded polygons far away: analytic depths, same tolerances."""
    shift = np.array([offset, -offset])
    for _ in range(300):
        c1, c2 = rng.uniform(-2, 2, (2, 2))
        r1, r2 = rng.uniform(0.1, 2, 2)
        res = penetration(ConvexShape.circle(c1 + shift, r1), ConvexShape.circle(c2 + shift, r2))
        # the centres as stored, shifted back exactly
        d1, d2 = (c1 + shift) - shift, (c2 + shift) - shift
        assert res.depth == pytest.approx(r1 + r2 - np.hypot(*(d2 - d1)), abs=FAR_TOL)
        p0, p1, q0, q1 = rng.uniform(-2, 2, (4, 2))
        ra, rb = rng.uniform(0.05, 0.5, 2)
        cap_a = ConvexShape.capsule(p0 + shift, p1 + shift, ra)
        cap_b = ConvexShape.capsule(q0 + shift, q1 + shift, rb)
        sa = shapely.LineString(cap_a.points - shift)
        sb = shapely.LineString(cap_b.points - shift)
        core = sa.distance(sb)
        res = penetration(cap_a, cap_b)
        if core > 0:
            assert res.depth == pytest.approx(ra + rb - core, abs=FAR_TOL)
        else:
            assert res.depth >= ra + rb - FAR_TOL  # crossing cores: core depth + both radii
        assert gjk_distance(cap_a, cap_b).intersecting == (core <= ra + rb)
        assert sat_overlap(cap_a, cap_b) == (core <= ra + rb)
