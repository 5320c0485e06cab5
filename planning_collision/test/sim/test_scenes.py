"""The narrow-space scene generator (sim/scenes.py) and the wait measure (sim/progress.py),
checked against shapely's geometry and against properties (no simulation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon

from planning_collision.sim import scenes
from planning_collision.sim.progress import ProgressWatch
from planning_collision.sim.simulation import layout_problems

SIZES = {"circle": (2, 5, 16, 30)}


def cases():
    for family in scenes.FAMILIES:
        for n in SIZES.get(family, (2, 3, 8, 16)):
            yield family, n


@pytest.mark.parametrize(("family", "n"), list(cases()))
def test_starts_and_goals_are_free_and_routes_are_passable(family, n):
    for seed in (0, 7):
        scene = scenes.make_scene(family, n, seed)
        assert scene.size == n and len(scene.routes) == n
        assert layout_problems(scene.scenario) == []
        assert layout_problems(scene.scenario, scene.grid()) == []
        walls = shapely.unary_union([Polygon(p) for p in scene.polygons()])
        for robot, route in zip(scene.scenario.robots, scene.routes, strict=True):
            assert route[-1] == robot.goal
            path = LineString([robot.start[:2], *route])
            # a disc of the robot's radius sweeping the route touches no wall
            assert path.buffer(robot.radius).intersection(walls).area < 1e-12


@pytest.mark.parametrize("family", list(scenes.FAMILIES))
def test_walls_are_counter_clockwise_and_apart(family):
    polygons = scenes.make_scene(family, 4, 0).polygons()
    for p in polygons:
        assert Polygon(p).exterior.is_ccw
    for i, a in enumerate(polygons):
        for b in polygons[i + 1:]:
            assert Polygon(a).distance(Polygon(b)) > 0.0  # RVO2 needs them apart


def test_passages_have_the_asked_widths():
    for width in (0.75, 1.5):
        north, south = (Polygon(p) for p in scenes.corridor(4, width).polygons())
        assert north.distance(south) == pytest.approx(width)
        blocks = [Polygon(p) for p in scenes.intersection(4, width).polygons()]
        assert blocks[0].distance(blocks[1]) == pytest.approx(width)
    north, south = (Polygon(p) for p in scenes.doorway(4, door=0.8).polygons())
    assert north.distance(south) == pytest.approx(0.8)
    assert scenes.make_scene("corridor_1.5d", 2).polygons()[0][:, 1].min() == pytest.approx(0.375)


def test_swapping_sides_means_crossing_the_passage():
    for family in ("corridor_1.5d", "corridor_3d", "doorway"):
        scene = scenes.make_scene(family, 16, 3)
        starts = np.array([r.start[:2] for r in scene.scenario.robots])
        goals = np.array([r.goal for r in scene.scenario.robots])
        assert (np.sign(starts[:, 0]) == -np.sign(goals[:, 0])).all()
        assert (np.sign(starts[:, 0]) < 0).sum() == 8
        # goals are the other side's start places: each within the jitter of one
        other = np.hypot(*(goals[:, None, :] - starts[None, :, :]).transpose(2, 0, 1))
        assert (other.min(axis=1) <= 0.05 * math.sqrt(2) + 1e-12).all()
        walls = shapely.unary_union([Polygon(p) for p in scene.polygons()])
        blocked = [LineString([s, g]).buffer(0.25).intersects(walls)
                   for s, g in zip(starts, goals, strict=True)]
        assert any(blocked)  # the way is not the straight line for every robot


def test_intersection_robots_cross_to_the_opposite_arm():
    scene = scenes.make_scene("intersection", 16, 2)
    starts = np.array([r.start[:2] for r in scene.scenario.robots])
    goals = np.array([r.goal for r in scene.scenario.robots])
    arms = {tuple(np.round(np.sign(s) * (np.abs(s) > 0.5)).astype(int)) for s in starts}
    assert arms == {(1, 0), (0, 1), (-1, 0), (0, -1)}
    assert np.hypot(*(goals + starts).T).max() <= 0.05 * math.sqrt(2) + 1e-12


def test_circle_goals_are_antipodal_and_the_circle_is_roomy():
    scene = scenes.antipodal_circle(30, seed=1)
    starts = np.array([r.start[:2] for r in scene.scenario.robots])
    goals = np.array([r.goal for r in scene.scenario.robots])
    radius = np.hypot(*goals.T)
    assert np.allclose(radius, radius[0]) and radius[0] >= 3.0
    assert np.hypot(*(goals + starts).T).max() <= 0.05 * math.sqrt(2) + 1e-12
    assert scene.time_step < scenes.TIME_STEP and scene.scenario.obstacles == ()


def test_seeds_repeat_and_differ_and_half_are_differential_drives():
    a, b = scenes.make_scene("doorway", 8, 5), scenes.make_scene("doorway", 8, 5)
    assert a == b
    c = scenes.make_scene("doorway", 8, 6)
    assert a.scenario.robots != c.scenario.robots
    for scene in (a, c):
        drives = [r.drive for r in scene.scenario.robots]
        assert drives.count("unicycle") == 4
    everyone = scenes.corridor(6, 1.5, unicycle_fraction=1.0)
    assert {r.drive for r in everyone.scenario.robots} == {"unicycle"}


def test_grid_matches_the_walls():
    scene = scenes.make_scene("intersection", 4, 0)
    grid = scene.grid(resolution=0.1)
    walls = shapely.unary_union([Polygon(p) for p in scene.polygons()])
    blocked = grid.blocked_mask()
    ox, oy, _ = grid.origin
    rng = np.random.default_rng(0)
    for j, i in zip(rng.integers(0, grid.height, 400), rng.integers(0, grid.width, 400),
                    strict=True):
        centre = Point(ox + (i + 0.5) * 0.1, oy + (j + 0.5) * 0.1)
        if walls.boundary.distance(centre) > 1e-9:
            assert bool(blocked[j, i]) == walls.contains(centre)


def test_segments_are_the_wall_edges():
    scene = scenes.make_scene("corridor_3d", 2)
    segments = scene.segments()
    assert segments.shape == (8, 2, 2)
    perimeter = sum(Polygon(p).length for p in scene.polygons())
    assert np.hypot(*(segments[:, 1] - segments[:, 0]).T).sum() == pytest.approx(perimeter)
    assert scenes.make_scene("circle", 3).segments().shape == (0, 2, 2)


@pytest.mark.parametrize(("call", "field"), [
    (lambda: scenes.make_scene("maze", 4), "family"),
    (lambda: scenes.make_scene("doorway", 0), "robots"),
    (lambda: scenes.corridor(2.5, 1.0), "robots"),
    (lambda: scenes.corridor(4, -1.0), "width"),
    (lambda: scenes.doorway(4, door=math.nan), "door"),
    (lambda: scenes.intersection(16, 1.5, arm=2.0), "arm"),
    (lambda: scenes.corridor(4, 1.0, unicycle_fraction=1.5), "unicycle_fraction"),
    (lambda: scenes.antipodal_circle(4, circle_radius=0.0), "circle_radius"),
    (lambda: scenes.make_scene("circle", 4).grid(resolution=0.0), "resolution"),
])
def test_bad_arguments_are_refused_by_name(call, field):
    with pytest.raises(ValueError, match=field):
        call()


# ---------------------------------------------------------------- ProgressWatch


def test_a_standing_robot_waits_and_a_driving_one_does_not():
    watch = ProgressWatch(np.zeros((2, 2)))
    dt = 0.05
    for k in range(1, 201):  # 10 s: robot 0 stands, robot 1 drives at 0.2 m/s
        t = k * dt
        watch.update(t, np.array([[0.0, 0.0], [0.2 * t, 0.0]]))
    assert watch.longest[0] == pytest.approx(10.0)
    assert watch.longest[1] <= 0.1 / 0.2 + dt + 1e-9
    assert watch.waiting()[0] == pytest.approx(10.0)


def test_shuffling_in_place_is_waiting_and_the_longest_wait_is_kept():
    watch = ProgressWatch(np.zeros((1, 2)))
    t = 0.0
    for k in range(100):  # 5 s of back and forth within 4 cm
        t += 0.05
        watch.update(t, np.array([[0.04 * (k % 2), 0.0]]))
    for _ in range(40):  # then 2 s of driving at 0.5 m/s
        t += 0.05
        watch.update(t, np.array([[0.04 + 0.5 * (t - 5.0), 0.0]]))
    assert watch.longest[0] == pytest.approx(5.0 + 0.05 * 2, abs=0.11)
    assert watch.waiting()[0] < 0.25


def test_arrived_robots_do_not_wait():
    watch = ProgressWatch(np.zeros((2, 2)))
    for k in range(1, 101):
        watch.update(k * 0.1, np.zeros((2, 2)), done=np.array([False, k >= 20]))
    assert watch.longest[0] == pytest.approx(10.0)
    assert watch.longest[1] == pytest.approx(1.9)
    assert watch.waiting()[1] == 0.0


def test_time_must_not_go_back():
    watch = ProgressWatch(np.zeros((1, 2)), now=1.0)
    with pytest.raises(ValueError, match="now"):
        watch.update(0.5, np.zeros((1, 2)))
    with pytest.raises(ValueError, match="travel"):
        ProgressWatch(np.zeros((1, 2)), travel=0.0)
