"""Things only sensors see (tracked people) in the fleet controller's step: avoided with full
responsibility at their velocity, never commanded or reported; a scan placed with the pose at
its stamp (issue #25)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.tracking import Discs


def feed(c, i, t, x, y, yaw=0.0, vx=0.0, vy=0.0, wz=0.0):
    qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
    assert c.odometry(i, t, t, x, y, qx, qy, qz, qw, vx, vy, wz)


def one(x, y, vx=0.0, vy=0.0, r=0.3):
    return Discs(np.array([[x, y]], float), np.array([[vx, vy]], float), np.array([r]))


def run(disc_at, steps=200, dt=0.05, speed=0.8):
    """A holonomic robot from (0, 0) to (8, 0); ``disc_at(t)`` the disc (or None) at t.
    Returns the closest approach (centre distance minus radii) and the final position."""
    c = FleetController([AgentSpec("r", radius=0.3, max_speed=speed, goal=(8.0, 0.0))],
                        settings=FleetSettings(time_step=dt, pref_speed=speed))
    p, v, closest = np.zeros(2), np.zeros(2), np.inf
    for k in range(steps):
        t = k * dt
        feed(c, 0, t, *p, vx=v[0], vy=v[1])
        discs = disc_at(t)
        step = c.step(t, discs=discs)
        v = step.commands[0, :2]  # heading 0: body frame = global frame
        p = p + v * dt
        if discs is not None:
            gap = np.hypot(*(discs.positions[0] - p)) - 0.3 - discs.radii[0]
            closest = min(closest, gap)
    return closest, p


def test_a_standing_disc_is_walked_around():
    closest, end = run(lambda t: one(4.0, 0.0))
    assert closest > 0.0 and np.hypot(*(end - (8.0, 0.0))) < 0.2


def test_a_disc_coming_head_on_is_avoided_by_the_robot_alone():
    # The disc keeps its course (it is not in the problem as someone who reacts).
    closest, end = run(lambda t: one(8.0 - 1.0 * t, 0.05, vx=-1.0))
    assert closest > 0.0 and np.hypot(*(end - (8.0, 0.0))) < 0.3


def test_without_the_discs_the_robot_walks_into_the_person():
    closest = min(np.hypot(8.0 - 1.0 * t - 0.8 * t, 0.05) - 0.6 for t in np.arange(0, 10, 0.05))
    assert closest < 0.0  # the same walk, had nobody seen the person


def test_no_discs_and_empty_discs_change_nothing():
    def steps(discs):
        c = FleetController([AgentSpec("a", goal=(5.0, 0.0)), AgentSpec("b", goal=(0.0, 0.0))],
                            [AgentSpec("p")])
        feed(c, 0, 1.0, 0.0, 0.0)
        feed(c, 1, 1.0, 5.0, 0.1)
        feed(c, 2, 1.0, 2.5, 3.0, vy=-0.5)
        return c.step(1.0, want_lines=True, discs=discs)

    a, b = steps(None), steps(Discs.empty())
    np.testing.assert_array_equal(a.commands, b.commands)
    with_disc = steps(one(0.9, 0.0))
    assert with_disc.lines is not None and len(with_disc.lines.per_agent) == 2
    assert not np.allclose(with_disc.commands, a.commands)
    assert with_disc.agent_neighbors[0] == a.agent_neighbors[0] + 1


def test_a_differential_drive_robot_avoids_a_disc_too():
    c = FleetController([AgentSpec("r", holonomic=False, goal=(6.0, 0.0))])
    feed(c, 0, 0.0, 0.0, 0.0)
    step = c.step(0.0, want_lines=True, discs=one(1.0, 0.0, r=0.3))
    assert step.commands[0, 0] < 0.5  # not the full preferred speed into the disc


def test_pose_at_a_scan_stamp_follows_the_twist():
    c = FleetController([AgentSpec("r", odom_origin=(1.0, 2.0, math.pi / 2))])
    assert c.pose_at(0, 0.0) is None
    feed(c, 0, 1.0, 0.0, 0.0, yaw=0.0, vx=1.0, wz=0.5)
    x, y, yaw = c.pose_at(0, 0.9)  # 0.1 s before the odometry: 0.1 m back along odom x
    assert (x, y, yaw) == pytest.approx((1.0, 2.0 - 0.1, math.pi / 2 - 0.05))
    assert c.pose_at(0, 1.0 + c.settings.odom_timeout + 0.01) is None
