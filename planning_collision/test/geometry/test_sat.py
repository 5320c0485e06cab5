"""Separating-axis overlap tests (boxes, polygons) against shapely."""

import math

import numpy as np
import pytest
import shapely

from planning_collision.geometry import (
    ConvexShape,
    boxes_overlap_batch,
    gjk_distance,
    penetration,
    sat_mtv,
    sat_overlap,
)
from planning_collision.geometry.sat import box_overlap


def test_box_pairs_match_shapely(rng, geo):
    for area in (10.0, 4.0, 20.0):
        a, b = geo.random_boxes(rng, 1000, area), geo.random_boxes(rng, 1000, area)
        ref = shapely.intersects(geo.box_polygons(a), geo.box_polygons(b))
        assert 0.02 < ref.mean() < 0.98
        got = np.array(
            [
                sat_overlap(ConvexShape.box(x[:2], *x[2:]), ConvexShape.box(y[:2], *y[2:]))
                for x, y in zip(a, b, strict=True)
            ]
        )
        np.testing.assert_array_equal(got, ref)


def test_transformed_boxes_still_use_exact_box_parameters(rng, geo):
    rows = geo.random_boxes(rng, 500)
    for row, other in zip(rows, rows[::-1], strict=True):
        a = ConvexShape.box((0, 0), 0.0, row[3], row[4]).transformed(row[0], row[1], row[2])
        b = ConvexShape.box(other[:2], *other[2:])
        assert a.box_params is not None
        expected = shapely.Polygon(a.points).intersects(shapely.Polygon(b.points))
        assert sat_overlap(a, b) == expected


def test_polygon_pairs_match_shapely(rng, geo):
    pa, ca = geo.random_convex_batch(rng, 2000, 3, 12)
    pb, cb = geo.random_convex_batch(rng, 2000, 3, 12)
    a, b = geo.shapes_from_batch(pa, ca), geo.shapes_from_batch(pb, cb)
    ref = shapely.intersects(geo.polygons_from_batch(pa, ca), geo.polygons_from_batch(pb, cb))
    got = np.array([sat_overlap(x, y) for x, y in zip(a, b, strict=True)])
    assert 0.05 < ref.mean() < 0.95
    np.testing.assert_array_equal(got, ref)


def test_touching_boxes_and_polygons_overlap():
    a = ConvexShape.box((0, 0), 0.0, 2.0, 2.0)
    for b in (
        ConvexShape.box((2, 0), 0.0, 2.0, 2.0),  # shared edge
        ConvexShape.box((2, 2), 0.0, 2.0, 2.0),  # shared corner
        ConvexShape.box((1 + math.sqrt(0.5), 0.0), math.pi / 4, 1.0, 1.0),  # corner on edge
    ):
        assert sat_overlap(a, b) and sat_overlap(b, a)
    tri = ConvexShape.polygon([(1, -1), (3, -1), (3, 1)])
    assert sat_overlap(ConvexShape.polygon(a.points), tri)  # vertex (1, -1) is a's corner
    gap = ConvexShape.box((2 + 1e-9, 0), 0.0, 2.0, 2.0)
    assert not sat_overlap(a, gap)
    assert not sat_overlap(ConvexShape.polygon(a.points), ConvexShape.polygon(gap.points))


def test_cross_overlap_without_vertices_inside():
    bar = ConvexShape.box((0, 0), 0.0, 10.0, 0.2)
    post = ConvexShape.box((0, 0), math.pi / 2, 10.0, 0.2)
    assert sat_overlap(bar, post)
    assert sat_overlap(ConvexShape.polygon(bar.points), ConvexShape.polygon(post.points))


