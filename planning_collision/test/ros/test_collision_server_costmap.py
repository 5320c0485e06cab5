"""collision_server fed a Nav2-style local costmap (values 0-100 with inflation, 99 inscribed,
-1 unknown; volatile; odom frame; an origin that rolls with the robot), with the shipped
config/collision_server_local_costmap.yaml that doc/services.md recommends, and its default
footprint taken from a PolygonStamped topic at run time (a concave forklift answered exactly,
against shapely)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Point, Point32, PolygonStamped, Pose
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_clients import stopping

from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.msg import Shape
from planning_collision_interfaces.srv import CheckCollision, CheckLineOfSight

RES = 0.05
SIZE = 60  # a 3 m rolling window
LETHAL = [((20, 8), (22, 12)), ((34, 8), (36, 12))]  # odom cells [x0, x1) x [y0, y1)
UNKNOWN = ((-20, -20), (-10, -10))
VOLATILE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)
SQUARE = [(0.2, 0.15), (-0.2, 0.15), (-0.2, -0.15), (0.2, -0.15)]
FORKLIFT = [(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3), (0.5, -0.25), (1.2, -0.25),
            (1.2, -0.15), (0.5, -0.15), (0.5, 0.15), (1.2, 0.15), (1.2, 0.25), (0.5, 0.25)]


def costmap(robot_cell: tuple[int, int]) -> OccupancyGrid:
    """Nav2's local costmap around the robot: a window of SIZE cells whose origin snaps to
    cells; lethal blocks (100), 99 within 0.2 m of them (inscribed), inflation decaying to 1
    at 0.6 m, an unknown patch (-1)."""
    ox, oy = robot_cell[0] - SIZE // 2, robot_cell[1] - SIZE // 2
    cx, cy = np.meshgrid(np.arange(ox, ox + SIZE), np.arange(oy, oy + SIZE))
    gap = np.full(cx.shape, np.inf)
    for (x0, y0), (x1, y1) in LETHAL:  # distance between cell centres and the blocks' cells
        dx = np.maximum(np.maximum(x0 - cx, cx - (x1 - 1)), 0)
        dy = np.maximum(np.maximum(y0 - cy, cy - (y1 - 1)), 0)
        gap = np.minimum(gap, np.hypot(dx, dy) * RES)
    data = np.zeros(cx.shape, dtype=np.int8)
    inflated = (gap > 0.2) & (gap <= 0.6)
    data[inflated] = np.clip(np.round(98 * np.exp(-6.0 * (gap[inflated] - 0.2))), 1, 98)
    data[(gap > 0.0) & (gap <= 0.2)] = 99
    data[gap == 0.0] = 100
    (ux0, uy0), (ux1, uy1) = UNKNOWN
    data[(cx >= ux0) & (cx < ux1) & (cy >= uy0) & (cy < uy1)] = -1
    msg = OccupancyGrid()
    msg.header.frame_id = "odom"
    msg.info.resolution = RES
    msg.info.width = msg.info.height = SIZE
    msg.info.origin.position.x, msg.info.origin.position.y = ox * RES, oy * RES
    msg.info.origin.orientation.w = 1.0
    msg.data = data.reshape(-1).tobytes()
    return msg


def lethal_boxes():
    import shapely

    return [shapely.box(x0 * RES, y0 * RES, x1 * RES, y1 * RES) for (x0, y0), (x1, y1) in LETHAL]


def pose(x, y, yaw=0.0) -> Pose:
    p = Pose()
    p.position.x, p.position.y = float(x), float(y)
    p.orientation = quaternion_from_yaw(yaw)
    return p


def collision_request(poses, footprint=None, frame="odom") -> CheckCollision.Request:
    request = CheckCollision.Request(layers=CheckCollision.Request.LAYER_GRID,
                                     poses=[pose(*p) for p in poses])
    if footprint is not None:
        request.footprint = Shape(type=Shape.TYPE_POINTS,
                                  points=[Point(x=float(x), y=float(y)) for x, y in footprint])
    request.header.frame_id = frame
    return request


def los_request(start, goal, frame="odom") -> CheckLineOfSight.Request:
    request = CheckLineOfSight.Request()
    request.header.frame_id = frame
    (request.start.x, request.start.y), (request.goal.x, request.goal.y) = start, goal
    return request


def window(robot_cell):
    ox, oy = robot_cell[0] - SIZE // 2, robot_cell[1] - SIZE // 2
    return (ox * RES, oy * RES), ((ox + SIZE) * RES, (oy + SIZE) * RES)


def expected(points, poses, robot_cell) -> list:
    """Shapely: does the footprint overlap the interior of a lethal cell inside the window?
    None where it only grazes one (within 1e-6 m: either answer is right)."""
    import shapely
    from shapely import affinity
    from shapely.geometry import Polygon

    (wx0, wy0), (wx1, wy1) = window(robot_cell)
    area = shapely.box(wx0, wy0, wx1, wy1)
    cells = [shapely.box(x0 * RES, y0 * RES, x1 * RES, y1 * RES).intersection(area)
             for (x0, y0), (x1, y1) in LETHAL]
    cells = [c for c in cells if c.area > 0.0]
    out = []
    for x, y, yaw in poses:
        placed = affinity.translate(affinity.rotate(Polygon(points), yaw, (0, 0),
                                                    use_radians=True), x, y)
        overlap = max(placed.intersection(c).area for c in cells)
        graze = overlap <= 1e-9 and min(placed.distance(c) for c in cells) < 1e-6
        out.append(None if graze else overlap > 1e-9)
    return out


class Feeder:
    """Publishes like Nav2: the costmap at 10 Hz (volatile) and the footprint (volatile),
    each the latest one set."""

    def __init__(self, node):
        self.map_pub = node.create_publisher(OccupancyGrid, "/r1/local_costmap/costmap",
                                             VOLATILE)
        self.footprint_pub = node.create_publisher(PolygonStamped, "/r1/footprint", VOLATILE)
        self.odom_pub = node.create_publisher(Odometry, "/r1/odom", VOLATILE)
        self.costmap = None
        self.footprint = None
        self.odom = None
        node.create_timer(0.1, self.publish)

    def publish(self):
        if self.costmap is not None:
            self.map_pub.publish(self.costmap)
        if self.odom is not None:
            self.odom_pub.publish(self.odom)
        if self.footprint is not None:
            self.footprint_pub.publish(self.footprint)

    def set_footprint(self, points, frame="base_link", stamp=0.0):
        msg = PolygonStamped()
        msg.header.frame_id = frame
        msg.header.stamp.sec = int(stamp)
        msg.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
        msg.polygon.points = [Point32(x=float(x), y=float(y)) for x, y in points]
        self.footprint = msg

    def set_odom(self, x, y, yaw, stamp):
        """The robot's odometry in 'odom' (republished with the same stamp)."""
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "odom", "base_link"
        msg.header.stamp.sec = int(stamp)
        msg.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
        msg.pose.pose = pose(x, y, yaw)
        self.odom = msg


