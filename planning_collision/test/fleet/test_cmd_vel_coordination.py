"""Deadlock resolution in cmd_vel mode (issue #22 item 3: "in cmd_vel mode, Nav2 keeps
planning; orca_node decides who goes first").

In cmd_vel mode orca_node knows no goal: what it has is each robot's navigation command. The
passages read a robot's direction of travel from its preferred velocity (fleet/travel.py)
and the progress monitor measures the way made good along it (fleet/progress.py). Here a
navigation stack stands beside the pure closed loop (sim/fleet_loop.py): each robot's own
planner follows a route on the map to its goal and sends the body-frame command a local
planner would, as Nav2 does, without any regard for the other robots.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from narrow_maps import RES, rooms, scene, shipped_settings

from planning_collision.fleet.controller import CMD_VEL, FleetSettings
from planning_collision.fleet.passages import PassageMap
from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.fleet.routes import RouteMap
from planning_collision.sim.fleet_loop import run_scenario, world_routes
from planning_collision.sim.scenes import make_scene

SPEED = 0.5


class Navigation:
    """Each robot's navigation stack: a route to its goal on the map (the same navigation
    function a planner would follow) and the command that drives along it: holonomic
    (vx, vy), differential drive (v, w) turning onto the route; zero at the goal."""

    def __init__(self, scenario, routes: RouteMap):
        robots = [r for r in scenario.robots if r.orca]
        self.goals = np.array([r.goal for r in robots], dtype=np.float64)
        self.holonomic = [r.drive == "holonomic" for r in robots]
        self.routes = routes

    def commands(self, poses) -> np.ndarray:
        poses = np.asarray(poses, dtype=np.float64)
        found = self.routes.waypoints(poses[:, :2], self.goals)
        # off the route map (nearer a wall than its radius): straight for the goal
        ahead = np.where(found.routed[:, None], found.points, self.goals) - poses[:, :2]
        out = np.zeros((len(poses), 3))
        for i, (dx, dy) in enumerate(ahead):
            if math.hypot(*(self.goals[i] - poses[i, :2])) < 0.1 or math.hypot(dx, dy) < 1e-9:
                continue
            c, s = math.cos(poses[i, 2]), math.sin(poses[i, 2])
            bx, by = (c * dx + s * dy), (-s * dx + c * dy)  # the way, body frame
            length = math.hypot(bx, by)
            if self.holonomic[i]:
                out[i] = [SPEED * bx / length, SPEED * by / length, 0.0]
            else:
                error = math.atan2(by, bx)
                out[i] = [SPEED * max(math.cos(error), 0.0), 0.0,
                          max(-1.5, min(1.5, 2.0 * error))]
        return out


def navigated(scenario, settings):
    """A controller hook that sends every robot's navigation command before each step."""

    def hook(controller, grid, obstacles):
        navigation = Navigation(scenario, world_routes(grid, scenario, settings)[0])
        step = controller.step

        def navigated_step(now, obstacles=None, **options):
            poses = [controller.pose_at(i, now) for i in range(controller.controlled)]
            for i, command in enumerate(navigation.commands(poses)):
                controller.nav_command(i, now, now, *command)
            return step(now, obstacles, **options)

        controller.step = navigated_step

    return hook


def run_cmd_vel(name: str, timeout: float, coordinate: bool = True):
    scenario = scene(name)
    settings = FleetSettings(time_step=0.05, preferred_velocity_source=CMD_VEL)
    return run_scenario(scenario, replace(settings), timeout=timeout, coordinate=coordinate,
                        controller_hook=navigated(scenario, settings))


