"""A robot against a wall neither yields nor makes room into it (fleet/progress.py, issue
#22). Intersection of 16, seed 43, with the two-lane yield rule: robot 3, a differential
drive pushed into the east arm, stood against its north wall; every 8 s it yielded away from
robot 2, south of it, that is straight into the wall, and ORCA (the wall's half-plane) held
it where it stood, from 27.9 to 62.4 s. Doorway of 16, seed 88: robot 15, held at the east
wall beside the door, was asked to make room by robot 13 coming down that wall behind it,
stepped to the side it stood on, into the wall, and stood on robot 13's way instead."""

from __future__ import annotations

import math

import numpy as np
from narrow_maps import RES, rooms, stall

from planning_collision.fleet.passages import PassageMap
from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.fleet.routes import RouteMap

RADIUS, MIN_RADIUS = 0.35, 0.30  # the robot with every margin, with its safety margin


def corridor(yaw: float = 0.0) -> RouteMap:
    """A corridor 1.5 m wide (y from -0.75 to 0.75 in its own frame) and 8 m long, its grid
    turned by ``yaw`` about the world origin (its cell (0, 0) at (-4, -1) turned)."""
    blocked = np.zeros((int(round(2.0 / RES)), int(round(8.0 / RES))), dtype=bool)
    blocked[:5, :] = blocked[-5:, :] = True  # walls 0.25 m thick on both sides
    c, s = math.cos(yaw), math.sin(yaw)
    origin = (c * -4.0 - s * -1.0, s * -4.0 + c * -1.0, yaw)
    return RouteMap(blocked, RES, origin, radius=RADIUS, min_radius=MIN_RADIUS)


def test_the_wall_normal_points_away_from_a_wall_it_touches_and_is_zero_elsewhere():
    routes = corridor()
    normal = routes.wall_normal(np.array([[0.0, 0.45], [0.0, -0.45], [1.0, 0.0],
                                          [0.0, 0.2], [9.0, 0.45]]))
    assert np.allclose(normal[0], [0.0, -1.0], atol=1e-6)  # 0.30 m from the north wall
    assert np.allclose(normal[1], [0.0, 1.0], atol=1e-6)
    assert not normal[2:].any()  # the middle, 0.55 m off both walls, and off the map


def test_the_wall_normal_turns_with_the_map():
    """The same corridor turned by 90 degrees: its north wall lies west."""
    routes = corridor(math.pi / 2)
    normal = routes.wall_normal(np.array([[-0.45, 0.0], [0.45, 0.0]]))
    assert np.allclose(normal, [[1.0, 0.0], [-1.0, 0.0]], atol=1e-6)


def yielded(wall, positions, pref, until: float = 3.0):
    monitor = ProgressMonitor(len(pref), stall_time=2.0, yield_time=1.0, near=1.5,
                              back_off_speed=0.3)
    return stall(monitor, positions, pref, until, wall=wall)


def test_it_yields_along_the_wall_not_into_it():
    """Robot 1 goes west against the north wall; robot 0 (higher priority) 0.6 m south of
    it goes north. Straight away from robot 0 is into the wall: it backs off along the
    wall, against its own way (east), instead; without the wall it backs north."""
    positions = [[0.0, -0.15], [0.0, 0.45]]
    pref = [[0.0, 0.5], [-0.5, 0.0]]
    told, yielding = yielded(corridor().wall_normal, positions, pref)
    assert yielding.tolist() == [False, True]
    assert np.allclose(told[1], [0.3, 0.0], atol=1e-6)
    told, _ = yielded(None, positions, pref)
    assert np.allclose(told[1], [0.0, 0.3])


def test_a_yield_partly_into_the_wall_is_left_to_orca():
    """Backing away diagonally into the wall (more than 0.3 of it along the wall): the
    direction is kept, and ORCA's wall half-plane slides the robot along the wall."""
    positions = [[-0.5, -0.15], [0.0, 0.45]]
    pref = [[0.5, 0.5], [-0.5, 0.0]]
    told, yielding = yielded(corridor().wall_normal, positions, pref)
    assert yielding.tolist() == [False, True]
    gap = np.subtract(positions[1], positions[0])
    assert np.allclose(told[1], 0.3 * gap / np.hypot(*gap))


def test_a_robot_in_open_space_yields_as_before():
    positions = [[0.0, -0.6], [0.0, 0.0]]  # robot 1 in the middle, 0.75 m off both walls
    pref = [[0.0, 0.5], [-0.5, 0.0]]
    told, _ = yielded(corridor().wall_normal, positions, pref)
    assert np.allclose(told[1], [0.0, 0.3])


def test_a_parked_robot_against_a_wall_makes_room_on_the_other_side():
    """The door's east wall (x = 8.1 in :func:`narrow_maps.rooms` of 16 x 6 m): robot 0,
    stalled going south along it, and robot 1 parked 0.6 m ahead, 0.02 m nearer the wall,
    so the side it stands on is the wall's. It steps to the room's side (+x) and onwards;
    without the wall it steps into the wall (-x), where it stood on robot 0's way."""
    routes = RouteMap(rooms(door=0.8, size=(16.0, 6.0)), RES, radius=RADIUS,
                      min_radius=MIN_RADIUS)
    positions = np.array([[8.42, 4.5], [8.40, 3.9]])
    pref = np.array([[0.0, -0.5], [0.0, 0.0]])
    wants = np.array([True, False])
    step = {}
    for wall in (routes.wall_normal, None):
        monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
        told, yielding = stall(monitor, positions, pref, 1.5, wants, parked=~wants, wall=wall)
        assert yielding.tolist() == [False, True]
        step[wall is None] = told[1] / 0.3
    assert np.allclose(step[False], np.array([1.0, -0.5]) / math.hypot(1.0, 0.5))
    assert np.allclose(step[True], np.array([-1.0, -0.5]) / math.hypot(1.0, 0.5))


def test_around_a_passage_is_its_zone_and_its_holding_places_reach():
    """Where the passage rule orders the robots, and the robots yield as before
    (``plain``): within 1.5 m of the door's core or 4.5 m of it through the rooms."""
    passages = PassageMap(RouteMap(rooms(door=0.8, size=(16.0, 6.0)), RES, radius=0.3))
    inside = passages.around(np.array([[8.0, 3.0], [7.0, 3.0], [4.0, 3.0], [12.0, 3.0],
                                       [2.0, 3.0], [14.5, 3.0], [8.6, 1.0], [-1.0, 3.0]]))
    assert inside.tolist() == [True] * 4 + [False] * 2 + [True, False]