@pytest.fixture(scope="module")
def costmap_server(domain_id, client_factory):
    proc = RosProcess("costmap_server", node_command(
        "planning_collision.ros.collision_server",
        [config_file("collision_server_local_costmap.yaml")],
        parameters={"footprint_topic": "footprint", "footprint_pose_topic": "odom",
                    "publish_markers": False},
        namespace="r1"), domain_id)
    clients: list = []
    with stopping(clients, [proc]):
        caller = client_factory("costmap_caller")
        clients.append(caller)
        feeder = Feeder(caller.node)
        caller.wait_for_service(CheckCollision, "/r1/check_collision", 120.0, proc)
        yield caller, feeder, proc


def call(caller, srv, name, request):
    return caller.call(srv, f"/r1/{name}", request, timeout=30.0)


# A square robot over the second lethal block, which only the window around robot cell
# (12, 6) contains: the answer says which costmap the server holds.
FAR = collision_request([(1.725, 0.5, 0.0)], SQUARE)


def show(caller, feeder, robot) -> None:
    """Publish the costmap around ``robot`` (volatile, republished at 10 Hz) and wait until
    the server answers from it."""
    feeder.costmap = costmap(robot)

    def holds():
        reply = call(caller, CheckCollision, "check_collision", FAR)
        return reply.success and reply.in_collision[0] == (robot == (12, 6))

    assert caller.spin_until(holds, 30.0)