def test_head_on_in_a_single_lane_corridor_in_cmd_vel_mode():
    """The issue's single-lane corridor (0.8 m x 6 m, two robots from each end, holonomic
    and differential drive), cmd_vel mode: every robot gets through, no contact. Without the
    coordination (plain ORCA on the navigation commands) they meet in the lane and none
    arrives."""
    result = run_cmd_vel("single_lane", 100.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    plain = run_cmd_vel("single_lane", 40.0, coordinate=False)
    assert not np.isfinite(plain.arrival_times).any()


def test_robots_the_passage_rule_holds_make_room_in_cmd_vel_mode():
    """The three robots of ``test_robots_filing_in_make_room_for_the_one_they_hem_in``
    (test_passage_wait.py: the doorway of 16, seed 9, where they stood at 12 s), in cmd_vel
    mode: each follows its own navigation command, and the filing-in rule replaces the
    commands of robot15 and robot16, beside robot13, by standing. A robot whose navigation
    command the rule replaced by standing makes room for a stalled robot it stands in front
    of, as a robot with a goal does in goal mode; once robot13 has passed, they get their
    navigation commands back and all arrive. Before, only robots with a goal made room, and
    in cmd_vel mode (no goals) nobody moved again."""
    door = make_scene("doorway", 16, 9)
    bots = door.scenario.robots
    poses = {12: (1.84, 0.15, -2.97), 14: (1.83, -0.53, -3.09), 15: (1.73, 0.77, 3.02)}
    scenario = replace(door.scenario,
                       robots=tuple(replace(bots[i], start=pose) for i, pose in poses.items()))
    settings = replace(shipped_settings(door.time_step), preferred_velocity_source=CMD_VEL)
    result = run_scenario(scenario, settings, control_period=door.time_step,
                          grid=door.grid(), timeout=40.0,
                          controller_hook=navigated(scenario, settings))
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times


# ------------------------------------------------------------- the pieces, one by one
def door_map() -> PassageMap:
    """Two rooms (8 m x 4 m) and a 0.8 m door at x = 4, y = 2: one passage, two sides."""
    found = PassageMap(RouteMap(rooms(), RES, radius=0.3))
    assert len(found.passages) == 1
    return found


@pytest.fixture(scope="module")
def door():
    return door_map()


def side_of(door, point) -> int:
    r, c = np.floor(door.routes.to_cells([point])[0]).astype(int)
    return int(door.passages[0].sides[r, c])


def test_the_side_a_preferred_velocity_heads_for(door):
    """From either room, a velocity into the door leads to the other room's side; one away
    from the door, along the wall or zero leads to none; in the door, the side it points to."""
    travel = door.travel[0]
    left, right = side_of(door, (3.0, 2.0)), side_of(door, (5.0, 2.0))
    assert {left, right} == {0, 1}
    assert travel.exit_side((2.8, 2.0), (0.5, 0.0)) == right
    assert travel.exit_side((2.8, 2.3), (0.4, -0.3)) == right  # at a slant
    assert travel.exit_side((5.2, 2.0), (-0.5, 0.0)) == left
    assert travel.exit_side((2.8, 2.0), (-0.5, 0.0)) == -1  # away from the door
    assert travel.exit_side((2.8, 2.0), (0.0, 0.0)) == -1
    assert travel.exit_side((2.8, 2.9), (0.0, 0.5)) == -1  # along the wall
    assert travel.exit_side((4.0, 2.0), (0.5, 0.0)) == right  # in the door
    assert travel.exit_side((4.0, 2.0), (-0.5, 0.1)) == left
    assert travel.exit_side((1.0, 1.0), (0.5, 0.0)) == -1  # far from it


def test_without_goals_the_passage_serves_one_direction_by_preferred_velocity():
    """cmd_vel mode: no goals, only preferred velocities. Two robots meet at the door from
    opposite rooms: the one nearer the door goes, the other waits (backs off from the door's
    mouth); a third robot behind the first, going the same way, is not held. The same
    decision whatever order the robots are listed in."""
    positions = np.array([[2.8, 2.0], [5.4, 2.0], [2.2, 2.0]])
    velocities = np.array([[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0]])
    nan = np.full((3, 2), np.nan)
    told = door_map().coordinate(positions, nan, velocities, np.ones(3, bool))
    assert told.passage.tolist() == [0, 0, 0]
    assert told.waiting.tolist() == [False, True, False]
    assert np.array_equal(told.velocities[[0, 2]], velocities[[0, 2]])
    assert told.velocities[1, 0] > 0.0  # backing off into its own room
    order = np.array([2, 0, 1])
    again = door_map().coordinate(positions[order], nan, velocities[order], np.ones(3, bool))
    assert again.waiting.tolist() == told.waiting[order].tolist()


def test_without_a_goal_progress_is_the_way_made_good():
    """A robot driving along its preferred velocity is never stalled; one that wants to move
    and stands (or is pushed sideways) is, after stall_time. Before, with no goal the
    distance never fell, and every robot moving for stall_time counted as stalled."""
    monitor = ProgressMonitor(3, stall_time=8.0)
    velocities = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]])
    wants = np.ones(3, dtype=bool)
    positions = np.zeros((3, 2))
    positions[1, 1] = positions[2, 1] = 5.0
    for step in range(200):  # 10 s at 20 Hz
        now = 0.05 * step
        positions[0, 0] += 0.5 * 0.05  # along its way
        positions[2, 1] += 0.5 * 0.05  # sideways: no way made good
        stalled = monitor.stalled(now, -monitor.advance(positions, velocities, wants), wants)
    assert stalled.tolist() == [False, True, True]
    assert monitor.made_good[0] == pytest.approx(199 * 0.025)


def test_a_robot_on_its_way_without_a_goal_does_not_yield():
    """Through resolve, as the controller calls it in cmd_vel mode (no goal: distance inf):
    robot 1 drives along its preferred velocity at 0.1 m/s beside robot 0 (higher priority,
    wanting to move, standing). Robot 1 makes its way and never yields; robot 0 is stalled
    but has nobody above it to yield to. Before, robot 1 counted as stalled after 8 s and
    backed away from robot 0."""
    monitor = ProgressMonitor(2)
    positions = np.array([[0.0, 0.0], [0.5, 0.0]])
    velocities = np.array([[0.0, 0.5], [0.1, 0.0]])
    for step in range(240):  # 12 s
        positions[1, 0] += 0.1 * 0.05
        told, yielding = monitor.resolve(0.05 * step, positions.copy(), velocities,
                                         np.full(2, np.inf), np.ones(2, dtype=bool))
        assert not yielding.any()
        assert np.array_equal(told, velocities)