def test_rounded_and_degenerate_shapes_go_through_gjk():
    a = ConvexShape.box((1, 1), 0.0, 2.0, 2.0)  # [0, 2] x [0, 2]
    assert sat_overlap(a, ConvexShape.circle((2.5, 0), 0.5))
    assert not sat_overlap(a, ConvexShape.circle((2.5, 2.5), 0.5))  # near the corner only
    assert sat_overlap(a, ConvexShape.segment((-5, 0.5), (5, 0.5)))
    assert not sat_overlap(a, ConvexShape.segment((2, 3), (4, 1)))  # collinear-ish miss
    assert not sat_overlap(ConvexShape.segment((0, 0), (1, 0)), ConvexShape.point((2, 0)))
    flat = ConvexShape.box((3, 0), 0.0, 2.0, 0.0)  # zero-width box: a segment
    assert sat_overlap(a, flat)


def test_scalar_box_kernel_matches_batch(rng, geo):
    a, b = geo.random_boxes(rng, 1000), geo.random_boxes(rng, 1000)
    batch = boxes_overlap_batch(a, b)
    scalar = np.array([box_overlap(*x, *y) for x, y in zip(a, b, strict=True)])
    np.testing.assert_array_equal(batch, scalar)


# ----------------------------------------------------------------------------- touching
# Touching pairs are built from their intended geometry, so their stored corners touch up to
# the rounding of the coordinates. Near the origin (pairs within 1 of it, sizes >= 0.5) that
# is below 1e-15, inside the touch tolerance TOUCH_REL * s (s >= 1 here: 3.6e-15 or more),
# so every pair must count as intersecting. At 1e6 it is about 1e-10 (the float spacing
# there), far outside the tolerance (about 3e-14 for these pairs): the stored corners
# genuinely overlap or are apart by ~1e-10, each query must give the answer
# gjk_distance(...).intersecting gives on the same stored points, and shapely (exact
# predicates on the same floats) referees.
KINDS = ("end-to-end", "side-to-side", "corner-to-edge", "corner-to-corner")


def touching_box_rows(rng, n, offset, gap=0.0):
    """n pairs of box rows (cx, cy, heading, length, width), touching (gap 0) or separated
    by ``gap`` along the contact normal, at random headings, in the four contact kinds,
    A's centre within 1 (at the origin) or 5 (elsewhere) of ``(offset, offset)``."""
    a = np.empty((n, 5))
    b = np.empty((n, 5))
    kinds = np.arange(n) % len(KINDS)
    spread = 1.0 if offset == 0.0 else 5.0
    for k in range(n):
        ha = rng.uniform(-np.pi, np.pi)
        la, wa, lb, wb = rng.uniform(0.5, 4.0, 4)
        ca = np.array([offset, offset]) + rng.uniform(-spread, spread, 2)
        u = np.array([np.cos(ha), np.sin(ha)])  # A's length axis
        v = np.array([-u[1], u[0]])  # A's width axis
        kind = KINDS[kinds[k]]
        if kind == "end-to-end":  # B continues A along its length axis, shifted sideways
            hb = ha + rng.choice([0.0, np.pi])
            side = rng.uniform(-0.45, 0.45) * (wa + wb)
            cb = ca + u * ((la + lb) / 2 + gap) + v * side
        elif kind == "side-to-side":
            hb = ha + rng.choice([0.0, np.pi])
            along = rng.uniform(-0.45, 0.45) * (la + lb)
            cb = ca + v * ((wa + wb) / 2 + gap) + u * along
        elif kind == "corner-to-edge":  # a corner of a rotated B on A's +v side
            hb = ha + rng.uniform(0.1, np.pi / 2 - 0.1)
            ub = np.array([np.cos(hb), np.sin(hb)])
            vb = np.array([-ub[1], ub[0]])
            corners = [sl * ub * lb / 2 + sw * vb * wb / 2 for sl in (1, -1) for sw in (1, -1)]
            low = min(corners, key=lambda c: c @ v)  # B's corner deepest towards A
            contact = ca + v * (wa / 2 + gap) + u * rng.uniform(-0.4, 0.4) * la
            cb = contact - low
        else:  # corner to corner, diagonal neighbours
            hb = ha
            cb = ca + u * (la + lb) / 2 + v * (wa + wb) / 2 + (u + v) * gap / np.sqrt(2)
        a[k] = (*ca, ha, la, wa)
        b[k] = (*cb, hb, lb, wb)
    return a, b


