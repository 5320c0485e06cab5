"""orca_node's sensed objects: the controlled robots' LaserScans and PointCloud2s turned into
tracks, tracks from an external tracker, and the tracks out (issue #25).

Each scan (``<name>/<scan_topic>``) is placed in the global frame with its robot's pose at
the scan's stamp (:meth:`~planning_collision.fleet.FleetController.pose_at`), stripped of the
points near the static world (the map's and the obstacle sets' edges, as the obstacle worker
traced them) and near every agent placed from odometry (the scanning robot included),
clustered and fed to the one :class:`~planning_collision.tracking.Tracker` the node's robots
share. A point cloud (``<name>/<cloud_topic>``, in the robot's base frame) goes the same
way once its points within the height band ``cloud_min_z`` .. ``cloud_max_z`` are reduced to
the nearest per half degree of bearing
(:func:`~planning_collision.tracking.scan_points.cloud_to_points`).

Each step every track (a tentative one stands, grown) and the external tracks
(``external_tracks_topic``, a ``TrackArray``: a people tracker's variable set) go to the fleet
controller as discs avoided with full responsibility
(:func:`~planning_collision.tracking.tracker.discs_of`); a robot whose command would still
touch one within ``brake_time`` is stopped instead (:mod:`planning_collision.tracking.brake`).
The confirmed tracks go out on ``tracks_topic`` (``TrackArray``) and, per track, as a
``geometry_msgs/PolygonInstanceStamped`` (``track_polygons_topic``) for collision_monitor's
polygon source.
"""

from __future__ import annotations

import math
import threading
from functools import partial

import numpy as np
from geometry_msgs.msg import Point32, PolygonInstanceStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan, PointCloud2

from planning_collision.fleet.controller import sample_time
from planning_collision.tracking import (
    Discs,
    StaticMask,
    Tracker,
    TrackerSettings,
    Tracks,
    cluster_scan,
    drop_known,
    scan_to_points,
)
from planning_collision.tracking.brake import must_stop, touched
from planning_collision.tracking.scan_points import cloud_to_points
from planning_collision.tracking.tracker import discs_of
from planning_collision_interfaces.msg import Track, TrackArray

from .parameters import ParameterError
from .point_clouds import cloud_points
from .pose_sources import seconds

POLYGON_SIDES = 8


def tracker_settings(p) -> TrackerSettings:
    """The tracker's settings from orca_node's parameters (ParameterError names a bad one)."""
    settings = TrackerSettings(
        measurement_noise=p.track_measurement_noise, accel_noise=p.track_accel_noise,
        confirm_hits=p.track_confirm_hits, lost_after=p.track_lost_after,
        still_speed=p.track_still_speed)
    try:
        settings.check()
    except ValueError as exc:
        raise ParameterError(f"track_{exc}") from None
    return settings


def mount_of(p) -> tuple[float, float, float]:
    mount = list(p.scan_mount)
    if len(mount) != 3 or not all(math.isfinite(float(v)) for v in mount):
        raise ParameterError(f"scan_mount must be [x, y, yaw], finite, got {mount!r}")
    return float(mount[0]), float(mount[1]), float(mount[2])


