"""collision_server as a real process over DDS on loopback: every service, compared with the
pure cores on the same map and obstacles; malformed requests (never an internal error);
pathological map and obstacle messages (logged, never fatal); a latched map published before
the node starts; a volatile map topic; maps replaced while queries run (never mixed); the RViz
markers."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, PoseStamped
from nav_msgs.msg import OccupancyGrid
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.qos import DurabilityPolicy, QoSPolicyKind, QoSProfile, ReliabilityPolicy
from ros_clients import stopping
from visualization_msgs.msg import Marker, MarkerArray

from planning_collision import grid
from planning_collision.collision_world import World
from planning_collision.geometry import (
    ConvexShape,
    ObstacleSet,
    decompose,
    gjk_distance,
    penetration,
)
from planning_collision.geometry.raycast import cast_segments
from planning_collision.resources import config_file
from planning_collision.ros import markers
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

RES = float(np.float32(0.05))  # OccupancyGrid's resolution is a float32
ORIGIN = (-2.0, -1.0, 0.0)
L_WALL = [(1.0, -0.8), (2.0, -0.8), (2.0, -0.4), (1.4, -0.4), (1.4, 0.6), (1.0, 0.6)]
PILLAR = ((-1.0, 1.2), 0.2)


def make_map_data() -> np.ndarray:
    """200 x 100 cells: free, a wall block, an unknown patch, a 60 % (free) patch."""
    data = np.zeros((100, 200), dtype=np.int8)
    data[20:60, 60:64] = 100  # wall at x in [1.0, 1.2) m ... in map cells
    data[70:80, 20:30] = -1  # unknown
    data[5:10, 150:160] = 60  # below the 65 threshold: free
    return data


def map_msg(data: np.ndarray, frame: str = "map") -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.header.frame_id = frame
    msg.info.resolution = RES
    msg.info.width = data.shape[1]
    msg.info.height = data.shape[0]
    msg.info.origin.position.x = ORIGIN[0]
    msg.info.origin.position.y = ORIGIN[1]
    msg.info.origin.orientation = quaternion_from_yaw(ORIGIN[2])
    msg.data = data.reshape(-1).tobytes()
    return msg


def obstacles_msg(frame: str = "map") -> ObstacleArray:
    wall = Obstacle(id="l_wall", type=Obstacle.TYPE_POLYGON,
                    polygon=[Point(x=x, y=y) for x, y in L_WALL])
    pillar = Obstacle(id="pillar", type=Obstacle.TYPE_SHAPE,
                      shape=Shape(type=Shape.TYPE_CIRCLE, radius=PILLAR[1]))
    pillar.shape.pose.position.x, pillar.shape.pose.position.y = PILLAR[0]
    msg = ObstacleArray(obstacles=[wall, pillar])
    msg.header.frame_id = frame
    return msg


def core_world():
    gmap = grid.GridMap(make_map_data(), RES, ORIGIN)
    parts = decompose(np.array(L_WALL))
    ids = ["l_wall"] * len(parts) + ["pillar"]
    parts.append(ConvexShape.circle(PILLAR[0], PILLAR[1]))
    return gmap, ObstacleSet.from_shapes(parts), ids


def box_shape(length=0.6, width=0.4) -> Shape:
    return Shape(type=Shape.TYPE_BOX, length=length, width=width)


def pose(x, y, yaw=0.0) -> Pose:
    p = Pose()
    p.position.x, p.position.y = x, y
    p.orientation = quaternion_from_yaw(yaw)
    return p


@pytest.fixture(scope="module")
def server(domain_id, client_factory, latched_qos):
    """One collision_server for the module, fed a map and obstacles by a latched publisher."""
    proc = RosProcess("collision_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        namespace="cs"), domain_id)
    clients: list = []
    with stopping(clients, [proc]):
        feeder = client_factory("feeder")
        clients.append(feeder)
        map_pub = feeder.node.create_publisher(OccupancyGrid, "/cs/map", latched_qos)
        obstacle_pub = feeder.node.create_publisher(ObstacleArray, "/cs/obstacles", latched_qos)
        map_pub.publish(map_msg(make_map_data()))
        obstacle_pub.publish(obstacles_msg())
        caller = client_factory("caller")
        clients.append(caller)
        caller.wait_for_service(CheckLineOfSight, "/cs/check_line_of_sight", 120.0, proc)
        assert caller.spin_until(
            lambda: (feeder.spin_for(0.05) or True)
            and proc.wait_for_line("obstacles received", 0.01)
            and proc.wait_for_line("map 200 x 100", 0.01), 30.0), proc.lines[-20:]
        yield caller, proc


def los_request(start, goal, mode="", layers=1, frame="map"):
    r = CheckLineOfSight.Request(mode=mode, layers=layers)
    r.header.frame_id = frame
    r.start.x, r.start.y = start
    r.goal.x, r.goal.y = goal
    return r


def test_line_of_sight_matches_the_grid_core(server):
    caller, _ = server
    gmap, _, _ = core_world()
    rng = np.random.default_rng(1)
    for mode in grid.MODES:
        for _ in range(15):
            start = rng.uniform([-2.2, -1.2], [8.2, 4.2])
            goal = rng.uniform([-2.2, -1.2], [8.2, 4.2])
            reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                                los_request(start, goal, mode))
            assert reply.success, reply.message
            core = gmap.line_of_sight(start, goal, mode)
            assert reply.clear == core.clear
            assert reply.cells_checked == core.cells_checked
            if core.clear:
                assert (reply.first_blocked_cell_x, reply.first_blocked_cell_y) == (-1, -1)
                assert reply.blocked_by == ""
            else:
                assert (reply.first_blocked_cell_x, reply.first_blocked_cell_y) == \
                    tuple(core.first_blocked_cell)
                assert reply.blocked_by == "grid"
                assert reply.first_blocked_point.x == pytest.approx(core.first_blocked_point[0])


def test_line_of_sight_against_obstacles(server):
    caller, _ = server
    _, obstacles, ids = core_world()
    # Only obstacles: the ray from the left meets the L-wall's outer face x = 1.0 first.
    reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                        los_request((0.0, 0.0), (3.0, 0.0), layers=2))
    assert reply.success and not reply.clear and reply.blocked_by == "l_wall"
    assert reply.first_blocked_point.x == pytest.approx(1.0, abs=1e-12)
    assert (reply.first_blocked_cell_x, reply.first_blocked_cell_y) == (-1, -1)
    # Inside the L's notch (concave part) a ray is clear: the wall is not its hull.
    reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                        los_request((1.6, 0.5), (2.5, 0.5), layers=2))
    assert reply.success and reply.clear
    # Grid and obstacles: the pillar at (-1, 1.2) blocks before anything on the grid.
    reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                        los_request((-1.9, 1.2), (4.0, 1.2), layers=3))
    assert reply.success and not reply.clear and reply.blocked_by == "pillar"
    assert reply.first_blocked_point.x == pytest.approx(-1.2, abs=1e-9)
    rng = np.random.default_rng(5)
    starts = rng.uniform([-2, -1], [3, 2], (40, 2))
    goals = rng.uniform([-2, -1], [3, 2], (40, 2))
    core = cast_segments(obstacles, starts, goals)
    for i in range(40):
        reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                            los_request(starts[i], goals[i], layers=2))
        assert reply.clear == (core.index[i] < 0)
        if core.index[i] >= 0:
            assert reply.blocked_by == ids[core.index[i]]
            assert reply.first_blocked_point.x == pytest.approx(core.point[i, 0], abs=1e-9)


def test_lines_of_sight_batch_matches_the_core(server):
    caller, _ = server
    gmap, obstacles, _ = core_world()
    rng = np.random.default_rng(2)
    n = 3000
    starts = rng.uniform([-2.5, -1.5], [8.5, 4.5], (n, 2))
    goals = rng.uniform([-2.5, -1.5], [8.5, 4.5], (n, 2))
    default = CheckLinesOfSight.Request().layers  # the grid only
    for mode, layers in (("bresenham", default), ("supercover", 1), ("conservative", 3)):
        r = CheckLinesOfSight.Request(start_x=starts[:, 0], start_y=starts[:, 1],
                                      goal_x=goals[:, 0], goal_y=goals[:, 1], mode=mode,
                                      layers=layers)
        r.header.frame_id = "map"
        reply = caller.call(CheckLinesOfSight, "/cs/check_lines_of_sight", r)
        assert reply.success, reply.message
        clear, first, checked = grid.line_of_sight_batch(
            gmap, gmap.world_to_cell(starts), gmap.world_to_cell(goals), mode,
            cells_checked=True)
        expect_clear = clear.copy()
        if layers == 3:
            expect_clear &= cast_segments(obstacles, starts, goals).index < 0
        got = np.array(reply.clear)
        assert np.array_equal(got, expect_clear)
        assert np.array_equal(np.array(reply.cells_checked), checked)
        blocked_by = np.array(reply.blocked_by)
        assert (blocked_by[got] == "").all() and (blocked_by[~got] != "").all()
        assert set(blocked_by[~clear]) <= ({"grid", "l_wall", "pillar"} if layers == 3
                                           else {"grid"})
        # Each ray answers as the single-ray service does.
        for k in rng.choice(n, 12, replace=False).tolist():
            one = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                              los_request(starts[k], goals[k], mode, layers))
            assert (one.clear, one.blocked_by, one.cells_checked) == \
                (bool(got[k]), blocked_by[k], reply.cells_checked[k])
            assert (one.first_blocked_cell_x, one.first_blocked_cell_y) == \
                (reply.first_blocked_cell_x[k], reply.first_blocked_cell_y[k])
        cells = np.column_stack([reply.first_blocked_cell_x, reply.first_blocked_cell_y])
        assert np.array_equal(cells[~clear], first[~clear])
        assert np.isnan(np.array(reply.first_blocked_x)[got]).all()
        assert np.isfinite(np.array(reply.first_blocked_x)[~got]).all()


def test_check_collision_matches_the_cores(server):
    caller, _ = server
    gmap, obstacles, ids = core_world()
    rng = np.random.default_rng(3)
    poses = np.column_stack([rng.uniform(-2, 4, 300), rng.uniform(-1, 3, 300),
                             rng.uniform(-math.pi, math.pi, 300)])
    request = CheckCollision.Request(footprint=box_shape(),
                                     poses=[pose(*p) for p in poses])
    request.header.frame_id = "map"
    reply = caller.call(CheckCollision, "/cs/check_collision", request)
    assert reply.success, reply.message
    footprint = ConvexShape.box((0, 0), 0, 0.6, 0.4)
    grid_hit = grid.footprint_collides(gmap, footprint, poses)
    assert np.array_equal(np.array(reply.grid_collision), grid_hit)
    for i, (x, y, yaw) in enumerate(poses):
        placed = footprint.transformed(x, y, yaw)
        k, dist, _, _ = obstacles.nearest_shape(placed, signed=True)
        assert reply.nearest_obstacle_id[i] == ids[k]
        assert reply.distance[i] == pytest.approx(dist, abs=1e-9)
        assert reply.obstacle_collision[i] == (dist <= 0.0)
        assert reply.in_collision[i] == (grid_hit[i] or dist <= 0.0)
        if dist > 0:
            gap = math.dist((reply.footprint_points[i].x, reply.footprint_points[i].y),
                            (reply.obstacle_points[i].x, reply.obstacle_points[i].y))
            assert gap == pytest.approx(dist, abs=1e-9)
    assert any(reply.grid_collision) and not all(reply.grid_collision)
    assert any(reply.obstacle_collision)


def test_check_collision_of_a_zero_area_footprint_agrees_with_shapely(server):
    """Issue #20 (service fuzz): three collinear footprint points, which the hull keeps as
    a sliver triangle, got distances that missed shapely's by up to 0.4 (the polygon-point
    closed form chose between two edges on one line by rounding), and grid collision
    differed: collinear points overlapped no cell at all."""
    caller, _ = server
    rng = np.random.default_rng(20)
    while True:  # points on a line, kept by the hull as three (a sliver) after rounding
        a, b = rng.normal(size=(2, 2)) * 0.3
        points = np.array([a, a + rng.uniform(0.2, 0.8) * (b - a), b])
        if ConvexShape(points).points.shape[0] == 3:
            break
    exact = np.array([(-0.3, -0.1), (0.0, 0.0), (0.3, 0.1)])  # a hull of two points
    assert ConvexShape(exact).points.shape[0] == 2
    for thin in (points, exact):
        check_thin_footprint(caller, thin, rng)


def check_thin_footprint(caller, points, rng):
    import shapely
    from shapely.geometry import LineString, Polygon

    footprint = Shape(type=Shape.TYPE_POINTS, points=[Point(x=x, y=y) for x, y in points])
    reach = float(np.max(np.hypot(points[:, 0], points[:, 1]))) + 0.05  # inside the map
    poses = np.column_stack([rng.uniform(-2 + reach, 4, 300), rng.uniform(-1 + reach, 3, 300),
                             rng.uniform(-math.pi, math.pi, 300)])
    request = CheckCollision.Request(footprint=footprint, poses=[pose(*p) for p in poses])
    request.header.frame_id = "map"
    reply = caller.call(CheckCollision, "/cs/check_collision", request)
    assert reply.success, reply.message
    gmap, _, _ = core_world()
    wall = Polygon(L_WALL)
    pillar = shapely.Point(PILLAR[0])
    blocked = np.argwhere(gmap.blocked_mask())  # (row, column) = (cy, cx)
    cells = [shapely.box(ORIGIN[0] + RES * cx + 1e-9, ORIGIN[1] + RES * cy + 1e-9,
                         ORIGIN[0] + RES * (cx + 1) - 1e-9, ORIGIN[1] + RES * (cy + 1) - 1e-9)
             for cy, cx in blocked]
    hits = separated = 0
    for i, (x, y, yaw) in enumerate(poses):
        c, s = math.cos(yaw), math.sin(yaw)
        placed = LineString(points @ np.array([[c, s], [-s, c]]) + (x, y))
        gap = min(placed.distance(wall), placed.distance(pillar) - PILLAR[1])
        if gap > 1e-6:
            assert reply.distance[i] == pytest.approx(gap, abs=1e-9)
            separated += 1
        elif gap < -1e-6 or placed.intersects(wall):
            assert reply.obstacle_collision[i]
        # grid: the segment passes through the open square of a blocked cell
        want = any(placed.intersects(cell) for cell in cells)
        assert reply.grid_collision[i] == want, (i, poses[i])
        hits += want
    assert separated > 100 and 10 < hits < 290


def test_check_collision_default_footprint_and_max_distance(server):
    caller, _ = server
    # The YAML's footprint is the 0.6 x 0.4 box: an empty Shape uses it.
    request = CheckCollision.Request(poses=[pose(0.75, 0.0)], max_distance=0.1, layers=2)
    reply = caller.call(CheckCollision, "/cs/check_collision", request)
    assert reply.success, reply.message
    # Box edge at x = 1.05 overlaps the wall face x = 1.0 by 5 cm.
    assert reply.obstacle_collision == [True]
    assert reply.distance[0] == pytest.approx(-0.05, abs=1e-9)
    request.poses = [pose(-1.5, -0.5)]
    reply = caller.call(CheckCollision, "/cs/check_collision", request)
    assert reply.success and math.isinf(reply.distance[0]) and reply.nearest_obstacle_id == [""]


def test_check_path(server):
    caller, _ = server
    gmap, _, _ = core_world()
    request = CheckPath.Request(footprint=Shape(type=Shape.TYPE_CIRCLE, radius=0.1),
                                stop_at_first_collision=False)
    request.path.header.frame_id = "map"
    xs = np.linspace(-1.5, 3.5, 26)  # crosses the grid wall at x in [1.0, 1.2)
    request.path.poses = [PoseStamped(pose=pose(x, 0.5)) for x in xs]
    request.layers = 1
    reply = caller.call(CheckPath, "/cs/check_path", request)
    assert reply.success, reply.message
    footprint = ConvexShape.circle((0, 0), 0.1)
    poses = np.column_stack([xs, np.full_like(xs, 0.5), np.zeros_like(xs)])
    hit = grid.footprint_collides(gmap, footprint, poses)
    clear, _ = grid.line_of_sight_batch(gmap, gmap.world_to_cell(poses[:-1, :2]),
                                        gmap.world_to_cell(poses[1:, :2]))
    invalid = hit.copy()
    invalid[1:] |= ~clear
    assert not reply.is_valid
    assert list(reply.invalid_pose_indices) == np.flatnonzero(invalid).tolist()
    assert reply.first_invalid_index == int(np.flatnonzero(invalid)[0])
    assert list(reply.segment_visible) == clear.tolist()
    assert reply.poses_checked == len(xs)

    request.stop_at_first_collision = True
    reply = caller.call(CheckPath, "/cs/check_path", request)
    assert list(reply.invalid_pose_indices) == [int(np.flatnonzero(invalid)[0])]
    assert reply.poses_checked == reply.first_invalid_index + 1

    request.stop_at_first_collision = False
    request.max_lookahead_distance = 2.0  # 0.2 m steps from x = -1.5: poses up to x = 0.5 only
    reply = caller.call(CheckPath, "/cs/check_path", request)
    assert reply.success and reply.is_valid and reply.poses_checked == 11
    assert reply.first_invalid_index == -1


def path_request(poses, layers, footprint=None, **kwargs) -> CheckPath.Request:
    kwargs.setdefault("stop_at_first_collision", False)
    request = CheckPath.Request(footprint=footprint or Shape(type=Shape.TYPE_CIRCLE, radius=0.1),
                                layers=layers, **kwargs)
    request.path.header.frame_id = "map"
    request.path.poses = [PoseStamped(pose=pose(*p)) for p in poses]
    return request


def expected_path(poses, footprint, layers, gmap=None, obstacles=None, mode="bresenham"):
    """(invalid indices, segment_visible) of a whole path, from the cores."""
    n = len(poses)
    hit = np.zeros(n, dtype=bool)
    clear = np.ones(n - 1, dtype=bool)
    if layers & 1:
        hit |= grid.footprint_collides(gmap, footprint, poses)
        clear &= grid.line_of_sight_batch(gmap, gmap.world_to_cell(poses[:-1, :2]),
                                          gmap.world_to_cell(poses[1:, :2]), mode)[0]
    if layers & 2:
        for i, (x, y, yaw) in enumerate(poses):
            _, dist, _, _ = obstacles.nearest_shape(footprint.transformed(x, y, yaw),
                                                    signed=True)
            hit[i] |= dist <= 0.0
        clear &= cast_segments(obstacles, poses[:-1, :2], poses[1:, :2]).index < 0
    invalid = hit.copy()
    invalid[1:] |= ~clear
    return np.flatnonzero(invalid).tolist(), clear.tolist(), hit


def test_check_path_against_obstacles(server):
    caller, _ = server
    gmap, obstacles, _ = core_world()
    footprint = ConvexShape.box((0, 0), 0, 0.3, 0.2)
    # A turning, weaving path through the pillar, the L-wall and the grid wall.
    n = 120
    t = np.linspace(0.0, 1.0, n)
    poses = np.column_stack([-1.8 + 4.6 * t, 0.4 + 1.1 * np.sin(5 * math.pi * t),
                             np.linspace(-3.0, 3.0, n)])
    seen_obstacle_hits = False
    for layers in (2, 3):
        reply = caller.call(CheckPath, "/cs/check_path",
                            path_request(poses, layers, box_shape(0.3, 0.2)))
        assert reply.success, reply.message
        invalid, visible, hit = expected_path(poses, footprint, layers, gmap, obstacles)
        assert list(reply.invalid_pose_indices) == invalid
        assert list(reply.segment_visible) == visible
        assert reply.is_valid == (not invalid)
        assert reply.first_invalid_index == (invalid[0] if invalid else -1)
        assert reply.poses_checked == n
        if layers == 2:
            seen_obstacle_hits = hit.any() and not hit.all() and not all(visible) \
                and any(visible)
    assert seen_obstacle_hits, "the path should meet the obstacles (and miss them elsewhere)"
    # Obstacles only: the L-wall blocks a path that crosses it without stopping on it.
    crossing = np.array([[0.5, 0.0, 0.0], [2.5, 0.0, 0.0]])
    reply = caller.call(CheckPath, "/cs/check_path", path_request(crossing, 2))
    assert reply.success and not reply.is_valid
    assert list(reply.segment_visible) == [False] and list(reply.invalid_pose_indices) == [1]


def test_compute_distance(server):
    caller, _ = server
    a = box_shape(2.0, 1.0)
    b = Shape(type=Shape.TYPE_POINTS, points=[Point(x=0.0, y=0.0)], radius=0.5)
    b.pose.position.x = 3.0
    reply = caller.call(ComputeDistance, "/cs/compute_distance",
                        ComputeDistance.Request(shape_a=a, shape_b=b))
    assert reply.success and not reply.intersecting
    assert reply.distance == pytest.approx(1.5)
    assert (reply.normal.x, reply.normal.y) == pytest.approx((1.0, 0.0))
    b.pose.position.x = 1.2
    reply = caller.call(ComputeDistance, "/cs/compute_distance",
                        ComputeDistance.Request(shape_a=a, shape_b=b))
    assert reply.intersecting and reply.distance == pytest.approx(-0.3)
    assert (reply.normal.x, reply.normal.y) == pytest.approx((1.0, 0.0))
    rng = np.random.default_rng(4)
    for _ in range(10):
        pa = rng.uniform(-1, 1, (6, 2))
        pb = rng.uniform(-1, 1, (6, 2)) + rng.uniform(-3, 3, 2)
        ma = Shape(points=[Point(x=x, y=y) for x, y in pa])
        mb = Shape(points=[Point(x=x, y=y) for x, y in pb], radius=0.1)
        reply = caller.call(ComputeDistance, "/cs/compute_distance",
                            ComputeDistance.Request(shape_a=ma, shape_b=mb))
        core = gjk_distance(ConvexShape(pa), ConvexShape(pb, 0.1))
        assert reply.intersecting == core.intersecting
        if not core.intersecting:
            assert reply.distance == pytest.approx(core.distance, abs=1e-12)


def scaled_quaternion_pose(x, y, scale):
    """A quarter turn written as (0, 0, scale, scale): a rotation of 90 degrees whatever the
    scale."""
    p = Pose()
    p.position.x, p.position.y = x, y
    p.orientation.z = p.orientation.w = scale
    return p


@pytest.mark.parametrize("scale", [math.sqrt(0.5), 2.0, 1e-6, 0.1, 1e200])
def test_unnormalised_quaternions_place_shapes_as_their_rotation(server, scale):
    """A 2.0 x 0.2 box turned a quarter turn reaches y = 1.0 and meets a 0.1-radius disc at
    (0, 0.8) 0.2 deep (sideways). Written (0,0,2,2) the server used to place it at 131 degrees (not
    intersecting, +0.2857) and (0,0,1e-6,1e-6) at about 0 degrees (+0.6)."""
    caller, _ = server
    box = box_shape(2.0, 0.2)
    box.pose = scaled_quaternion_pose(0.0, 0.0, scale)
    disc = Shape(type=Shape.TYPE_CIRCLE, radius=0.1)
    disc.pose = pose(0.0, 0.8)
    reply = caller.call(ComputeDistance, "/cs/compute_distance",
                        ComputeDistance.Request(shape_a=box, shape_b=disc))
    assert reply.success and reply.intersecting, reply.message
    assert reply.distance == pytest.approx(-0.2, abs=1e-12)
    # The same rotation for footprints: a 2.0 x 0.2 footprint turned a quarter turn at the
    # pillar's x covers the pillar.
    request = collision_request([(0.0, 0.0, 0.0)], footprint=box_shape(2.0, 0.2), layers=2)
    request.poses = [scaled_quaternion_pose(PILLAR[0][0], PILLAR[0][1] - 0.9, scale)]
    reply = caller.call(CheckCollision, "/cs/check_collision", request)
    assert reply.success, reply.message
    assert list(reply.obstacle_collision) == [True] and reply.nearest_obstacle_id == ["pillar"]


def points_shape(points, radius=0.0, x=0.0, y=0.0, yaw=0.0) -> Shape:
    shape = Shape(type=Shape.TYPE_POINTS, points=[Point(x=float(px), y=float(py))
                                                  for px, py in points], radius=radius)
    shape.pose = pose(x, y, yaw)
    return shape


def test_compute_distance_penetration_matches_the_core(server):
    caller, _ = server
    rng = np.random.default_rng(9)
    checked = 0
    for _ in range(40):
        pa = rng.uniform(-1, 1, (int(rng.integers(1, 7)), 2))
        pb = rng.uniform(-1, 1, (int(rng.integers(1, 7)), 2)) + rng.uniform(-0.8, 0.8, 2)
        ra, rb = float(rng.uniform(0, 0.3)), float(rng.uniform(0, 0.3))
        a, b = ConvexShape(pa, ra), ConvexShape(pb, rb)
        if not gjk_distance(a, b).intersecting:
            continue
        reply = caller.call(ComputeDistance, "/cs/compute_distance", ComputeDistance.Request(
            shape_a=points_shape(pa, ra), shape_b=points_shape(pb, rb)))
        assert reply.success and reply.intersecting, reply.message
        core = penetration(a, b)
        assert reply.distance == pytest.approx(-core.depth, abs=1e-12)
        assert (reply.normal.x, reply.normal.y) == pytest.approx(tuple(core.normal), abs=1e-12)
        assert (reply.point_a.x, reply.point_a.y) == pytest.approx(tuple(core.point_a), abs=1e-12)
        assert (reply.point_b.x, reply.point_b.y) == pytest.approx(tuple(core.point_b), abs=1e-12)
        # Moving b by -distance * normal (the depth along the normal) just separates them:
        # a hair less still overlaps, a hair more is clear.
        moved = (-reply.distance) * np.array([reply.normal.x, reply.normal.y])
        hair = 1e-7 * np.array([reply.normal.x, reply.normal.y])
        if core.depth > 1e-6:
            assert gjk_distance(a, ConvexShape(pb + moved - hair, rb)).intersecting
        assert not gjk_distance(a, ConvexShape(pb + moved + hair, rb)).intersecting
        checked += 1
    assert checked >= 10
    # A placed shape (pose with yaw) is compared after the same placement.
    box = box_shape(1.0, 0.5)
    box.pose = pose(0.3, 0.1, 0.7)
    disc = Shape(type=Shape.TYPE_CIRCLE, radius=0.4)
    disc.pose = pose(0.6, 0.3)
    reply = caller.call(ComputeDistance, "/cs/compute_distance",
                        ComputeDistance.Request(shape_a=box, shape_b=disc))
    core = penetration(ConvexShape.box((0.3, 0.1), 0.7, 1.0, 0.5),
                       ConvexShape.circle((0.6, 0.3), 0.4))
    assert reply.success and reply.intersecting
    assert reply.distance == pytest.approx(-core.depth, abs=1e-12)
    assert (reply.normal.x, reply.normal.y) == pytest.approx(tuple(core.normal), abs=1e-12)
    assert (reply.point_a.x, reply.point_a.y) == pytest.approx(tuple(core.point_a), abs=1e-12)
    assert (reply.point_b.x, reply.point_b.y) == pytest.approx(tuple(core.point_b), abs=1e-12)


FAR = 1e8  # metres: 2e9 cells of 5 cm, beyond the grid's 2**29


def far_circle() -> Shape:
    shape = Shape(type=Shape.TYPE_CIRCLE, radius=0.5)
    shape.pose = pose(1e300, 0.0)
    return shape


def zero_rotation(shape: Shape) -> Shape:
    shape.pose.orientation.w = 0.0
    return shape


def lines_request(sx, sy, gx, gy, **kwargs) -> CheckLinesOfSight.Request:
    r = CheckLinesOfSight.Request(start_x=sx, start_y=sy, goal_x=gx, goal_y=gy, **kwargs)
    r.header.frame_id = "map"
    return r


def collision_request(poses, **kwargs) -> CheckCollision.Request:
    kwargs.setdefault("footprint", box_shape())
    return CheckCollision.Request(poses=[pose(*p) for p in poses], **kwargs)


BAD_REQUESTS = [
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((math.nan, 0.0), (1.0, 1.0)), "start"),
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((0.0, 0.0), (1.0, 1.0), mode="diagonal"), "mode"),
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((0.0, 0.0), (1.0, 1.0), frame="odom"), "header.frame_id"),
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((0.0, 0.0), (1.0, 1.0), layers=7), "layers"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: CheckLinesOfSight.Request(start_x=[0.0, 1.0], start_y=[0.0], goal_x=[1.0],
                                       goal_y=[1.0]), "same length"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: CheckLinesOfSight.Request(start_x=[0.0], start_y=[math.inf], goal_x=[1.0],
                                       goal_y=[1.0]), "start_y[0]"),
    (CheckCollision, "check_collision",
     lambda: CheckCollision.Request(footprint=box_shape(), poses=[]), "poses is empty"),
    (CheckCollision, "check_collision",
     lambda: CheckCollision.Request(footprint=box_shape(), poses=[pose(math.nan, 0)]),
     "poses[0]"),
    (CheckCollision, "check_collision",
     lambda: CheckCollision.Request(footprint=Shape(type=Shape.TYPE_BOX, length=-1.0, width=1.0),
                                    poses=[pose(0, 0)]), "footprint.length"),
    (CheckCollision, "check_collision",
     lambda: CheckCollision.Request(footprint=Shape(type=9), poses=[pose(0, 0)]),
     "footprint.type"),
    (CheckPath, "check_path", lambda: CheckPath.Request(), "path.poses is empty"),
    (ComputeDistance, "compute_distance",
     lambda: ComputeDistance.Request(shape_a=Shape(type=Shape.TYPE_CIRCLE, radius=-1.0),
                                     shape_b=box_shape()), "shape_a.radius"),
    (ComputeDistance, "compute_distance",
     lambda: ComputeDistance.Request(shape_a=Shape(), shape_b=box_shape()), "shape_a.points"),
    # Unknown modes.
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([0.0], [0.0], [1.0], [1.0], mode="diagonal"), "mode 'diagonal'"),
    (CheckPath, "check_path",
     lambda: path_request([(0, 0, 0), (1, 0, 0)], 1, mode="diagonal"), "mode 'diagonal'"),
    # NaN scalars.
    (CheckPath, "check_path",
     lambda: path_request([(0, 0, 0), (1, 0, 0)], 1, max_lookahead_distance=math.nan),
     "max_lookahead_distance is NaN"),
    (CheckCollision, "check_collision",
     lambda: collision_request([(0, 0, 0)], max_distance=math.nan), "max_distance is NaN"),
    # Empty and mismatched arrays.
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([], [], [], []), "start_x is empty"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([0.0], [0.0], [1.0], [1.0, 2.0]), "goal_y has 2 entries"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([0.0, 1.0], [0.0, 1.0], [], [1.0, 2.0]), "goal_x has 0 entries"),
    (CheckPath, "check_path",
     lambda: path_request([(0, 0, 0), (math.inf, 0, 0)], 1), "path.poses[1]"),
    (CheckPath, "check_path",
     lambda: path_request([(0, 0, 0)], 9), "layers"),
    # Points the grid cannot index (more than 2**29 cells away) and coordinates beyond the
    # geometry's range: the core's ValueError becomes an answer naming the field.
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((FAR, 0.0), (1.0, 1.0)), "start lies"),
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((0.0, 0.0), (1.0, -FAR), layers=3), "goal lies"),
    (CheckLineOfSight, "check_line_of_sight",
     lambda: los_request((0.0, 0.0), (1e200, 0.0), layers=2), "goal has a coordinate"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([0.0, 0.0], [0.0, 0.0], [1.0, FAR], [1.0, 0.0]),
     "goal_x[1], goal_y[1] lies"),
    (CheckLinesOfSight, "check_lines_of_sight",
     lambda: lines_request([0.0, -1e200], [0.0, 0.0], [1.0, 1.0], [1.0, 0.0], layers=2),
     "start_x[1], start_y[1] has a coordinate"),
    (CheckCollision, "check_collision",
     lambda: collision_request([(0, 0, 0), (0, FAR, 0)]), "poses[1] lies"),
    (CheckCollision, "check_collision",
     lambda: collision_request([(1e200, 0, 0)], layers=2), "poses[0] has a coordinate"),
    (CheckCollision, "check_collision",
     lambda: collision_request([(0, 0, 0)], footprint=Shape(type=Shape.TYPE_CIRCLE,
                                                            radius=1e4)), "footprint reaches"),
    (CheckPath, "check_path",
     lambda: path_request([(0, 0, 0), (0, 0, 0), (FAR, FAR, 0)], 3), "path.poses[2] lies"),
    (ComputeDistance, "compute_distance",
     lambda: ComputeDistance.Request(shape_a=box_shape(),
                                     shape_b=points_shape([(1e200, 0.0)])), "shape_b"),
    # A shape or footprint placed beyond the geometry's range: was "internal error".
    (ComputeDistance, "compute_distance",
     lambda: ComputeDistance.Request(shape_a=far_circle(), shape_b=box_shape()),
     "shape_a.pose"),
    (CheckCollision, "check_collision",
     lambda: collision_request([(0, 0, 0)], footprint=far_circle()), "footprint.pose"),
    # Orientations that are no rotation.
    (CheckCollision, "check_collision",
     lambda: collision_request([(0, 0, 0)], footprint=zero_rotation(box_shape())),
     "footprint.pose.orientation is a zero quaternion"),
    (CheckCollision, "check_collision",
     lambda: CheckCollision.Request(footprint=box_shape(),
                                    poses=[pose(0, 0), zero_rotation(box_shape()).pose]),
     "poses[1].orientation is a zero quaternion"),
    (ComputeDistance, "compute_distance",
     lambda: ComputeDistance.Request(shape_a=box_shape(), shape_b=zero_rotation(box_shape())),
     "shape_b.pose.orientation is a zero quaternion"),
]


# The error code of each bad request above whose code is not BAD_REQUEST (by its words).
CODE_OF = {"header.frame_id": "WRONG_FRAME", "footprint reaches": "TOO_LARGE",
           "shape_a.pose": "OUT_OF_RANGE", "footprint.pose": "OUT_OF_RANGE",
           "shape_b": "OUT_OF_RANGE"}


def expected_code(field: str) -> str:
    if " lies" in field or "has a coordinate" in field:
        return "OUT_OF_RANGE"
    return CODE_OF.get(field, "BAD_REQUEST")


@pytest.mark.parametrize("srv_type,name,make,field", BAD_REQUESTS,
                         ids=[f"{b[1]}-{b[3]}" for b in BAD_REQUESTS])
def test_malformed_requests_get_a_clear_error(server, srv_type, name, make, field):
    caller, proc = server
    reply = caller.call(srv_type, f"/cs/{name}", make())
    assert reply.success is False
    assert field in reply.message, reply.message
    code = expected_code(field)
    assert reply.error_code == getattr(srv_type.Response, code), (code, reply.message)
    assert proc.running()


def test_bad_requests_never_cause_an_internal_error(server):
    """Every predictable bad input above was answered as such: no traceback, no 'internal
    error', nothing at error level in the node's log."""
    caller, proc = server
    # Still answering after all of them.
    reply = caller.call(CheckLineOfSight, "/cs/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5)))
    assert reply.success and reply.blocked_by == "grid"
    bad = [line for line in proc.lines
           if "Traceback" in line or "internal error" in line or "[ERROR]" in line]
    assert not bad, bad


def test_no_map_yet_and_latched_map_published_before_the_node_starts(start_process, client,
                                                                    latched_qos):
    quiet = start_process("no_map_server", node_command(
        "planning_collision.ros.collision_server", namespace="nomap"))
    obstacles_pub = client.node.create_publisher(ObstacleArray, "/nomap/obstacles", latched_qos)
    obstacles_pub.publish(obstacles_msg())
    reply = client.call(CheckLineOfSight, "/nomap/check_line_of_sight",
                        los_request((0.0, 0.0), (1.0, 1.0)), timeout=120.0, process=quiet)
    assert not reply.success and reply.message == "no map received on /nomap/map"
    assert reply.error_code == CheckLineOfSight.Response.NO_MAP
    # Obstacle-only queries work without a map.
    assert client.spin_until(lambda: quiet.wait_for_line("obstacles received", 0.01), 20.0)
    reply = client.call(CheckLineOfSight, "/nomap/check_line_of_sight",
                        los_request((0.0, 0.0), (3.0, 0.0), layers=2))
    assert reply.success and reply.blocked_by == "l_wall"

    # A map latched before the node exists reaches it when it starts.
    map_pub = client.node.create_publisher(OccupancyGrid, "/late/map", latched_qos)
    map_pub.publish(map_msg(make_map_data()))
    wrong_frame = client.node.create_publisher(ObstacleArray, "/late/obstacles", latched_qos)
    wrong_frame.publish(obstacles_msg(frame="odom"))
    late = start_process("late_server", node_command(
        "planning_collision.ros.collision_server", namespace="late"))
    client.wait_for_service(CheckLineOfSight, "/late/check_line_of_sight", 120.0, late)
    assert client.spin_until(lambda: late.wait_for_line("map 200 x 100", 0.01), 20.0)
    reply = client.call(CheckLineOfSight, "/late/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=3))
    assert reply.success and not reply.clear and reply.blocked_by == "grid"
    assert late.wait_for_line("obstacles in frame 'odom' ignored", 5.0)


def swap_path() -> np.ndarray:
    """A path whose footprint checks and segment checks both change with the wall at x in
    [3.0, 3.1): per row, a pose whose 0.3 m disc touches the wall from the left (its segments
    clear), then a segment across the wall between two poses well clear of it."""
    rows = []
    for y in np.linspace(-0.6, 3.6, 200):
        rows += [(1.0, y, 0.0), (2.8, y, 0.0), (2.0, y, 0.0), (4.0, y, 0.0)]
    return np.array(rows)


def test_map_swapped_while_queries_run_is_never_mixed(start_process, client, client_factory,
                                                     latched_qos):
    """Maps are swapped every 10 ms while batches of 1,000 rays and 800-pose paths are checked:
    each answer matches exactly one of the two maps. check_path reads the map for its footprint
    checks and for its segments: both must come from the same one."""
    server = start_process("swap_server", node_command(
        "planning_collision.ros.collision_server", namespace="swap"))
    free = np.zeros((100, 200), dtype=np.int8)
    walled = free.copy()
    walled[:, 100:102] = 100  # a full-height wall at x in [3.0, 3.1)
    msgs = [map_msg(free), map_msg(walled)]
    publisher_node = client_factory("swapper")
    map_pub = publisher_node.node.create_publisher(OccupancyGrid, "/swap/map", latched_qos)
    map_pub.publish(msgs[0])
    client.wait_for_service(CheckLinesOfSight, "/swap/check_lines_of_sight", 120.0, server)
    client.wait_for_service(CheckPath, "/swap/check_path", 30.0, server)
    assert client.spin_until(lambda: server.wait_for_line("map 200 x 100", 0.01), 20.0)

    path = swap_path()
    footprint = ConvexShape.circle((0, 0), 0.3)
    expected = {}
    for name, data in (("free", free), ("walled", walled)):
        invalid, visible, _ = expected_path(path, footprint, 1, grid.GridMap(data, RES, ORIGIN))
        expected[name] = (invalid, visible)
    assert expected["free"] == ([], [True] * (len(path) - 1))
    assert expected["walled"][0] and not all(expected["walled"][1])
    path_req = path_request(path, 1, Shape(type=Shape.TYPE_CIRCLE, radius=0.3))
    stop = threading.Event()

    def swap_maps():
        k = 0
        while not stop.is_set():
            k += 1
            map_pub.publish(msgs[k % 2])
            stop.wait(0.01)

    swapper = threading.Thread(target=swap_maps)
    swapper.start()
    n = 1000
    ys = np.linspace(-0.9, 3.9, n)
    request = CheckLinesOfSight.Request(start_x=np.full(n, 0.0), start_y=ys,
                                        goal_x=np.full(n, 6.0), goal_y=ys)
    seen, seen_paths = set(), set()
    try:
        for _ in range(25):
            reply = client.call(CheckLinesOfSight, "/swap/check_lines_of_sight", request)
            assert reply.success, reply.message
            answers = set(reply.clear)
            assert len(answers) == 1, "one response mixed the old and the new map"
            seen |= answers
            reply = client.call(CheckPath, "/swap/check_path", path_req)
            assert reply.success, reply.message
            got = (list(reply.invalid_pose_indices), list(reply.segment_visible))
            matches = [name for name, answer in expected.items() if got == answer]
            assert matches, "check_path mixed the old and the new map in one answer"
            seen_paths.add(matches[0])
    finally:
        stop.set()
        swapper.join()
        publisher_node.close()  # before start_process stops the server
    assert seen == {True, False}
    assert seen_paths == {"free", "walled"}
    assert server.running()


def test_check_path_takes_one_snapshot(monkeypatch):
    """Deterministic companion of the test above, in-process and without DDS: a map swapped in
    between check_path's footprint checks and its segment checks (the widest gap between the
    two in one request) does not reach the segment checks."""
    from planning_collision.ros import collision_server as cs

    free = np.zeros((100, 200), dtype=np.int8)
    walled = free.copy()
    walled[:, 100:102] = 100
    worlds = {name: World(grid.GridMap(data, RES, ORIGIN), None)
              for name, data in (("free", free), ("walled", walled))}
    node = cs.CollisionServer.__new__(cs.CollisionServer)  # the handlers, not a ROS node
    node.params = SimpleNamespace(**{spec.name: spec.default for spec in cs.PARAMETERS})
    node.default_footprint = ConvexShape.circle((0, 0), 0.3)
    node._markers = None
    node._map_sub = SimpleNamespace(topic_name="/map")
    node.active, node.kernels_ready = True, threading.Event()
    node.kernels_ready.set()
    footprint_collides = grid.footprint_collides
    path = swap_path()
    request = path_request(path, 1, Shape(type=Shape.TYPE_CIRCLE, radius=0.3))
    for first, second in (("walled", "free"), ("free", "walled")):
        node._world = worlds[first]

        def swap_during_footprints(*args, second=second, **kwargs):
            node._world = worlds[second]  # a map arrives while the request runs
            return footprint_collides(*args, **kwargs)

        monkeypatch.setattr(grid, "footprint_collides", swap_during_footprints)
        reply = node._check_path(request, CheckPath.Response())
        monkeypatch.setattr(grid, "footprint_collides", footprint_collides)
        assert reply.success, reply.message
        assert node._world is worlds[second]
        invalid, visible, _ = expected_path(path, ConvexShape.circle((0, 0), 0.3), 1,
                                            worlds[first].grid)
        assert (list(reply.invalid_pose_indices), list(reply.segment_visible)) == (invalid, visible)


def count_lines(proc, text: str) -> int:
    return sum(text in line for line in list(proc.lines))


def test_pathological_maps_and_obstacles_are_logged_and_never_fatal(start_process, client,
                                                                     latched_qos):
    proc = start_process("bad_input_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        namespace="bad"))
    map_pub = client.node.create_publisher(OccupancyGrid, "/bad/map", latched_qos)
    obstacle_pub = client.node.create_publisher(ObstacleArray, "/bad/obstacles", latched_qos)
    map_pub.publish(map_msg(make_map_data()))
    obstacle_pub.publish(obstacles_msg())
    client.wait_for_service(CheckLineOfSight, "/bad/check_line_of_sight", 120.0, proc)
    assert client.spin_until(lambda: proc.wait_for_line("map 200 x 100", 0.01)
                             and proc.wait_for_line("2 obstacles received", 0.01), 20.0)

    def bad_map(**changes) -> OccupancyGrid:
        msg = map_msg(make_map_data())
        for name, value in changes.items():
            if name == "data":
                msg.data = value
            else:
                setattr(msg.info, name, value)
        return msg

    zero_origin = bad_map()
    zero_origin.info.origin.orientation.w = 0.0
    nan_origin = bad_map()
    nan_origin.info.origin.position.x = math.nan
    far_origin = bad_map()  # finite but absurd: was taken, and every grid query then refused
    far_origin.info.origin.position.x = 1e300
    pathological = [
        (bad_map(data=bytes(50)), "map data has 50 cells"),  # width * height != len(data)
        (bad_map(resolution=0.0), "resolution must be finite and > 0, got 0.0"),
        (bad_map(resolution=math.nan), "resolution must be finite and > 0, got nan"),
        (bad_map(resolution=-0.05), "resolution must be finite and > 0, got -0.05"),
        (bad_map(width=2**32 - 1, height=2**32 - 1, data=b""), "map data has 0 cells"),
        (bad_map(width=0, height=0, data=b""), "map is empty"),
        (nan_origin, "map.info.origin.position contains NaN"),
        (far_origin, "map.info.origin.position (1e+300, -1) is beyond"),
        (zero_origin, "map.info.origin.orientation is a zero quaternion"),
        (map_msg(make_map_data(), frame="odom"), "map in frame 'odom' ignored"),
    ]
    for msg, text in pathological:
        before = count_lines(proc, text)
        map_pub.publish(msg)
        assert client.spin_until(lambda text=text, before=before:
                                 count_lines(proc, text) > before, 10.0), (text, proc.lines[-5:])
        line = [line for line in proc.lines if text in line][-1]
        assert "[WARN]" in line, line

    def polygon(obstacle_id, points):
        return Obstacle(id=obstacle_id, type=Obstacle.TYPE_POLYGON,
                        polygon=[Point(x=float(x), y=float(y)) for x, y in points])

    good = Obstacle(id="box", type=Obstacle.TYPE_SHAPE, shape=box_shape(0.4, 0.4))
    good.shape.pose.position.x, good.shape.pose.position.y = 5.0, 3.0
    bad_obstacles = ObstacleArray(obstacles=[
        polygon("nan_vertex", [(0, 0), (1, math.nan), (1, 1)]),
        polygon("bow_tie", [(0, 0), (1, 1), (1, 0), (0, 1)]),  # self-intersecting
        polygon("empty", []),
        polygon("collinear", [(0, 0), (1, 0), (2, 0)]),
        Obstacle(id="unknown_type", type=7),
        Obstacle(id="negative_radius", type=Obstacle.TYPE_SHAPE,
                 shape=Shape(type=Shape.TYPE_CIRCLE, radius=-1.0)),
        Obstacle(id="huge", type=Obstacle.TYPE_SHAPE,
                 shape=Shape(type=Shape.TYPE_CIRCLE, radius=1e300)),
        Obstacle(id="far", type=Obstacle.TYPE_SHAPE, shape=far_circle()),
        good,
        polygon("box", [(0, 0), (1, 0), (1, 1)]),  # duplicate id
    ])
    bad_obstacles.header.frame_id = "map"
    obstacle_pub.publish(bad_obstacles)
    assert client.spin_until(lambda: proc.wait_for_line("1 obstacles received", 0.01), 10.0)
    for text in ("obstacle 'nan_vertex' ignored", "obstacle 'bow_tie' ignored: obstacles[1]."
                 "polygon: polygon is self-intersecting", "obstacle 'empty' ignored",
                 "obstacle 'collinear' ignored", "obstacle 'unknown_type' ignored",
                 "obstacle 'negative_radius' ignored", "obstacle 'huge' ignored",
                 "obstacle 'far' ignored: obstacles[7].shape.pose: x must be finite",
                 "duplicate id 'box' ignored"):
        line = [line for line in proc.lines if text in line]
        assert line and "[WARN]" in line[-1], (text, proc.lines[-12:])

    # Still running and answering, with the last good map and the one good obstacle.
    gmap, _, _ = core_world()
    reply = client.call(CheckLineOfSight, "/bad/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1), process=proc)
    core = gmap.line_of_sight((0.0, 0.5), (3.0, 0.5))
    assert reply.success and not reply.clear and reply.blocked_by == "grid"
    assert (reply.first_blocked_cell_x, reply.first_blocked_cell_y) == core.first_blocked_cell
    reply = client.call(CheckLineOfSight, "/bad/check_line_of_sight",
                        los_request((4.0, 3.0), (6.0, 3.0), layers=2))
    assert reply.success and reply.blocked_by == "box"
    assert reply.first_blocked_point.x == pytest.approx(4.8)

    # A valid but absurd map (1e-30 m cells) is taken; queries it cannot index are refused
    # with the field named, not with an internal error.
    tiny = bad_map(resolution=1e-30, width=10, height=10, data=bytes(100))
    map_pub.publish(tiny)
    assert client.spin_until(lambda: proc.wait_for_line("map 10 x 10", 0.01), 10.0)
    reply = client.call(CheckLineOfSight, "/bad/check_line_of_sight",
                        los_request((-2.0, -1.0), (1.0, 1.0), layers=1))
    assert not reply.success and reply.message.startswith("goal lies"), reply.message
    reply = client.call(CheckCollision, "/bad/check_collision",
                        collision_request([(-2.0, -1.0, 0.0)], layers=1))
    assert not reply.success and reply.message.startswith("footprint reaches"), reply.message
    assert proc.running()
    errors = [line for line in proc.lines if "[ERROR]" in line or "Traceback" in line]
    assert not errors, errors


def test_volatile_map_topic(start_process, client):
    """map_subscribe_transient_local: false receives a map from a volatile publisher (a
    costmap-style topic); the default, transient_local subscription cannot match such a
    publisher and still has no map."""
    volatile = start_process("volatile_server", node_command(
        "planning_collision.ros.collision_server", namespace="vol",
        parameters={"map_subscribe_transient_local": False}))
    latched = start_process("latched_server", node_command(
        "planning_collision.ros.collision_server", namespace="vol_latched",
        parameters={"map_topic": "/vol/map"}))
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    incompatible = []  # the latched server's subscription, seen from the publisher
    map_pub = client.node.create_publisher(
        OccupancyGrid, "/vol/map", qos,
        event_callbacks=PublisherEventCallbacks(incompatible_qos=incompatible.append))
    client.wait_for_service(CheckLineOfSight, "/vol/check_line_of_sight", 120.0, volatile)
    client.wait_for_service(CheckLineOfSight, "/vol_latched/check_line_of_sight", 120.0, latched)
    msg = map_msg(make_map_data())
    received = False
    for _ in range(50):  # a volatile sample reaches only subscribers matched already: repeat
        map_pub.publish(msg)
        if client.spin_until(lambda: volatile.wait_for_line("map 200 x 100", 0.01), 0.4):
            received = True
            break
    assert received, volatile.lines[-10:]
    reply = client.call(CheckLineOfSight, "/vol/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5)))
    assert reply.success and not reply.clear and reply.blocked_by == "grid"
    reply = client.call(CheckLineOfSight, "/vol_latched/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5)))
    assert not reply.success and reply.message == "no map received on /vol/map"
    assert client.spin_until(lambda: incompatible, 10.0)
    assert incompatible[-1].last_policy_kind == QoSPolicyKind.DURABILITY


def colour(m: Marker) -> tuple[float, ...]:
    """A marker's colour, rounded (ColorRGBA holds float32)."""
    return tuple(round(v, 5) for v in markers.rgba(m.color))


