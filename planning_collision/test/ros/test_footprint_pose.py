"""collision_server's global-frame footprints (Nav2's published_footprint) moved into the
robot's frame by the odometry pose at their stamp; no DDS (messages only)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Point32
from nav_msgs.msg import Odometry

from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.footprint_pose import STAMP_TOLERANCE, FootprintPose, to_robot_frame

FORKLIFT = np.array([(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3), (0.5, -0.25),
                     (1.2, -0.25), (1.2, -0.15), (0.5, -0.15), (0.5, 0.15), (1.2, 0.15),
                     (1.2, 0.25), (0.5, 0.25)])


def odometry(x, y, yaw, stamp, frame="odom") -> Odometry:
    msg = Odometry()
    msg.header.frame_id = frame
    msg.header.stamp.sec = int(math.floor(stamp))
    msg.header.stamp.nanosec = int(round((stamp - math.floor(stamp)) * 1e9))
    msg.pose.pose.position.x, msg.pose.pose.position.y = float(x), float(y)
    msg.pose.pose.orientation = quaternion_from_yaw(yaw)
    return msg


def placed_with_shapely(points, x, y, yaw) -> np.ndarray:
    """An independent placement of a robot-frame polygon at a pose (shapely's affinity)."""
    from shapely import Polygon, affinity

    moved = affinity.translate(affinity.rotate(Polygon(points), yaw, (0, 0), use_radians=True),
                               x, y)
    return np.asarray(moved.exterior.coords)[:-1]


def test_to_robot_frame_inverts_the_placement_at_random_poses():
    rng = np.random.default_rng(3)
    for x, y, yaw in zip(rng.uniform(-50, 50, 40), rng.uniform(-50, 50, 40),
                         rng.uniform(-math.pi, math.pi, 40), strict=True):
        world = placed_with_shapely(FORKLIFT, x, y, yaw)
        np.testing.assert_allclose(to_robot_frame(world, (x, y, yaw)), FORKLIFT, atol=1e-9)
    # A quarter turn by hand: the point ahead of a robot facing +y at (1, 2) is (1, 3).
    np.testing.assert_allclose(to_robot_frame(np.array([[1.0, 3.0]]), (1.0, 2.0, math.pi / 2)),
                               [[1.0, 0.0]], atol=1e-12)


def points32(xy):
    return [Point32(x=float(a), y=float(b)) for a, b in xy]


def test_the_pose_at_the_stamp_is_interpolated_and_far_stamps_are_refused():
    placer = FootprintPose()
    assert not placer.placed("odom")
    local, reason = placer.robot_frame(points32(FORKLIFT), 10.0)
    assert local is None and "no pose received" in reason
    # The robot drives +x at 1 m/s, turned 0.7 rad: poses at 10.0 and 10.1 s.
    for t in (10.0, 10.1):
        assert placer.on_odometry(odometry(2.0 + (t - 10.0), -1.0, 0.7, t)) is None
    assert placer.placed("odom") and placer.placed("/odom") and not placer.placed("map")
    # A footprint published at 10.05 s was placed at x = 2.05.
    world = placed_with_shapely(FORKLIFT, 2.05, -1.0, 0.7)
    local, reason = placer.robot_frame(points32(world), 10.05)
    assert reason == ""
    np.testing.assert_allclose([(p.x, p.y) for p in local], FORKLIFT, atol=1e-6)
    # Within the tolerance past the newest pose: the newest; beyond it, or before the
    # oldest: refused.
    local, _ = placer.robot_frame(points32(placed_with_shapely(FORKLIFT, 2.1, -1.0, 0.7)),
                                  10.1 + STAMP_TOLERANCE / 2)
    np.testing.assert_allclose([(p.x, p.y) for p in local], FORKLIFT, atol=1e-6)
    for stamp in (10.1 + 1.5 * STAMP_TOLERANCE, 10.0 - 1.5 * STAMP_TOLERANCE):
        local, reason = placer.robot_frame(points32(world), stamp)
        assert local is None and "tolerance" in reason


@pytest.mark.parametrize("bad", [(math.nan, 0.0), (0.0, math.inf)])
def test_an_unusable_odometry_is_refused_with_a_reason(bad):
    placer = FootprintPose()
    msg = odometry(bad[0], bad[1], 0.0, 1.0)
    assert "NaN or inf" in placer.on_odometry(msg)
    zero = odometry(0.0, 0.0, 0.0, 1.0)
    zero.pose.pose.orientation.w = 0.0
    assert "footprint pose ignored" in placer.on_odometry(zero)
    assert not placer.placed("odom")
