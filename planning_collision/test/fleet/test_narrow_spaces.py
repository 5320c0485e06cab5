"""Issue #22's narrow-space scenes in the pure closed loop (sim/fleet_loop.py): the shipped
scenario files (config/scenarios/{corridor,doorway,single_lane,intersection}.yaml), run by
FleetController commanding FleetSimulation with orca.yaml's defaults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from narrow_maps import scene

import planning_collision.fleet.controller as controller_module
from planning_collision.grid import GridMap
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenario import parse_scenario


def test_differential_drives_touched_the_corridor_wall_without_the_heading_guard(monkeypatch):
    """The issue's contact, reproduced: in the 1.4 m corridor two differential-drive robots,
    squeezed by the oncoming ones, slid into the wall (clearance about -0.002 m) while ORCA's
    chosen velocity ran along it; with the guard on their forward speed, none touches. Plain
    ORCA, as in the issue (no routes, no passages)."""
    corridor = scene("corridor")
    guarded = run_scenario(corridor, timeout=24.0, coordinate=False)
    assert [c for c in guarded.contacts if c[2] == "map"] == []
    monkeypatch.setattr(controller_module, "guarded_forward_speeds",
                        lambda positions, headings, speeds, *rest: speeds)
    unguarded = run_scenario(corridor, timeout=24.0, coordinate=False)
    touched = {robot for _, robot, other in unguarded.contacts if other == "map"}
    drives = {r.name: r.drive for r in corridor.robots}
    assert touched and {drives[name] for name in touched} == {"unicycle"}


@pytest.mark.parametrize("name", ["corridor", "doorway", "single_lane", "intersection"])
def test_every_robot_crosses_the_scene_without_a_contact(name):
    """Issue #22's scenes, goal mode, orca.yaml's defaults, with routes and passages from the
    map: every robot arrives, no contact with a robot or a wall. Without them (plain ORCA
    heading straight for the goal) the doorway and the single-lane corridor deadlock: no
    robot arrives (test_plain_orca_deadlocks_in_the_passages)."""
    result = run_scenario(scene(name), timeout=100.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    assert result.min_obstacle_clearance >= 0.0 and result.min_separation > 0.0


@pytest.mark.parametrize("name", ["doorway", "single_lane"])
def test_plain_orca_deadlocks_in_the_passages(name):
    """What the passages fix: with neither routes nor passages, nor the progress monitor's
    yielding (plain ORCA), nobody gets through. (The monitor runs without a map since
    fcbf498, so without the hook this measured ORCA plus the monitor's yielding, and a change
    to the yielding that got one doorway robot through in 30 s failed it.)"""

    def plain(controller, grid, obstacles):
        controller.progress = None

    result = run_scenario(scene(name), timeout=30.0, coordinate=False, controller_hook=plain)
    assert not np.isfinite(result.arrival_times).any()
    assert result.contacts == []


def test_a_wall_between_a_robot_and_its_goal_is_no_dead_end():
    """A robot facing a wall with its goal straight behind it: heading at the goal it stands
    at the wall for ever; following the route it goes round the wall's end."""
    data = np.zeros((80, 120), dtype=np.int8)  # 6 m x 4 m at 0.05 m, origin (0, 0)
    data[:, :2] = data[:, -2:] = data[:2, :] = data[-2:, :] = 100  # outer walls
    data[:60, 58:62] = 100  # a wall from the bottom up to y = 3 m at x = 3 m
    grid = GridMap(data, 0.05, (0.0, 0.0, 0.0), unknown_is_occupied=False)
    scenario = parse_scenario({"robot_defaults": {"radius": 0.25, "max_speed": 0.6}, "robots": [
        {"name": "r1", "start": [1.0, 1.0, 0.0], "goal": [5.0, 1.0], "drive": "unicycle"},
        {"name": "r2", "start": [5.0, 2.0, 3.14], "goal": [1.0, 2.0]}]}, Path("."))
    stuck = run_scenario(scenario, timeout=30.0, grid=grid, coordinate=False)
    assert not np.isfinite(stuck.arrival_times).any()
    routed = run_scenario(scenario, timeout=30.0, grid=grid)
    assert routed.all_arrived and routed.contacts == []
