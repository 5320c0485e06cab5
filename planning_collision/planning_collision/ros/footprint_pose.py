"""collision_server's footprint in a global frame (Nav2's ``published_footprint``).

Nav2's costmaps publish the footprint placed at the robot's current pose, in the costmap's
global frame (``odom`` for a local costmap). There is no tf2 here, so with
``footprint_pose_topic`` set collision_server takes the robot's pose from that
nav_msgs/Odometry topic, kept in a short history (the same
:class:`~planning_collision.fleet.localization.PoseHistory` the sensor sources place scans
with), and a polygon whose ``header.frame_id`` is the odometry's ``header.frame_id`` is moved
back into the robot's frame by the inverse of the robot's pose at the polygon's stamp. A
polygon stamped more than ``STAMP_TOLERANCE`` outside the poses received cannot be placed and
is refused (the caller warns).
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import Point32
from nav_msgs.msg import Odometry

from planning_collision.fleet.localization import PoseHistory

from .conversions import RequestError, yaw_of
from .pose_sources import seconds

#: Seconds of robot poses kept.
POSE_SPAN = 2.0
#: A footprint stamped this far (seconds) outside the pose history is refused.
STAMP_TOLERANCE = 0.2


def to_robot_frame(xy: np.ndarray, pose) -> np.ndarray:
    """The (K, 2) points ``xy`` given in a frame where the robot stands at ``pose``
    (x, y, yaw), expressed in the robot's own frame (the inverse of the robot's pose)."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    dx = np.asarray(xy, dtype=np.float64)[:, 0] - x
    dy = np.asarray(xy, dtype=np.float64)[:, 1] - y
    return np.column_stack([c * dx + s * dy, -s * dx + c * dy])


class FootprintPose:
    """The robot's poses from one Odometry topic, to move global-frame footprints into the
    robot's frame."""

    def __init__(self):
        self.history = PoseHistory(POSE_SPAN)
        self.frame: str | None = None  # the odometry's header.frame_id, once received

    def on_odometry(self, msg: Odometry) -> str | None:
        """Add the odometry's pose; a reason (str) when it is unusable."""
        p = msg.pose.pose.position
        try:
            yaw = yaw_of(msg.pose.pose.orientation, "pose.pose.orientation")
        except RequestError as exc:
            return f"footprint pose ignored: {exc}"
        if not all(math.isfinite(v) for v in (p.x, p.y, yaw)):
            return "footprint pose with NaN or inf ignored"
        self.frame = msg.header.frame_id.lstrip("/")
        stamp = seconds(msg.header.stamp)
        if not (self.history.times and stamp == self.history.times[-1]):  # a repeat: kept
            self.history.add(stamp, (p.x, p.y, yaw))
        return None

    def placed(self, frame: str) -> bool:
        """Whether polygons in ``frame`` are placed by this odometry."""
        return self.frame is not None and frame.lstrip("/") == self.frame

    def robot_frame(self, points, stamp: float) -> tuple[list[Point32] | None, str]:
        """The polygon's ``points`` (objects with x, y) in the robot's frame, as Point32s,
        by the robot's pose at ``stamp``; (None, reason) when no pose is known within
        STAMP_TOLERANCE."""
        times = self.history.times
        if not times:
            return None, "no pose received yet on footprint_pose_topic"
        if not times[0] - STAMP_TOLERANCE <= stamp <= times[-1] + STAMP_TOLERANCE:
            return None, (f"stamped {stamp:.3f}, but the robot's poses span {times[0]:.3f} .. "
                          f"{times[-1]:.3f} (tolerance {STAMP_TOLERANCE} s)")
        xy = np.array([(q.x, q.y) for q in points], dtype=np.float64).reshape(-1, 2)
        local = to_robot_frame(xy, self.history.pose_at(stamp))
        return [Point32(x=float(x), y=float(y)) for x, y in local], ""
