"""The sensor layer in the collision world's queries (collision_world.World with
LAYER_SENSORS): line of sight, footprints and paths see what the sensors see now, beside the
map and the obstacles, and only when asked."""

from __future__ import annotations

import numpy as np
import pytest

from planning_collision import grid
from planning_collision.collision_world import (
    GRID_BLOCKER,
    LAYER_GRID,
    LAYER_OBSTACLES,
    LAYER_SENSORS,
    LAYERS_ALL,
    SENSOR_BLOCKER,
    Footprint,
    ObstacleSnapshot,
    QueryError,
    World,
)
from planning_collision.geometry import ConvexShape, ObstacleSet
from planning_collision.grid.sensor_layer import SensorLayer, scan_rays


def world_with_a_person(sensors=True):
    """A 10 m x 10 m map at 0.1 m with a wall of cells at x in [8.0, 8.1); a post (obstacle)
    at (6, 0.5); a scan from (0, 0) that sees a person at x = 4 (cells around (4.05, 0.05))."""
    data = np.zeros((100, 100), np.int8)
    data[:, 80] = 100
    gmap = grid.GridMap(data, 0.1, (0.0, -5.0, 0.0))
    post = ObstacleSnapshot(ObstacleSet.from_shapes([ConvexShape.circle((6.0, 0.5), 0.2)]),
                            ("post",), ())
    layer = SensorLayer(10.0, 10.0, 0.1, (0.0, -5.0), decay=1.0)
    angles = np.linspace(-0.05, 0.05, 11)
    ranges = np.full(angles.size, 4.0)
    origin, ends, hit = scan_rays((0.0, 0.0, 0.0), angles[0], angles[1] - angles[0], ranges,
                                  0.1, 8.0)
    layer.add_rays(origin, ends, hit, 1.0)
    return World(gmap, post, sensors=layer.snapshot(1.0) if sensors else None)


def test_line_of_sight_sees_the_sensors_only_when_asked():
    w = world_with_a_person()
    starts = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 3.0], [1.0, 0.5]])
    goals = np.array([[7.0, 0.0], [9.0, 0.0], [7.0, 3.0], [9.0, 0.5]])
    plain = w.view(LAYERS_ALL, LAYERS_ALL, "").segments(starts, goals, "bresenham", "s")
    assert plain.clear.tolist() == [True, False, True, False]
    seen = w.view(LAYERS_ALL | LAYER_SENSORS, 0, "").segments(starts, goals, "bresenham", "s")
    assert seen.clear.tolist() == [False, False, True, False]
    # the person (the sensors' cell) comes before the wall; the post before nothing else
    assert seen.blocker[0] == SENSOR_BLOCKER and seen.blocker[1] == SENSOR_BLOCKER
    # the centre of the first marked cell: the beams end at x = 4 cos(a), in [3.9, 4.1)
    assert 3.9 < seen.point[0, 0] < 4.1 and seen.point[0, 1] == pytest.approx(0.05)
    assert seen.blocker[3] == 0  # the post at (6, 0.5): no sensor cell on that line
    only = w.view(LAYER_SENSORS, 0, "").segments(starts, goals, "bresenham", "s")
    assert only.clear.tolist() == [False, False, True, True]
    assert plain.blocker[1] == GRID_BLOCKER


def test_an_obstacle_before_the_sensor_cell_blocks_first():
    w = world_with_a_person()
    layer = SensorLayer(10.0, 10.0, 0.1, (0.0, -5.0), decay=1.0)
    layer.add_points([[6.55, 0.55]], 1.0)  # behind the post seen from x = 1, before it from 9
    w = World(w.grid, w.obstacles, sensors=layer.snapshot(1.0))
    r = w.view(LAYER_OBSTACLES | LAYER_SENSORS, 0, "").segments(
        np.array([[1.0, 0.55], [9.0, 0.55]]), np.array([[9.0, 0.55], [1.0, 0.55]]), "bresenham",
        "s")
    assert r.blocker.tolist() == [0, SENSOR_BLOCKER]


def test_footprints_and_paths_collide_with_what_the_sensors_see():
    w = world_with_a_person()
    disc = Footprint.of(ConvexShape.circle((0.0, 0.0), 0.3))
    poses = np.array([[3.8, 0.0, 0.0], [3.0, 0.0, 0.0], [3.8, 2.0, 0.0]])
    plain = w.view(LAYERS_ALL, 0, "").footprints(disc, poses, "poses")
    seen = w.view(LAYERS_ALL | LAYER_SENSORS, 0, "").footprints(disc, poses, "poses")
    assert plain.grid_hit.tolist() == [False, False, False]
    assert seen.grid_hit.tolist() == [True, False, False]
    path = np.column_stack([np.linspace(1.0, 5.5, 10), np.zeros(10), np.zeros(10)])
    result = w.view(LAYERS_ALL | LAYER_SENSORS, 0, "").path(disc, path, "bresenham", -1.0,
                                                            True, "path.poses")
    first = int(np.flatnonzero(result.invalid)[0])
    # the first pose whose disc (0.3 m) reaches the marked cells at x >= 3.9
    assert path[first - 1, 0] + 0.3 <= 3.9 < path[first, 0] + 0.3
    assert not w.view(LAYERS_ALL, 0, "").path(disc, path, "bresenham", -1.0, True,
                                              "p").invalid.any()


def test_the_sensor_layer_must_exist_and_the_bits_be_known():
    w = world_with_a_person(sensors=False)
    with pytest.raises(QueryError, match="LAYER_SENSORS: no scan_topics") as info:
        w.view(LAYER_GRID | LAYER_SENSORS, 0, "", "no scan_topics")
    assert info.value.reason == "BAD_REQUEST"
    with pytest.raises(QueryError, match="layers is 8"):
        w.view(8, 0, "")
    assert w.view(LAYER_GRID, 0, "").sensors is None
