"""FleetController without DDS: who is commanded (a safety filter's manners in cmd_vel mode, the
run-time hand-over switch) and what a stale localization does."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings

NAV = FleetSettings(preferred_velocity_source="cmd_vel", wait_for_all_agents=False)


def feed(c: FleetController, i: int, t: float, x: float, y: float, yaw: float = 0.0,
         vx: float = 0.0):
    qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
    assert c.odometry(i, t, None, x, y, qx, qy, qz, qw, vx, 0.0, 0.0)


def test_a_robot_is_commanded_while_fed_then_one_zero_then_silence():
    c = FleetController([AgentSpec("r")], settings=NAV)
    feed(c, 0, 1.0, 0.0, 0.0)
    step = c.step(1.0)
    assert not step.publish[0] and not step.engaged[0]  # never fed: never commanded
    assert step.reasons[0] == "no navigation command"
    c.nav_command(0, 1.0, None, 0.4, 0.0, 0.0)
    published = []
    for t in np.arange(1.0, 2.5, 0.05):
        feed(c, 0, t, 0.0, 0.0)
        step = c.step(t)
        published.append((float(t), bool(step.publish[0]), step.commands[0, 0]))
    on = [flag for _, flag, _ in published]
    fed = [(t, v) for t, flag, v in published if flag]
    # Fed at 1.0; stop_pub_timeout 0.5: commanded while the command is at most 0.5 s old,
    # then one zero command (within a step of the timeout), then nothing.
    assert on == [True] * len(fed) + [False] * (len(on) - len(fed))
    assert all(v == pytest.approx(0.4) for _, v in fed[:-1]) and fed[-1][1] == 0.0
    assert 0.45 - 1e-9 <= fed[-2][0] - 1.0 <= 0.5 < fed[-1][0] - 1.0 <= 0.55 + 1e-9
    assert fed[-1][0] - 1.0 < 1.0  # publication ends within 1 s of the last command
    # Fed again: commanded again.
    c.nav_command(0, 2.5, None, 0.3, 0.0, 0.0)
    feed(c, 0, 2.5, 0.0, 0.0)
    step = c.step(2.5)
    assert step.publish[0] and step.commands[0, 0] == pytest.approx(0.3)


def fed_robot_meets(other_controlled: bool, other_vx: float = 0.0) -> np.ndarray:
    """Robot a, fed 0.4 m/s along +x, with b 0.8 m ahead: b is a controlled robot never fed,
    or an observed agent that avoids nobody (responsibility 1)."""
    a = AgentSpec("a")
    b = AgentSpec("b")
    c = (FleetController([a, b], settings=NAV) if other_controlled
         else FleetController([a], [b], settings=NAV))
    feed(c, 0, 1.0, 0.0, 0.0)
    feed(c, 1, 1.0, 0.8, 0.0, yaw=math.pi, vx=other_vx)
    c.nav_command(0, 1.0, None, 0.4, 0.0, 0.0)
    step = c.step(1.0)
    assert step.active[0] and step.agent_neighbors[0] == 1
    if other_controlled:
        assert not step.publish[1] and not step.active[1]
    return step.commands[0]


@pytest.mark.parametrize("other_vx", [0.0, 0.3])
def test_a_robot_without_navigation_input_is_avoided_with_full_responsibility(other_vx):
    """b, never fed, is handled exactly as an observed agent that avoids nobody: a takes the
    whole avoidance, and b's measured velocity (teleop, docking) is what a avoids."""
    alone = fed_robot_meets(True, other_vx)
    observed = fed_robot_meets(False, other_vx)
    assert alone == pytest.approx(observed, abs=1e-12)
    assert alone[0] < 0.35  # held back


def test_the_switch_hands_a_robot_over_and_back_in_both_modes():
    for settings in (NAV, FleetSettings(wait_for_all_agents=False)):
        c = FleetController([AgentSpec("r", goal=(5.0, 0.0)), AgentSpec("s", goal=(5.0, 0.0))],
                            settings=settings)
        feed(c, 0, 1.0, 0.0, 0.0)
        feed(c, 1, 1.0, 0.8, 0.0)
        for i in (0, 1):
            c.nav_command(i, 1.0, None, 0.4, 0.0, 0.0)
        assert c.step(1.0).publish.tolist() == [True, True]
        c.set_agent("s", enabled=False)
        step = c.step(1.0)
        assert step.publish.tolist() == [True, True]  # s: one zero command
        assert step.commands[1].tolist() == [0.0, 0.0, 0.0] and not step.active[1]
        assert step.reasons[1] == "disabled (handed over: enabled is false)"
        for _ in range(3):  # then nothing for s, while r still avoids it
            step = c.step(1.0)
            assert step.publish.tolist() == [True, False]
            assert step.agent_neighbors[0] == 1
        c.set_agent("s", enabled=True)
        step = c.step(1.0)
        assert step.publish.tolist() == [True, True] and step.active[1]
    with pytest.raises(ValueError, match="observed"):
        FleetController([AgentSpec("r")], [AgentSpec("p")]).set_agent("p", enabled=False)