class SensedObjects:
    """Scans in, tracks to the controller and out (see the module docstring)."""

    def __init__(self, node, fleet, p, obstacles, warn):
        self.node, self.fleet, self.p, self.warn = node, fleet, p, warn
        self.settings = tracker_settings(p)
        self.mount = mount_of(p)
        self.tracker = Tracker(self.settings)
        self._obstacles = obstacles  # the ObstacleWorker: its polygons mask the scans
        self._mask: StaticMask | None = None
        self._mask_builds = -1
        self._lock = threading.Lock()
        self._external: tuple[float, Tracks] | None = None
        self.scans = 0
        self.clouds = 0
        self.stops = 0  # commands the passive-safety stop replaced by zero
        # Whose latest scan saw someone on or in the robot (tracking/brake.py: touched).
        self._touched = np.zeros(fleet.controlled, dtype=bool)
        names, k = fleet.names, fleet.controlled
        if p.scan_topic:
            for i, name in enumerate(names[:k]):
                node.create_subscription(LaserScan, f"{name}/{p.scan_topic}",
                                         partial(self._on_scan, i), qos_profile_sensor_data)
        if p.cloud_topic:
            for i, name in enumerate(names[:k]):
                node.create_subscription(PointCloud2, f"{name}/{p.cloud_topic}",
                                         partial(self._on_cloud, i), qos_profile_sensor_data)
        if p.external_tracks_topic:
            node.create_subscription(TrackArray, p.external_tracks_topic, self._on_tracks, 10)
        self._tracks_pub = (node.create_publisher(TrackArray, p.tracks_topic, 10)
                            if p.tracks_topic else None)
        self._polygon_pub = (node.create_publisher(PolygonInstanceStamped,
                                                   p.track_polygons_topic, 50)
                             if p.track_polygons_topic else None)

    # ------------------------------------------------------------------ in
    def _static_mask(self) -> StaticMask | None:
        worker = self._obstacles
        builds = getattr(worker, "builds", 0)
        if builds != self._mask_builds:
            polygons = (list(getattr(worker, "_map_polygons", None) or [])
                        + list(getattr(worker, "_array_polygons", None) or []))
            self._mask = StaticMask.from_polygons(polygons, margin=self.p.scan_static_margin)
            self._mask_builds = builds
        return self._mask

    def _on_scan(self, i: int, msg: LaserScan) -> None:
        fleet, name = self.fleet, self.fleet.names[i]
        if msg.header.frame_id == "" or not len(msg.ranges):
            return
        t, pose = self._placed(i, msg, "scan")
        if pose is None:
            return
        if not (msg.angle_increment != 0.0 and math.isfinite(msg.angle_increment)
                and math.isfinite(msg.angle_min) and msg.range_max > 0.0):
            self.warn(f"scan/{name}", f"{name}: scan dropped: bad angles or range_max")
            return
        try:
            scan = scan_to_points(np.asarray(msg.ranges, dtype=np.float64), msg.angle_min,
                                  msg.angle_increment, msg.range_min, msg.range_max, pose,
                                  self.mount)
            on_robot = touched(msg.ranges, scan.points, pose, fleet.radius[i])
            clusters = self._clusters(i, t, pose, scan, msg.angle_increment)
        except Exception as exc:  # a malformed scan must not stop the others
            self.warn(f"scan/{name}", f"{name}: scan dropped: {exc}")
            return
        with self._lock:
            self.tracker.update(t, clusters)
            self.scans += 1
            if i < self._touched.size:
                self._touched[i] = on_robot

    def _placed(self, i: int, msg, kind: str):
        """(t, pose): the sample time of robot ``i``'s scan or cloud ``msg`` and the robot's
        pose then; pose None (warned once per robot and kind) when it is not known."""
        t = sample_time(seconds(msg.header.stamp), self.node._now())
        pose = self.fleet.pose_at(i, t)
        if pose is None:
            name = self.fleet.names[i]
            self.warn(f"{kind}/{name}", f"{name}: {kind} dropped: no pose of the robot at its "
                      f"stamp")
        return t, pose

    def _clusters(self, i: int, t: float, pose, scan, increment: float):
        """Robot ``i``'s points (a scan's or a cloud's, placed with its ``pose`` at ``t``)
        without the known agents and the static world, clustered."""
        fleet = self.fleet
        known = [(j, pose if j == i else fleet.pose_at(j, t))
                 for j in range(len(fleet.names))]
        known = [(j, q) for j, q in known if q is not None]
        scan = drop_known(scan, [j for j, _ in known].index(i),
                          [q[:2] for _, q in known], [fleet.radius[j] for j, _ in known],
                          self.p.scan_agent_margin)
        mask = self._static_mask()
        if mask is not None:
            scan = mask.drop(scan)
        return cluster_scan(scan, increment, gap=self.p.cluster_gap,
                            max_radius=self.p.cluster_max_radius)

    def _on_cloud(self, i: int, msg: PointCloud2) -> None:
        name = self.fleet.names[i]
        if msg.header.frame_id == "" or not msg.width * msg.height:
            return
        t, pose = self._placed(i, msg, "cloud")
        if pose is None:
            return
        try:
            scan, increment = cloud_to_points(cloud_points(msg), pose, self.p.cloud_min_z,
                                              self.p.cloud_max_z)
            clusters = self._clusters(i, t, pose, scan, increment)
        except Exception as exc:  # a malformed cloud must not stop the others
            self.warn(f"cloud/{name}", f"{name}: cloud dropped: {exc}")
            return
        with self._lock:
            self.tracker.update(t, clusters)
            self.clouds += 1

    def _on_tracks(self, msg: TrackArray) -> None:
        t = sample_time(seconds(msg.header.stamp), self.node._now())
        if msg.header.frame_id not in ("", self.p.global_frame):
            self.warn("external-tracks", f"external tracks in frame {msg.header.frame_id!r} "
                      f"ignored: expected {self.p.global_frame!r}")
            return
        tracks = tracks_from_msg(msg)
        ok = (np.isfinite(tracks.positions).all(axis=1) & np.isfinite(tracks.velocities).all(
            axis=1) & np.isfinite(tracks.radii) & (tracks.radii >= 0.0))
        if not ok.all():
            self.warn("external-tracks", f"{int((~ok).sum())} external tracks with NaN, inf "
                      f"or a negative radius dropped")
        self._external = (t, Tracks(*(field[ok] for field in tracks)))

    # ------------------------------------------------------------------ to the controller
    def tracks(self, now: float) -> Tracks:
        with self._lock:
            return self.tracker.tracks(now)

    def discs(self, now: float) -> Discs:
        """Own tracks (the tentative ones too: :meth:`Tracker.discs`) and the external ones
        (while younger than track_lost_after), at ``now``."""
        with self._lock:
            discs = self.tracker.discs(now)
        if self._external is not None:
            t, ext = self._external
            if now - t <= self.settings.lost_after and ext.count:
                moved = ext._replace(positions=ext.positions + ext.velocities * max(now - t,
                                                                                    0.0))
                discs = discs.concatenate(discs_of(moved, self.settings))
        return discs

    def brake(self, step, commands: np.ndarray, discs: Discs) -> np.ndarray:
        """``commands`` (body frame, the controlled robots) with zero for every robot whose
        command would drive it into a disc within brake_time, even when standing would be
        touched sooner (:func:`~planning_collision.tracking.brake.must_stop`), and for every
        robot whose latest scan saw someone on or in it (``touched``)."""
        fleet, k = self.fleet, self.fleet.controlled
        if self.p.brake_time <= 0.0:
            return commands
        with self._lock:
            stop = self._touched[:k].copy()  # someone on or in the robot: it stands
        if discs is not None and discs.count:
            headings = step.headings[:k]
            c, s = np.cos(headings), np.sin(headings)
            ahead = np.column_stack((c * commands[:, 0] - s * commands[:, 1],
                                     s * commands[:, 0] + c * commands[:, 1]))
            stop |= must_stop(step.positions[:k], ahead, fleet.radius[:k], discs,
                              self.p.brake_time)
        stop &= step.active
        if stop.any():
            commands = commands.copy()
            commands[stop] = 0.0
            self.stops += int(stop.sum())
        return commands

    # ------------------------------------------------------------------ out
    def publish(self, tracks: Tracks, stamp) -> None:
        frame = self.p.global_frame
        if self._tracks_pub is not None:
            msg = tracks_to_msg(tracks)
            msg.header.stamp, msg.header.frame_id = stamp, frame
            self._tracks_pub.publish(msg)
        if self._polygon_pub is not None:
            angles = 2 * np.pi * np.arange(POLYGON_SIDES) / POLYGON_SIDES
            grow = 1.0 / math.cos(math.pi / POLYGON_SIDES)  # the polygon contains the disc
            for k in range(tracks.count):
                msg = PolygonInstanceStamped()
                msg.header.stamp, msg.header.frame_id = stamp, frame
                msg.polygon.id = int(tracks.ids[k])
                r = float(tracks.radii[k]) * grow
                x, y = tracks.positions[k]
                msg.polygon.polygon.points = [
                    Point32(x=float(x + r * math.cos(a)), y=float(y + r * math.sin(a)), z=0.0)
                    for a in angles]
                self._polygon_pub.publish(msg)


