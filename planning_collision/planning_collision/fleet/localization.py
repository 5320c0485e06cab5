"""Where each robot's odometry frame lies in the global (map) frame: the ``map -> odom``
transform of REP-105, from one of three sources.

A robot's odometry is smooth but drifts; localization (AMCL, slam_toolbox) corrects it by the
``map -> odom`` transform, so that ``map -> odom -> base`` is the robot's pose in the map. The
sources:

``odom_origin``
    a fixed transform given as a parameter (a static ``map -> odom``; zero when the odometry
    is already global). Drift is not corrected.
``pose_topic``
    the localizer's pose of the robot in the map (``<robot>/amcl_pose``), fused with the
    odometry **by timestamp**: the correction is ``P(t) * O(t)^-1``, where ``P(t)`` is the
    localized pose stamped ``t`` and ``O(t)`` the odometry pose at that same instant,
    interpolated from a short history of odometry samples. The latest odometry is then placed
    with that correction, exactly as tf's ``map -> odom -> base`` chain does. AMCL publishes its
    pose only when the robot has moved; the correction stays valid in between.
``tf``
    the ``map -> <robot>/odom`` transform itself, as the localizer publishes it on tf: a short
    history of stamped transforms, interpolated at the odometry sample's time (the latest one
    when the sample is newer, as AMCL's future-dated transforms intend); static transforms
    hold for every time.

Pure Python and numpy, no ROS: the orca_node feeds samples in and reads poses out.
"""

from __future__ import annotations

import bisect
import math

from planning_collision.common import se2

ODOM_ORIGIN, POSE_TOPIC, TF = "odom_origin", "pose_topic", "tf"
POSE_SOURCES = (ODOM_ORIGIN, POSE_TOPIC, TF)

Pose = tuple[float, float, float]


class PoseHistory:
    """Stamped poses of one moving frame over the last ``span`` seconds, for interpolation.

    Samples older than the newest one are dropped (a late message must not rewrite what is
    known); :meth:`pose_at` interpolates between the two samples around a time and clamps
    to the oldest or newest sample outside them."""

    def __init__(self, span: float = 2.0):
        self.span = span
        self.times: list[float] = []
        self.poses: list[Pose] = []

    def __len__(self) -> int:
        return len(self.times)

    def add(self, t: float, pose: Pose) -> bool:
        """Add a sample; False (and nothing added) when it is older than the newest."""
        if self.times and t < self.times[-1]:
            return False
        self.times.append(t)
        self.poses.append(pose)
        cut = bisect.bisect_left(self.times, t - self.span)
        if cut > 0 and cut < len(self.times):
            del self.times[:cut], self.poses[:cut]
        return True

    @property
    def latest(self) -> tuple[float, Pose] | None:
        return (self.times[-1], self.poses[-1]) if self.times else None

    def pose_at(self, t: float) -> Pose | None:
        """The pose at time ``t`` (None before any sample)."""
        if not self.times:
            return None
        i = bisect.bisect_right(self.times, t)
        if i == 0:
            return self.poses[0]
        if i == len(self.times):
            return self.poses[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        if t1 <= t0:
            return self.poses[i]
        return se2.interpolate(self.poses[i - 1], self.poses[i], (t - t0) / (t1 - t0))


class MapFromOdom:
    """The current estimate of one robot's ``map -> odom`` transform.

    :meth:`add_odometry` takes every odometry sample (time, pose in the odometry frame);
    :meth:`add_pose` a localized pose (``pose_topic``); :meth:`add_transform` a ``map ->
    odom`` transform (``tf``). :meth:`correction` is the transform to place the newest
    odometry sample with, or None while the source has given nothing yet."""

    def __init__(self, source: str, origin: Pose = (0.0, 0.0, 0.0), span: float = 2.0):
        if source not in POSE_SOURCES:
            raise ValueError(f"pose source must be one of {', '.join(POSE_SOURCES)}, got "
                             f"{source!r}")
        self.source = source
        self.origin = tuple(float(v) for v in origin)
        self.odometry = PoseHistory(span)
        self.transforms = PoseHistory(span)
        self.static: Pose | None = None
        self._fused: Pose | None = None  # pose_topic: P(t) * O(t)^-1
        self._waiting: tuple[float, Pose] | None = None  # a pose that came before odometry
        self.corrected_at = -math.inf  # time of the localization the correction comes from
        self._corrected_odom: Pose | None = None  # pose_topic: O(t) at that time

    def add_odometry(self, t: float, pose: Pose) -> None:
        self.odometry.add(t, pose)
        if self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            self.add_pose(*waiting)

    def add_pose(self, t: float, pose: Pose) -> None:
        """A localized pose of the robot in the map, stamped ``t``."""
        odom = self.odometry.pose_at(t)
        if odom is None:
            self._waiting = (t, pose)
            return
        self._fused = se2.compose(pose, se2.inverse(odom))
        self.corrected_at = t
        self._corrected_odom = odom

    def add_transform(self, t: float, transform: Pose, static: bool = False) -> None:
        """A ``map -> odom`` transform stamped ``t`` (``static``: valid at every time)."""
        if static:
            self.static = transform
        else:
            self.transforms.add(t, transform)
        self.corrected_at = max(self.corrected_at, t)

    def age(self, now: float) -> float:
        """Seconds from the localization the correction comes from to ``now``: 0 for a fixed
        origin or a static transform (never old), inf before any correction. A future-dated
        transform (AMCL's) gives a negative age."""
        if self.source == ODOM_ORIGIN:
            return 0.0
        if self.source == TF:
            if len(self.transforms):
                return now - self.transforms.latest[0]
            return 0.0 if self.static is not None else math.inf
        return now - self.corrected_at if self._fused is not None else math.inf

    def travelled(self) -> float:
        """pose_topic: metres between the odometry pose at the correction's time and the
        newest odometry sample (how far drift may have grown since); 0 otherwise."""
        latest = self.odometry.latest
        if self.source != POSE_TOPIC or self._corrected_odom is None or latest is None:
            return 0.0
        return math.hypot(latest[1][0] - self._corrected_odom[0],
                          latest[1][1] - self._corrected_odom[1])

    def correction(self) -> Pose | None:
        if self.source == ODOM_ORIGIN:
            return self.origin
        if self.source == POSE_TOPIC:
            return self._fused
        latest = self.odometry.latest
        if latest is not None and len(self.transforms):
            return self.transforms.pose_at(latest[0])
        if len(self.transforms):
            return self.transforms.latest[1]
        return self.static

    def map_pose(self, odom_pose: Pose) -> Pose | None:
        """Where the odometry pose ``odom_pose`` lies in the map (None: not yet known)."""
        correction = self.correction()
        return None if correction is None else se2.compose(correction, odom_pose)
