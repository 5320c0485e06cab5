"""collision_server's sensor sources: LaserScan and PointCloud2 topics marked into a sensor
layer of the world (:class:`~planning_collision.grid.sensor_layer.SensorLayer`), which
queries include with the ``LAYER_SENSORS`` bit.

There is no tf2 here, so each source names the odometry topic that places its sensor:
nav_msgs/Odometry whose ``header.frame_id`` is ``global_frame`` and whose
``child_frame_id`` is the frame the scans or clouds are in (fleet_sim's odometry with
``odom_frames_at_start: false``, or a localizer's fused odometry in the map frame). A scan is
placed with that frame's pose at the scan's stamp, interpolated in a short pose history
(:class:`~planning_collision.fleet.localization.PoseHistory`); a scan older than the history
or in another frame is dropped with a throttled warning.

A scan marks the cell of each return and clears the cells along each beam; a point cloud's
points within the height band ``cloud_min_z`` .. ``cloud_max_z`` (in the cloud's frame) are
marked and the cells between the sensor and each of them cleared. Marks last
``sensor_decay`` seconds unless seen again or cleared. The layer's snapshot (a GridMap) is
swapped into the world after a scan, at most every ``SNAPSHOT_PERIOD`` (50 ms: a snapshot of
the default 800 x 800 cell window takes about 0.7 ms, and 16 robots' scans at 10 Hz would
otherwise take 160 a second), and by a timer of that period (so marks decay even when the
sensors go quiet): a query sees a scan at most 50 ms after it arrived.
"""

from __future__ import annotations

import math
import threading
import time
from functools import partial

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import LaserScan, PointCloud2

from planning_collision.fleet.localization import PoseHistory
from planning_collision.grid import GridMap
from planning_collision.grid.sensor_layer import SensorLayer, scan_rays

from .parameters import ParameterError
from .point_clouds import cloud_points
from .pose_sources import seconds
from .qos import RELIABLE

#: Seconds of poses kept per source to place a scan at its stamp.
POSE_SPAN = 2.0
SNAPSHOT_PERIOD = 0.05


def has_sensors(p) -> bool:
    return bool(list(p.scan_topics) or list(p.cloud_topics))


def check_sensor_parameters(p) -> None:
    """ParameterError for what no bound says: paired topic lists, the height band."""
    for data, poses in (("scan_topics", "scan_pose_topics"),
                        ("cloud_topics", "cloud_pose_topics")):
        if len(getattr(p, data)) != len(getattr(p, poses)):
            raise ParameterError(f"{poses} must name one odometry topic for each of {data}: "
                                 f"{len(getattr(p, poses))} for {len(getattr(p, data))}")
        if any(not topic for topic in list(getattr(p, data)) + list(getattr(p, poses))):
            raise ParameterError(f"{data} and {poses} must not hold empty topic names")
    if not p.cloud_min_z < p.cloud_max_z:
        raise ParameterError(f"cloud_min_z ({p.cloud_min_z}) must be below cloud_max_z "
                             f"({p.cloud_max_z})")