def test_hold_and_release_follow_the_same_manners():
    c = FleetController([AgentSpec("r"), AgentSpec("s")], settings=NAV)
    c.nav_command(0, 1.0, None, 0.4, 0.0, 0.0)
    assert c.hold(1.0).tolist() == [True, False]  # warming up: a zero for the fed one only
    assert c.release().tolist() == [True, False]  # deactivate: its one final zero
    assert c.release().tolist() == [False, False]
    goal_mode = FleetController([AgentSpec("r"), AgentSpec("s", enabled=False)])
    assert goal_mode.hold(1.0).tolist() == [True, False]  # goal mode: every enabled robot


def tf_fleet(**settings):
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0), pose_source="tf")],
                        [AgentSpec("p", pose_source="tf")],
                        FleetSettings(wait_for_all_agents=False, **settings))
    for i in (0, 1):
        c.odom_transform(i, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    return c


def test_a_localizer_that_stops_on_tf_stops_the_robot_and_is_reported():
    c = tf_fleet(localization_timeout=1.0)
    for t in np.arange(1.0, 2.01, 0.1):  # odometry keeps coming; the transforms stopped at 1.0
        feed(c, 0, t, 0.0, 0.0)
        feed(c, 1, t, 1.0, 0.0)
    step = c.step(1.9)
    assert step.active[0] and step.localization_ages[0] == pytest.approx(0.9)
    step = c.step(2.05)
    assert not step.active[0] and step.commands[0].tolist() == [0.0, 0.0, 0.0]
    assert step.reasons[0] == "localization stale (1.05 s old)"
    assert step.localization_stale.tolist() == [True, True]
    assert "r: localization 1.05 s old (more than localization_timeout 1 s), stopped" \
        in step.events
    assert any(e.startswith("p: localization") and "still avoided" in e for e in step.events)
    # p, observed with a stale localization, stays in the problem (never forgotten for it).
    assert step.fresh[1] and np.isfinite(step.positions[1]).all()
    c.odom_transform(0, 2.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    feed(c, 0, 2.1, 0.0, 0.0)
    step = c.step(2.1)
    assert step.active[0] and "r: localization received" in step.events
    # localization_timeout 0: never stale.
    c = tf_fleet(localization_timeout=0.0)
    feed(c, 0, 9.0, 0.0, 0.0)
    assert c.step(9.0).active[0]


def test_a_static_transform_or_a_fixed_origin_never_goes_stale():
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0), pose_source="tf"),
                         AgentSpec("s", goal=(5.0, 5.0))],
                        settings=FleetSettings(wait_for_all_agents=False))
    c.odom_transform(0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, static=True)
    feed(c, 0, 50.0, 0.0, 0.0)
    feed(c, 1, 50.0, 0.0, 5.0)
    step = c.step(50.0)
    assert step.active.tolist() == [True, True]
    assert step.localization_ages.tolist() == [0.0, 0.0]


def test_an_old_amcl_pose_is_stale_only_once_the_robot_drove_on_without_one():
    """AMCL publishes its pose only after the robot moved (update_min_d): a standing robot's
    old pose is still right; one that drove localization_travel without a new pose is not."""
    c = FleetController([AgentSpec("r", goal=(5.0, 0.0), pose_source="pose_topic")],
                        settings=FleetSettings(wait_for_all_agents=False,
                                               localization_timeout=1.0,
                                               localization_travel=0.5))
    feed(c, 0, 1.0, 0.0, 0.0)
    assert c.localized_pose(0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    feed(c, 0, 30.0, 0.0, 0.0)  # standing for 29 s: no new pose, none needed
    step = c.step(30.0)
    assert step.active[0] and step.localization_ages[0] == pytest.approx(29.0)
    feed(c, 0, 30.5, 0.4, 0.0)  # 0.4 m on: still within localization_travel
    assert c.step(30.5).active[0]
    feed(c, 0, 31.0, 0.6, 0.0)  # 0.6 m without a pose: stale, stopped
    step = c.step(31.0)
    assert not step.active[0] and step.reasons[0].startswith("localization stale")
    assert c.localized_pose(0, 31.0, 2.6, 0.0, 0.0, 0.0, 0.0, 1.0)
    assert c.step(31.0).active[0]
