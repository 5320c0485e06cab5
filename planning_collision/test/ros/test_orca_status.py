"""orca/status built from a fleet step without DDS (ros/orca_status.py): each robot's
localization age and staleness travel beside its odometry age (issue #21: a localizer that
stops is visible in the status, not only in /diagnostics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.ros.orca_status import status_message


def feed(c, i, t, x, y):
    qx, qy, qz, qw = se2.quaternion_from_yaw(0.0)
    assert c.odometry(i, t, None, x, y, qx, qy, qz, qw, 0.0, 0.0, 0.0)


def test_the_status_carries_each_robots_localization_age_and_staleness():
    c = FleetController([AgentSpec("tf_robot", goal=(5.0, 0.0), pose_source="tf"),
                         AgentSpec("odom_robot", goal=(5.0, 5.0)),
                         AgentSpec("waiting", goal=(0.0, 9.0), pose_source="tf")],
                        settings=FleetSettings(wait_for_all_agents=False,
                                               localization_timeout=1.0))
    c.odom_transform(0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)  # then the localizer stops
    for t in np.arange(1.0, 2.31, 0.1):
        feed(c, 0, t, 0.0, 0.0)
        feed(c, 1, t, 0.0, 5.0)
        feed(c, 2, t, 0.0, 9.0)
    step = c.step(2.3)
    status = status_message(step, c.names, with_lines=False)
    tf_robot, odom_robot, waiting = status.agents
    assert tf_robot.localization_age == pytest.approx(1.3)
    assert tf_robot.localization_stale and not tf_robot.active
    assert tf_robot.inactive_reason == "localization stale (1.30 s old)"
    assert odom_robot.localization_age == 0.0 and not odom_robot.localization_stale
    assert odom_robot.active
    # No transform ever received: infinitely old, reported as never localized.
    assert math.isinf(waiting.localization_age) and not waiting.active


@pytest.mark.parametrize("with_lines", [False, True])
def test_the_serialized_status_is_the_message_status(with_lines):
    """orca_node publishes the status as bytes (ros/cdr.py): what a subscriber reads must be
    field for field the message object path's status, for a step with active, waiting and
    observed agents, half-planes and a NaN distance (cmd_vel-mode robots have no goal)."""
    from rclpy.serialization import deserialize_message, serialize_message
    from rclpy.time import Time

    from planning_collision.ros import cdr
    from planning_collision.ros.orca_status import publish_status
    from planning_collision_interfaces.msg import OrcaStatus

    c = FleetController([AgentSpec("a", goal=(5.0, 0.0)), AgentSpec("b_\u00e9", goal=(0.0, 0.0)),
                         AgentSpec("never_seen", goal=(1.0, 1.0))],
                        [AgentSpec("person")],
                        settings=FleetSettings(wait_for_all_agents=False))
    for t in np.arange(1.0, 1.5, 0.1):
        feed(c, 0, t, 0.0, 0.0)
        feed(c, 1, t, 1.2, 0.1)
        feed(c, 3, t, 0.6, 1.0)
    step = c.step(1.45, want_lines=with_lines)
    assert step.active.tolist() == [True, True, False]
    stamp = Time(seconds=12, nanoseconds=5).to_msg()
    sent: dict[bool, bytes] = {}
    for raw in (False, True):
        class Publisher:
            def publish(self, msg, raw=raw):
                sent[raw] = msg if raw else serialize_message(msg)
        publish_status(Publisher(), raw, step, c.names, with_lines, "map", stamp, 19.0, 0.0)
    assert isinstance(sent[True], bytes)
    from_bytes = deserialize_message(sent[True], OrcaStatus)
    from_message = deserialize_message(sent[False], OrcaStatus)
    assert from_bytes.compute_time > 0 and from_message.compute_time > 0
    from_bytes.compute_time = from_message.compute_time = 0.0
    assert serialize_message(from_bytes) == serialize_message(from_message)
    assert [a.name for a in from_bytes.agents] == ["a", "b_\u00e9", "never_seen"]
    assert len(from_bytes.agents[0].orca_line_points) == (
        len(step.lines.per_agent[0][0]) if with_lines else 0)
    assert (len(from_bytes.agents[0].orca_line_points) > 0) == with_lines
    assert cdr.self_check().status == ""
