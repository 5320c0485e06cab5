"""collision_server's sensor layer over DDS (issue #25 item 4): a LaserScan placed by its
odometry topic marks what it sees, line of sight and footprint checks with LAYER_SENSORS see
it (and only with it), a later scan clears it along its beams, and a mark not seen again
decays."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
import pytest
from geometry_msgs.msg import Pose
from nav_msgs.msg import Odometry
from ros_clients import stopping
from sensor_msgs.msg import LaserScan, PointCloud2, PointField

from planning_collision.resources import config_file
from planning_collision.ros.collision_server_parameters import PARAMETERS
from planning_collision.ros.collision_server_sensors import check_sensor_parameters, cloud_points
from planning_collision.ros.parameters import ParameterError
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.laser import LaserSpec, true_ranges
from planning_collision_interfaces.srv import CheckCollision, CheckLineOfSight

DECAY = 0.6
SPEC = LaserSpec(beams=360, range_max=6.0)
ROBOT = (1.0, 0.5, 0.4)  # where the scanning robot stands (map frame)
PERSON = ((3.0, 1.5), 0.25)  # a person in front of it, seen only by the laser


@pytest.fixture(scope="module")
def server(domain_id, client_factory):
    proc = RosProcess("collision_server_sensors", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        {"scan_topics": ["robot/scan"], "scan_pose_topics": ["robot/odom"],
         "cloud_topics": ["robot/points"], "cloud_pose_topics": ["robot/odom"],
         "cloud_min_z": 0.1, "cloud_max_z": 2.0,
         "sensor_decay": DECAY, "sensor_layer_resolution": 0.05, "sensor_layer_width": 10.0,
         "sensor_layer_height": 10.0, "sensor_layer_origin_x": -5.0,
         "sensor_layer_origin_y": -5.0},
        namespace="css"), domain_id)
    clients: list = []
    with stopping(clients, [proc]):
        client = client_factory("sensor_feeder")
        clients.append(client)
        odom = client.node.create_publisher(Odometry, "/css/robot/odom", 10)
        scan = client.node.create_publisher(LaserScan, "/css/robot/scan", 10)
        cloud = client.node.create_publisher(PointCloud2, "/css/robot/points", 10)
        client.wait_for_service(CheckLineOfSight, "/css/check_line_of_sight", 120.0, proc)
        # scans are dropped until the kernels are loaded (a fresh cache compiles them first)
        assert proc.wait_for_line("kernels ready", 180.0), proc.lines[-20:]
        assert client.spin_until(lambda: odom.get_subscription_count() == 2
                                 and scan.get_subscription_count()
                                 and cloud.get_subscription_count(), 30.0)
        yield client, proc, odom, scan, cloud


def send(server, person: bool | None) -> None:
    """The robot's odometry and its scan (with or without the person; None: no scan),
    stamped now."""
    client, _, odom_pub, scan_pub, _ = server
    stamp = client.node.get_clock().now().to_msg()
    odom = Odometry()
    odom.header.stamp, odom.header.frame_id = stamp, "map"
    odom.child_frame_id = "robot/base_link"
    odom.pose.pose.position.x, odom.pose.pose.position.y = ROBOT[:2]
    odom.pose.pose.orientation.z = math.sin(ROBOT[2] / 2)
    odom.pose.pose.orientation.w = math.cos(ROBOT[2] / 2)
    odom_pub.publish(odom)
    if person is None:
        return
    ranges = true_ranges(ROBOT, SPEC, None, [PERSON[0]] if person else np.zeros((0, 2)),
                         [PERSON[1]] if person else [])
    msg = LaserScan()
    msg.header.stamp, msg.header.frame_id = stamp, "robot/base_link"
    msg.angle_min, msg.angle_increment = SPEC.angle_min, SPEC.angle_increment
    msg.angle_max, msg.range_min, msg.range_max = SPEC.angle_max, 0.05, SPEC.range_max
    msg.ranges = ranges.astype(np.float32).tolist()
    scan_pub.publish(msg)


def line_of_sight(server, layers, start=(1.0, 1.5), goal=(5.0, 1.5)):
    client, proc = server[:2]
    r = CheckLineOfSight.Request(layers=layers)
    r.start.x, r.start.y = start
    r.goal.x, r.goal.y = goal
    reply = client.call(CheckLineOfSight, "/css/check_line_of_sight", r, process=proc)
    assert reply.success, reply.message
    return reply


def until(server, person: bool, blocked: bool, timeout: float = 30.0):
    """Send scans until line of sight through the person's place is (not) blocked."""
    deadline = time.monotonic() + timeout
    while True:
        send(server, person)
        server[0].spin_for(0.1)
        reply = line_of_sight(server, CheckLineOfSight.Request.LAYER_SENSORS)
        if (not reply.clear) == blocked or time.monotonic() > deadline:
            return reply


