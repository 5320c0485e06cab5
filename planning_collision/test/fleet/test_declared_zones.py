"""Passages declared as polygons (fleet/zones.py, fleet/passages.py's declared_passage;
orca_node's passage_zones), issue #22 item 3: like Open-RMF's mutex groups, used besides the
passages found on the map."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from narrow_maps import RES, rooms
from shapely.geometry import Point, Polygon

from planning_collision.fleet.passages import PassageMap, coordination_world
from planning_collision.fleet.routes import RouteMap
from planning_collision.fleet.zones import cells_inside, parse_zone, parse_zones

# Two rooms joined by a 2 m door (room for two robots side by side: no passage on the map).
WIDE = rooms(door=2.0)
DOOR_ZONE = "3.6 1.2, 4.4 1.2, 4.4 2.8, 3.6 2.8"


def test_a_zone_is_read_from_its_string():
    polygon = parse_zone(" 3.6 1.2, 4.4 1.2,4.4 2.8 , 3.6 2.8 ")
    assert polygon.tolist() == [[3.6, 1.2], [4.4, 1.2], [4.4, 2.8], [3.6, 2.8]]
    assert [p.shape for p in parse_zones([DOOR_ZONE, "0 0, 1 0, 0 1"])] == [(4, 2), (3, 2)]


@pytest.mark.parametrize("text, message", [
    ("0 0, 1 0", "at least three distinct vertices"),
    ("0 0, 1 0, 1 0", "at least three distinct vertices"),
    ("0 0, 1 1, 2 2", "no area"),
    ("0 0, 1, 1 1", "vertex 2 must be two numbers"),
    ("0 0, 1 a, 1 1", "vertex 2 must be two numbers"),
    ("0 0, 1 0, nan 1", "vertex 3 is not finite"),
    ("", "vertex 1 must be two numbers"),
])
def test_a_bad_zone_is_refused_by_name(text, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_zones([DOOR_ZONE, text])
    assert str(error.value).startswith("passage_zones[1]: ")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_cells_inside_are_shapelys(seed):
    """Random star-shaped polygons (concave too) over a small grid: the cells whose centres
    shapely finds inside."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 9))
    angles = np.sort(rng.uniform(0, 2 * math.pi, k))
    radii = rng.uniform(0.3, 1.5, k)
    polygon = np.column_stack([1.6 + radii * np.cos(angles), 1.2 + radii * np.sin(angles)])
    shape = Polygon(polygon)
    routes = RouteMap(np.zeros((48, 64), dtype=bool), RES, radius=0.1)
    inside = cells_inside(polygon, (48, 64), routes.to_world)
    rows, cols = np.mgrid[0:48, 0:64]
    centres = routes.to_world(np.column_stack([rows.ravel() + 0.5, cols.ravel() + 0.5]))
    expected = np.array([shape.contains(Point(c)) for c in centres]).reshape(48, 64)
    edge = np.array([shape.exterior.distance(Point(c)) < 1e-9 for c in centres]).reshape(48, 64)
    assert np.array_equal(inside[~edge], expected[~edge])


def test_a_declared_door_is_a_passage_the_map_does_not_find():
    """The 2 m door is wide enough for two robots: the map finds no passage there. Declared,
    it is one, with a side in each room, and its core is the free cells inside the polygon."""
    routes = RouteMap(WIDE, RES, radius=0.3)
    assert PassageMap(routes).passages == []
    declared = PassageMap(routes, declared=parse_zones([DOOR_ZONE]))
    assert len(declared.passages) == 1
    door = declared.passages[0]
    assert int(door.sides.max()) + 1 == 2
    centres = routes.to_world(np.argwhere(door.core) + 0.5)
    assert (centres[:, 0] > 3.6).all() and (centres[:, 0] < 4.4).all()
    assert door.centre == pytest.approx((4.0, 2.0), abs=0.05)


def test_a_zone_over_walls_only_is_no_passage():
    routes = RouteMap(WIDE, RES, radius=0.3)
    walls = parse_zone("3.92 0.2, 4.08 0.2, 4.08 0.6, 3.92 0.6")  # inside the wall
    assert PassageMap(routes, declared=[walls]).passages == []


@pytest.mark.parametrize("mode", ["goal", "cmd_vel"])
def test_the_declared_door_serves_one_direction_at_a_time(mode):
    """Two robots meet at the declared door from opposite rooms: the nearer goes, the other
    waits, by their goals' routes (goal mode) or by their preferred velocities alone (cmd_vel
    mode, no goals); without the declaration both go."""
    positions = np.array([[3.1, 2.0], [5.2, 2.0]])
    velocities = np.array([[0.5, 0.0], [-0.5, 0.0]])
    goals = np.array([[7.0, 2.0], [1.0, 2.0]]) if mode == "goal" else np.full((2, 2), np.nan)
    _, declared = coordination_world(WIDE, RES, (0.0, 0.0, 0.0), 0.3,
                                     declared=parse_zones([DOOR_ZONE]))
    told = declared.coordinate(positions, goals, velocities, np.ones(2, dtype=bool))
    assert told.passage.tolist() == [0, 0]
    assert told.waiting.tolist() == [False, True]
    _, found = coordination_world(WIDE, RES, (0.0, 0.0, 0.0), 0.3)
    free = found.coordinate(positions, goals, velocities, np.ones(2, dtype=bool))
    assert not free.waiting.any() and np.array_equal(free.velocities, velocities)