GREEN = tuple(round(v, 5) for v in markers.rgba(markers.GREEN))
RED = tuple(round(v, 5) for v in markers.rgba(markers.RED))


def test_markers(start_process, client, client_factory, latched_qos):
    """~/markers: obstacle outlines (namespace obstacle/<id>, no lifetime), line-of-sight rays
    (green to the goal, red to the first blocked point) and footprints (green or red) with
    lifetimes and ids that keep increasing; an obstacle update deletes only the outlines of
    obstacles that are gone."""
    proc = start_process("marker_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        namespace="mk"))
    feeder = client_factory("marker_feeder")
    map_pub = feeder.node.create_publisher(OccupancyGrid, "/mk/map", latched_qos)
    obstacle_pub = feeder.node.create_publisher(ObstacleArray, "/mk/obstacles", latched_qos)
    received: list[Marker] = []
    client.node.create_subscription(MarkerArray, "/mk/collision_server/markers",
                                    lambda msg: received.extend(msg.markers), 100)
    map_pub.publish(map_msg(make_map_data()))
    client.wait_for_service(CheckLineOfSight, "/mk/check_line_of_sight", 120.0, proc)
    assert client.spin_until(lambda: proc.wait_for_line("map 200 x 100", 0.01), 20.0)

    def spin_until(predicate, timeout=10.0):
        return client.spin_until(lambda: (feeder.spin_for(0.01) or True) and predicate(),
                                 timeout)

    def in_ns(ns):
        return [m for m in received if m.ns == ns]

    # The marker topic is volatile: (re)publish the obstacles until their outlines arrive.
    for _ in range(20):
        obstacle_pub.publish(obstacles_msg())
        if spin_until(lambda: in_ns("obstacle/l_wall") and in_ns("obstacle/pillar"), 1.0):
            break
    wall, pillar = in_ns("obstacle/l_wall")[-1], in_ns("obstacle/pillar")[-1]
    for outline_marker in (wall, pillar):
        assert outline_marker.action == Marker.ADD and outline_marker.type == Marker.LINE_STRIP
        assert outline_marker.header.frame_id == "map"
        assert (outline_marker.lifetime.sec, outline_marker.lifetime.nanosec) == (0, 0)
    wall_xy = [(q.x, q.y) for q in wall.points]
    assert wall_xy == [*L_WALL, L_WALL[0]]  # the polygon itself (concave), closed
    (cx, cy), r = PILLAR
    assert all(math.hypot(q.x - cx, q.y - cy) == pytest.approx(r) for q in pillar.points)
    # A subscriber that joins later (RViz started after the obstacles) gets the outlines too,
    # without the obstacles being published again.
    late: list[Marker] = []
    client.node.create_subscription(MarkerArray, "/mk/collision_server/markers",
                                    lambda msg: late.extend(msg.markers), 100)
    assert client.spin_until(lambda: {m.ns for m in late} >= {"obstacle/l_wall",
                                                              "obstacle/pillar"}, 10.0)

    def new_markers(ns, count, since):
        assert spin_until(lambda: len([m for m in received[since:] if m.ns == ns]) >= count), \
            f"no {ns} markers"
        return [m for m in received[since:] if m.ns == ns]

    # A clear ray: green, to the goal.
    mark = len(received)
    reply = client.call(CheckLineOfSight, "/mk/check_line_of_sight",
                        los_request((-1.5, -0.5), (0.5, -0.5), layers=1))
    assert reply.success and reply.clear
    (clear_ray,) = new_markers("line_of_sight", 1, mark)
    assert colour(clear_ray) == GREEN
    assert [(q.x, q.y) for q in clear_ray.points] == [(-1.5, -0.5), (0.5, -0.5)]
    assert clear_ray.lifetime.sec + clear_ray.lifetime.nanosec * 1e-9 > 0.0
    assert clear_ray.header.frame_id == "map"

    # A blocked ray: red, up to the first blocked point.
    mark = len(received)
    reply = client.call(CheckLineOfSight, "/mk/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1))
    assert reply.success and not reply.clear
    (blocked_ray,) = new_markers("line_of_sight", 1, mark)
    assert colour(blocked_ray) == RED
    end = (reply.first_blocked_point.x, reply.first_blocked_point.y)
    assert [(q.x, q.y) for q in blocked_ray.points] == [(0.0, 0.5), end]
    assert blocked_ray.lifetime.sec + blocked_ray.lifetime.nanosec * 1e-9 > 0.0
    assert blocked_ray.id != clear_ray.id  # the second query does not replace the first

    # A batch: one marker per ray, all with new ids.
    mark = len(received)
    reply = client.call(CheckLinesOfSight, "/mk/check_lines_of_sight",
                        lines_request([-1.5, 0.0, -1.5], [-0.5, 0.5, 0.0],
                                      [0.5, 3.0, 0.0], [-0.5, 0.5, 0.0]))
    assert reply.success and list(reply.clear) == [True, False, True]
    rays = new_markers("line_of_sight", 3, mark)
    assert [colour(m) for m in rays] == [GREEN, RED, GREEN]
    assert len({m.id for m in rays} | {clear_ray.id, blocked_ray.id}) == 5

    # Footprints: green where free, red in collision; closed rings with lifetimes.
    footprint_ids = set()
    for _ in range(2):
        mark = len(received)
        reply = client.call(CheckCollision, "/mk/check_collision",
                            collision_request([(-1.5, -0.5, 0.0), (1.1, 0.0, 0.3)], layers=1))
        assert reply.success and list(reply.in_collision) == [False, True]
        free_fp, hit_fp = new_markers("footprints", 2, mark)
        assert colour(free_fp) == GREEN
        assert colour(hit_fp) == RED
        for m in (free_fp, hit_fp):
            assert m.type == Marker.LINE_STRIP and m.points[0] == m.points[-1]
            assert m.lifetime.sec + m.lifetime.nanosec * 1e-9 > 0.0
        # The 0.6 x 0.4 box of the YAML, placed at the pose.
        assert {(round(q.x, 9), round(q.y, 9)) for q in free_fp.points} == {
            (-1.2, -0.3), (-1.8, -0.3), (-1.8, -0.7), (-1.2, -0.7)}
        footprint_ids |= {free_fp.id, hit_fp.id}
    assert len(footprint_ids) == 4  # two consecutive queries keep distinct ids

    # An obstacle update: the pillar's outline is deleted, nothing else.
    mark = len(received)
    only_wall = obstacles_msg()
    only_wall.obstacles = [o for o in only_wall.obstacles if o.id == "l_wall"]
    obstacle_pub.publish(only_wall)
    assert spin_until(lambda: any(m.ns == "obstacle/pillar" and m.action == Marker.DELETE
                                  for m in received[mark:]))
    update = received[mark:]
    assert any(m.ns == "obstacle/l_wall" and m.action == Marker.ADD for m in update)
    deleted = [m for m in update if m.action != Marker.ADD]
    assert [(m.ns, m.action) for m in deleted] == [("obstacle/pillar", Marker.DELETE)]
    assert not [m for m in received if m.action == Marker.DELETEALL]
    feeder.close()  # before start_process stops the server


def test_a_late_marker_subscriber_gets_many_outlines_in_bounded_messages(start_process, client,
                                                                         latched_qos):
    """1,200 obstacles and RViz joining late: the outlines come in messages of at most
    max_obstacle_markers (they used to come as one message of every outline, built while
    queries waited), and every one of them arrives; queries are answered meanwhile."""
    proc = start_process("many_markers_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        {"max_obstacle_markers": 100}, namespace="many"))
    obstacle_pub = client.node.create_publisher(ObstacleArray, "/many/obstacles", latched_qos)
    boxes = []
    for k in range(1200):
        box = Obstacle(id=f"box{k}", type=Obstacle.TYPE_SHAPE, shape=box_shape(0.2, 0.2))
        box.shape.pose = pose(0.5 * (k % 40), 0.5 * (k // 40))
        boxes.append(box)
    msg = ObstacleArray(obstacles=boxes)
    msg.header.frame_id = "map"
    obstacle_pub.publish(msg)
    client.wait_for_service(CheckLineOfSight, "/many/check_line_of_sight", 120.0, proc)
    assert client.spin_until(lambda: proc.wait_for_line("1200 obstacles received", 0.01), 30.0)
    arrays: list[MarkerArray] = []
    client.node.create_subscription(MarkerArray, "/many/collision_server/markers",
                                    arrays.append, 100)

    def outlines() -> set[str]:
        return {m.ns for a in list(arrays) for m in a.markers if m.ns.startswith("obstacle/")}

    reply = client.call(CheckLineOfSight, "/many/check_line_of_sight",
                        los_request((0.25, 0.0), (10.0, 0.0), layers=2))
    assert reply.success and reply.blocked_by == "box1"
    assert client.spin_until(lambda: len(outlines()) == 1200, 30.0), len(outlines())
    assert max(sum(m.ns.startswith("obstacle/") for m in a.markers) for a in arrays) <= 100
