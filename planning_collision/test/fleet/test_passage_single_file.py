"""Robots of one direction enter a single-lane passage one at a time (fleet/passages.py;
issue #22).

The doorway of 16's longest waits (seed 24: 42 s; seed 80, traced before) came from a closed
batch's last robots taking 10-17 s to clear the door: two robots of the same direction
reached the door's mouth together, one along the wall from one side and one from the other,
both within ``radius`` of the core, so both counted as inside and went, and both stood in
the mouth until one stalled (8 s) and yielded. Now, of two robots of the served direction
about as far along the passage as each other (measured through it, to the side they leave
by) and beside each other rather than in line, only the one ahead goes; the other stands
until that one is a diameter farther along.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from narrow_maps import door_passages, shipped_settings

from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenes import make_scene

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins


def two_at_the_mouth():
    """Seed 24 of the 16-robot doorway at 7 s, its two robots alone: robot10 (holonomic)
    against the door's north jamb at (0.40, 0.55), robot13 (a differential drive) coming
    in from the east at (0.51, -0.12); both going west."""
    scene = make_scene("doorway", 16, 24)
    bots = scene.scenario.robots
    poses = {9: (0.40, 0.55, 3.05), 12: (0.51, -0.12, -2.82)}
    robots = tuple(replace(bots[i], start=pose) for i, pose in poses.items())
    return scene, replace(scene.scenario, robots=robots)


def test_of_two_robots_entering_together_only_the_one_ahead_goes():
    """The rule alone, from where they stood: both are within ``radius`` of the core and go
    the same way. robot13, farther along the passage, keeps its way; robot10, beside it at
    the jamb, backs away from the core (north, out of robot13's way in) at the back-off
    speed. The same whichever order they are listed in. Before, both kept their way."""
    positions = np.array([(0.40, 0.55), (0.51, -0.12)])
    goals = np.array([(-1.3, 0.0), (-2.0, -0.8)])
    velocities = np.array([(0.03, -0.5), (-0.5, 0.03)])
    for order in ([0, 1], [1, 0]):
        door = door_passages(RADIUS)
        told = door.coordinate(positions[order], goals[order], velocities[order],
                               np.ones(2, bool), ids=np.array([9, 12])[order])
        mine = np.empty_like(velocities)
        mine[order] = told.velocities
        assert not told.waiting.any()
        assert np.array_equal(mine[1], velocities[1])  # robot13 goes on
        assert mine[0, 1] > 0.0  # robot10 backs away north
        assert np.hypot(*mine[0]) == pytest.approx(door.back_off_speed)


def test_two_robots_reaching_the_door_together_do_not_jam_in_it():
    """The two robots in the pure loop: both arrive with no contact and neither stands long
    (both by 5.4 s, no stand-still). Before, each stood in the other's way in the door's
    mouth until robot13 stalled (8 s) and robot10 made room: arrivals at 11.8 and 21.0 s."""
    scene, scenario = two_at_the_mouth()
    result = run_scenario(scenario, shipped_settings(scene.time_step),
                          control_period=scene.time_step, grid=scene.grid(), timeout=40.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    assert result.longest_wait < 4.0, result.longest_wait
