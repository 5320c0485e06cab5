"""collision_server never holds one thing behind another: a small query is answered while a
large one is still running, and a map update is taken while a huge obstacle set is still
being ingested. The server runs in this process with the executor run_node gives it (its own
rclpy context); a test client in another context talks to it over DDS on loopback. The slow
parts are held on purpose with events, so the tests are deterministic."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import Pose
from nav_msgs.msg import OccupancyGrid
from rclpy.context import Context
from rclpy.parameter import Parameter
from ros_clients import LATCHED, Client, close_then_stop, spinning
from test_collision_server import los_request, make_map_data, map_msg, obstacles_msg

from planning_collision import collision_world
from planning_collision.resources import config_file
from planning_collision.ros import collision_server as cs
from planning_collision.ros.node_executor import NodeExecutor
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.msg import ObstacleArray
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
)


@pytest.fixture
def server():
    context = Context()
    rclpy.init(context=context)
    node = cs.CollisionServer(context=context, namespace="conc", parameter_overrides=[
        Parameter("publish_markers", value=False)])
    assert node.kernels_ready.wait(300.0)
    executor = NodeExecutor(node.executor_threads, context=context)
    executor.add_node(node)
    try:
        with spinning(executor, period=0.05):
            client = Client("concurrency_client")
            try:
                yield node, client
            finally:
                client.close()
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_one_ray_query_is_answered_while_a_large_request_runs(server, monkeypatch):
    node, client = server
    map_pub = client.node.create_publisher(OccupancyGrid, "/conc/map", LATCHED)
    map_pub.publish(map_msg(make_map_data()))
    assert client.spin_until(lambda: node._world.grid is not None, 20.0)
    hold, running = threading.Event(), threading.Event()
    segments = collision_world.World.segments

    def slow_segments(world, starts, goals, mode, field):
        if len(starts) > 1:  # the large request: held until the test lets it go
            running.set()
            assert hold.wait(30.0)
        return segments(world, starts, goals, mode, field)

    monkeypatch.setattr(collision_world.World, "segments", slow_segments)
    big = CheckLinesOfSight.Request(start_x=[0.0] * 1000, start_y=[0.5] * 1000,
                                    goal_x=[3.0] * 1000, goal_y=[0.5] * 1000)
    big.header.frame_id = "map"
    client.wait_for_service(CheckLinesOfSight, "/conc/check_lines_of_sight")
    pending = client.call_async(CheckLinesOfSight, "/conc/check_lines_of_sight", big)
    assert client.spin_until(running.is_set, 20.0), "the large request never started"
    try:
        # While it runs (held), small queries are answered, one after another.
        for _ in range(5):
            reply = client.call(CheckLineOfSight, "/conc/check_line_of_sight",
                                los_request((0.0, 0.5), (3.0, 0.5), layers=1), timeout=10.0)
            assert reply.success and not reply.clear and reply.blocked_by == "grid"
        assert not pending.done()
    finally:
        hold.set()
    assert client.spin_until(pending.done, 20.0)
    reply = pending.result()
    assert reply.success and not any(reply.clear)


def test_a_map_is_taken_while_a_huge_obstacle_set_is_ingested(server, monkeypatch):
    node, client = server
    hold, ingesting = threading.Event(), threading.Event()
    snapshot = cs.obstacle_snapshot

    def slow_snapshot(msg, warn):
        ingesting.set()
        assert hold.wait(30.0)
        return snapshot(msg, warn)

    monkeypatch.setattr(cs, "obstacle_snapshot", slow_snapshot)
    obstacle_pub = client.node.create_publisher(ObstacleArray, "/conc/obstacles", LATCHED)
    obstacle_pub.publish(obstacles_msg())
    assert client.spin_until(ingesting.is_set, 20.0), "the obstacles never arrived"
    try:
        map_pub = client.node.create_publisher(OccupancyGrid, "/conc/map", LATCHED)
        map_pub.publish(map_msg(make_map_data()))
        assert client.spin_until(lambda: node._world.grid is not None, 20.0), \
            "the map waited for the obstacle set"
        assert node._world.obstacles is None  # still ingesting
        reply = client.call(CheckLineOfSight, "/conc/check_line_of_sight",
                            los_request((0.0, 0.5), (3.0, 0.5), layers=1), timeout=10.0)
        assert reply.success and reply.blocked_by == "grid"
    finally:
        hold.set()
    assert client.spin_until(lambda: node._world.obstacles is not None, 20.0)
    assert node._world.grid is not None  # both halves kept: no lost update
    assert np.array_equal(node._world.grid.data, make_map_data())


def test_a_large_check_collision_runs_no_full_cycle_collection(server):
    """Issue #20: a 100,000-pose check_collision made 200,000 Point messages, and each growth
    of the live objects by a quarter set off a full collection over all of them, holding the
    interpreter lock from start to end (one-ray queries waited up to 2.2 s over DDS). The
    handler now converts with the collector paused; it runs again afterwards."""
    node, client = server
    map_pub = client.node.create_publisher(OccupancyGrid, "/conc/map", LATCHED)
    map_pub.publish(map_msg(make_map_data()))
    assert client.spin_until(lambda: node._world.grid is not None, 20.0)
    request = CheckCollision.Request()
    request.header.frame_id = "map"
    poses = []
    for i in range(100_000):
        pose = Pose()
        pose.position.x, pose.position.y = 0.5 + (i % 300) * 0.01, 0.5
        pose.orientation.w = 1.0
        poses.append(pose)
    request.poses = poses
    full = []

    def record(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)

    assert gc.isenabled()
    gc.callbacks.append(record)
    try:
        response = node._check_collision(request, CheckCollision.Response())
    finally:
        gc.callbacks.remove(record)
    assert response.success, response.message
    assert len(response.obstacle_points) == 100_000 and any(response.grid_collision)
    assert full == []
    assert gc.isenabled()


def test_a_large_request_is_taken_with_no_full_cycle_collection(server):
    """Issue #20: rclpy turns a request into Python messages before any callback sees it. For
    100,000 poses that is 300,000 objects, and with the collector running each growth of the
    live objects by a quarter set off a full collection over all of them, the interpreter
    lock held from start to end (one-ray queries waited behind it). The executor takes
    requests with the collector paused. The request here is refused (layers 0) as soon as it
    is looked at, so its answer is small and the take is the only bulk conversion."""
    node, client = server
    request = CheckCollision.Request(poses=[Pose() for _ in range(100_000)], layers=0)
    request.header.frame_id = "map"
    client.wait_for_service(CheckCollision, "/conc/check_collision")
    full = []

    def record(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(info)

    gc.freeze()  # what lives now is old: a full collection then scans only the new objects
    gc.collect()  # and with nothing left to scan, the next one comes as soon as it may
    assert gc.isenabled()
    gc.callbacks.append(record)
    try:
        reply = client.call(CheckCollision, "/conc/check_collision", request, timeout=120.0)
    finally:
        gc.callbacks.remove(record)
    assert not reply.success and reply.error_code == reply.BAD_REQUEST, reply.message
    assert "layers" in reply.message
    assert full == []
    assert gc.isenabled()


# A client in a process of its own (the answers to its 100,000-pose requests take this
# process's interpreter for a while): check_collision, then check_path, 100,000 poses each.
LARGE_CALLER = textwrap.dedent("""
    import sys, time
    import rclpy
    from geometry_msgs.msg import Pose, PoseStamped
    from planning_collision_interfaces.srv import CheckCollision, CheckPath
    rclpy.init()
    node = rclpy.create_node("large_caller")
    collision = CheckCollision.Request()
    collision.header.frame_id = "map"
    path = CheckPath.Request()
    path.path.header.frame_id = "map"
    for i in range(100_000):
        stamped = PoseStamped()
        stamped.pose.position.x = 0.5 + (i % 300) * 0.01
        stamped.pose.position.y = 0.5 + (i // 300 % 80) * 0.01
        stamped.pose.orientation.w = 1.0
        collision.poses.append(stamped.pose)
        path.path.poses.append(stamped)
    for srv, name, request in ((CheckCollision, "check_collision", collision),
                               (CheckPath, "check_path", path)):
        client = node.create_client(srv, "/large/" + name)
        assert client.wait_for_service(60.0)
        started = time.monotonic()
        print("sending " + name, flush=True)
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=60.0)
        reply = future.result()
        print(f"{name} answered: {reply is not None and reply.success} in "
              f"{time.monotonic() - started:.2f} s", flush=True)
    node.destroy_node()
    rclpy.shutdown()
