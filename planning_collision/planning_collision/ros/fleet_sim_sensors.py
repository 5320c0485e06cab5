"""What fleet_sim's robots publish about themselves, as a real fleet's would.

* Odometry (``<name>/odom``): in each robot's odometry frame (its start pose, or the global
  frame), drifting when the scenario's noise asks for it, at ``odom_rate_hz`` (0: after every
  simulation tick) and delivered ``odom_latency`` seconds after it was measured (stamped with
  the time it was measured), so the latency of a loaded robot computer can be reproduced.
* A localizer (``localization_rate_hz`` > 0): every ORCA robot's pose in the global frame on
  ``<name>/amcl_pose`` (geometry_msgs/PoseWithCovarianceStamped, as AMCL publishes it) and the
  ``global_frame -> <name>/odom`` transform on ``tf_topic`` (tf2_msgs/TFMessage), measured with
  the given noise and delivered ``localization_latency`` seconds after its stamp.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseWithCovarianceStamped, TransformStamped
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from planning_collision.common import se2
from planning_collision.sim.simulation import FleetSimulation, SimulatedLocalizer, add_noise

from .parameters import Param

PARAMETERS = (
    Param("odom_rate_hz", 0.0, "Odometry messages per second per robot; 0: after every "
          "simulation tick.", at_least=0.0),
    Param("odom_latency", 0.0, "Seconds between measuring a robot's odometry (its header "
          "stamp) and publishing it, as on a loaded robot computer.", at_least=0.0),
    Param("localization_rate_hz", 0.0, "A simulated localizer (AMCL): poses per second of "
          "every ORCA robot on <name>/amcl_pose and its global_frame -> <name>/odom transform "
          "on tf_topic; 0: no localizer.", at_least=0.0),
    Param("localization_latency", 0.0, "Seconds between a localizer measurement (its stamp) "
          "and its publication.", at_least=0.0),
    Param("localization_position_noise", 0.0, "Std (m) of the localizer's position error.",
          at_least=0.0),
    Param("localization_yaw_noise", 0.0, "Std (rad) of the localizer's heading error.",
          at_least=0.0),
    Param("pose_topic", "amcl_pose", "The localizer's pose topic inside each robot's "
          "namespace."),
    Param("tf_topic", "/tf", "Topic of the localizer's map -> odom transforms."),
)


def _time(seconds: float) -> Time:
    whole = int(seconds // 1)
    return Time(sec=whole, nanosec=int(round((seconds - whole) * 1e9)) % 1_000_000_000)


class SimulatedSensors:
    def __init__(self, node, sim: FleetSimulation, frames: list[tuple[str, str]],
                 global_odometry: bool, orca_names: list[str], params, rng):
        self.sim = sim
        self.rng = rng
        self.global_odometry = global_odometry
        self.params = params
        self.odom_period = 1.0 / params.odom_rate_hz if params.odom_rate_hz > 0.0 else 0.0
        self._next_odometry = -np.inf
        self._odometry: deque = deque()  # (due, stamp, poses, twists)
        self._odom_msgs = []
        self._odom_pubs = []
        for name, (frame_id, child_frame_id) in zip(sim.names, frames, strict=True):
            msg = Odometry()
            msg.header.frame_id, msg.child_frame_id = frame_id, child_frame_id
            noise = sim.scenario.noise
            if noise.position > 0.0 or noise.yaw > 0.0:
                covariance = np.zeros(36)
                covariance[[0, 7]] = noise.position ** 2
                covariance[35] = noise.yaw ** 2
                msg.pose.covariance = covariance
            self._odom_msgs.append(msg)
            visible = sim.scenario.robot(name).odometry  # false: publishes nothing (#25)
            self._odom_pubs.append(node.create_publisher(Odometry, f"{name}/{params.odom_topic}",
                                                         10) if visible else None)
        self.localizer = None
        if params.localization_rate_hz > 0.0:
            self.localizer = SimulatedLocalizer(
                params.localization_rate_hz, params.localization_latency,
                params.localization_position_noise, params.localization_yaw_noise,
                seed=params.noise_seed + 1)
            self._located = [sim.index[name] for name in orca_names]
            self._pose_pubs = [node.create_publisher(PoseWithCovarianceStamped,
                                                     f"{name}/{params.pose_topic}", 10)
                               for name in orca_names]
            self._tf_pub = node.create_publisher(TFMessage, params.tf_topic, 100)
            self._odom_frames = [frames[i][0] for i in self._located]
            self._global_frame = sim.scenario.global_frame

    def publish(self, now: float) -> None:
        """Measure what is due at ROS time ``now`` (seconds) and publish what is due."""
        if now >= self._next_odometry:
            self._next_odometry = now + self.odom_period
            self._odometry.append((now + self.params.odom_latency, now, self._measure(),
                                   self.sim.velocities.tolist()))
        while self._odometry and self._odometry[0][0] <= now + 1e-9:
            _, stamp, poses, twists = self._odometry.popleft()
            self._publish_odometry(_time(stamp), poses, twists)
        if self.localizer is not None:
            for sample in self.localizer.step(self.sim):
                self._publish_localization(now - (self.sim.time - sample.stamp), sample)

    def _measure(self) -> tuple:
        odom = self.sim.odometry_poses()
        if self.global_odometry:
            odom = np.column_stack(se2.compose(tuple(self.sim.starts.T), tuple(odom.T)))
        poses = add_noise(odom, self.sim.scenario.noise, self.rng)
        half = 0.5 * poses[:, 2]
        return (poses[:, 0].tolist(), poses[:, 1].tolist(), np.sin(half).tolist(),
                np.cos(half).tolist())

    def _publish_odometry(self, stamp: Time, poses, twists) -> None:
        xs, ys, qz, qw = poses
        for i, (publisher, msg) in enumerate(zip(self._odom_pubs, self._odom_msgs,
                                                 strict=True)):
            if publisher is None:
                continue
            msg.header.stamp = stamp
            position, orientation = msg.pose.pose.position, msg.pose.pose.orientation
            position.x, position.y = xs[i], ys[i]
            orientation.z, orientation.w = qz[i], qw[i]
            twist = msg.twist.twist
            twist.linear.x, twist.linear.y, twist.angular.z = twists[i]
            publisher.publish(msg)

    def _publish_localization(self, stamp_seconds: float, sample) -> None:
        stamp = _time(stamp_seconds)
        transforms = []
        for k, i in enumerate(self._located):
            x, y, yaw = sample.poses[i].tolist()
            msg = PoseWithCovarianceStamped()
            msg.header.stamp, msg.header.frame_id = stamp, self._global_frame
            msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
            _, _, qz, qw = se2.quaternion_from_yaw(yaw)
            msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = qz, qw
            self._pose_pubs[k].publish(msg)
            fx, fy, fyaw = sample.frames[i].tolist()
            t = TransformStamped()
            t.header.stamp, t.header.frame_id = stamp, self._global_frame
            t.child_frame_id = self._odom_frames[k]
            t.transform.translation.x, t.transform.translation.y = fx, fy
            _, _, t.transform.rotation.z, t.transform.rotation.w = se2.quaternion_from_yaw(fyaw)
            transforms.append(t)
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=transforms))
