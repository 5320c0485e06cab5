"""The whole loop's latency model (fleet/latency.py) and what it does to the controller."""

import math

import numpy as np
import pytest

from planning_collision.fleet.controller import AgentSpec, FleetController, FleetSettings
from planning_collision.fleet.latency import (
    REACH_TIME,
    StepPeriods,
    braking_growth,
    clip_growth,
    latency_growth,
    loop_latency,
    reachable_lines,
    reachable_polygon,
)
from planning_collision.tracking import Discs


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


def test_growth_is_clipped_to_the_gap_between_the_discs():
    positions = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 0.0], [5.5, 0.0], [0.0, 0.0]])
    radii = np.array([0.3, 0.3, 0.3, 0.3, 0.3])
    growth = np.array([0.3, 0.1, 0.2, 0.0, 0.0])
    present = np.array([True, True, True, True, False])  # the last is not in the problem
    clipped = clip_growth(positions, radii, growth, present)
    # 0 and 1: 0.4 m between their discs, 0.4 of growth: untouched. 2 and 3 overlap already:
    # no growth between them. The absent agent at 0's very place changes nothing.
    assert clipped == pytest.approx([0.3, 0.1, 0.0, 0.0, 0.0])
    growth = np.array([0.6, 0.2, 0.0, 0.0, 0.0])  # 0.8 of growth in a 0.4 m gap: halved
    clipped = clip_growth(positions, radii, growth, present)
    assert clipped == pytest.approx([0.3, 0.1, 0.0, 0.0, 0.0])
    # A disc that does not grow (a tracked person) 0.1 m off agent 1's disc: 1 keeps 0.1.
    fixed = (np.array([[1.7, 0.0]]), np.array([0.3]))
    clipped = clip_growth(positions, radii, np.array([0.3, 0.3, 0, 0, 0]), present, fixed)
    assert clipped == pytest.approx([0.2, 0.1, 0.0, 0.0, 0.0])
    # A property over random scenes: never a grown overlap the discs did not have, never
    # more growth than asked, untouched where nothing is near.
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        p = rng.uniform(0.0, 3.0, (n, 2))
        r = rng.uniform(0.1, 0.4, n)
        g = rng.uniform(0.0, 0.5, n) * (rng.random(n) < 0.7)
        on = rng.random(n) < 0.8
        c = clip_growth(p, r, g, on)
        assert ((c >= 0.0) & (c <= g + 1e-15)).all()
        assert (c[~on] == g[~on]).all()
        d = np.hypot(*(p[:, None] - p[None, :]).transpose(2, 0, 1))
        base = d - r[:, None] - r[None, :]
        grown = base - c[:, None] - c[None, :]
        pair = on[:, None] & on[None, :] & ~np.eye(n, dtype=bool)
        assert (grown[pair] >= np.minimum(base[pair], 0.0) - 1e-12).all()
        alone = on & (np.where(pair, base - g[:, None] - g[None, :], np.inf) >= 0).all(axis=1)
        assert c[alone] == pytest.approx(g[alone])


def test_a_starved_robot_flees_a_person_its_late_margin_reaches():
    """Issue #24's starved-controller contact (the demo room, seed 3: robot11 and the person
    overlapped by 0.42 m). A step 0.6 s late grows the robot's disc by 0.6 m/s x 0.45 s,
    past the person walking at it (0.13 m between their discs): ORCA saw the pair
    overlapping, its hard separation asked them to part within one step, faster than the
    robot can move, and the robot was left standing while the person walked into it. The
    growth stops at the gap, and the robot moves away at least as fast as the person
    comes."""
    fleet = FleetController(
        [AgentSpec("r", goal=(0.0, 0.0))],
        [AgentSpec("p", radius=0.3, max_speed=0.4, odom_origin=(0.75, 0.0, math.pi))])
    for t in (0.0, 0.05, 0.1, 0.7):  # the last step comes 0.6 s after the one before
        for i in range(2):
            fleet.odometry(i, t, t, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.4 * i, 0.0, 0.0)
        step = fleet.step(t)
    assert step.chosen[0, 0] <= -0.4  # away from the person, as fast as it comes (was 0)
    assert step.radii[0] > 0.3  # the lateness still grows it, up to the gap
    assert step.radii.sum() <= 0.75 + 1e-9


def test_a_starved_robot_flees_a_tracked_disc_its_late_margin_reaches():
    """The same with the person seen by the laser only (a tracked disc, not an agent)."""
    fleet = FleetController([AgentSpec("r", goal=(0.0, 0.0))])
    disc = Discs(np.array([[0.75, 0.0]]), np.array([[-0.4, 0.0]]), np.array([0.35]))
    for t in (0.0, 0.05, 0.1, 0.7):
        fleet.odometry(0, t, t, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        step = fleet.step(t, discs=disc)
    assert step.chosen[0, 0] <= -0.4  # was 0: it stood
    assert 0.3 < step.radii[0] <= 0.75 - 0.35 + 1e-9
