"""FleetController without DDS: frames, stamps and staleness, latency growth, pass-through,
differential drive, bounded commands, waiting for the fleet, runtime changes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.fleet.controller import MAX_COORD


def feed(c: FleetController, i: int, t: float, x: float, y: float, yaw: float = 0.0,
         vx: float = 0.0, vy: float = 0.0, wz: float = 0.0, stamp: float | None = None):
    qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
    return c.odometry(i, t, stamp, x, y, qx, qy, qz, qw, vx, vy, wz)


def warnings():
    out = []
    return out, lambda key, text: out.append(text)


def test_odom_origin_places_the_robot_and_commands_in_its_body_frame():
    c = FleetController([AgentSpec("r", goal=(2.0, 10.0), odom_origin=(2.0, 3.0, math.pi / 2))])
    feed(c, 0, 1.0, 1.0, 0.0)  # 1 m ahead in odom = (2, 4) in the map, facing +y
    step = c.step(1.0)
    assert step.positions[0] == pytest.approx([2.0, 4.0])
    assert step.headings[0] == pytest.approx(math.pi / 2)
    # The goal is straight ahead: full pref_speed forward in the body frame.
    assert step.commands[0] == pytest.approx([0.5, 0.0, 0.0], abs=1e-12)
    assert step.distance_to_goal[0] == pytest.approx(6.0)


def test_stale_odometry_stops_a_robot_and_forgets_an_observed_agent():
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0))], [AgentSpec("p")])
    feed(c, 0, 1.0, 0.0, 0.0)
    feed(c, 1, 1.0, 0.9, 0.0)
    fresh = c.step(1.1)
    assert fresh.active[0] and fresh.agent_neighbors[0] == 1
    feed(c, 0, 1.6, 0.0, 0.0)  # the robot reports again, the observed agent does not
    step = c.step(1.7)
    assert step.active[0] and step.agent_neighbors[0] == 0 and not step.fresh[1]
    step = c.step(2.2)  # 0.6 s after the robot's last odometry
    assert not step.active[0] and step.reasons[0].startswith("odometry stale")
    assert (step.commands[0] == 0.0).all()


def test_the_stamp_not_the_arrival_gives_the_age():
    out, warn = warnings()
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0))], warn=warn)
    feed(c, 0, 10.0, 0.0, 0.0, stamp=9.3)  # arrived now, but measured 0.7 s ago
    step = c.step(10.0)
    assert not step.active[0] and step.ages[0] == pytest.approx(0.7)
    feed(c, 0, 10.1, 0.0, 0.0, stamp=0.0)  # no stamp: the arrival stands in
    assert c.step(10.1).active[0]
    feed(c, 0, 10.2, 0.0, 0.0, stamp=99.0)  # from the future: the clocks disagree
    assert c.step(10.2).ages[0] == pytest.approx(0.0)
    assert any("in the future" in text for text in out)
    assert not feed(c, 0, 10.3, 0.0, 0.0, stamp=10.15)  # older than the newest: dropped


def test_late_odometry_is_extrapolated_and_the_agent_grown():
    settings_ = FleetSettings(latency_allowance=0.1)
    c = FleetController([AgentSpec("r", goal=(-5.0, 0.0))],
                        [AgentSpec("p", radius=0.3, max_speed=1.2)], settings_)
    feed(c, 0, 1.0, 0.0, 0.0, stamp=1.0)
    feed(c, 1, 1.0, 3.0, 0.0, yaw=math.pi / 2, vx=1.0, stamp=0.7)  # 0.3 s old, going +y
    step = c.step(1.0)
    assert step.positions[1] == pytest.approx([3.0, 0.3])  # moved on for 0.3 s
    assert step.radii[1] == pytest.approx(0.3 + 0.05 + 1.2 * 0.2)  # margin + growth
    assert step.radii[0] == pytest.approx(0.25 + 0.05)  # fresh: no growth


def test_navigation_command_passes_through_unless_orca_changes_it():
    s = FleetSettings(preferred_velocity_source="cmd_vel", max_angular_speed=1.0)
    c = FleetController([AgentSpec("r")], [AgentSpec("p")], s)
    feed(c, 0, 1.0, 0.0, 0.0, yaw=math.pi / 2)
    c.nav_command(0, 1.0, None, 0.4, 0.0, 0.3)
    step = c.step(1.0)
    assert step.commands[0].tolist() == [0.4, 0.0, 0.3]  # exactly, angular included
    assert step.preferred[0] == pytest.approx([0.0, 0.4])  # +y in the map
    c.nav_command(0, 1.0, None, 0.4, 0.0, 5.0)  # turning faster than allowed: bounded
    assert c.step(1.0).commands[0].tolist() == [0.4, 0.0, 1.0]
    feed(c, 1, 1.0, 0.0, 0.7)  # someone 0.7 m ahead: ORCA slows the robot down
    c.nav_command(0, 1.0, None, 0.4, 0.0, 0.3)
    step = c.step(1.0)
    assert step.agent_neighbors[0] == 1 and step.commands[0, 0] < 0.35
    assert c.step(1.6).commands[0].tolist() == [0.0, 0.0, 0.0]  # stale command


def test_differential_drive_commands_v_and_omega_within_limits():
    c = FleetController([AgentSpec("u", holonomic=False, goal=(0.0, 5.0))])
    feed(c, 0, 1.0, 0.0, 0.0)  # facing +x, goal to the left
    step = c.step(1.0)
    v, vy, w = step.commands[0]
    limits = orca.DiffDriveLimits(0.6, 2.0, 0.4, 0.05)
    # ORCA chose a holonomic velocity the unicycle can track (inside the trackable polygon,
    # so slower than the preferred 0.5 m/s to the side), and the unicycle tracks it.
    assert 0.0 < step.chosen[0, 1] < 0.5
    assert step.radii[0] == pytest.approx(0.25 + 0.05 + 0.05)  # grown by the tracking error
    expect_v, expect_w = orca.unicycle_commands(step.chosen, np.array([0.0]), limits)
    assert vy == 0.0 and w > 0.0
    assert (v, w) == pytest.approx((expect_v[0], expect_w[0]))


def test_no_robot_moves_until_every_controlled_robot_was_placed():
    c = FleetController([AgentSpec("a", goal=(5.0, 0.0)), AgentSpec("b", goal=(5.0, 5.0))])
    feed(c, 0, 1.0, 0.0, 0.0)
    step = c.step(1.0)
    assert not step.active.any() and (step.commands == 0.0).all()
    assert "missing: b" in step.reasons[0] and step.reasons[1] == "no odometry yet"
    feed(c, 1, 1.0, 0.0, 5.0)
    assert c.step(1.0).active.all()
    c.configure(FleetSettings(wait_for_all_agents=False))
    lone = FleetController([AgentSpec("a", goal=(5.0, 0.0)), AgentSpec("b")],
                           settings=FleetSettings(wait_for_all_agents=False))
    feed(lone, 0, 1.0, 0.0, 0.0)
    assert lone.step(1.0).active.tolist() == [True, False]


def test_inputs_that_cannot_be_true_are_dropped_with_a_warning():
    out, warn = warnings()
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0))], warn=warn)
    assert not c.odometry(0, 1.0, None, 0, 0, 0, 0, 0, 0, 0, 0, 0)  # zero quaternion
    assert not c.odometry(0, 1.0, None, math.nan, 0, 0, 0, 0, 1, 0, 0, 0)
    assert not c.odometry(0, 1.0, None, 1e300, 0, 0, 0, 0, 1, 0, 0, 0)
    assert not c.odometry(0, 1.0, None, 2e9, 0, 0, 0, 0, 1, 0, 0, 0)  # beyond ORCA's range
    assert not c.goal(0, math.inf, 0.0) and not c.goal(0, 1e300, 0.0)
    assert not c.nav_command(0, 1.0, None, math.nan, 0.0, 0.0)
    assert len(out) == 7
    assert c.odometry(0, 1.0, None, 0, 0, 0, 0, 2, 2, 1e300, 0, 0)  # any-norm quaternion
    assert c.step(1.0).headings[0] == pytest.approx(math.pi / 2)
    assert "bounded" in out[-1]


huge = st.floats(-1e300, 1e300, allow_nan=False)


place = st.one_of(st.floats(-5, 5), huge)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(place, place, huge, huge), min_size=2,
                max_size=5), huge, huge, st.booleans())
def test_no_input_makes_a_command_faster_than_the_limits(agents, gx, gy, nav_mode):
    s = FleetSettings(preferred_velocity_source="cmd_vel" if nav_mode else "goal")
    specs = [AgentSpec(f"a{i}", max_speed=0.6 + 0.1 * i, holonomic=i % 2 == 0)
             for i in range(len(agents))]
    c = FleetController(specs[:2], specs[2:], s)
    for i, (x, y, vx, vy) in enumerate(agents):
        feed(c, i, 1.0, x, y, vx=vx, vy=vy)
    if nav_mode:
        c.nav_command(0, 1.0, None, gx, gy, gx)
    elif abs(gx) <= MAX_COORD and abs(gy) <= MAX_COORD:
        c.goal(0, gx, gy)
    step = c.step(1.0)
    assert np.isfinite(step.commands).all()
    speed = np.hypot(step.commands[:, 0], step.commands[:, 1])
    assert (speed <= c.max_speed[:2] * (1 + 1e-12)).all()
    assert (np.abs(step.commands[:, 2]) <= s.max_angular_speed).all()


def test_settings_and_agents_change_at_run_time_and_bad_values_change_nothing():
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0))])
    feed(c, 0, 1.0, 0.0, 0.0)
    assert c.step(1.0).commands[0, 0] == pytest.approx(0.5)
    c.configure(FleetSettings(pref_speed=0.3))
    assert c.step(1.0).commands[0, 0] == pytest.approx(0.3)
    c.set_agent("r", max_speed=0.2)
    assert c.step(1.0).commands[0, 0] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="r.radius"):
        c.set_agent("r", radius=-1.0)
    with pytest.raises(ValueError, match="time_horizon"):
        c.configure(FleetSettings(time_horizon=math.nan))
    with pytest.raises(ValueError, match="cannot change"):
        c.set_agent("r", holonomic=False)
    assert c.specs[0].radius == 0.25 and c.settings.time_horizon == 2.0