def test_a_scan_marks_clears_and_decays(server):
    reply = until(server, person=True, blocked=True)
    assert not reply.clear and reply.blocked_by == "sensors"
    # where the ray meets the person's near side (x = 2.75), to a cell
    assert reply.first_blocked_point.x == pytest.approx(2.75, abs=0.08)
    # the map layer is not asked for: no map is needed; without LAYER_SENSORS nothing blocks
    client, proc = server[:2]
    req = CheckCollision.Request(layers=CheckCollision.Request.LAYER_SENSORS)
    req.footprint_string = "[[0.2, 0.2], [-0.2, 0.2], [-0.2, -0.2], [0.2, -0.2]]"
    req.poses = [Pose(), Pose()]
    req.poses[0].position.x, req.poses[0].position.y = 2.6, 1.5
    req.poses[1].position.x, req.poses[1].position.y = 1.0, 2.8
    hits = client.call(CheckCollision, "/css/check_collision", req, process=proc)
    assert hits.success, hits.message
    assert list(hits.in_collision) == [True, False]
    no_map = line_of_sight(server, CheckLineOfSight.Request.LAYER_OBSTACLES)
    assert no_map.clear
    # the person walks away: the next scan's beams clear the cells
    reply = until(server, person=False, blocked=False, timeout=5.0)
    assert reply.clear
    # seen again, then the sensor goes quiet: the mark decays
    assert not until(server, person=True, blocked=True).clear
    server[0].spin_for(DECAY + 0.3)
    assert line_of_sight(server, CheckLineOfSight.Request.LAYER_SENSORS).clear


def sensor_params(**changes):
    values = {p.name: p.default for p in PARAMETERS}
    values.update(changes)
    return SimpleNamespace(**values)


@pytest.mark.parametrize("changes, message", [
    ({"scan_topics": ["a/scan"]}, "scan_pose_topics must name one odometry topic for each"),
    ({"cloud_topics": ["c"], "cloud_pose_topics": ["o", "p"]}, "cloud_pose_topics"),
    ({"scan_topics": [""], "scan_pose_topics": ["o"]}, "must not hold empty topic names"),
    ({"cloud_min_z": 1.0, "cloud_max_z": 0.5}, "cloud_min_z"),
])
def test_sensor_parameters_that_cannot_work_are_refused_by_name(changes, message):
    with pytest.raises(ParameterError, match=message):
        check_sensor_parameters(sensor_params(**changes))
    check_sensor_parameters(sensor_params(scan_topics=["a/scan"], scan_pose_topics=["a/odom"]))


def cloud_msg(points: np.ndarray, step: int = 16, width: int | None = None,
              height: int = 1) -> PointCloud2:
    msg = PointCloud2(height=height, width=width or len(points) // height, point_step=step,
                      is_bigendian=False)
    msg.row_step = step * msg.width
    msg.fields = [PointField(name=name, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                  for k, name in enumerate("xyz")]
    raw = np.zeros((len(points), step), np.uint8)
    raw[:, :12] = np.ascontiguousarray(points, dtype="<f4").view(np.uint8).reshape(-1, 12)
    msg.data = raw.tobytes()
    return msg


def test_cloud_points_reads_the_xyz_fields_of_any_layout():
    points = np.arange(30, dtype=np.float32).reshape(10, 3)
    assert np.array_equal(cloud_points(cloud_msg(points)), points)
    assert np.array_equal(cloud_points(cloud_msg(points, height=2)), points)  # 2 rows of 5
    short = cloud_msg(points)
    short.data = short.data[:-1]
    with pytest.raises(ValueError, match="bytes"):
        cloud_points(short)
    no_z = cloud_msg(points)
    no_z.fields = no_z.fields[:2]
    with pytest.raises(ValueError, match="field 'z'"):
        cloud_points(no_z)


def test_a_point_cloud_marks_the_points_in_its_height_band(server):
    client = server[0]
    low, high = (0.0, 2.0, 0.5), (0.0, 3.0, 2.5)  # robot frame: on its left, the second
    c, s = math.cos(ROBOT[2]), math.sin(ROBOT[2])  # one above the band

    def world(p):
        return ROBOT[0] + c * p[0] - s * p[1], ROBOT[1] + s * p[0] + c * p[1]

    deadline = time.monotonic() + 30.0
    while True:
        send(server, person=None)  # the pose only: a scan would clear the cloud's marks
        msg = cloud_msg(np.array([low, high], dtype=np.float32))
        msg.header.stamp = client.node.get_clock().now().to_msg()
        msg.header.frame_id = "robot/base_link"
        server[4].publish(msg)
        client.spin_for(0.1)
        x, y = world(low)
        seen = line_of_sight(server, CheckLineOfSight.Request.LAYER_SENSORS, (x - 1.0, y),
                             (x + 1.0, y))
        if not seen.clear or time.monotonic() > deadline:
            break
    assert not seen.clear and seen.blocked_by == "sensors"
    assert seen.first_blocked_point.x == pytest.approx(x, abs=0.04)
    x, y = world(high)
    assert line_of_sight(server, CheckLineOfSight.Request.LAYER_SENSORS, (x - 1.0, y),
                         (x + 1.0, y)).clear