""")


def test_a_one_ray_query_waits_under_half_a_second_behind_100000_poses(
        domain_id, client_factory):
    """Issue #20, over DDS with the shipped configuration: one-ray queries waited up to
    2.19 s behind an allowed 100,000-pose check_collision (170 ms behind check_path); the
    conversions' full cycle collections, in the handler and then in rclpy's take, were the
    cause (see the two tests above). On a quiet machine the worst wait is now 0.05-0.26 s;
    on two cores shared with a dozen busy processes it can still pass 0.5 s. The 8 MB
    check_path request overflows the server's socket buffer, so a ray query arriving meanwhile
    can be dropped and waited for its client's next heartbeat: up to 3 s (CI, 2.36 s) until the
    profile's heartbeat period came down to 0.1 s (the test below)."""
    server = RosProcess("collision_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        namespace="large", parameters={"publish_markers": False}), domain_id)
    feeder = client_factory("large_feeder")
    caller = client_factory("large_ray")
    large = None
    try:
        feeder.node.create_publisher(OccupancyGrid, "/large/map", LATCHED).publish(
            map_msg(make_map_data()))
        feeder.node.create_publisher(ObstacleArray, "/large/obstacles", LATCHED).publish(
            obstacles_msg())
        caller.wait_for_service(CheckLineOfSight, "/large/check_line_of_sight", 120.0, server)
        assert caller.spin_until(lambda: (feeder.spin_for(0.05) or True)
                                 and server.wait_for_line("obstacles received", 0.01)
                                 and server.wait_for_line("map 200 x 100", 0.01), 30.0)
        ray = los_request((0.0, 0.5), (3.0, 0.5), layers=3)
        caller.call(CheckLineOfSight, "/large/check_line_of_sight", ray)  # a ready server
        large = RosProcess("large_caller", [sys.executable, "-c", LARGE_CALLER], domain_id)
        assert large.wait_for_line("sending check_collision", 60.0), large.lines[-20:]
        waits = {"check_collision": [], "check_path": []}
        while large.running():
            behind = "check_path" if any("sending check_path" in line
                                         for line in large.lines) else "check_collision"
            started = time.monotonic()
            reply = caller.call(CheckLineOfSight, "/large/check_line_of_sight", ray, 10.0)
            waits[behind].append(time.monotonic() - started)
            assert reply.success and not reply.clear
        assert large.returncode == 0, large.lines[-20:]
        for name in waits:
            assert f"{name} answered: True" in "\n".join(large.lines), large.lines[-20:]
            assert len(waits[name]) >= 5, waits
            assert max(waits[name]) < 0.5, (name, sorted(waits[name])[-5:])
    finally:
        close_then_stop([feeder, caller], [p for p in (large, server) if p is not None])


def udp_sockets(pid: int) -> dict[str, tuple[int, int]]:
    """The IPv4 UDP sockets process ``pid`` holds: inode -> (port, datagrams the kernel dropped
    for lack of room in its receive buffer)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    found = {}
    with open(f"/proc/{pid}/net/udp") as table:
        for line in table.read().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                found[fields[9]] = (int(fields[1].split(":")[1], 16), int(fields[-1]))
    return found


def fill(ports: list[int]) -> None:
    """Fill the receive buffers of the sockets on these loopback ports to the last byte: large
    datagrams first, then tiny ones for the room they leave (the kernel admits a datagram while
    the buffer is not yet over its size)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for port in ports:
            for size, count in ((60_000, 150), (16, 3000)):
                for _ in range(count):
                    sender.sendto(b"\0" * size, ("127.0.0.1", port))


def test_a_query_the_kernel_dropped_is_sent_again_within_a_fraction_of_a_second(
        domain_id, client_factory):
    """Over UDP (the shipped profile), a burst larger than the server's socket buffer (an 8 MB
    request) makes the kernel drop what else arrives meanwhile. A dropped request is sent again
    when its writer's next heartbeat lets the server ask for it: Fast DDS's default heartbeat
    period is 3 s, and a one-ray query waited 2.0-2.8 s here (3 of 3) before the profile set it
    to 0.1 s. The server is stopped (SIGSTOP) while its buffers are filled and the query sent,
    so the query is dropped every time; the test checks that the kernel did drop datagrams
    then."""
    server = RosProcess("collision_server", node_command(
        "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
        namespace="dropped", parameters={"publish_markers": False}), domain_id)
    caller = client_factory("dropped_ray")
    try:
        caller.node.create_publisher(OccupancyGrid, "/dropped/map", LATCHED).publish(
            map_msg(make_map_data()))
        caller.wait_for_service(CheckLineOfSight, "/dropped/check_line_of_sight", 120.0, server)
        assert caller.spin_until(lambda: server.wait_for_line("map 200 x 100", 0.01), 30.0)
        ray = los_request((0.0, 0.5), (3.0, 0.5), layers=3)
        caller.call(CheckLineOfSight, "/dropped/check_line_of_sight", ray)  # a ready server
        pid = server._process.pid
        waits = []
        for _ in range(3):
            os.kill(pid, signal.SIGSTOP)
            try:
                sockets = udp_sockets(pid)
                fill([port for port, _ in sockets.values()])
                filled = sum(drops for _, drops in udp_sockets(pid).values())
                future = caller.call_async(CheckLineOfSight, "/dropped/check_line_of_sight", ray)
                caller.spin_for(0.1)  # the request, and the heartbeats that follow it, are sent
                dropped = sum(drops for _, drops in udp_sockets(pid).values()) - filled
            finally:
                os.kill(pid, signal.SIGCONT)
            resumed = time.monotonic()
            assert dropped > 0, "nothing was dropped: the scene did not happen"
            assert caller.spin_until(future.done, 10.0), "the query was never answered"
            waits.append(time.monotonic() - resumed)
            assert future.result().success
        assert max(waits) < 0.5, waits
        assert not [line for line in server.lines if "XMLPARSER" in line], server.lines[:5]
    finally:
        close_then_stop([caller], [server])
