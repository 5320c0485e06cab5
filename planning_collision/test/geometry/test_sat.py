"""Separating-axis overlap tests (boxes, polygons) against shapely."""

import math

import numpy as np
import shapely

from planning_collision.geometry import ConvexShape, boxes_overlap_batch, sat_overlap
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