class SensorSources:
    """The subscriptions of one collision_server that feed its sensor layer; ``publish`` is
    called with each new snapshot (a GridMap)."""

    def __init__(self, node, p, publish, ready):
        check_sensor_parameters(p)
        self.ready = ready  # whether the grid kernels are loaded (else a scan waits for none)
        self.node = node
        self.global_frame = p.global_frame
        self.layer = SensorLayer(p.sensor_layer_width, p.sensor_layer_height,
                                 p.sensor_layer_resolution,
                                 (p.sensor_layer_origin_x, p.sensor_layer_origin_y),
                                 p.sensor_decay)
        self.band = (p.cloud_min_z, p.cloud_max_z)
        self.publish = publish
        self._lock = threading.Lock()  # the layer: sensor callbacks and the decay timer
        self.histories: list[PoseHistory] = []
        self.frames: list[str | None] = []  # each pose source's child frame, once known
        self.received = 0
        self._published = -math.inf  # time.monotonic() of the latest snapshot
        group = MutuallyExclusiveCallbackGroup()
        for kind, data_topics, pose_topics in (
                (LaserScan, p.scan_topics, p.scan_pose_topics),
                (PointCloud2, p.cloud_topics, p.cloud_pose_topics)):
            for data_topic, pose_topic in zip(data_topics, pose_topics, strict=True):
                k = len(self.histories)
                self.histories.append(PoseHistory(POSE_SPAN))
                self.frames.append(None)
                node.create_subscription(Odometry, pose_topic, partial(self._on_pose, k),
                                         RELIABLE, callback_group=group)
                handler = self._on_scan if kind is LaserScan else self._on_cloud
                node.create_subscription(kind, data_topic, partial(handler, k), 10,
                                         callback_group=group)
        self.publish(self._snapshot(self._now()))
        node.create_timer(SNAPSHOT_PERIOD, self._decay, callback_group=group)

    def _now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def _warn(self, text: str) -> None:
        self.node.get_logger().warning(text, throttle_duration_sec=5.0)

    def _snapshot(self, now: float) -> GridMap:
        with self._lock:
            return self.layer.snapshot(now)

    def _decay(self) -> None:
        try:
            self._publish_due(self._now())
        except Exception as exc:  # never into the executor
            self.node.get_logger().error(f"sensor layer update failed: {exc}",
                                         throttle_duration_sec=5.0)

    # ------------------------------------------------------------------ inputs
    def _on_pose(self, k: int, msg: Odometry) -> None:
        if msg.header.frame_id.lstrip("/") != self.global_frame:
            self._warn(f"sensor pose in frame '{msg.header.frame_id}' ignored: global_frame "
                       f"is '{self.global_frame}'")
            return
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        if not all(math.isfinite(v) for v in (p.x, p.y, yaw)):
            self._warn("sensor pose with NaN or inf ignored")
            return
        self.frames[k] = msg.child_frame_id.lstrip("/")
        self.histories[k].add(seconds(msg.header.stamp), (p.x, p.y, yaw))

    def _pose_at(self, k: int, msg, what: str):
        """The sensor's pose at the message's stamp, or None (warned) when it is unknown."""
        frame = msg.header.frame_id.lstrip("/")
        history = self.histories[k]
        if not len(history):
            self._warn(f"{what} in '{frame}' dropped: no pose of its frame received yet")
            return None, 0.0
        if frame != self.frames[k]:
            self._warn(f"{what} in frame '{frame}' dropped: its pose topic places "
                       f"'{self.frames[k]}' (no tf2 here)")
            return None, 0.0
        stamp = seconds(msg.header.stamp)
        if stamp < history.times[0]:
            self._warn(f"{what} stamped {stamp:.3f} dropped: older than its pose history")
            return None, 0.0
        return history.pose_at(stamp), stamp

    def _on_scan(self, k: int, msg: LaserScan) -> None:
        try:
            pose, stamp = self._pose_at(k, msg, "scan")
            if pose is None:
                return
            values = (msg.angle_min, msg.angle_increment, msg.range_min, msg.range_max)
            if not all(math.isfinite(v) for v in values) or msg.range_max <= 0.0:
                self._warn("scan with non-finite angles or range limits dropped")
                return
            origin, ends, hit = scan_rays(pose, msg.angle_min, msg.angle_increment,
                                          np.asarray(msg.ranges, dtype=np.float64),
                                          msg.range_min, msg.range_max)
            self._add(origin, ends, hit, stamp)
        except ValueError as exc:
            self._warn(f"scan dropped: {exc}")

    def _on_cloud(self, k: int, msg: PointCloud2) -> None:
        try:
            pose, stamp = self._pose_at(k, msg, "point cloud")
            if pose is None:
                return
            xyz = cloud_points(msg)
            lo, hi = self.band
            keep = np.isfinite(xyz).all(axis=1) & (xyz[:, 2] >= lo) & (xyz[:, 2] <= hi)
            x, y, yaw = pose
            c, s = math.cos(yaw), math.sin(yaw)
            local = xyz[keep, :2]
            ends = np.column_stack([x + c * local[:, 0] - s * local[:, 1],
                                    y + s * local[:, 0] + c * local[:, 1]])
            self._add(np.array([x, y]), ends, np.ones(len(ends), bool), stamp)
        except ValueError as exc:
            self._warn(f"point cloud dropped: {exc}")

    def _add(self, origin, ends, hit, stamp: float) -> None:
        if not self.ready():
            self._warn("scan dropped: the kernels are still warming up")
            return
        with self._lock:
            self.layer.add_rays(origin, ends, hit, stamp)
        self.received += 1
        self._publish_due(max(stamp, self._now()))

    def _publish_due(self, now: float) -> None:
        """Swap in a snapshot unless one was swapped in less than SNAPSHOT_PERIOD ago (the
        timer comes back for what is left)."""
        if time.monotonic() - self._published < SNAPSHOT_PERIOD - 1e-3:
            return
        self._published = time.monotonic()
        self.publish(self._snapshot(now))
