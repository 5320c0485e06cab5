"""The differential drive's forward speed guard (orca/heading_guard.py, issue #22 item 1)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString, Point, Polygon

from planning_collision import orca
from planning_collision.orca.heading_guard import edge_distances, guarded_forward_speeds

WALL = np.array([[-5.0, -1.0], [5.0, -1.0], [5.0, -0.8], [-5.0, -0.8]])  # top face y = -0.8


@pytest.fixture(scope="module")
def wall():
    return orca.build_obstacles([WALL])


def test_distances_match_shapely(wall):
    rng = np.random.default_rng(1)
    points = rng.uniform(-6, 6, (50, 2))
    distance, unit = edge_distances(points, wall)
    ring = Polygon(WALL).exterior
    for p, d in zip(points, distance.min(axis=1), strict=True):
        assert d == pytest.approx(ring.distance(Point(p)), abs=1e-9)
    assert np.allclose(np.hypot(unit[..., 0], unit[..., 1])[distance > 0], 1.0)


def test_facing_the_wall_within_clearance_stops_forward_motion(wall):
    # 0.28 m from the face, clearance 0.30: heading down-right (towards the wall) -> 0.
    v = guarded_forward_speeds([[0.0, -0.52]], [-0.3], [0.5], wall, 0.30, 1.0)
    assert v[0] == 0.0


def test_along_or_away_from_the_wall_is_not_limited(wall):
    v = guarded_forward_speeds([[0.0, -0.52], [0.0, -0.52]], [0.0, 0.4], [0.5, 0.5], wall,
                               0.30, 1.0)
    assert np.array_equal(v, [0.5, 0.5])


def test_approach_is_rvo2s_rule(wall):
    # 0.7 m from the face, clearance 0.3, horizon 1 s: approach at most 0.4 m/s.
    heading = -1.2
    v = guarded_forward_speeds([[0.0, -0.1]], [heading], [0.6], wall, 0.30, 1.0)
    assert v[0] * math.sin(-heading) == pytest.approx(0.4)


def test_no_obstacles_changes_nothing():
    assert np.array_equal(guarded_forward_speeds([[0, 0]], [0.0], [0.3], None, 0.3, 1.0), [0.3])


@settings(max_examples=60, deadline=None)
@given(st.floats(-0.5, 2.0), st.floats(-math.pi, math.pi), st.floats(0.0, 0.6))
def test_a_guarded_step_never_ends_closer_than_it_began_within_clearance(y, heading, speed):
    """Driving straight for one step at the guarded speed: if it ends within the clearance
    of the wall, it did not get closer (shapely measures)."""
    wall = orca.build_obstacles([WALL])
    dt, clearance = 0.05, 0.30
    v = guarded_forward_speeds([[0.0, y]], [heading], [speed], wall, clearance, 1.0)[0]
    assert 0.0 <= v <= speed
    start = Point(0.0, y)
    end = Point(v * dt * math.cos(heading), y + v * dt * math.sin(heading))
    body = Polygon(WALL)
    before, after = body.distance(start), body.distance(end)
    if after < clearance:
        assert after >= before - 1e-9
    assert not LineString([start, end]).intersects(body) or before == 0.0
