"""Routes around the map (fleet/routes.py) and passages one direction at a time
(fleet/passages.py), issue #22 items 2 and 3."""

from __future__ import annotations

import math

import numpy as np
import pytest
from narrow_maps import RES, rooms
from scipy.ndimage import distance_transform_edt

from planning_collision.fleet.passages import PassageMap
from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.fleet.routes import RouteMap, edt


def test_edt_is_scipys_exact_distance_transform():
    rng = np.random.default_rng(3)
    for _ in range(30):
        mask = rng.random((rng.integers(1, 50), rng.integers(1, 50))) < 0.04
        if mask.any():
            assert np.allclose(edt(mask), distance_transform_edt(~mask))
    assert np.isinf(edt(np.zeros((3, 4), bool))).all()


def test_in_open_space_the_waypoint_is_the_goal_itself():
    routes = RouteMap(rooms(), RES, radius=0.3)
    way = routes.waypoints([[1.0, 1.0]], [[3.0, 3.0]])
    assert way.routed[0] and np.array_equal(way.points[0], [3.0, 3.0])


def test_the_route_goes_through_the_door_and_keeps_the_disc_clear_of_the_walls():
    """Following the waypoints step by step from one room to the other: the robot's disc
    never meets a wall (scipy's distance transform is the judge) and it arrives."""
    blocked = rooms()
    routes = RouteMap(blocked, RES, radius=0.3)
    truth = distance_transform_edt(~blocked) * RES
    here, goal = np.array([1.0, 3.2]), np.array([7.0, 0.8])
    for _ in range(2000):
        way = routes.waypoints([here], [goal])
        assert way.routed[0]
        ahead = way.points[0] - here
        step = min(0.02, math.hypot(*ahead))
        here = here + ahead / max(math.hypot(*ahead), 1e-12) * step
        r, c = int(here[1] / RES), int(here[0] / RES)
        assert truth[r, c] >= 0.3 - RES
        if math.hypot(*(goal - here)) < 0.05:
            break
    assert math.hypot(*(goal - here)) < 0.05


def test_an_unreachable_goal_gives_no_route():
    routes = RouteMap(rooms(door=0.0), RES, radius=0.3)
    way = routes.waypoints([[1.0, 2.0]], [[7.0, 2.0]])
    assert not way.routed[0] and np.array_equal(way.points[0], [1.0, 2.0])


def test_bad_route_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="radius"):
        RouteMap(rooms(), RES, radius=-1.0)
    with pytest.raises(ValueError, match="resolution"):
        RouteMap(rooms(), float("nan"))


def test_a_doorway_is_a_passage_with_two_sides_and_a_room_is_none():
    doorway = PassageMap(RouteMap(rooms(door=0.8), RES, radius=0.3))
    assert len(doorway.passages) == 1
    passage = doorway.passages[0]
    assert passage.sides.max() + 1 == 2
    assert passage.centre == pytest.approx((4.0, 2.0), abs=RES)
    # A door wide enough for two robots side by side is no passage, and rooms' corners
    # (narrow ridges with one side) are not either.
    assert PassageMap(RouteMap(rooms(door=1.6), RES, radius=0.3)).passages == []
    assert PassageMap(RouteMap(rooms(door=0.0), RES, radius=0.3)).passages == []


def test_one_direction_at_a_time_and_the_same_decision_in_any_order():
    # the rule alone: waiters with a goal go to holding places (test_passage_holding.py)
    passages = PassageMap(RouteMap(rooms(door=0.8), RES, radius=0.3), holding=False)
    positions = np.array([[3.0, 2.0], [5.3, 2.0], [2.0, 2.6], [5.9, 1.7]])
    goals = np.array([[6.0, 2.0], [2.0, 2.0], [7.0, 3.0], [1.0, 1.0]])
    pref = np.array([[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0], [-0.5, 0.0]])
    told = passages.coordinate(positions, goals, pref, np.ones(4, bool))
    # robot 0 is nearest the door (0.9 m): its direction goes; 1 and 3 wait.
    assert told.waiting.tolist() == [False, True, False, True]
    assert np.array_equal(told.velocities[[0, 2]], pref[[0, 2]])
    # 1 is within hold (1 m) of the core: it backs away from the door (+x); 3 stands.
    assert told.velocities[1, 0] > 0.0 and np.array_equal(told.velocities[3], [0.0, 0.0])
    for order in ([3, 2, 1, 0], [1, 3, 0, 2]):
        passages.forget()  # each a fresh passage (no batch served yet)
        again = passages.coordinate(positions[order], goals[order], pref[order],
                                    np.ones(4, bool))
        assert again.waiting.tolist() == told.waiting[order].tolist()
    # Robots that do not want to move neither use nor hold the passage.
    passages.forget()
    idle = passages.coordinate(positions, goals, pref, np.array([False, True, True, True]))
    assert idle.waiting.tolist() == [False, False, True, False]


def test_a_stalled_robot_yields_to_the_one_of_higher_priority():
    """Two robots nose to nose, both wanting to move and making no progress: after
    stall_time the second (lower priority) backs away from the first for yield_time; the
    first keeps its preferred velocity; robots making progress never yield."""
    monitor = ProgressMonitor(3, stall_time=2.0, yield_time=1.0, back_off_speed=0.3)
    positions = np.array([[0.0, 0.0], [0.6, 0.0], [5.0, 5.0]])
    pref = np.array([[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0]])
    wants = np.ones(3, dtype=bool)
    for step in range(60):  # 3 s at 20 Hz, no progress for robots 0 and 1
        now = step * 0.05
        distance = np.array([5.0, 5.0, 5.0 - 0.5 * now])  # robot 2 progresses
        told, yielding = monitor.resolve(now, positions, pref, distance, wants)
        if now < 2.0:
            assert not yielding.any()
    assert yielding.tolist() == [False, True, False]
    assert np.allclose(told[1], [0.3, 0.0]) and np.array_equal(told[[0, 2]], pref[[0, 2]])
    # The yield ends after yield_time; a robot that does not want to move never yields.
    told, yielding = monitor.resolve(3.1, positions, pref, np.full(3, 5.0), wants)
    assert not yielding[1]
    idle = ProgressMonitor(2, stall_time=0.1)
    for now in (0.0, 0.2, 0.4):
        _, yielding = idle.resolve(now, positions[:2], pref[:2], np.full(2, 5.0),
                                   np.array([True, False]))
    assert not yielding.any()