def tracks_to_msg(tracks: Tracks) -> TrackArray:
    msg = TrackArray()
    for k in range(tracks.count):
        track = Track()
        track.id = int(tracks.ids[k])
        track.position.x, track.position.y = (float(v) for v in tracks.positions[k])
        track.velocity.x, track.velocity.y = (float(v) for v in tracks.velocities[k])
        track.radius = float(tracks.radii[k])
        track.covariance = [float(v) for v in tracks.covariances[k].ravel()]
        track.age, track.unseen = float(tracks.ages[k]), float(tracks.unseen[k])
        msg.tracks.append(track)
    return msg


def tracks_from_msg(msg: TrackArray) -> Tracks:
    n = len(msg.tracks)
    return Tracks(
        ids=np.array([t.id for t in msg.tracks], dtype=np.int64),
        positions=np.array([(t.position.x, t.position.y) for t in msg.tracks],
                           dtype=np.float64).reshape(n, 2),
        velocities=np.array([(t.velocity.x, t.velocity.y) for t in msg.tracks],
                            dtype=np.float64).reshape(n, 2),
        radii=np.array([t.radius for t in msg.tracks], dtype=np.float64),
        covariances=np.array([np.asarray(t.covariance, dtype=np.float64).reshape(4, 4)
                              for t in msg.tracks]).reshape(n, 4, 4),
        ages=np.array([t.age for t in msg.tracks], dtype=np.float64),
        unseen=np.array([t.unseen for t in msg.tracks], dtype=np.float64))