def test_a_rolling_local_costmap_with_the_recommended_settings(costmap_server):
    caller, feeder, proc = costmap_server
    rng = np.random.default_rng(26)
    for robot in ((0, 0), (12, 6)):  # the window rolls with the robot: 0.6 m, 0.3 m on
        show(caller, feeder, robot)
        assert proc.wait_for_line("map 60 x 60", 0.01)
        # In the inflation (99 and below) but off the lethal cells: free; on them: collision.
        reply = call(caller, CheckCollision, "check_collision",
                     collision_request([(0.75, 0.5, 0.0), (0.85, 0.5, 0.0)], SQUARE))
        assert reply.success, reply.message
        assert reply.in_collision == [False, True]
        # Random poses against shapely (lethal cells inside the window only).
        poses = np.column_stack([rng.uniform(0.5, 1.9, 200), rng.uniform(0.0, 1.0, 200),
                                 rng.uniform(-math.pi, math.pi, 200)])
        reply = call(caller, CheckCollision, "check_collision",
                     collision_request(poses, SQUARE))
        want = expected(SQUARE, poses, robot)
        for got, expect, p in zip(reply.in_collision, want, poses, strict=True):
            if expect is not None:
                assert got == expect, p
        assert 20 < sum(w is True for w in want) < 180
        # Unknown (-1) is free with unknown_is_occupied false; the robot's centre line
        # through inflation is clear, through lethal cells blocked.
        unknown = collision_request([(-0.75, -0.75, 0.0)], SQUARE)
        assert call(caller, CheckCollision, "check_collision", unknown).in_collision == [False]
        reply = call(caller, CheckLineOfSight, "check_line_of_sight",
                     los_request((0.0, 0.5), (0.95, 0.5)))
        assert reply.success and reply.clear
        reply = call(caller, CheckLineOfSight, "check_line_of_sight",
                     los_request((0.0, 0.5), (1.4, 0.5)))
        assert reply.success and not reply.clear
        assert reply.first_blocked_point.x == pytest.approx(1.025)
    # The costmap's frame, not the map's.
    reply = call(caller, CheckCollision, "check_collision",
                 collision_request([(0.0, 0.0, 0.0)], SQUARE, frame="map"))
    assert reply.error_code == CheckCollision.Response.WRONG_FRAME


