"""segment_cast / cast_segments: the first point where a segment meets a rounded convex shape.

Oracles: shapely (exact for radius 0), GJK distance (hit <=> segment-shape distance 0, the hit
point is on the boundary, slightly earlier points are outside), brute force over obstacles."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from planning_collision.geometry import ConvexShape, ObstacleSet, gjk_distance
from planning_collision.geometry.raycast import cast_segments, segment_cast


def random_shape(rng):
    kind = rng.integers(4)
    c = rng.uniform(-3, 3, 2)
    r = 0.0 if rng.random() < 0.4 else rng.uniform(0.05, 0.8)
    if kind == 0:
        return ConvexShape.circle(c, max(r, 0.1))
    if kind == 1:
        return ConvexShape.capsule(c, c + rng.uniform(-1.5, 1.5, 2), r)
    if kind == 2:
        return ConvexShape(ConvexShape.box(c, rng.uniform(-3, 3), rng.uniform(0.2, 2),
                                           rng.uniform(0.2, 2)).points, r)
    return ConvexShape(c + rng.uniform(-1, 1, (rng.integers(3, 9), 2)), r)


def test_hand_made_cases():
    square = ConvexShape.box((5, 0), 0, 2, 2)
    assert segment_cast(square, (0, 0), (10, 0)) == pytest.approx(0.4, abs=1e-15)
    assert segment_cast(square, (5, 0), (10, 0)) == 0.0  # starts inside
    assert segment_cast(square, (0, 1), (10, 1)) == pytest.approx(0.4, abs=1e-15)  # along edge
    assert segment_cast(square, (0, 1 + 1e-9), (10, 1 + 1e-9)) == math.inf  # a 1e-9 gap
    assert segment_cast(square, (0, 0), (3.9, 0)) == math.inf  # stops short
    assert segment_cast(square, (0, 0), (4.0, 0)) == pytest.approx(1.0)  # ends on the face
    assert segment_cast(ConvexShape.circle((5, 0), 1), (0, 0), (10, 0)) == pytest.approx(0.4)
    assert segment_cast(ConvexShape.capsule((5, -3), (5, 3), 0.5), (0, 0), (10, 0)) == \
        pytest.approx(0.45)
    assert segment_cast(ConvexShape.segment((5, -3), (5, 3)), (0, 0), (10, 0)) == 0.5
    assert segment_cast(ConvexShape.point((5, 0)), (0, 0), (10, 0)) == 0.5
    assert segment_cast(ConvexShape.point((5, 1e-6)), (0, 0), (10, 0)) == math.inf
    # A zero-length segment is a point: a hit only when inside.
    assert segment_cast(square, (5, 0.5), (5, 0.5)) == 0.0
    assert segment_cast(square, (0, 0), (0, 0)) == math.inf
    # Collinear overlap with a segment shape starts at its near end.
    assert segment_cast(ConvexShape.segment((2, 0), (3, 0)), (0, 0), (10, 0)) == \
        pytest.approx(0.2)


def test_radius_zero_matches_shapely():
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(1500):
        pts = rng.uniform(-2, 2, (rng.integers(3, 10), 2)) + rng.uniform(-2, 2, 2)
        shape = ConvexShape(pts)
        if shape.points.shape[0] < 3:
            continue
        a, b = rng.uniform(-5, 5, 2), rng.uniform(-5, 5, 2)
        t = segment_cast(shape, a, b)
        poly = shapely.Polygon(shape.points)
        line = shapely.LineString([a, b])
        hits = poly.intersection(line)
        if hits.is_empty:
            assert t == math.inf
            continue
        coords = shapely.get_coordinates(hits)
        d = b - a
        expect = float(((coords - a) @ d / (d @ d)).min())
        assert t == pytest.approx(max(expect, 0.0), abs=1e-9)
        checked += 1
    assert checked > 300


def test_rounded_shapes_against_gjk():
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(1500):
        shape = random_shape(rng)
        a, b = rng.uniform(-5, 5, 2), rng.uniform(-5, 5, 2)
        t = segment_cast(shape, a, b)
        gap = gjk_distance(ConvexShape.segment(a, b), shape).distance
        if gap > 1e-9:
            assert t == math.inf
            continue
        if gap == 0.0 and t == math.inf:
            pytest.fail(f"missed a touching/overlapping segment: {shape}, {a}, {b}")
        if t == math.inf:
            continue
        hits += 1
        p = a + t * (b - a)
        assert gjk_distance(ConvexShape.point(p), shape).distance <= 1e-7
        if t > 1e-6:
            before = a + (t - 1e-6) * (b - a)
            assert gjk_distance(ConvexShape.point(before), shape).distance > 0.0
    assert hits > 150


def test_cast_segments_equals_brute_force_over_obstacles():
    rng = np.random.default_rng(13)
    shapes = [random_shape(rng) for _ in range(60)]
    for s in shapes[:30]:
        s.points += rng.uniform(-20, 20, 2)
    obstacles = ObstacleSet.from_shapes(shapes)
    starts = rng.uniform(-25, 25, (400, 2))
    goals = starts + rng.uniform(-15, 15, (400, 2))
    result = cast_segments(obstacles, starts, goals)
    for q in range(400):
        ts = np.array([segment_cast(s, starts[q], goals[q]) for s in shapes])
        best = ts.min()
        if best == math.inf:
            assert result.index[q] == -1 and result.t[q] == math.inf
            assert np.isnan(result.point[q]).all()
        else:
            assert result.t[q] == best
            assert result.index[q] == int(np.flatnonzero(ts == best)[0])
            assert np.allclose(result.point[q], starts[q] + best * (goals[q] - starts[q]))


def test_empty_obstacle_set_and_bad_input():
    empty = ObstacleSet.from_shapes([])
    r = cast_segments(empty, np.zeros((3, 2)), np.ones((3, 2)))
    assert (r.index == -1).all() and np.isinf(r.t).all()
    obstacles = ObstacleSet.from_shapes([ConvexShape.circle((0, 0), 1)])
    with pytest.raises(ValueError, match="starts"):
        cast_segments(obstacles, np.array([[np.nan, 0.0]]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="same shape"):
        cast_segments(obstacles, np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="goal"):
        segment_cast(ConvexShape.circle((0, 0), 1), (0, 0), (np.inf, 0))