def box_shapes(rows):
    return [ConvexShape.box(r[:2], *r[2:]) for r in rows]


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_touching_boxes_agree_with_gjk(rng, geo, offset):
    n = 2400
    a_rows, b_rows = touching_box_rows(rng, n, offset)
    a, b = box_shapes(a_rows), box_shapes(b_rows)
    gjk = np.array([gjk_distance(x, y).intersecting for x, y in zip(a, b, strict=True)])
    sat = np.array([sat_overlap(x, y) for x, y in zip(a, b, strict=True)])
    batch = boxes_overlap_batch(a_rows, b_rows)
    np.testing.assert_array_equal(sat, gjk)
    np.testing.assert_array_equal(batch, gjk)
    # symmetric, and the polygon edge test on the same corners agrees too
    np.testing.assert_array_equal(boxes_overlap_batch(b_rows, a_rows), gjk)
    poly = [sat_overlap(ConvexShape.polygon(x.points), ConvexShape.polygon(y.points))
            for x, y in zip(a, b, strict=True)]
    np.testing.assert_array_equal(poly, gjk)
    # penetration and the MTV see the same contacts: depth exactly 0 for a touch
    pen = [penetration(x, y) for x, y in zip(a, b, strict=True)]
    depth = np.array([r.depth for r in pen])
    np.testing.assert_array_equal(depth >= 0.0, gjk)
    mtv = np.array([sat_mtv(x, y) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(np.hypot(*mtv.T), np.maximum(depth, 0.0), rtol=1e-15, atol=0)
    # touching pairs: any depth is the rounding of the coordinates (16 float spacings)
    assert np.max(np.abs(depth)) <= 16 * np.spacing(max(offset, 16.0))
    if offset == 0.0:
        assert gjk.all()  # touching counts as intersecting
        assert np.all(depth == 0.0) and not mtv.any()
        return
    # at 1e6 both outcomes occur, each one what the stored corners really do
    assert 0.2 < gjk.mean() < 0.95
    ga = shapely.polygons([x.points for x in a])
    gb = shapely.polygons([y.points for y in b])
    # pairs apart by less than 1e-13 would be decided by the tolerance, not by the geometry,
    # and are not refereed (there are none in this sample)
    clear = shapely.intersects(ga, gb) | (shapely.distance(ga, gb) > 1e-13)
    assert clear.mean() > 0.99
    np.testing.assert_array_equal(gjk[clear], shapely.intersects(ga, gb)[clear])


@pytest.mark.parametrize(("offset", "gaps"), [(0.0, (2e-13, 1e-9, 1e-6)),
                                              (1e6, (2e-9, 3e-8, 1e-6))])
def test_boxes_apart_by_a_clear_gap_do_not_overlap(rng, offset, gaps):
    """Gaps well above the coordinate rounding (~1e-16 at 0, ~1e-10 at 1e6) and the touch
    tolerance; they straddle the box test's undecided band (3e-13 at 0, 3e-8 at 1e6)."""
    rounding = 16 * np.spacing(max(offset, 16.0))  # of the coordinates
    for gap in gaps:
        a_rows, b_rows = touching_box_rows(rng, 400, offset, gap)
        a, b = box_shapes(a_rows), box_shapes(b_rows)
        assert not boxes_overlap_batch(a_rows, b_rows).any()
        assert not boxes_overlap_batch(b_rows, a_rows).any()
        for x, y in zip(a, b, strict=True):
            r = gjk_distance(x, y)
            assert not r.intersecting and not sat_overlap(x, y) and not sat_overlap(y, x)
            assert r.distance == pytest.approx(gap, rel=1e-6, abs=rounding)


def touching_polygon_pairs(rng, geo, n, offset):
    """Convex polygon pairs touching along a shared edge, a vertex on an edge, or at a
    shared vertex; B lies on the far side of a supporting line of A."""
    pairs = []
    for k in range(n):
        a = geo.random_convex(rng, 3, 12, spread=1.0 if offset == 0.0 else 5.0, size=(0.5, 2.0))
        p = a.points + offset
        m = len(p)
        i = int(rng.integers(m))
        r0, r1 = p[i], p[(i + 1) % m]
        e = r1 - r0
        out = np.array([e[1], -e[0]]) / np.hypot(*e)  # outward normal of edge i (CCW)
        far = rng.uniform(0.2, 2.0, (int(rng.integers(1, 6)), 1)) * out
        along = rng.uniform(-1.0, 2.0, (len(far), 1)) * e
        kind = k % 3
        if kind == 0:  # shared edge
            pts = np.vstack([r1, r0, r0 + along + far])
        elif kind == 1:  # a vertex of B on the inside of edge i
            t = rng.uniform(0.1, 0.9)
            contact = r0 + t * e
            pts = np.vstack([contact, contact + along + far - t * e])
        else:  # shared vertex: B in the cone of outward directions at r0
            prev = p[i - 1]
            out_prev = np.array([r0[1] - prev[1], prev[0] - r0[0]])
            out_prev /= np.hypot(*out_prev)
            w = rng.uniform(0.1, 1.0, (len(far) + 1, 2))
            cone = w[:, :1] * out + w[:, 1:] * out_prev
            pts = np.vstack([r0, r0 + cone * rng.uniform(0.5, 2.0)])
        pairs.append((ConvexShape.polygon(p), ConvexShape(pts)))
    return [(x, y) for x, y in pairs if y.points.shape[0] >= 3]


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_touching_polygons_agree_with_gjk(rng, geo, offset):
    pairs = touching_polygon_pairs(rng, geo, 1500, offset)
    assert len(pairs) > 1000
    gjk = np.array([gjk_distance(x, y).intersecting for x, y in pairs])
    sat = np.array([sat_overlap(x, y) for x, y in pairs])
    rev = np.array([sat_overlap(y, x) for x, y in pairs])
    np.testing.assert_array_equal(sat, gjk)
    np.testing.assert_array_equal(rev, gjk)
    depth = np.array([penetration(x, y).depth for x, y in pairs])
    np.testing.assert_array_equal(depth >= 0.0, gjk)
    if offset == 0.0:
        assert gjk.all()
        assert np.all(depth == 0.0)
        assert not any(sat_mtv(x, y).any() for x, y in pairs)
    else:
        assert 0.05 < gjk.mean() < 0.999  # rounding at 1e6 both ways


def test_fast_sincos_matches_libm(rng):
    """The box filter's sine-cosine: within 2 EPS of math.sin / math.cos (the filter's slack
    assumes a few ulps), on typical headings, quadrant boundaries, large angles and beyond
    the 1e5 cut-off where it defers to libm."""
    from numba import njit

    from planning_collision.geometry.fast_trig import fast_sincos

    @njit
    def table(x):
        out = np.empty((x.size, 2))
        for i in range(x.size):
            out[i, 0], out[i, 1] = fast_sincos(x[i])
        return out

    quarter = np.arange(-400, 401) * (np.pi / 2)
    x = np.concatenate([
        rng.uniform(-np.pi, np.pi, 100_000),
        rng.uniform(-1e5, 1e5, 100_000),
        quarter, np.nextafter(quarter, np.inf), np.nextafter(quarter, -np.inf),
        [0.0, -0.0, 1e-300, np.pi / 4, 3 * np.pi / 4, 99_999.9, 1e5, -1e5, 3e7, -1e12],
    ])
    got = table(x)
    ref = np.c_[[math.sin(v) for v in x], [math.cos(v) for v in x]]
    assert np.max(np.abs(got - ref)) <= 2 * np.finfo(float).eps
    far = np.abs(x) >= 1e5
    np.testing.assert_array_equal(got[far], ref[far])
