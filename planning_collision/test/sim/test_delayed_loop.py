"""The control loop over a bad network (sim/delayed_loop.py): late commands, late odometry,
acceleration-limited bases; what the latency model buys."""

from dataclasses import replace
from pathlib import Path

import pytest

from planning_collision.fleet.controller import FleetSettings
from planning_collision.sim.delayed_loop import LoopConditions, LoopModel, run_loop
from planning_collision.sim.network import NetworkSettings
from planning_collision.sim.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "config" / "scenarios"
# The offline case: every command applied 0.1-0.5 s late, odometry 0.05-0.2 s late
# (uniformly at random, each message on its own: they overtake each other).
LATE = LoopConditions(odometry=NetworkSettings(0.05, 0.15), commands=NetworkSettings(0.1, 0.4),
                      in_order=False)


@pytest.fixture(scope="module")
def demo_room():
    """The demo's scene without its map (the robots stay clear of the walls): 16 robots and
    a person, the pillars and the U wall as ORCA obstacles."""
    return replace(load_scenario(SCENARIOS / "swap_room.yaml"), map=None)


@pytest.fixture(scope="module")
def crossing():
    return load_scenario(SCENARIOS / "crossing24.yaml")


def test_without_the_command_allowance_late_commands_cause_a_contact(demo_room):
    """The failure the model answers (#12's model alone: odometry age only). Seed 0: robot1
    meets robot16 at 10.5 s (seed 1's contact, -0.004 m at 11.5 s, went with the growth
    clipped at the gap between discs, fleet/latency.py clip_growth)."""
    result = run_loop(demo_room, replace(LATE, seed=0), LoopModel(), timeout=12.0)
    assert result.contacts


def test_late_commands_and_odometry_with_the_allowance_make_no_contact(demo_room):
    """(More seeds in bench/bench_delays.py.)"""
    result = run_loop(demo_room, replace(LATE, seed=0),
                      LoopModel(FleetSettings(command_latency=0.5)))
    assert result.contacts == []
    assert result.min_separation > 0.0
    assert result.all_arrived


def test_a_starved_controller_is_more_cautious_not_less_safe(demo_room):
    """Steps 0.05-0.1 s apart and one in fifty stalled by 0.5 s more (a node at 20 Hz that
    drops to 2 Hz at its worst): the achieved periods grow the margins."""
    starved = LoopConditions(step_jitter=0.05, stall_probability=0.02, stall_time=0.5, seed=2)
    result = run_loop(demo_room, starved, LoopModel())
    assert result.contacts == []
    assert result.all_arrived


def test_an_acceleration_limit_the_model_knows_keeps_robots_off_the_pillars(crossing):
    """24 robots crossing past two pillars with bases limited to 0.25 m/s^2: ORCA assuming an
    instant change meets a pillar; told the limit, nobody touches anything while the crowd
    passes the middle (the whole run, with arrivals, is in bench/bench_delays.py)."""
    settings = FleetSettings(symmetry_breaking=0.01)  # the perfectly symmetric ring
    base = LoopConditions(max_linear_accel=0.25)
    unaware = run_loop(crossing, base, LoopModel(settings), timeout=10.0)
    assert unaware.contacts
    aware = run_loop(crossing, base, LoopModel(settings, max_linear_accel=0.25), timeout=25.0)
    assert aware.contacts == []
    assert aware.min_separation > 0.0


def test_a_starved_controller_s_margins_never_stand_a_robot_in_a_person_s_way(demo_room):
    """The same starved controller, seed 3: a stall grew robot11's disc past the person's
    (who avoids nobody), ORCA saw them overlapping, could not part them within a step and
    left the robot standing; the person walked into it (-0.42 m at 25.4 s), which did not
    happen without the step lateness in the model. The growth now stops at the gap between
    the discs (fleet/latency.py clip_growth)."""
    starved = LoopConditions(step_jitter=0.05, stall_probability=0.02, stall_time=0.5, seed=3)
    result = run_loop(demo_room, starved, LoopModel(), timeout=30.0)
    assert result.contacts == []
    assert result.min_separation > 0.0
