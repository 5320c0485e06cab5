"""Every error code of every collision_server service, driven through the real handlers
in-process (no DDS: the handlers of a CollisionServer that is not a ROS node, as in
test_check_path_takes_one_snapshot): each answer that is not a success carries the code its
.srv names for the cause, and each service lists exactly the codes it can answer."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from geometry_msgs.msg import Point, Point32, PolygonStamped, PoseStamped
from geometry_msgs.msg import Polygon as PolygonMsg
from nav_msgs.msg import Odometry

from planning_collision import grid
from planning_collision.collision_world import World
from planning_collision.ros import collision_server as cs
from planning_collision.ros.conversions import obstacle_snapshot, quaternion_from_yaw
from planning_collision.ros.footprint_pose import FootprintPose
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

FAR = 1e200  # beyond every coordinate range
HANDLERS = {CheckLineOfSight: "_check_line_of_sight", CheckLinesOfSight: "_check_lines_of_sight",
            CheckCollision: "_check_collision", CheckPath: "_check_path",
            ComputeDistance: "_compute_distance"}


class Logger:
    def __init__(self):
        self.errors, self.warnings, self.infos = [], [], []

    def error(self, text):
        self.errors.append(text)

    def warning(self, text, **throttle):
        self.warnings.append(text)

    def info(self, text):
        self.infos.append(text)


def make_node(with_map=True, **params) -> cs.CollisionServer:
    """The handlers of a CollisionServer with these parameters, serving, not a ROS node."""
    node = cs.CollisionServer.__new__(cs.CollisionServer)
    node.params = SimpleNamespace(**{spec.name: spec.default for spec in cs.PARAMETERS})
    for name, value in params.items():
        setattr(node.params, name, value)
    node.params.max_request_size = params.get("max_request_size", 3)
    node.default_footprint = None
    node.topic_footprint = None
    node._footprint_pose = None
    node._markers = None
    node._map_sub = SimpleNamespace(topic_name="/map")
    node._footprint_sub = SimpleNamespace(topic_name="/robot/footprint")
    node.active, node.kernels_ready = True, threading.Event()
    node.kernels_ready.set()
    node._state_machine = SimpleNamespace(current_state=(3, "active"))
    node.get_name = lambda: "collision_server"
    logger = Logger()
    node.get_logger = lambda: logger
    gmap = grid.GridMap(np.zeros((40, 40), dtype=np.int8), 0.1, (0.0, 0.0, 0.0)) \
        if with_map else None
    wall = Obstacle(id="wall", type=Obstacle.TYPE_POLYGON,
                    polygon=[Point(x=x, y=y) for x, y in [(2, 0), (3, 0), (3, 1), (2, 1)]])
    node._world = World(gmap, obstacle_snapshot(ObstacleArray(obstacles=[wall]), print))
    return node


def call(node, srv_type, request):
    return getattr(node, HANDLERS[srv_type])(request, srv_type.Response())


def box() -> Shape:
    return Shape(type=Shape.TYPE_BOX, length=0.6, width=0.4)


def los(start=(0.5, 0.5), goal=(1.5, 0.5), **kw) -> CheckLineOfSight.Request:
    r = CheckLineOfSight.Request(**kw)
    (r.start.x, r.start.y), (r.goal.x, r.goal.y) = start, goal
    return r


def lines(n=1, x=0.5, **kw) -> CheckLinesOfSight.Request:
    return CheckLinesOfSight.Request(start_x=[x] * n, start_y=[0.5] * n, goal_x=[1.5] * n,
                                     goal_y=[0.5] * n, **kw)


def poses_msg(xs, y=0.5):
    out = []
    for x in xs:
        ps = PoseStamped()
        ps.pose.position.x, ps.pose.position.y = x, y
        ps.pose.orientation = quaternion_from_yaw(0.0)
        out.append(ps)
    return out


def collision(xs=(1.0,), **kw) -> CheckCollision.Request:
    kw.setdefault("footprint", box())
    return CheckCollision.Request(poses=[p.pose for p in poses_msg(xs)], **kw)


def path(xs=(0.5, 1.0), **kw) -> CheckPath.Request:
    kw.setdefault("footprint", box())
    r = CheckPath.Request(**kw)
    r.path.poses = poses_msg(xs)
    return r


def distance(a=None, b=None) -> ComputeDistance.Request:
    return ComputeDistance.Request(shape_a=a or box(), shape_b=b or box())


def far_box() -> Shape:
    s = box()
    s.pose.position.x = FAR
    return s


def node_in(state: str):
    def make():
        node = make_node()
        if state == "inactive":
            node.active = False
            node._state_machine = SimpleNamespace(current_state=(2, "inactive"))
        else:
            node.kernels_ready.clear()
        return node
    return make


def fail(*args, **kwargs):
    raise RuntimeError("simulated bug")


def broken(node):
    """A node whose world fails as a bug would (not a sender's error)."""
    node._world = SimpleNamespace(view=lambda *a, **k: SimpleNamespace(
        check_points=fail, check_poses=fail, segments=fail, footprints=fail, path=fail))
    return node


def with_frame(request, frame):
    (request.path.header if isinstance(request, CheckPath.Request) else request.header) \
        .frame_id = frame
    return request


# (service, code, node factory, request factory, words the message must contain)
CASES = []
for srv, ok in ((CheckLineOfSight, los), (CheckLinesOfSight, lines),
                (CheckCollision, collision), (CheckPath, path), (ComputeDistance, distance)):
    CASES += [(srv, "NONE", make_node, ok, ""),
              (srv, "WARMING_UP", node_in("warming"), ok, "warming up"),
              (srv, "INACTIVE", node_in("inactive"), ok, "inactive"),
              (srv, "INTERNAL_ERROR", lambda: broken(make_node()), ok, "internal error")]
    if srv is ComputeDistance:
        CASES += [(srv, "BAD_REQUEST", make_node,
                   lambda: distance(Shape(type=Shape.TYPE_CIRCLE, radius=-1.0)),
                   "shape_a.radius"),
                  (srv, "OUT_OF_RANGE", make_node, lambda: distance(far_box()), "shape_a.pose")]
        continue
    CASES += [(srv, "NO_MAP", lambda: make_node(with_map=False), ok, "no map received"),
              (srv, "WRONG_FRAME", make_node, lambda ok=ok: with_frame(ok(), "odom"), "'odom'"),
              (srv, "BAD_REQUEST", make_node, lambda ok=ok: ok(layers=0), "layers is 0")]
CASES += [
    (CheckLineOfSight, "OUT_OF_RANGE", make_node, lambda: los(goal=(FAR, 0.0)), "goal"),
    (CheckLinesOfSight, "OUT_OF_RANGE", make_node, lambda: lines(x=1e9), "start_x[0]"),
    (CheckLinesOfSight, "TOO_LARGE", make_node, lambda: lines(4), "max_request_size"),
    (CheckCollision, "OUT_OF_RANGE", make_node, lambda: collision((1e9,)), "poses[0]"),
    (CheckCollision, "TOO_LARGE", make_node, lambda: collision((1, 1, 1, 1)), "max_request_size"),
    (CheckCollision, "TOO_LARGE", make_node,
     lambda: collision(footprint=Shape(type=Shape.TYPE_CIRCLE, radius=2e3)), "footprint reaches"),
    (CheckCollision, "BAD_REQUEST", make_node,
     lambda: collision(footprint=Shape(), footprint_string="[[0, 0], [1, 1], [1"),
     "footprint_string"),
    (CheckCollision, "NO_FOOTPRINT", lambda: make_node(footprint_topic="footprint"),
     lambda: collision(footprint=Shape()), "none received yet on /robot/footprint"),
    (CheckPath, "OUT_OF_RANGE", make_node, lambda: path((0.5, 1e9)), "path.poses[1]"),
    (CheckPath, "TOO_LARGE", make_node, lambda: path((1, 1, 1, 1)), "max_request_size"),
    (CheckPath, "NO_FOOTPRINT", lambda: make_node(footprint_topic="footprint"),
     lambda: path(footprint=Shape()), "none received yet"),
]


@pytest.mark.parametrize("srv, code, make, request_of, words", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_each_cause_is_answered_with_its_code(srv, code, make, request_of, words,
                                               monkeypatch):
    node = make()
    if code == "INTERNAL_ERROR":  # compute_distance needs no world: its core fails instead
        monkeypatch.setattr(cs.collision_world, "shape_distance", fail)
    reply = call(node, srv, request_of())
    assert reply.error_code == getattr(srv.Response, code), (reply.error_code, reply.message)
    assert reply.success == (code == "NONE")
    assert words in reply.message
    # Only a bug is logged as an error.
    assert bool(node.get_logger().errors) == (code == "INTERNAL_ERROR")


@pytest.mark.parametrize("srv", list(HANDLERS), ids=lambda s: s.__name__)
def test_each_service_lists_exactly_the_codes_it_answers(srv):
    assert "error_code" in srv.Response.get_fields_and_field_types()
    declared = {name for name in dir(type(srv.Response))
                if name.isupper() and not name.startswith("_")}
    driven = {case[1] for case in CASES if case[0] is srv}
    assert declared == driven
    # One number per cause across the package's services.
    for name in declared:
        values = {getattr(s.Response, name) for s in HANDLERS if hasattr(s.Response, name)}
        assert len(values) == 1, name


def test_a_footprint_from_the_topic_replaces_the_parameter_at_run_time():
    """footprint_topic: the latest robot-frame polygon is the default footprint (a concave
    one split into parts); a polygon in another frame is ignored with a warning; a request's
    own Shape or footprint_string still wins."""
    node = make_node(footprint_topic="footprint")
    request = collision((1.45,), footprint=Shape(), layers=2)  # the wall's face at x = 2

    def polygon(points, frame="base_link"):
        msg = PolygonStamped(polygon=PolygonMsg(points=[Point32(x=float(x), y=float(y))
                                                        for x, y in points]))
        msg.header.frame_id = frame
        return msg

    assert call(node, CheckCollision, request).error_code == CheckCollision.Response.NO_FOOTPRINT
    node._on_footprint(polygon([(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3)]))
    reply = call(node, CheckCollision, request)
    assert reply.success and not reply.in_collision[0]
    assert reply.distance[0] == pytest.approx(0.05)
    # Forks appear: 0.7 m long, so the robot now reaches x = 2.15, into the wall.
    forks = [(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3), (0.5, -0.25), (1.2, -0.25),
             (1.2, -0.15), (0.5, -0.15), (0.5, 0.15), (1.2, 0.15), (1.2, 0.25), (0.5, 0.25)]
    node._on_footprint(polygon(forks, frame=""))
    assert len(node.topic_footprint.parts) >= 3
    reply = call(node, CheckCollision, request)
    assert reply.success and reply.in_collision[0]
    assert reply.distance[0] < 0.0
    # Another frame: ignored, the forklift stays.
    node._on_footprint(polygon([(0.1, 0.1), (-0.1, 0.1), (-0.1, -0.1)], frame="map"))
    assert "footprint in frame 'map' ignored" in node.get_logger().warnings[-1]
    assert len(node.topic_footprint.parts) >= 3
    # With footprint_pose_topic: the square placed at the robot's pose in 'map' (Nav2's
    # published_footprint) is the first square again, and answers as it did.
    node._footprint_pose = FootprintPose()
    odom = Odometry()
    odom.header.frame_id, odom.header.stamp.sec = "map", 40
    odom.pose.pose.position.x, odom.pose.pose.position.y = -3.0, 7.5
    odom.pose.pose.orientation = quaternion_from_yaw(-2.0)
    node._on_footprint_pose(odom)
    c, s = math.cos(-2.0), math.sin(-2.0)
    square = [(-3.0 + c * x - s * y, 7.5 + s * x + c * y)
              for x, y in [(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3)]]
    placed = polygon(square, frame="map")
    placed.header.stamp.sec = 40
    node._on_footprint(placed)
    assert len(node.topic_footprint.parts) == 1
    np.testing.assert_allclose(np.abs(node.topic_footprint.ring), [[0.5, 0.3]] * 4, atol=1e-9)
    assert call(node, CheckCollision, request).distance[0] == pytest.approx(0.05)
    stale = polygon(forks, frame="map")
    stale.header.stamp.sec = 30  # 10 s before the only pose: refused
    node._on_footprint(stale)
    assert "footprint in frame 'map' ignored" in node.get_logger().warnings[-1]
    assert len(node.topic_footprint.parts) == 1
    node._footprint_pose = None
    node._on_footprint(polygon(forks, frame=""))
    # A request's own footprint wins over the topic's.
    request.footprint_string = "[[0.1, 0.1], [-0.1, 0.1], [-0.1, -0.1], [0.1, -0.1]]"
    reply = call(node, CheckCollision, request)
    assert reply.success and reply.distance[0] == pytest.approx(0.45)
    # The forks between two posts: free, where the forks' convex hull would collide.
    posts = [Obstacle(id=f"post{i}", type=Obstacle.TYPE_SHAPE,
                      shape=Shape(type=Shape.TYPE_CIRCLE, radius=0.04)) for i in (0, 1)]
    posts[0].shape.pose.position.x, posts[0].shape.pose.position.y = 2.0, 0.5
    node._world = World(None, obstacle_snapshot(ObstacleArray(obstacles=posts[:1]), print))
    request.footprint_string = ""
    request.poses[0].position.x = 1.0  # forks at x 1.5..2.2, the post at (2, 0.5) between
    reply = call(node, CheckCollision, request)
    assert reply.success and not reply.in_collision[0]
    assert reply.distance[0] == pytest.approx(0.15 - 0.04)
    request.footprint = Shape(type=Shape.TYPE_POINTS, points=[Point(x=x, y=y) for x, y in forks])
    assert call(node, CheckCollision, request).in_collision[0]  # a Shape is its convex hull


def test_a_negative_max_distance_means_no_limit_and_zero_only_touching():
    node = make_node()
    request = collision((1.0,), layers=2)  # the box's face at x = 1.3: 0.7 m from the wall
    assert call(node, CheckCollision, request).distance[0] == pytest.approx(0.7)
    request.max_distance = 0.0
    reply = call(node, CheckCollision, request)
    assert reply.success and math.isinf(reply.distance[0])
    assert reply.nearest_obstacle_id == [""]


def test_check_path_has_is_path_valids_defaults():
    request = CheckPath.Request()
    assert request.stop_at_first_collision is True
    assert request.max_lookahead_distance == -1.0
    assert request.layers == CheckPath.Request.LAYER_GRID | CheckPath.Request.LAYER_OBSTACLES
    assert CheckLineOfSight.Request().layers == CheckLineOfSight.Request.LAYER_GRID
    assert CheckCollision.Request().max_distance < 0.0
    node = make_node(max_request_size=100)
    reply = call(node, CheckPath, path((0.5, 1.0, 1.5, 2.0, 2.5, 3.0), layers=2))
    assert reply.success and not reply.is_valid
    # Stops at the first invalid pose by default, like Nav2's.
    assert list(reply.invalid_pose_indices) == [3] and reply.poses_checked == 4
    reply = call(node, CheckPath, path((0.5, 1.0, 1.5, 2.0, 2.5, 3.0), layers=2,
                                       max_lookahead_distance=0.9))
    assert reply.success and reply.is_valid and reply.poses_checked == 2
