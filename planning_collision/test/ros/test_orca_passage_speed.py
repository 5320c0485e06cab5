"""orca_node over DDS (loopback, the run's own domain): through a one-lane corridor at top
speed, never faster (issue #22; fleet/passages.py, "Through a long passage at top speed").

One orca_node in goal mode gets the benchmark's one-lane corridor (corridor_1.5d: 0.75 m x
6 m between two rooms) as its map. ``runner`` stands in the corridor's core heading west
for a goal beyond it: on its side's turn it is commanded its max_speed (0.6 m/s), above
pref_speed (0.5 m/s), and no command is ever faster. ``stroller``, in the east room far from
the corridor, keeps pref_speed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from ros_clients import Client

from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.processes import node_command
from planning_collision.sim.scenes import make_scene

ORCA = "planning_collision.ros.orca_node"
NS = "hurry"
POSES = {"runner": (1.0, 0.0, math.pi), "stroller": (5.0, 1.2, -math.pi / 2)}
GOALS = {"runner": [-5.0, 0.0], "stroller": [5.0, -1.2]}


def corridor_map(stamp) -> OccupancyGrid:
    """corridor_1.5d's map as an OccupancyGrid in the frame ``map``."""
    grid = make_scene("corridor_1.5d", 2).grid()
    blocked = grid.blocked_mask()
    msg = OccupancyGrid()
    msg.header.frame_id, msg.header.stamp = "map", stamp
    msg.info.resolution = float(grid.resolution)
    msg.info.height, msg.info.width = blocked.shape
    msg.info.origin.position.x, msg.info.origin.position.y = (float(v) for v in grid.origin[:2])
    msg.info.origin.orientation.w = 1.0
    msg.data = np.where(blocked, 100, 0).astype(np.int8).tobytes()
    return msg


def odometry(name: str, x: float, y: float, yaw: float) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = "map", f"{name}/base_link"
    msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
    msg.pose.pose.orientation = quaternion_from_yaw(yaw)
    return msg


def planar_speed(msg: TwistStamped) -> float:
    return math.hypot(msg.twist.linear.x, msg.twist.linear.y)


def test_in_the_corridors_core_a_robot_is_commanded_its_max_speed_and_no_more(
        start_process, latched_qos):
    proc = start_process("orca_hurry", node_command(ORCA, [config_file("orca.yaml")], {
        "agents": list(POSES), "use_map_obstacles": True, "publish_markers": False,
        "wait_for_all_agents": False, "max_speed": 0.6, "pref_speed": 0.5,
        **{f"{name}.goal": goal for name, goal in GOALS.items()},
        **{f"{name}.holonomic": True for name in POSES}}, namespace=NS))
    client = Client("passage_speed_test")  # closed before the process is stopped
    try:
        node = client.node
        commands: dict[str, list] = {name: [] for name in POSES}
        for name in POSES:
            node.create_subscription(TwistStamped, f"/{NS}/{name}/cmd_vel",
                                     commands[name].append, 10)
        odom = {name: node.create_publisher(Odometry, f"/{NS}/{name}/odom", 10)
                for name in POSES}
        node.create_timer(0.05, lambda: [odom[n].publish(odometry(n, *p))
                                         for n, p in POSES.items()])
        grid = node.create_publisher(OccupancyGrid, f"/{NS}/map", latched_qos)
        grid.publish(corridor_map(node.get_clock().now().to_msg()))
        assert client.spin_until(
            lambda: any("1 passages" in line for line in proc.lines), 60.0), \
            "the corridor was not found as a passage:\n" + "\n".join(proc.lines[-20:])
        mark = {name: len(commands[name]) for name in POSES}
        assert client.spin_until(
            lambda: all(len(commands[n]) >= mark[n] + 20 for n in POSES), 20.0), \
            "no commands:\n" + "\n".join(proc.lines[-20:])
        speeds = [planar_speed(m) for msgs in commands.values() for m in msgs]
        assert all(v <= 0.6 + 1e-12 for v in speeds), max(speeds)  # every command, ever
        assert commands["runner"][-1].twist.linear.x == pytest.approx(0.6)  # ahead, west
        assert planar_speed(commands["runner"][-1]) == pytest.approx(0.6)
        assert planar_speed(commands["stroller"][-1]) == pytest.approx(0.5)
    finally:
        client.close()
