"""Parked robots give way to stalled ones (fleet/progress.py, issue #22): the 4-way
intersection's deadlocks were robots at their goal closing an arm for good."""

from __future__ import annotations

import numpy as np
from narrow_maps import shipped_settings, stall

from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenes import make_scene


def test_a_parked_robot_ahead_of_a_stalled_one_steps_aside():
    """Robot 0 wants to go +x and makes no progress; parked robots: 1 just ahead and a little
    to its left, 2 behind it, 3 ahead but beyond ``near``. After stall_time only robot 1
    moves: sideways to the side it stands on (+y) and onwards (+x), at back_off_speed; the
    stalled robot keeps its preferred velocity (nobody of higher priority wants to move)."""
    monitor = ProgressMonitor(4, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    positions = np.array([[0.0, 0.0], [0.6, 0.1], [-0.6, 0.0], [2.0, 0.0]])
    pref = np.array([[0.5, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    wants = np.array([True, False, False, False])
    parked = ~wants
    told, yielding = stall(monitor, positions, pref, wants=wants, parked=parked)
    assert yielding.tolist() == [False, True, False, False]
    assert np.allclose(told[1], 0.3 * np.array([0.5, 1.0]) / np.hypot(0.5, 1.0))
    assert np.array_equal(told[0], pref[0]) and not told[2:].any()
    # Without the parked mask (the former behaviour) nobody moves aside.
    old = ProgressMonitor(4, stall_time=2.0, yield_time=1.0)
    _, yielding = stall(old, positions, pref, wants=wants)
    assert not yielding.any()


def test_a_parked_robot_right_on_the_way_steps_to_its_left():
    """Exactly on the stalled robot's way the side is the way's left, the same on every
    node; a parked robot serves one stalled robot at a time."""
    monitor = ProgressMonitor(3, stall_time=1.0, yield_time=5.0)
    positions = np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 0.6]])
    pref = np.array([[0.0, 0.5], [0.0, -0.5], [0.0, 0.0]])
    wants = np.array([True, True, False])
    told, yielding = stall(monitor, positions, pref, until=1.5, wants=wants, parked=~wants)
    assert yielding[2]
    # robot 0 asked first (priority): its way is +y, its left is -x
    assert told[2, 0] < 0.0 and told[2, 1] > 0.0


def test_the_intersection_that_deadlocked_now_clears():
    """Seed 0 of the bench's 4-way intersection (1.5 m corridors) with 8 robots: robots 2 and
    6 parked at their goals in the east arm, and robot 3, pushed into that arm on its way
    north, stood behind them to the end (7 of 8 arrived, the bench stopped it as a deadlock
    after 119 s). With parked robots giving way all 8 arrive, without a contact."""
    scene = make_scene("intersection", 8, 0)
    result = run_scenario(scene.scenario, shipped_settings(scene.time_step),
                          control_period=scene.time_step, grid=scene.grid(), timeout=80.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    assert result.makespan < 60.0
