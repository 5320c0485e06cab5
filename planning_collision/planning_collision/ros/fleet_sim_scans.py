"""fleet_sim's simulated range sensors: a sensor_msgs/LaserScan per robot that has a ``scan``
block, a sensor_msgs/PointCloud2 per robot that has a ``cloud`` block (a depth camera).

Each such robot publishes on ``<name>/scan`` at its laser's ``rate_hz``, in frame
``<name>/base_link`` when the laser is mounted at the robot's centre facing forward (the
default), else in ``<name>/laser``, whose mount fleet_sim then publishes once on
``/tf_static`` (``<name>/base_link -> <name>/laser``, latched). The ranges are what
:func:`planning_collision.sim.laser.simulate_scan` measures against the map, the scenario's
obstacles and every other agent (robots and people alike, seen or not by odometry), with the
laser's range noise, stamped with the ROS time of the measurement. An agent with
``odometry: false`` publishes no scan either (it publishes nothing).

A depth camera publishes on ``<name>/points`` at its ``rate_hz``, always in
``<name>/base_link`` (its mount is already applied: x forward, z up from the floor): an
organised cloud of ``rows`` x ``beams`` points with x, y, z FLOAT32 fields, NaN where a ray
returned nothing (:func:`planning_collision.sim.depth_camera.simulate_cloud`: the floor at
z = 0, walls, obstacles, robots and people), stamped with the time of the measurement. Its
range noise is drawn from a stream of its own (spawned from the lasers'), so adding a camera
does not change the lasers' noise.

The robots' first scans (and clouds) are spread over one period, so that they do not all fall
in the same tick.
"""

from __future__ import annotations

import array

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage

from planning_collision.common import se2
from planning_collision.sim.depth_camera import simulate_cloud
from planning_collision.sim.laser import StaticScene, simulate_scan
from planning_collision.sim.simulation import FleetSimulation, obstacle_shapes

from .fleet_sim_sensors import _time
from .point_clouds import xyz_cloud

TOPIC = "scan"
CLOUD_TOPIC = "points"


class _Laser:
    """A laser (``msg``: the LaserScan it fills) or a depth camera (``msg``: its frame id) and
    when it measures next."""

    __slots__ = ("index", "spec", "publisher", "msg", "period", "phase", "due")

    def __init__(self, index, spec, publisher, msg, phase):
        self.index = index
        self.spec = spec
        self.publisher = publisher
        self.msg = msg
        self.period = 1.0 / spec.rate_hz
        self.phase = phase  # the first scan's delay after the first tick, in periods
        self.due = None

    def is_due(self, now: float) -> bool:
        """Whether a measurement is due at ``now``; if so, the next one is planned."""
        if self.due is None:
            self.due = now + self.phase * self.period
        if now + 1e-9 < self.due:
            return False
        self.due += self.period
        if self.due <= now:  # more than a period behind: no burst of stale measurements
            self.due = now + self.period
        return True


class SimulatedScans:
    """The lasers and depth cameras of one simulation; :meth:`publish` at every tick."""

    def __init__(self, node, sim: FleetSimulation, rng: np.random.Generator):
        self.sim = sim
        self.rng = rng
        self.cloud_rng = rng.spawn(1)[0]  # the cameras' noise: a stream of their own
        scanning = [(i, r) for i, r in enumerate(sim.scenario.robots)
                    if r.scan is not None and r.odometry]
        filming = [(i, r) for i, r in enumerate(sim.scenario.robots)
                   if r.cloud is not None and r.odometry]
        self.lasers: list[_Laser] = []
        self.cameras: list[_Laser] = []
        self.scene = None
        if not scanning and not filming:
            return
        shapes, _ = obstacle_shapes(sim.scenario.obstacles)
        self.scene = StaticScene(sim.monitor.grid, shapes)
        for k, (i, robot) in enumerate(filming):
            publisher = node.create_publisher(PointCloud2, f"{robot.name}/{CLOUD_TOPIC}", 10)
            self.cameras.append(_Laser(i, robot.cloud, publisher, f"{robot.name}/base_link",
                                       k / len(filming)))
        mounts = []
        for k, (i, robot) in enumerate(scanning):
            spec = robot.scan
            frame = f"{robot.name}/base_link"
            if spec.offset != (0.0, 0.0, 0.0):
                frame = f"{robot.name}/laser"
                mounts.append(_mount(robot.name, frame, spec.offset))
            msg = LaserScan()
            msg.header.frame_id = frame
            msg.angle_min, msg.angle_max = spec.angle_min, spec.angle_max
            msg.angle_increment = spec.angle_increment
            msg.time_increment = 0.0  # every beam measured at once
            msg.scan_time = 1.0 / spec.rate_hz
            msg.range_min, msg.range_max = spec.range_min, spec.range_max
            publisher = node.create_publisher(LaserScan, f"{robot.name}/{TOPIC}", 10)
            self.lasers.append(_Laser(i, spec, publisher, msg, k / len(scanning)))
        if mounts:
            latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self._static_pub = node.create_publisher(TFMessage, "/tf_static", latched)
            self._static_pub.publish(TFMessage(transforms=mounts))

    def publish(self, now: float) -> None:
        """Measure and publish every laser and camera that is due at ROS time ``now``
        (seconds)."""
        sim = self.sim
        centres = np.ascontiguousarray(sim.poses[:, :2])
        for camera in self.cameras:
            if camera.is_due(now):
                points = simulate_cloud(sim.poses[camera.index], camera.spec, self.scene,
                                        centres, sim.radii, camera.index, self.cloud_rng)
                camera.publisher.publish(xyz_cloud(points, camera.msg, _time(now)))
        for laser in self.lasers:
            if not laser.is_due(now):
                continue
            ranges = simulate_scan(sim.poses[laser.index], laser.spec, self.scene, centres,
                                   sim.radii, laser.index, self.rng)
            msg = laser.msg
            msg.header.stamp = _time(now)
            msg.ranges = array.array("f", ranges.astype(np.float32).tobytes())
            laser.publisher.publish(msg)


def _mount(name: str, frame: str, offset) -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id = f"{name}/base_link"
    t.child_frame_id = frame
    t.transform.translation.x, t.transform.translation.y = offset[0], offset[1]
    _, _, t.transform.rotation.z, t.transform.rotation.w = se2.quaternion_from_yaw(offset[2])
    return t
