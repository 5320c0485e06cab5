"""collision_server never holds one thing behind another: a small query is answered while a
large one is still running, and a map update is taken while a huge obstacle set is still
being ingested. The server runs in this process with the executor run_node gives it (its own
rclpy context); a test client in another context talks to it over DDS on loopback. The slow
parts are held on purpose with events, so the tests are deterministic."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import rclpy
from nav_msgs.msg import OccupancyGrid
from rclpy.context import Context
from rclpy.parameter import Parameter
from ros_clients import LATCHED, Client
from test_collision_server import los_request, make_map_data, map_msg, obstacles_msg

from planning_collision import collision_world
from planning_collision.ros import collision_server as cs
from planning_collision.ros.node_executor import NodeExecutor
from planning_collision_interfaces.msg import ObstacleArray
from planning_collision_interfaces.srv import CheckLineOfSight, CheckLinesOfSight


@pytest.fixture
def server():
    context = Context()
    rclpy.init(context=context)
    node = cs.CollisionServer(context=context, namespace="conc", parameter_overrides=[
        Parameter("publish_markers", value=False)])
    assert node.kernels_ready.wait(300.0)
    executor = NodeExecutor(node.executor_threads, context=context)
    executor.add_node(node)
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    client = Client("concurrency_client")
    try:
        yield node, client
    finally:
        client.close()
        stop.set()
        thread.join(10.0)
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