def test_the_footprint_topic_sets_the_default_footprint_at_run_time(costmap_server):
    caller, feeder, proc = costmap_server
    show(caller, feeder, (0, 0))
    # Nothing on the topic yet: a request without a footprint cannot be answered.
    ahead = collision_request([(0.45, 0.5, 0.0)])  # the forks would straddle the block
    aside = collision_request([(0.45, 0.3, 0.0)])  # one fork would enter it
    reply = call(caller, CheckCollision, "check_collision", ahead)
    assert reply.error_code == CheckCollision.Response.NO_FOOTPRINT, reply.message
    feeder.set_footprint(SQUARE)

    def answered():
        return call(caller, CheckCollision, "check_collision", aside).success

    assert caller.spin_until(answered, 20.0)
    assert call(caller, CheckCollision, "check_collision", aside).in_collision == [False]
    # The robot picks up its forks: the topic's concave footprint replaces the square.
    feeder.set_footprint(FORKLIFT)

    def forks():
        return call(caller, CheckCollision, "check_collision", aside).in_collision[0]

    assert caller.spin_until(forks, 20.0)
    assert proc.wait_for_line("footprint of 12 points", 1.0)
    # Between the forks the block is free, exactly; the forks' convex hull would collide.
    assert call(caller, CheckCollision, "check_collision", ahead).in_collision == [False]
    hull = collision_request([(0.45, 0.5, 0.0)], FORKLIFT)
    assert call(caller, CheckCollision, "check_collision", hull).in_collision == [True]
    assert_answers_as_the_forklift(caller, 150, seed=7)
    # A polygon in another frame (Nav2's published_footprint is in the costmap's frame) is
    # ignored with a warning; the forklift stays.
    feeder.set_footprint(SQUARE, frame="odom")
    assert caller.spin_until(lambda: proc.wait_for_line("footprint in frame 'odom' ignored",
                                                        0.01), 10.0)
    assert call(caller, CheckCollision, "check_collision", aside).in_collision == [True]


def assert_answers_as_the_forklift(caller, count: int, seed: int) -> None:
    """``count`` random poses around the block, answered with the default footprint, agree
    with shapely's robot-frame forklift (poses that only graze a cell, None, left out); between a
    fifteenth and fourteen fifteenths of them collide, so both answers are exercised."""
    rng = np.random.default_rng(seed)
    poses = np.column_stack([rng.uniform(-0.2, 0.4, count), rng.uniform(-0.2, 0.9, count),
                             rng.uniform(-math.pi, math.pi, count)])
    reply = call(caller, CheckCollision, "check_collision", collision_request(poses))
    want = expected(FORKLIFT, poses, (0, 0))
    for got, expect, p in zip(reply.in_collision, want, poses, strict=True):
        if expect is not None:
            assert got == expect, p
    assert count // 15 < sum(w is True for w in want) < count - count // 15


def placed(points, x, y, yaw):
    """``points`` (robot frame) placed at the robot's pose: Nav2's published_footprint."""
    c, s = math.cos(yaw), math.sin(yaw)
    return [(x + c * px - s * py, y + s * px + c * py) for px, py in points]


def test_a_global_frame_footprint_is_placed_by_the_odometry(costmap_server):
    """Nav2's published_footprint (the footprint at the robot's pose, in the costmap's frame)
    answers exactly as the robot-frame polygon does, with the robot far off and turned."""
    caller, feeder, proc = costmap_server
    show(caller, feeder, (0, 0))
    aside = collision_request([(0.45, 0.3, 0.0)])  # a fork enters the block; the square not
    feeder.set_footprint(SQUARE)
    assert caller.spin_until(lambda: not call(caller, CheckCollision, "check_collision",
                                              aside).in_collision[0], 20.0)
    robot, stamp = (3.7, -2.2, 2.3), 1000.25
    feeder.set_odom(*robot, stamp)
    feeder.set_footprint(placed(FORKLIFT, *robot), frame="odom", stamp=stamp)
    assert caller.spin_until(lambda: call(caller, CheckCollision, "check_collision",
                                          aside).in_collision[0], 20.0)
    assert_answers_as_the_forklift(caller, 300, seed=11)
    # Stamped 5 s before any pose received: refused with a warning; the forklift stays.
    feeder.set_footprint(placed(SQUARE, *robot), frame="odom", stamp=stamp - 5.0)
    assert caller.spin_until(lambda: proc.wait_for_line("stamped 995.250", 0.01), 10.0)
    assert call(caller, CheckCollision, "check_collision", aside).in_collision == [True]
    # The same square at the right stamp replaces it.
    feeder.set_footprint(placed(SQUARE, *robot), frame="odom", stamp=stamp)
    assert caller.spin_until(lambda: not call(caller, CheckCollision, "check_collision",
                                              aside).in_collision[0], 20.0)
    feeder.odom = None
