"""A command that reaches the base late (issue #24's 24-process crossing): the base times it
out ``cmd_vel_timeout`` after its stamp, as ros2_control's diff_drive_controller brakes, not a
whole ``cmd_vel_timeout`` after it arrived; and the base's record of every command it applied,
with how old it was, from which a run's delays can be traced."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from planning_collision.sim.scenario import parse_scenario
from planning_collision.sim.simulation import FleetSimulation

DT = 0.02


def _sim(record: bool = True) -> FleetSimulation:
    scenario = parse_scenario({"robots": [
        {"name": "a", "start": [0.0, 0.0, 0.0], "goal": [50.0, 0.0], "radius": 0.25,
         "max_speed": 1.0}]})
    return FleetSimulation(scenario, DT, cmd_vel_timeout=0.5, record=record)


def _moving_time(sim: FleetSimulation, seconds: float = 1.0) -> float:
    """Simulated seconds the robot keeps moving from now on."""
    moving = 0.0
    for _ in range(round(seconds / DT)):
        sim.step()
        moving += DT * bool(np.hypot(*sim.velocities[0, :2]) > 0.0)
    return moving


@pytest.mark.parametrize("age", [0.0, 0.2, 0.45])
def test_a_late_command_stands_until_cmd_vel_timeout_after_its_stamp(age):
    """The crossing's contact: robot22's command reached fleet_sim 0.22-0.5 s after its
    stamp and fleet_sim held it 0.5 s more (a real base 0.5 s after the stamp): it carried
    the robot 0.34 s further, into a robot that had stopped."""
    sim = _sim()
    sim.command("a", (0.5, 0.0, 0.0), age=age)
    assert _moving_time(sim) == pytest.approx(0.5 - age, abs=DT + 1e-9)


def test_a_command_older_than_the_timeout_never_moves_the_base():
    sim = _sim()
    sim.command("a", (0.5, 0.0, 0.0), age=0.6)
    assert _moving_time(sim) == 0.0


def test_the_trajectory_records_each_command_applied_with_its_age():
    sim = _sim()
    sim.step()
    sim.command("a", (0.5, 0.1, 0.0), age=0.3)
    sim.step()
    sim.command("a", (0.2, 0.0, 0.3), age=-1.0)  # a stamp from the future counts as now
    trajectory = sim.trajectory()
    assert trajectory["command_time"] == pytest.approx([DT, 2 * DT])
    assert trajectory["command_robot"].tolist() == [0, 0]
    assert trajectory["command_age"] == pytest.approx([0.3, 0.0])
    assert trajectory["command_twist"] == pytest.approx(np.array([[0.5, 0.1, 0.0],
                                                                 [0.2, 0.0, 0.3]]))
    assert _sim(record=False).trajectory()["command_time"].shape == (0,)


def _crossing_tool():
    path = Path(__file__).resolve().parents[3] / "tools" / "crossing_per_robot.py"
    spec = importlib.util.spec_from_file_location("crossing_per_robot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_crossing_tool_reports_how_late_the_applied_commands_were():
    sim = _sim()
    for age in (0.1, 0.2, 0.45):
        sim.command("a", (0.5, 0.0, 0.0), age=age)
        sim.step()
    ages = _crossing_tool().command_ages(sim.trajectory())
    assert ages["command_age_median"] == pytest.approx(0.2)
    assert ages["command_age_max"] == pytest.approx(0.45)
    assert 0.2 < ages["command_age_p95"] <= 0.45
    assert _crossing_tool().command_ages(_sim().trajectory()) == {}
