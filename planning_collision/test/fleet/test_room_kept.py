"""A parked robot that stepped aside for a stalled one keeps the room open until it has
passed (fleet/progress.py, issue #22): in the 4-way intersection with 8 robots (seeds 33
and 86 of the benchmark) the robot that made room drove back to its goal after three
seconds, and the stalled robot, of lower priority, yielded to it as to any robot wanting to
move: both backed off together, again and again, until the timeout."""

from __future__ import annotations

import numpy as np
from narrow_maps import shipped_settings

from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenes import make_scene

DT = 0.05


def resolve(monitor, t, positions, pref, wants, parked):
    return monitor.resolve(t, positions, pref, np.full(len(wants), 5.0), wants, parked)


def test_the_robot_that_made_room_stands_aside_until_the_stalled_one_passed():
    """Robot 1 (parked at x = 0.6 on robot 2's way) steps aside for robot 2, stalled going
    +x. Once aside, off its goal, it wants to drive back: it holds (zero preferred
    velocity) and robot 2 keeps its own instead of yielding to it (it has the higher
    priority); when robot 2 is past it, robot 1 drives back."""
    monitor = ProgressMonitor(3, stall_time=1.0, yield_time=1.0)
    positions = np.array([[5.0, 5.0], [0.6, 0.05], [0.0, 0.0]])
    pref = np.array([[0.0, 0.0], [0.0, 0.0], [0.5, 0.0]])
    wants = np.array([False, False, True])
    t = 0.0
    stepped = False
    while t < 2.5:  # robot 2 stalls at 1 s; robot 1 steps aside for 1 s
        told, yielding = resolve(monitor, t, positions, pref, wants, ~wants)
        stepped |= yielding.tolist() == [False, True, False]
        t += DT
    assert stepped
    # aside now (0.4 m off its goal), it wants back; robot 2 has not moved yet
    positions[1] = [0.8, 0.45]
    pref[1] = [-0.2, -0.45]
    wants[1] = True
    for _ in range(int(round(6.0 / DT))):
        told, yielding = resolve(monitor, t, positions, pref, wants, ~wants)
        t += DT
        assert not told[1].any(), "robot 1 drove back onto robot 2's way"
        assert np.array_equal(told[2], pref[2]), "robot 2 yielded to the robot making room"
    positions[2] = [1.2, 0.0]  # robot 2 is past it
    told, yielding = resolve(monitor, t, positions, pref, wants, ~wants)
    assert np.array_equal(told[1], pref[1]) and not yielding[1]


def test_the_intersection_of_eight_that_shuffled_to_the_timeout_arrives():
    """Seed 86 of the benchmark's intersection with 8 robots: robot 7, pushed deep into the
    south arm, stood behind robots 1 and 5 parked at their goals there; each time they
    stepped aside it yielded to them and all drove back (7 of 8 arrived by 180 s). Now all
    arrive, without a contact."""
    scene = make_scene("intersection", 8, 86)
    result = run_scenario(scene.scenario, shipped_settings(scene.time_step),
                          control_period=scene.time_step, grid=scene.grid(), timeout=90.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
