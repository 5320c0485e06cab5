"""What fleet_sim's robots publish about themselves, as a real fleet's would.

* Odometry (``<name>/odom``): in each robot's odometry frame (its start pose, or the global
  frame), drifting when the scenario's noise asks for it, at ``odom_rate_hz`` (0: after every
  simulation tick) and delivered ``odom_latency`` seconds after it was measured (stamped with
  the time it was measured), so the latency of a loaded robot computer can be reproduced.
* A localizer (``localization_rate_hz`` > 0): every ORCA robot's pose in the global frame on
  ``<name>/amcl_pose`` (geometry_msgs/PoseWithCovarianceStamped, as AMCL publishes it) and the
  ``global_frame -> <name>/odom`` transform on ``tf_topic`` (tf2_msgs/TFMessage), measured with
  the given noise and delivered ``localization_latency`` seconds after its stamp.

Each robot's odometry and localization travel through a network of their own
(:class:`~planning_collision.sim.network.Channel`: ``*_latency``, ``*_jitter``, ``*_loss``,
seeded by ``noise_seed``; in order unless ``network_in_order`` is false), so Wi-Fi's jitter
and loss can be tried; fleet_sim's commands take the same kind of network.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseWithCovarianceStamped, TransformStamped
from nav_msgs.msg import Odometry
from tf2_msgs.msg import TFMessage

from planning_collision.common import se2
from planning_collision.sim.network import Channel, NetworkSettings, stream_rng
from planning_collision.sim.simulation import FleetSimulation, SimulatedLocalizer, add_noise

from .parameters import Param

ODOM_STREAM, COMMAND_STREAM, LOCALIZATION_STREAM = 0, 1, 2  # keys of noise_seed's streams
STREAMS = {"odom": ODOM_STREAM, "command": COMMAND_STREAM, "localization": LOCALIZATION_STREAM}


def network_channel(params, stream: str, index: int) -> Channel:
    """Robot ``index``'s network for ``stream`` (odom, command or localization): that
    stream's ``_latency``, ``_jitter`` and ``_loss`` parameters, seeded by ``noise_seed``."""
    settings = NetworkSettings(*(getattr(params, f"{stream}_{what}")
                                 for what in ("latency", "jitter", "loss")))
    return Channel(settings, in_order=params.network_in_order,
                   rng=stream_rng(params.noise_seed, STREAMS[stream], index))
PARAMETERS = (
    Param("odom_rate_hz", 0.0, "Odometry messages per second per robot; 0: after every "
          "simulation tick.", at_least=0.0),
    Param("odom_latency", 0.0, "Seconds between measuring a robot's odometry (its header "
          "stamp) and publishing it, as on a loaded robot computer.", at_least=0.0),
    Param("odom_jitter", 0.0, "Odometry network: each message is delayed by a further "
          "uniform 0..odom_jitter seconds (seeded by noise_seed).", at_least=0.0),
    Param("odom_loss", 0.0, "Odometry network: probability that a message is lost.",
          at_least=0.0, at_most=1.0),
    Param("localization_rate_hz", 0.0, "A simulated localizer (AMCL): poses per second of "
          "every ORCA robot on <name>/amcl_pose and its global_frame -> <name>/odom transform "
          "on tf_topic; 0: no localizer.", at_least=0.0),
    Param("localization_latency", 0.0, "Seconds between a localizer measurement (its stamp) "
          "and its publication.", at_least=0.0),
    Param("localization_jitter", 0.0, "Localization network: a further uniform "
          "0..localization_jitter seconds per message.", at_least=0.0),
    Param("localization_loss", 0.0, "Localization network: probability that a robot's pose "
          "(and its transform) is lost.", at_least=0.0, at_most=1.0),
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
        self._odometry = [network_channel(params, "odom", i) for i in range(len(sim.names))]
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
            self.localizer = SimulatedLocalizer(  # its latency is the network's
                params.localization_rate_hz, 0.0,
                params.localization_position_noise, params.localization_yaw_noise,
                seed=params.noise_seed + 1)
            self._located = [sim.index[name] for name in orca_names]
            self._localization = [network_channel(params, "localization", i)
                                  for i in self._located]
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
            stamp, (xs, ys, qz, qw) = _time(now), self._measure()
            twists = self.sim.velocities.tolist()
            for i, channel in enumerate(self._odometry):
                channel.send(now, (stamp, xs[i], ys[i], qz[i], qw[i], twists[i]))
        for i, channel in enumerate(self._odometry):
            for message in channel.receive(now):
                self._publish_odometry(i, *message)
        if self.localizer is not None:
            sim_time = self.sim.time
            for sample in self.localizer.step(self.sim):  # measured now, on the wire
                stamp = _time(now - (sim_time - sample.stamp))
                for k, i in enumerate(self._located):
                    self._localization[k].send(sample.stamp, (stamp, sample.poses[i].tolist(),
                                                              sample.frames[i].tolist()))
            self._publish_localization([c.receive(sim_time) for c in self._localization])

    def _measure(self) -> tuple:
        odom = self.sim.odometry_poses()
        if self.global_odometry:
            odom = np.column_stack(se2.compose(tuple(self.sim.starts.T), tuple(odom.T)))
        poses = add_noise(odom, self.sim.scenario.noise, self.rng)
        half = 0.5 * poses[:, 2]
        return (poses[:, 0].tolist(), poses[:, 1].tolist(), np.sin(half).tolist(),
                np.cos(half).tolist())

    def _publish_odometry(self, i: int, stamp: Time, x, y, qz, qw, twist) -> None:
        publisher, msg = self._odom_pubs[i], self._odom_msgs[i]
        if publisher is None:
            return
        msg.header.stamp = stamp
        position, orientation = msg.pose.pose.position, msg.pose.pose.orientation
        position.x, position.y = x, y
        orientation.z, orientation.w = qz, qw
        body = msg.twist.twist
        body.linear.x, body.linear.y, body.angular.z = twist
        publisher.publish(msg)

    def _publish_localization(self, delivered: list) -> None:
        """``delivered[k]``: the (stamp, pose, frame) of located robot k that arrived now;
        one TFMessage carries every transform that arrived."""
        transforms = []
        for k, messages in enumerate(delivered):
            for stamp, (x, y, yaw), frame in messages:
                transforms.append(self._localize(k, stamp, x, y, yaw, frame))
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=transforms))

    def _localize(self, k: int, stamp: Time, x, y, yaw, frame) -> TransformStamped:
        """Publish located robot k's pose; return its map -> odom transform."""
        msg = PoseWithCovarianceStamped()
        msg.header.stamp, msg.header.frame_id = stamp, self._global_frame
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        _, _, qz, qw = se2.quaternion_from_yaw(yaw)
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = qz, qw
        self._pose_pubs[k].publish(msg)
        fx, fy, fyaw = frame
        t = TransformStamped()
        t.header.stamp, t.header.frame_id = stamp, self._global_frame
        t.child_frame_id = self._odom_frames[k]
        t.transform.translation.x, t.transform.translation.y = fx, fy
        _, _, t.transform.rotation.z, t.transform.rotation.w = se2.quaternion_from_yaw(fyaw)
        return t
