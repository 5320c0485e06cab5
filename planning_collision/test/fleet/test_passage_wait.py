"""Nobody waits for a passage without bound, and robots told to stand make room (issue #22).

- **The bounded wait** (fleet/passages.py, ``max_wait``): a passage kept the side it served
  for a whole batch (8 robots) while the other side waited, and with a slow queue that was
  over 30 s (17 of 80 runs of the benchmark's 16-robot doorway). Now, once another side has
  waited ``max_wait`` seconds, the batch closes and the passage turns when the robots already
  in it are through.
- **Standing robots make room** (fleet/controller.py, fleet/progress.py): the doorway of 16,
  seed 9, stood still from 12 s on. The robots of one batch file in one after another, so
  two admitted robots beside the first one stood (preferred velocity zero) 0.63 and 0.68 m
  from it, one on each side; ORCA left the first one no way between them (their half-planes
  met at its current velocity), so it stalled, and the progress monitor only asked robots
  parked at their goals to make room: nobody moved again. Now every robot standing with a
  goal (at it, or told to stand by the passage rule) makes room for a stalled robot it
  stands in front of.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from narrow_maps import door_passages, shipped_settings

from planning_collision.fleet import FleetSettings
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenes import make_scene

DT = 0.1
RADIUS = 0.3


def stream(passages, seconds: float, max_wait: float, order=None):
    """One side keeps arriving: eight robots 1 m apart in a line west of the door drive east
    through it at 0.25 m/s, while robot 8 waits east of the door to go west. Robots move
    kinematically along the velocity the rule gives them (nobody avoids anybody: the rule
    alone is tested). Returns, per step, who was told to wait (in agent order)."""
    n = 9
    order = np.arange(n) if order is None else np.asarray(order)
    positions = np.array([(-1.2 - 1.0 * k, 0.0) for k in range(8)] + [(1.6, 0.0)])
    goals = np.array([(3.0, -1.4 + 0.4 * k) for k in range(8)] + [(-3.0, 1.5)])
    speed = np.array([0.25] * 8 + [0.5])
    told_wait = []
    for step in range(int(round(seconds / DT))):
        to_goal = goals - positions
        dist = np.hypot(to_goal[:, 0], to_goal[:, 1])
        moving = dist > 0.1
        ahead = passages.routes.waypoints(positions, goals)
        heading = np.where(ahead.routed[:, None], ahead.points, goals) - positions
        length = np.maximum(np.hypot(heading[:, 0], heading[:, 1]), 1e-9)
        pref = np.where(moving[:, None], heading / length[:, None] * speed[:, None], 0.0)
        told = passages.coordinate(positions[order], goals[order], pref[order], moving[order],
                                   ids=order, now=step * DT, max_wait=max_wait)
        velocities = np.empty_like(pref)
        velocities[order] = told.velocities
        waiting = np.empty(n, dtype=bool)
        waiting[order] = told.waiting
        told_wait.append(waiting)
        positions = positions + velocities * DT
    return np.array(told_wait)


def first_go(waits: np.ndarray, robot: int) -> float:
    """When ``robot``, told to wait at first, was first let go (inf: never)."""
    assert waits[0, robot]
    going = np.flatnonzero(~waits[:, robot])
    return going[0] * DT if going.size else np.inf


def test_without_a_bound_one_side_waits_for_the_whole_queue():
    waits = stream(door_passages(RADIUS), 40.0, max_wait=np.inf)
    assert first_go(waits, 8) > 30.0


def test_a_waiting_side_is_let_through_after_the_bounded_wait():
    """With ``max_wait`` 10 s the robot east of the door goes after 10 s plus the time the
    robots already in the door (or within a diameter of it) take to get through; the queue
    behind them waits its turn (it is not let through at once), and goes again once the
    robot from the east is through."""
    waits = stream(door_passages(RADIUS), 40.0, max_wait=10.0)
    went = first_go(waits, 8)
    assert 10.0 <= went <= 20.0, went
    at = int(round(went / DT))
    assert waits[at, 3:6].all()  # the queue's robots near the door wait while it goes
    assert not waits[-1].any()


def test_every_node_turns_the_passage_at_the_same_step():
    """Two nodes fed the same fleet (listed in another order) decide the same each step."""
    a = stream(door_passages(RADIUS), 25.0, max_wait=10.0)
    b = stream(door_passages(RADIUS), 25.0, max_wait=10.0, order=np.arange(9)[::-1])
    assert np.array_equal(a, b)


def test_the_bound_must_be_positive():
    with pytest.raises(ValueError, match="passage_max_wait"):
        FleetSettings(passage_max_wait=0.0).check()


def test_robots_filing_in_make_room_for_the_one_they_hem_in():
    """The stand-still of the doorway of 16, seed 9, with its three robots alone, where they
    stood at 12 s: robot13 (first of its batch, holonomic) between robot15 and robot16,
    which the filing-in rule holds standing 0.68 m and 0.63 m from it. Before, none of them
    moved again (40 s); now the two step aside after robot13 stalled (8 s) and all arrive."""
    scene = make_scene("doorway", 16, 9)
    bots = scene.scenario.robots
    poses = {12: (1.84, 0.15, -2.97), 14: (1.83, -0.53, -3.09), 15: (1.73, 0.77, 3.02)}
    robots = tuple(replace(bots[i], start=pose) for i, pose in poses.items())
    result = run_scenario(replace(scene.scenario, robots=robots),
                          shipped_settings(scene.time_step), control_period=scene.time_step,
                          grid=scene.grid(), timeout=30.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    assert result.longest_wait < 12.0
