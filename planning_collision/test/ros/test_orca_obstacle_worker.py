"""orca_node builds its obstacles off the control thread: a slow build (a huge obstacle set)
never stops the commands, which keep using the previous set until the new one is ready.

The node runs in this process (its own rclpy context), with the obstacle build slowed down
on purpose; the test counts the commands published while the build is under way."""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from geometry_msgs.msg import Point, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from planning_collision import orca
from planning_collision.ros.orca_node import OrcaNode
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, OrcaStatus

BUILD_SECONDS = 2.0
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture
def node_and_client(monkeypatch):
    real_build = orca.build_obstacles
    building = threading.Event()

    def slow_build(polygons):
        building.set()
        time.sleep(BUILD_SECONDS)
        return real_build(polygons)

    monkeypatch.setattr(orca, "build_obstacles", slow_build)
    context = Context()
    rclpy.init(context=context)
    node = OrcaNode(context=context, parameter_overrides=[
        Parameter("agents", value=["solo"]), Parameter("solo.goal", value=[5.0, 0.0]),
        Parameter("raw_messages", value=False), Parameter("publish_markers", value=False)])
    client = rclpy.create_node("worker_test_client", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(client)
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.02)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield node, client, building
    finally:
        stop.set()
        thread.join(5.0)
        node.close()
        executor.shutdown()
        node.destroy_node()
        client.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_slow_obstacle_build_does_not_stop_the_commands(node_and_client):
    node, client, building = node_and_client
    arrivals: list[float] = []
    statuses: list[OrcaStatus] = []
    client.create_subscription(TwistStamped, "solo/cmd_vel",
                               lambda _: arrivals.append(time.monotonic()), 10)
    client.create_subscription(OrcaStatus, "orca/status", statuses.append, 10)
    odom = client.create_publisher(Odometry, "solo/odom", 10)
    obstacles = client.create_publisher(ObstacleArray, "obstacles", LATCHED)

    def wait(predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, what
            msg = Odometry()
            msg.header.frame_id = "map"
            msg.pose.pose.orientation.w = 1.0
            odom.publish(msg)
            time.sleep(0.05)

    wait(lambda: statuses and statuses[-1].agents[0].active, 20.0, "solo never active")
    wall = ObstacleArray(obstacles=[Obstacle(id="wall", type=Obstacle.TYPE_POLYGON, polygon=[
        Point(x=x, y=y) for x, y in ((0.6, -1.0), (0.8, -1.0), (0.8, 1.0), (0.6, 1.0))])])
    wall.header.frame_id = "map"
    wait(lambda: obstacles.get_subscription_count() > 0, 10.0, "no obstacle subscription")
    obstacles.publish(wall)
    wait(building.is_set, 10.0, "the build never started")
    started = time.monotonic()
    wait(lambda: time.monotonic() > started + 0.8 * BUILD_SECONDS, 10.0, "")
    during = [t for t in arrivals if t > started]
    # 20 Hz for about 1.6 s: commands kept flowing while the set was being built (with the
    # build on the control thread there were none).
    assert len(during) >= 10, len(during)
    wait(lambda: statuses[-1].agents[0].obstacle_neighbors > 0, 5.0, "the wall is not used")
