"""One-lane passages in the route map (fleet/routes.py ``min_radius`` and lanes, issue #22):
the bench's corridor_1.5d (0.75 m wide) is driven through, found as a single-lane passage,
and a corridor is open exactly when a disc of the required radius fits through it (shapely's
exact erosion is the judge, up to the grid's cells)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely import affinity
from shapely.geometry import Point, box

from planning_collision.fleet.controller import FleetSettings
from planning_collision.fleet.routes import RouteMap, descend
from planning_collision.sim.fleet_loop import run_scenario, world_routes
from planning_collision.sim.scenes import make_scene

NEEDED = 0.25 + 0.05  # the bench robots' radius and safety margin (what ORCA needs)
SLACK = 0.05  # the latency slack world_routes and orca_node add where there is room


def _world(family="corridor_1.5d", robots=4, seed=0):
    scene = make_scene(family, robots, seed)
    routes, passages = world_routes(scene.grid(), scene.scenario, FleetSettings(time_step=0.05))
    return scene, routes, passages


def _descent(routes: RouteMap, start, goal) -> np.ndarray:
    """The route's cells from ``start`` to ``goal`` (steepest descent of the cost to go),
    as world points (K, 2)."""
    cost = routes.cost_to_go(goal)
    r, c = routes.snap(np.floor(routes.to_cells([start])).astype(np.int64))[0]
    cells = [(r, c)]
    for _ in range(cost.size):
        nr, nc = descend(cost, r, c)
        if (nr, nc) == (r, c):
            break
        r, c = nr, nc
        cells.append((r, c))
    return routes.to_world(np.array(cells) + 0.5)


def test_the_one_lane_corridor_is_driven_through_not_round_the_blocks():
    """Every robot's route in corridor_1.5d runs through the corridor (inside its walls,
    |y| < 0.375 m, all along it) and is about as long as the straight line. Before, the
    0.05 m latency slack closed it (0.325 m of clearance on its centre line against 0.35 m)
    and the route went 20 m round the 6 m blocks."""
    scene, routes, _ = _world()
    for robot in scene.scenario.robots:
        path = _descent(routes, robot.start[:2], robot.goal)
        assert np.hypot(*(path[-1] - robot.goal)) < routes.resolution
        length = float(np.hypot(*np.diff(path, axis=0).T).sum())
        straight = math.hypot(robot.goal[0] - robot.start[0], robot.goal[1] - robot.start[1])
        assert length < straight + 1.0, (robot.name, length, straight)
        inside = np.abs(path[:, 0]) < 3.0
        assert inside.sum() * routes.resolution >= 5.9  # the whole corridor, cell by cell
        assert np.abs(path[inside, 1]).max() < 0.375


def test_the_lane_keeps_the_safety_margin_off_the_true_walls():
    """Where the route map lets a robot's centre go (its lanes included), a disc of the
    robot's radius plus its safety margin clears the scene's true walls (shapely), so ORCA's
    wall half-planes stay feasible along the route."""
    scene, routes, _ = _world()
    walls = shapely.union_all([shapely.Polygon(p) for p in scene.polygons()])
    assert routes.lanes.any()
    rows, cols = np.nonzero(routes.fits)
    centres = routes.to_world(np.column_stack([rows, cols]) + 0.5)
    distance = shapely.distance(walls, shapely.points(centres))
    assert distance.min() >= NEEDED - 1e-9


def test_the_corridor_is_a_single_lane_passage_taken_one_direction_at_a_time():
    """corridor_1.5d's corridor is found as a passage (fleet/passages.py) whose core runs
    its length (and 0.875 m beyond its ends, where the ridge is still closer than a
    diameter to the blocks' corners), and of two robots coming at it from both ends one
    waits."""
    _, _, passages = _world()
    assert len(passages.passages) == 1
    passage = passages.passages[0]
    assert np.hypot(*passage.centre) < 0.1
    core = passages.routes.to_world(np.argwhere(passage.core) + 0.5)
    assert core[:, 0].min() <= -3.0 and core[:, 0].max() >= 3.0
    assert np.abs(core[:, 1]).max() < 0.375
    positions = np.array([[-4.5, 0.0], [4.5, 0.0]])
    goals = np.array([[5.0, 0.0], [-5.0, 0.0]])
    velocities = np.array([[0.6, 0.0], [-0.6, 0.0]])
    decided = passages.coordinate(positions, goals, velocities, np.ones(2, dtype=bool))
    assert decided.waiting.sum() == 1
    assert (decided.passage == 0).all()
    going = int(np.flatnonzero(~decided.waiting)[0])
    assert np.array_equal(decided.velocities[going], velocities[going])


def test_lanes_change_nothing_where_there_is_room():
    """The doorway (0.8 m door) and the two-lane corridor were open before: with the lanes
    their route maps are the same, cell for cell, as with the slack everywhere."""
    for family in ("doorway", "corridor_3d"):
        scene = make_scene(family, 4, 0)
        blocked = scene.grid().blocked_mask()
        before = RouteMap(blocked, 0.05, radius=NEEDED + SLACK)
        now = RouteMap(blocked, 0.05, radius=NEEDED + SLACK, min_radius=NEEDED)
        assert not now.lanes.any()
        assert np.array_equal(before.fits, now.fits)
        assert np.array_equal(before.weight, now.weight)


@pytest.mark.parametrize("bad", [0.0, -0.1, 0.36, math.nan, math.inf])
def test_min_radius_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="min_radius"):
        RouteMap(np.zeros((4, 4), bool), 0.05, radius=0.35, min_radius=bad)


RES = 0.05
HALF = 2.5  # the test maps: 5 m x 5 m, centred on the origin


def _corridor(width, angle, shift):
    """Two blocks 2 m long and 5 m deep leaving a corridor ``width`` wide through the
    middle of the map, turned by ``angle`` degrees and moved by ``shift``; and the two points
    0.8 m beyond its ends."""
    north = box(-1.0, width / 2.0, 1.0, width / 2.0 + 5.0)
    south = box(-1.0, -width / 2.0 - 5.0, 1.0, -width / 2.0)
    walls = [affinity.translate(affinity.rotate(b, angle, origin=(0, 0)), *shift)
             for b in (north, south)]
    a = math.radians(angle)
    ends = [np.asarray(shift) + s * 1.8 * np.array([math.cos(a), math.sin(a)]) for s in (-1, 1)]
    return walls, ends


def _grid_open(walls, ends, needed) -> bool:
    """Whether the route map (a cell blocked when its centre is in a wall) has a route."""
    centres = -HALF + (np.arange(int(2 * HALF / RES)) + 0.5) * RES
    x, y = np.meshgrid(centres, centres)
    blocked = np.zeros(x.shape, dtype=bool)
    for wall in walls:
        blocked |= shapely.contains_xy(wall, x, y)
    routes = RouteMap(blocked, RES, (-HALF, -HALF, 0.0), radius=needed + SLACK,
                      min_radius=needed)
    return math.isfinite(routes.route_length(ends[0], ends[1]))


def _exact_open(walls, ends, needed) -> bool:
    """Whether a disc of radius ``needed`` gets from one end to the other: both ends in one
    piece of the free space eroded by it."""
    free = box(-HALF, -HALF, HALF, HALF).difference(shapely.union_all(walls)).buffer(-needed)
    return any(part.contains(Point(*ends[0])) and part.contains(Point(*ends[1]))
               for part in getattr(free, "geoms", [free]))


@pytest.mark.parametrize("angle", [0.0, 10.0, 22.5, 45.0, 60.0, 77.0, 90.0])
def test_a_corridor_is_open_exactly_when_the_disc_fits_up_to_a_cell(angle):
    """A corridor of width w at any angle and offset is open in the route map only where a
    disc of the required radius (radius + safety margin) truly passes (never a route the
    robot does not fit through), and is open whenever w >= 2 * required + 2 cells (the
    clearance is measured at most a cell short). Before the lanes, the latency slack
    closed every corridor narrower than 2 * (required + slack), 0.7 m, whatever the cells."""
    rng = np.random.default_rng(int(angle * 10))
    for width in np.arange(2 * NEEDED - 0.1375, 2 * NEEDED + 0.2, 0.025):  # never 2 * NEEDED
        walls, ends = _corridor(width, angle, rng.uniform(-RES, RES, 2))
        grid, exact = _grid_open(walls, ends, NEEDED), _exact_open(walls, ends, NEEDED)
        assert exact == (width > 2 * NEEDED)
        if not exact:
            assert not grid, width
        if width >= 2 * NEEDED + 2 * RES:
            assert grid, width


def test_two_robots_swap_through_the_one_lane_corridor_in_the_closed_loop():
    """corridor_1.5d with 2 robots in the pure closed loop (sim/fleet_loop.py): both arrive
    without a contact, each crossing x = 0 inside the corridor (before, both drove round the
    6 m blocks, |y| > 6 m there), one after the other (never both in it at once)."""
    scene = make_scene("corridor_1.5d", 2, 0)
    tracks = []

    def record(controller, grid, obstacles):
        step = controller.step

        def recorded(now, *args, **kwargs):
            out = step(now, *args, **kwargs)
            tracks.append(out.positions[:2].copy())
            return out

        controller.step = recorded

    result = run_scenario(scene.scenario, grid=scene.grid(), control_period=scene.time_step,
                          controller_hook=record)
    assert result.all_arrived and result.contacts == []
    assert result.min_obstacle_clearance >= 0.0
    track = np.array(tracks)  # (steps, 2 robots, 2)
    for i in range(2):
        crossing = np.flatnonzero(np.diff(np.sign(track[:, i, 0])) != 0)
        assert crossing.size and np.abs(track[crossing, i, 1]).max() < 0.375
    in_corridor = (np.abs(track[:, :, 0]) < 3.0) & (np.abs(track[:, :, 1]) < 0.375)
    assert in_corridor.any(axis=0).all() and not in_corridor.all(axis=1).any()
