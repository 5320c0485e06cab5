"""collision_server as a real process over DDS on loopback: every service, compared with the
pure cores on the same map and obstacles; malformed requests; a latched map published before
the node starts; a map replaced while queries run."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, PoseStamped
from nav_msgs.msg import OccupancyGrid

from planning_collision import grid
from planning_collision.geometry import ConvexShape, ObstacleSet, decompose, gjk_distance
from planning_collision.geometry.raycast import cast_segments
from planning_collision.processes import RosProcess, config_file, node_command
from planning_collision.ros.conversions import quaternion_from_yaw
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
    feeder = client_factory("feeder")
    map_pub = feeder.node.create_publisher(OccupancyGrid, "/cs/map", latched_qos)
    obstacle_pub = feeder.node.create_publisher(ObstacleArray, "/cs/obstacles", latched_qos)
    map_pub.publish(map_msg(make_map_data()))
    obstacle_pub.publish(obstacles_msg())
    caller = client_factory("caller")
    caller.wait_for_service(CheckLineOfSight, "/cs/check_line_of_sight", 120.0, proc)
    assert caller.spin_until(
        lambda: (feeder.spin_for(0.05) or True)
        and proc.wait_for_line("obstacles received", 0.01)
        and proc.wait_for_line("map 200 x 100", 0.01), 30.0), proc.lines[-20:]
    yield caller, proc
    proc.stop()


def los_request(start, goal, mode="", layers=0, frame="map"):
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
    for mode, layers in (("bresenham", 0), ("supercover", 1), ("conservative", 3)):
        r = CheckLinesOfSight.Request(start_x=starts[:, 0], start_y=starts[:, 1],
                                      goal_x=goals[:, 0], goal_y=goals[:, 1], mode=mode,
                                      layers=layers)
        r.header.frame_id = "map"
        reply = caller.call(CheckLinesOfSight, "/cs/check_lines_of_sight", r)
        assert reply.success, reply.message
        clear, first = grid.line_of_sight_batch(gmap, gmap.world_to_cell(starts),
                                                gmap.world_to_cell(goals), mode)
        expect_clear = clear.copy()
        if layers == 3:
            expect_clear &= cast_segments(obstacles, starts, goals).index < 0
        got = np.array(reply.clear)
        assert np.array_equal(got, expect_clear)
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
    request = CheckPath.Request(footprint=Shape(type=Shape.TYPE_CIRCLE, radius=0.1))
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
    assert not reply.valid
    assert list(reply.invalid_indices) == np.flatnonzero(invalid).tolist()
    assert reply.first_invalid_index == int(np.flatnonzero(invalid)[0])
    assert list(reply.segment_visible) == clear.tolist()
    assert reply.poses_checked == len(xs)

    request.stop_at_first_collision = True
    reply = caller.call(CheckPath, "/cs/check_path", request)
    assert list(reply.invalid_indices) == [int(np.flatnonzero(invalid)[0])]
    assert reply.poses_checked == reply.first_invalid_index + 1

    request.stop_at_first_collision = False
    request.max_lookahead = 2.0  # 0.2 m steps from x = -1.5: poses up to x = 0.5 only
    reply = caller.call(CheckPath, "/cs/check_path", request)
    assert reply.success and reply.valid and reply.poses_checked == 11
    assert reply.first_invalid_index == -1


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
]


@pytest.mark.parametrize("srv_type,name,make,field", BAD_REQUESTS,
                         ids=[f"{b[1]}-{b[3]}" for b in BAD_REQUESTS])
def test_malformed_requests_get_a_clear_error(server, srv_type, name, make, field):
    caller, proc = server
    reply = caller.call(srv_type, f"/cs/{name}", make())
    assert reply.success is False
    assert field in reply.message, reply.message
    assert proc.running()


def test_no_map_yet_and_latched_map_published_before_the_node_starts(start_process, client,
                                                                    latched_qos):
    quiet = start_process("no_map_server", node_command(
        "planning_collision.ros.collision_server", namespace="nomap"))
    obstacles_pub = client.node.create_publisher(ObstacleArray, "/nomap/obstacles", latched_qos)
    obstacles_pub.publish(obstacles_msg())
    reply = client.call(CheckLineOfSight, "/nomap/check_line_of_sight",
                        los_request((0.0, 0.0), (1.0, 1.0)), timeout=120.0, process=quiet)
    assert not reply.success and reply.message == "no map received on /nomap/map"
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


def test_map_swapped_while_queries_run_is_never_mixed(start_process, client, client_factory,
                                                     latched_qos):
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
    assert client.spin_until(lambda: server.wait_for_line("map 200 x 100", 0.01), 20.0)
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
    seen = set()
    try:
        for _ in range(80):
            reply = client.call(CheckLinesOfSight, "/swap/check_lines_of_sight", request)
            assert reply.success, reply.message
            answers = set(reply.clear)
            assert len(answers) == 1, "one response mixed the old and the new map"
            seen |= answers
    finally:
        stop.set()
        swapper.join()
    assert seen == {True, False}
    assert server.running()
