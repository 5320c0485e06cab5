"""Issue #24's 24-process crossing offline: one controller per robot (an orca_node per
robot), commands reaching the bases 0.2-0.5 s late, odometry 0.15-0.45 s late, every node
starved now and then, and robot24's node silent for 1.5 s (its base stops
``cmd_vel_timeout`` after its last command), from where the robots stood at 51.0 s of the run
that touched (``crossing24_at_51s.yaml``; doc/delays.md, "The contact traced"). A base that
holds a late command a whole ``cmd_vel_timeout`` after it arrived (fleet_sim did) lets robots
drive on decisions up to a second old, into each other; one that times it out from its stamp
(ros2_control's diff_drive_controller, fleet_sim now) does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from planning_collision.fleet.controller import FleetSettings
from planning_collision.sim.delayed_loop import LoopConditions, LoopModel, Silence, run_loop
from planning_collision.sim.network import NetworkSettings
from planning_collision.sim.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "config" / "scenarios"
STARVED = LoopConditions(
    step_period=0.1, step_jitter=0.1, stall_probability=0.1, stall_time=0.4,
    commands=NetworkSettings(0.2, 0.3), odometry=NetworkSettings(0.15, 0.3),
    silences=(Silence("robot24", 0.15, 1.5),), seed=3)
PER_ROBOT = LoopModel(FleetSettings(), per_robot=True)  # orca_node's defaults, as in the run


@pytest.fixture(scope="module")
def crowd():
    """Every robot where fleet_sim had it at 51.0 s of the run that touched, at rest."""
    return load_scenario(SCENARIOS / "crossing24_at_51s.yaml")


def test_a_base_holding_late_commands_from_their_arrival_lets_robots_touch(crowd):
    """What fleet_sim did: seed 3, robot5 and robot23 touch at 1.12 s (seeds 0 and 11 touch
    as well, 3 of the first 12; bench/bench_delays.py --silent)."""
    result = run_loop(crowd, STARVED, PER_ROBOT, timeout=1.4)
    assert result.contacts


def test_a_base_timing_commands_out_from_their_stamp_keeps_the_crowd_apart(crowd):
    result = run_loop(crowd, replace(STARVED, timeout_from_stamp=True), PER_ROBOT,
                      timeout=3.0)
    assert result.contacts == []
    assert result.min_separation > 0.05


def test_silences_stop_a_robot_s_commands_and_per_robot_controllers_step():
    """The harness itself: a silent robot's controller makes no step for the silence (its
    base stops after cmd_vel_timeout); one controller per robot steps each robot."""
    scenario = load_scenario(SCENARIOS / "crossing24.yaml")
    two = replace(scenario, robots=scenario.robots[:2], obstacles=())
    base = LoopConditions(step_period=0.1)
    alone = run_loop(two, base, PER_ROBOT, timeout=1.0)
    silent = run_loop(two, replace(base, silences=(Silence("robot1", 0.0, 1.0),)), PER_ROBOT,
                      timeout=1.0)
    assert alone.steps == pytest.approx(2 * 10, abs=2)  # two controllers at 10 Hz
    assert silent.steps == pytest.approx(10, abs=1)  # robot1's made none
