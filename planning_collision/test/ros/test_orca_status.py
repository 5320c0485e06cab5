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
