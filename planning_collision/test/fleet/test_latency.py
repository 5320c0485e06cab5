"""The whole loop's latency model (fleet/latency.py) and what it does to the controller."""

import math

import numpy as np
import pytest

from planning_collision.fleet.controller import AgentSpec, FleetController, FleetSettings
from planning_collision.fleet.latency import (
    REACH_TIME,
    StepPeriods,
    braking_growth,
    latency_growth,
    loop_latency,
    reachable_lines,
    reachable_polygon,
)


def test_step_periods_keep_the_longest_of_the_window():
    periods = StepPeriods(window=1.0)
    assert periods.lateness(0.05) == 0.0  # no period yet
    for t in np.arange(0.0, 1.0, 0.05):
        periods.step(float(t))
    assert periods.longest() == pytest.approx(0.05)
    assert periods.lateness(0.05) == pytest.approx(0.0, abs=1e-12)
    periods.step(1.5)  # a starved step: the previous command stood 0.55 s
    assert periods.lateness(0.05) == pytest.approx(0.55 - 0.05)
    for t in np.arange(1.55, 2.6, 0.05):  # a second later the stall has left the window
        periods.step(float(t))
    assert periods.lateness(0.05) == pytest.approx(0.0, abs=1e-9)


def test_growth_is_max_speed_times_the_latency_beyond_the_allowance():
    ages = np.array([0.0, 0.05, 0.3, np.inf, 2.0])
    latency = loop_latency(ages, 0.5, 0.1, np.array([0.0, 0.0, 0.2, 0.0, 0.0]))
    assert latency == pytest.approx([0.1, 0.15, 0.6, 0.1, 0.6])  # age clipped to 0.5
    growth = latency_growth(latency, np.full(5, 0.6), 0.1)
    assert growth == pytest.approx(0.6 * np.array([0.0, 0.05, 0.5, 0.0, 0.5]))


def test_braking_growth_is_the_braking_distance_and_zero_without_a_limit():
    speeds = np.array([0.5, 0.5, 0.0])
    assert braking_growth(speeds, np.array([0.5, 0.0, 0.5])) == pytest.approx([0.25, 0, 0])


def test_reachable_lines_allow_only_velocities_inside_the_disc():
    center, radius = np.array([[0.3, -0.1]]), np.array([0.2])
    (lines,), counts = reachable_lines(center, radius, np.array([True]))
    points, directions = lines
    assert counts.tolist() == [len(points)]
    rng = np.random.default_rng(0)
    v = center[0] + rng.uniform(-0.3, 0.3, (4000, 2))
    # Permitted: left of every directed line.
    side = (directions[None, :, 0] * (v[:, None, 1] - points[None, :, 1])
            - directions[None, :, 1] * (v[:, None, 0] - points[None, :, 0]))
    inside = (side >= 0).all(axis=1)
    distance = np.hypot(*(v - center[0]).T)
    assert inside.any() and (distance[inside] <= radius[0] + 1e-12).all()
    # The polygon is close to the disc: it covers the disc of radius r cos(pi / sides).
    assert inside[distance < radius[0] * math.cos(math.pi / len(points))].all()
    assert np.hypot(*(reachable_polygon((0.3, -0.1), 0.2) - center[0]).T) == \
        pytest.approx(0.2)
    none, counts = reachable_lines(center, radius, np.array([False]))
    assert none == [None] and counts.tolist() == [0]


def _fleet(settings=None, accel=0.0):
    specs = [AgentSpec("a", goal=(-5.0, 0.0), max_linear_accel=accel),
             AgentSpec("b", goal=(8.0, 0.0), odom_origin=(3.0, 0.0, math.pi),
                       max_linear_accel=accel)]
    return FleetController(specs, [AgentSpec("p", odom_origin=(0.0, 3.0, 0.0))],
                           settings or FleetSettings())


def _feed(fleet, t, speed=0.0):
    for i in range(3):
        fleet.odometry(i, t, t, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, speed, 0.0, 0.0)


def test_defaults_leave_the_radii_as_before():
    fleet = _fleet()
    for t in np.arange(0.0, 1.0, 0.05):
        _feed(fleet, float(t))
        step = fleet.step(float(t))
    assert step.radii == pytest.approx([0.3, 0.3, 0.3])  # radius + safety_margin


def test_command_latency_grows_every_radius():
    fleet = _fleet(FleetSettings(command_latency=0.3))
    _feed(fleet, 0.0)
    step = fleet.step(0.0)
    assert step.radii == pytest.approx(0.3 + 0.6 * (0.3 - 0.1))


def test_a_starved_node_grows_its_own_robots_and_not_the_observed():
    fleet = _fleet()
    for t in (0.0, 0.05, 0.1, 0.6):  # the last step comes 0.5 s after the one before
        _feed(fleet, t)
        step = fleet.step(t)
    late = 0.5 - 0.05
    assert step.radii[:2] == pytest.approx(0.3 + 0.6 * (late - 0.1))
    assert step.radii[2] == pytest.approx(0.3)


def test_an_acceleration_limit_grows_by_the_braking_distance_and_limits_the_change():
    fleet = _fleet(accel=0.5)
    _feed(fleet, 0.0, speed=0.4)
    step = fleet.step(0.0)
    assert step.radii[:2] == pytest.approx(0.3 + 0.4 ** 2 / (2 * 0.5))
    assert step.radii[2] == pytest.approx(0.3)  # the person: no limit known
    # Both drive at 0.4 m/s away from their goals (b is turned by pi) and want to reverse:
    # each may change its velocity by a * (latency + REACH_TIME) only (its step is shorter).
    reach = 0.5 * (0.0 + REACH_TIME)
    change = np.hypot(*(step.chosen - step.velocities[:2]).T)
    assert (change <= reach + 1e-9).all()
    assert change == pytest.approx(reach, rel=0.05)  # they brake as hard as they may


def test_a_robot_that_cannot_reach_safety_in_time_still_flees_at_full_effort():
    """Someone who avoids nobody walks at a standing, acceleration-limited robot: no
    reachable velocity is safe, and the limited program left the robot standing (the demo
    room at 0.5 m/s^2: robot11 overlapped the person by 0.21 m). It is solved again without
    the limit, so the base accelerates away as hard as it can."""
    fleet = FleetController(
        [AgentSpec("r", goal=(0.0, 0.0), max_linear_accel=0.5)],
        [AgentSpec("p", radius=0.3, max_speed=0.4, odom_origin=(0.62, 0.0, math.pi))])
    for i in range(2):
        fleet.odometry(i, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.4 * i, 0.0, 0.0)
    step = fleet.step(0.0)
    reach = 0.5 * REACH_TIME
    assert step.chosen[0, 0] < -reach  # away from the person, beyond the reachable disc
