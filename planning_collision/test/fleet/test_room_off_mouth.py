"""A parked robot whose step aside for a stalled robot would end in a passage's mouth does
not make room for it (fleet/progress.py, issue #22). Doorway of 16, seed 71: robot 9,
parked at its goal 1.2 m from the door, made room for robot 10 and stepped sideways to the
side it stood on, into the door's mouth (in the core's cells, 0.5 m from the door), and
stood there from 27 to 40 s (until robot 10 passed it); robot 14, of the batch kept at
23.5 s, crept through the door beside it at 0.04-0.1 m/s from 25 to 36 s and the two robots
behind it waited, so robot 1 of the other side waited 30.9 s (22.7 s now)."""

from __future__ import annotations

import numpy as np
from narrow_maps import RES, rooms

from planning_collision.fleet.passages import PassageMap
from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.fleet.routes import RouteMap

DT = 0.05


def doorway():
    return PassageMap(RouteMap(rooms(door=0.8), RES, radius=0.3))  # door at (4, 2)


def test_the_mouth_is_the_core_and_radius_round_it():
    passages = doorway()
    inside = passages.in_mouth(np.array([[4.0, 2.0], [3.5, 2.0], [3.05, 2.0], [4.9, 2.1],
                                         [3.2, 2.0], [2.8, 2.0], [1.0, 2.0], [7.0, 2.0],
                                         [1.6, 2.0], [2.4, 1.6], [-3.0, 2.0]]))
    assert inside.tolist() == [True] * 5 + [False] * 6


def make_room(parked_at, mouth):
    """Robot 0, stalled going +y at (2.0, 0.8), and robot 1 parked ahead of it: whether
    robot 1 made room within 2 s, and the direction it stepped in."""
    monitor = ProgressMonitor(2, stall_time=1.0)
    positions = np.array([[2.0, 0.8], parked_at])
    pref = np.array([[0.0, 0.5], [0.0, 0.0]])
    wants = np.array([True, False])
    t = 0.0
    while t < 2.0:
        _, yielding = monitor.resolve(t, positions, pref, np.full(2, 5.0), wants, ~wants,
                                      mouth)
        if yielding[1]:
            return True, monitor.yield_direction[1]
        t += DT
    return False, None


def test_a_robot_whose_step_aside_ends_in_the_mouth_stays():
    """Robot 1 at (2.4, 1.6), outside the mouth: its step aside, to its right and on,
    would end at (3.2, 2.0), in the core. Without the mouth given it steps there."""
    passages = doorway()
    moved, direction = make_room((2.4, 1.6), None)
    assert moved and direction[0] > 0.0
    moved, _ = make_room((2.4, 1.6), passages.in_mouth)
    assert not moved


def test_elsewhere_it_steps_aside_as_before():
    """Robot 1 at (1.8, 1.4), left of the way: its step ends at (1.0, 1.8), off the
    mouth."""
    passages = doorway()
    assert not passages.in_mouth(np.array([[1.0, 1.8]]))[0]
    with_mouth = make_room((1.8, 1.4), passages.in_mouth)
    without = make_room((1.8, 1.4), None)
    assert with_mouth[0] and without[0] and np.allclose(with_mouth[1], without[1])
