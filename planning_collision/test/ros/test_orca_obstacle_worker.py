"""orca_node builds its obstacles off the control thread: a slow build (a huge obstacle set)
never stops the commands, which keep using the previous set until the new one is ready.

The node runs in this process (its own rclpy context), with the obstacle build slowed down
on purpose; the test counts the commands published while the build is under way."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import pytest
from geometry_msgs.msg import Point, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from ros_clients import spun_orca_node

from planning_collision import orca
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
    with running_node() as (node, client):
        yield node, client, building


@pytest.fixture
def real_node_and_client():
    with running_node() as (node, client):
        yield node, client


@contextlib.contextmanager
def running_node():
    with spun_orca_node([
            Parameter("agents", value=["solo"]), Parameter("solo.goal", value=[5.0, 0.0]),
            Parameter("raw_messages", value=False), Parameter("publish_markers", value=False)],
            "worker_test_client") as (node, client, _):
        yield node, client


class Robot:
    """The client side: solo's odometry out (every 50 ms while waiting), its commands and
    orca's status in."""

    def __init__(self, client):
        self.arrivals: list[float] = []
        self.statuses: list[OrcaStatus] = []
        client.create_subscription(TwistStamped, "solo/cmd_vel",
                                   lambda _: self.arrivals.append(time.monotonic()), 10)
        client.create_subscription(OrcaStatus, "orca_node/status", self.statuses.append, 10)
        self.odom = client.create_publisher(Odometry, "solo/odom", 10)
        self.obstacles = client.create_publisher(ObstacleArray, "obstacles", LATCHED)

    def wait(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, what
            msg = Odometry()
            msg.header.frame_id = "map"
            msg.pose.pose.orientation.w = 1.0
            self.odom.publish(msg)
            time.sleep(0.05)

    def active(self):
        return self.statuses and self.statuses[-1].agents[0].active


WALL = ((0.6, -1.0), (0.8, -1.0), (0.8, 1.0), (0.6, 1.0))


def polygon_obstacle(name, vertices):
    return Obstacle(id=name, type=Obstacle.TYPE_POLYGON,
                    polygon=[Point(x=float(x), y=float(y)) for x, y in vertices])


def test_a_slow_obstacle_build_does_not_stop_the_commands(node_and_client):
    node, client, building = node_and_client
    robot = Robot(client)
    arrivals, statuses, obstacles, wait = (robot.arrivals, robot.statuses, robot.obstacles,
                                           robot.wait)
    wait(robot.active, 20.0, "solo never active")
    wall = ObstacleArray(obstacles=[polygon_obstacle("wall", WALL)])
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


def test_a_10000_vertex_polygon_is_taken_without_a_pause_in_the_commands(
        real_node_and_client):
    """Issue #20: a wall and a 10,000-vertex polygon far away were built in 3.6 s (35 s for
    a convex one) holding the interpreter, and orca_node sent no command meanwhile. Now the
    commands keep their 20 Hz while the set is checked, built and swapped in."""
    node, client = real_node_and_client
    robot = Robot(client)
    robot.wait(robot.active, 20.0, "solo never active")
    angle = np.linspace(0.0, 2.0 * np.pi, 10_000, endpoint=False)
    ring = np.column_stack([200.0 + 20.0 * np.cos(angle), 200.0 + 20.0 * np.sin(angle)])
    msg = ObstacleArray(obstacles=[polygon_obstacle("wall", WALL),
                                   polygon_obstacle("far", ring)])
    msg.header.frame_id = "map"
    robot.wait(lambda: robot.obstacles.get_subscription_count() > 0, 10.0,
               "no obstacle subscription")
    builds = node._obstacles.builds
    robot.wait(lambda: len(robot.arrivals) >= 5, 5.0, "no commands")
    sent = time.monotonic()
    robot.obstacles.publish(msg)
    try:
        robot.wait(lambda: node._obstacles.builds > builds, 15.0, "the set was never built")
        robot.wait(lambda: time.monotonic() > robot.arrivals[-1] + 0.01, 1.0, "")
    finally:
        times = [sent] + [t for t in robot.arrivals if t > sent] + [time.monotonic()]
        gap = max(np.diff(times))
        assert gap < 0.5, f"no command for {gap:.2f} s while the obstacles were taken"
    assert node._obstacles.current.polygon.max() == 1  # both polygons in use
