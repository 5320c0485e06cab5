"""fleet_sim's status content from the simulation alone (no ROS): the fleet entry's counts,
separation, arrivals and clock; each robot's pose, command state and contacts; the levels."""

from __future__ import annotations

import json
import math

import pytest

from planning_collision.sim import status
from planning_collision.sim.pacing import PacingReport
from planning_collision.sim.scenario import parse_scenario
from planning_collision.sim.simulation import FleetSimulation

PACING = PacingReport(achieved_rate=49.5, real_time_factor=0.99, load=0.1234,
                      dropped_seconds=0.06, late_ticks=3)
FLEET_KEYS = {
    "collisions", "robot_collisions", "obstacle_collisions", "map_collisions",
    "collision_pairs", "min_separation", "min_separation_pair", "min_obstacle_clearance",
    "arrived", "robots", "all_arrived", "orca_arrived", "orca_robots", "started", "sim_time",
    "steps", "achieved_rate", "rate_hz", "real_time_factor", "late_ticks", "dropped_time",
    "step_load", "timeout", "timed_out", "scenario"}


def simulation() -> FleetSimulation:
    """a and b face each other 1 m apart; c stands alone; a person walks 0.3 m to its goal;
    a block lies 1 m ahead of c."""
    robots = [
        {"name": "a", "start": [0.0, 0.0, 0.0], "goal": [5.0, 0.0]},
        {"name": "b", "start": [1.0, 0.0, math.pi], "goal": [-5.0, 0.0], "drive": "unicycle"},
        {"name": "c", "start": [0.0, 5.0, 0.0], "goal": [0.0, 8.0]},
        {"name": "walker", "start": [10.0, 0.0, 0.0], "goal": [10.3, 0.0], "orca": False},
    ]
    block = {"id": "block", "polygon": [[1.0, 4.5], [2.0, 4.5], [2.0, 5.5], [1.0, 5.5]]}
    scenario = parse_scenario({"robots": robots, "obstacles": [block], "timeout": 5.0,
                               "robot_defaults": {"radius": 0.25, "max_speed": 1.0}})
    return FleetSimulation(scenario, 0.05, cmd_vel_timeout=0.5, goal_tolerance=0.15)


def run(started: bool = True, map_problem: str = "") -> status.RunState:
    return status.RunState("room.yaml", 20.0, started, PACING, map_problem)


def by_name(sim: FleetSimulation) -> dict[str, status.StatusEntry]:
    return {entry.hardware_id: entry for entry in status.robot_entries(sim)}


def test_a_fleet_at_its_start():
    sim = simulation()
    fleet = status.fleet_entry(sim, run(started=False))
    assert fleet.hardware_id == "fleet" and fleet.level == status.OK
    assert set(fleet.values) == FLEET_KEYS
    v = fleet.values
    assert (v["collisions"], v["collision_pairs"], v["arrived"], v["robots"]) == \
        ("0", "[]", "0", "4")
    assert (v["orca_robots"], v["orca_arrived"], v["all_arrived"]) == ("3", "0", "false")
    assert (v["started"], v["sim_time"], v["steps"], v["timed_out"]) == \
        ("false", "0.0000", "0", "false")
    assert (v["achieved_rate"], v["rate_hz"], v["real_time_factor"], v["step_load"]) == \
        ("49.50", "20", "0.990", "0.123")
    assert (v["late_ticks"], v["dropped_time"], v["timeout"], v["scenario"]) == \
        ("3", "0.0600", "5.0000", "room.yaml")
    assert v["min_separation"] == "0.5000" and v["min_separation_pair"] == "a-b"
    assert fleet.message == "0/4 arrived, 0 collisions, t = 0.0 s"
    robots = by_name(sim)
    assert list(robots) == ["a", "b", "c", "walker"]
    assert [robots[n].values["command"] for n in robots] == \
        ["none yet", "none yet", "none yet", "none (walks by itself)"]
    b = robots["b"]
    assert b.level == status.OK and b.message == "6.00 m to goal"
    assert (b.values["x"], b.values["yaw"], b.values["drive"], b.values["orca"]) == \
        ("1.0000", f"{math.pi:.4f}", "unicycle", "true")
    assert (b.values["arrived"], b.values["arrival_time"], b.values["in_contact_with"]) == \
        ("false", "", "")


def test_a_collision_warns_the_fleet_and_both_robots_once():
    sim = simulation()
    for _ in range(12):  # 0.6 s at 0.5 m/s each: they meet after 0.5 s
        sim.command("a", (0.5, 0.0, 0.0))
        sim.command("b", (0.5, 0.0, 0.0))
        sim.step()
    fleet = status.fleet_entry(sim, run())
    assert fleet.level == status.WARN
    assert (fleet.values["collisions"], fleet.values["robot_collisions"]) == ("1", "1")
    assert json.loads(fleet.values["collision_pairs"])[0][:2] == ["a", "b"]
    assert float(fleet.values["min_separation"]) < 0.0
    assert fleet.values["min_separation_pair"] == "a-b"
    robots = by_name(sim)
    assert robots["a"].level == robots["b"].level == status.WARN
    assert robots["a"].message == "in contact with b"
    assert robots["b"].values["in_contact_with"] == "a"
    assert robots["a"].values["collisions"] == "1"
    assert robots["a"].values["command"] == "fresh"
    assert robots["a"].values["speed"] == "0.5000"
    assert robots["c"].level == status.OK


def test_arrivals_stale_commands_and_obstacle_contacts():
    sim = simulation()
    sim.command("c", (1.0, 0.0, 0.0))
    for _ in range(40):  # 2 s: c drives 0.5 m, then its command is stale after 0.5 s
        sim.step()
    robots = by_name(sim)
    assert robots["c"].values["command"] == "stale"
    assert robots["walker"].message == "arrived"
    assert robots["walker"].values["arrival_time"] == "0.1500"
    sim.command("c", (1.0, 0.0, 0.0))  # another 0.5 m: into the block
    for _ in range(30):
        sim.step()
    fleet = status.fleet_entry(sim, run())
    assert fleet.values["obstacle_collisions"] == "1"
    assert by_name(sim)["c"].message == "in contact with block"
    assert float(fleet.values["min_obstacle_clearance"]) < 0.0
    assert fleet.values["arrived"] == "1" and fleet.values["orca_arrived"] == "0"
    assert fleet.values["timed_out"] == "false"
    for _ in range(40):
        sim.step()
    assert status.fleet_entry(sim, run()).values["timed_out"] == "true"  # past 5 s


def test_a_map_not_refereed_is_a_warning_named_in_the_values():
    fleet = status.fleet_entry(simulation(), run(map_problem="map not used: no such file"))
    assert fleet.level == status.WARN
    assert fleet.values["map_problem"] == "map not used: no such file"


def test_nothing_simulated_is_an_error_saying_why():
    entry = status.problem_entry("no scenario: set the scenario parameter")
    assert (entry.hardware_id, entry.level) == ("fleet", status.ERROR)
    assert entry.message == entry.values["problem"] == "no scenario: set the scenario parameter"


@pytest.mark.parametrize("value, text", [(1.23456, "1.2346"), (-0.5, "-0.5000"),
                                         (math.inf, "inf"), (math.nan, "nan")])
def test_numbers_have_four_decimals_unless_not_finite(value, text):
    assert status.number(value) == text
