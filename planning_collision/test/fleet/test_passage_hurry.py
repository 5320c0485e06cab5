"""Through a long passage at top speed (issue #22, corridor_1.5d of 16).

While one side's batch drives through the benchmark's one-lane corridor (0.75 m x 6 m), the
other side stands: its longest wait is about the time the batch takes to enter plus the
~12 s its last robot takes to drive the corridor at the preferred speed (0.5 m/s), and one
slow entry put seed 42 of 16 at 32.5 s. In goal mode a robot in a long passage's core on its
side's turn now drives at its own max_speed (fleet/passages.py, "Through a long passage at
top speed"); nowhere else, and never in cmd_vel mode, where orca_node only filters the
navigation stack's commands.
"""

from __future__ import annotations

import numpy as np
import pytest
from narrow_maps import (
    core_span,
    corridor_passages,
    corridor_positions,
    door_passages,
    shipped_settings,
    told_at_once,
)

from planning_collision import orca
from planning_collision.fleet import AgentSpec, FleetController
from planning_collision.sim import fleet_loop
from planning_collision.sim.scenes import make_scene

WEST = (-0.5, 0.0)


def test_in_a_long_passages_core_on_its_turn_only_the_robots_in_it_hurry():
    """Westbound robots: one deep in the corridor's core, one in its east mouth, one in the
    line outside; one eastbound robot waiting at the west end. Only the one in the core
    hurries; the rule leaves every velocity's speed as it was (the controller applies it)."""
    passages = corridor_passages()
    x = core_span(passages)[1] + 0.5 * passages.routes.resolution  # the core's east edge
    radius = passages.routes.radius
    positions = [(0.0, 0.0), (x + 0.5 * radius, 0.0), (x + radius + 0.8, 0.0), (-4.5, 0.0)]
    goals = [(-5.0, 0.0), (-5.0, 0.0), (-5.0, 0.0), (5.0, 0.0)]
    result = told_at_once(passages, positions, goals, WEST)
    near = [passages.passages[0].distance[tuple(c)] for c in
            np.floor(passages.routes.to_cells(positions)).astype(int)]
    assert near[0] <= 0.0 < near[1] <= radius < near[2]  # core, mouth, line
    assert result.waiting.tolist() == [False, False, False, True]
    assert result.hurry.tolist() == [True, False, False, False]
    assert np.allclose(result.velocities[0], WEST)


def test_at_a_door_and_in_cmd_vel_mode_nobody_hurries():
    """A doorway is quicker to drive than max_wait: the robot in its core keeps its speed;
    in cmd_vel mode (no goals) the robot in the corridor's core does too."""
    door = door_passages(0.35)
    result = told_at_once(door, [(0.0, 0.0), (-1.5, 0.3)], [(2.0, 0.0), (2.0, 0.3)],
                          (0.5, 0.0))
    assert door.passages[0].distance[tuple(np.floor(door.routes.to_cells([(0.0, 0.0)])[0])
                                           .astype(int))] <= 0.0
    assert not result.hurry.any()
    corridor = corridor_passages()
    result = told_at_once(corridor, [(0.0, 0.0)], [(np.nan, np.nan)], WEST)
    assert corridor.passages[0].distance[tuple(np.floor(corridor.routes.to_cells(
        [(0.0, 0.0)])[0]).astype(int))] <= 0.0
    assert result.passage.tolist() == [0]
    assert not result.hurry.any()


def commanded_speed(start, goal, max_speed) -> float:
    """The linear speed FleetController commands a lone holonomic robot standing at
    ``start`` (facing west) on corridor_1.5d's map with the shipped settings."""
    scene = make_scene("corridor_1.5d", 2)
    settings = shipped_settings(scene.time_step)
    specs = [AgentSpec("a", radius=0.25, max_speed=max_speed, holonomic=True, goal=goal)]
    controller = FleetController(specs, (), settings)
    controller.set_world(*fleet_loop.world_routes(scene.grid(), scene.scenario, settings))
    controller.odometry(0, 0.0, 0.0, start[0], start[1], 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    step = controller.step(0.0, orca.build_obstacles(scene.polygons()))
    return float(np.hypot(*step.commands[0][:2]))


@pytest.mark.parametrize("max_speed", [0.4, 0.6, 0.8])
def test_the_controller_drives_a_hurrying_robot_at_its_own_max_speed(max_speed):
    """In the corridor's core a robot is commanded its own max_speed, above pref_speed
    (0.5) when that is higher, never above max_speed; in the open room, pref_speed."""
    assert shipped_settings(0.1).pref_speed == pytest.approx(0.5)
    assert commanded_speed((1.0, 0.0), (-5.0, 0.0), max_speed) == pytest.approx(max_speed)
    open_room = commanded_speed((5.0, 1.0), (5.0, -1.0), max_speed)
    assert open_room == pytest.approx(min(0.5, max_speed))


def test_the_benchmarks_east_block_is_through_the_corridor_by_30_s():
    """corridor_1.5d of 16, seed 42, in the pure loop: 30 s after the start the eight
    robots of the east block are through the corridor (west of it) and the west block
    still outside its west end, with no contact. Before, the last of them left the
    corridor at 33 s and a west robot waited 32.5 s."""
    contacts, east, x = corridor_positions(16, 42, 30.0)
    assert contacts == []
    assert (x[east] < -3.0).all(), x[east]
    assert (x[~east] < -3.0).all(), x[~east]
