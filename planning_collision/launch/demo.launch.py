"""The fleet demo under ros2 launch: 16 robots swap sides in swap_room while a person whom
only their lasers see walks across (config/scenarios/swap_room_sensed.yaml).

    ros2 launch planning_collision demo.launch.py
    ros2 launch planning_collision demo.launch.py rviz:=false

Starts map_publisher (the swap_room map and obstacles, latched), collision_server, fleet_sim
(the simulated robots and their lasers) and orca_node with config/demo_sensed_orca.yaml, whose
goals set the robots off at once (scenario:=.../swap_room.yaml with
orca_params:=.../demo_orca.yaml: the person's odometry observed instead). fleet_sim's simulated
time starts once every robot receives orca_node's commands (start: commands), so nobody walks
into robots whose controller is still loading. rviz2 with config/orca.rviz shows the robots,
the map, ORCA's half-planes and the tracks of what the lasers see with their velocities (with
a static world -> map transform from tf2_ros, since nothing else here publishes tf) when rviz2
and tf2_ros are installed; without them the demo runs without RViz and says so.
Without ros2 launch (the PyPI install), ``make demo`` runs the same processes and draws
pictures.

Arguments: scenario, orca_params, rviz, rviz_config, and Nav2's standard autostart,
use_respawn, log_level, use_lifecycle_manager (see planning_collision/launch_support.py). No
namespace (the RViz configuration names the demo's topics) and no use_sim_time (fleet_sim
simulates the robots on the wall clock; nothing publishes /clock).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from planning_collision.launch_support import (
    autostart,
    installed,
    lifecycle_manager,
    node_options,
    standard_arguments,
)

# Packages the RViz part needs; package.xml does not depend on them (the demo runs without).
RVIZ_PACKAGES = ("rviz2", "tf2_ros")


def rviz_actions(rviz, rviz_config):
    """RViz and the static transform it needs, each only with rviz:=true; when a package is
    missing, a message instead: launch would fail on it after starting the other nodes."""
    missing = [package for package in RVIZ_PACKAGES if not installed(package)]
    if missing:
        debs = " ".join(f"ros-$ROS_DISTRO-{package.replace('_', '-')}" for package in missing)
        return [LogInfo(
            msg=f"not starting RViz: {' and '.join(missing)} not installed (apt install {debs})",
            condition=IfCondition(rviz))]
    return [
        # RViz needs the fixed frame to exist in tf; nothing else here publishes tf.
        Node(
            package="tf2_ros", executable="static_transform_publisher", name="map_frame",
            arguments=["--frame-id", "world", "--child-frame-id", "map"],
            condition=IfCondition(rviz)),
        Node(
            package="rviz2", executable="rviz2", name="rviz2",
            arguments=["-d", rviz_config],
            condition=IfCondition(rviz),
            output="screen"),
    ]


def generate_launch_description():
    share = get_package_share_directory("planning_collision")
    scenario = LaunchConfiguration("scenario")
    return LaunchDescription([
        # Every argument first: launch sets a default only when it reaches the declaration.
        *standard_arguments(namespace=False, use_sim_time=False),
        DeclareLaunchArgument(
            "scenario",
            default_value=os.path.join(share, "config", "scenarios/swap_room_sensed.yaml"),
            description="Scenario YAML (robots, obstacles, map); orca_params must match it"),
        DeclareLaunchArgument(
            "orca_params", default_value=os.path.join(share, "config", "demo_sensed_orca.yaml"),
            description="orca_node parameters for the scenario's robots"),
        DeclareLaunchArgument("rviz", default_value="true",
                              description="Start rviz2 (when rviz2 and tf2_ros are installed)"),
        DeclareLaunchArgument(
            "rviz_config", default_value=os.path.join(share, "config", "orca.rviz"),
            description="RViz configuration"),
        Node(
            package="planning_collision", executable="map_publisher", name="map_publisher",
            parameters=[os.path.join(share, "config", "map_publisher.yaml"),
                        {"scenario": scenario}],
            **node_options()),
        Node(
            package="planning_collision", executable="collision_server",
            name="collision_server",
            parameters=[os.path.join(share, "config", "collision_server.yaml"),
                        {"autostart": autostart()}],
            **node_options()),
        Node(
            package="planning_collision", executable="fleet_sim", name="fleet_sim",
            parameters=[os.path.join(share, "config", "fleet_sim.yaml"),
                        {"scenario": scenario, "start": "commands"}],
            **node_options()),
        Node(
            package="planning_collision", executable="orca_node", name="orca_node",
            parameters=[os.path.join(share, "config", "orca.yaml"),
                        LaunchConfiguration("orca_params"), {"autostart": autostart()}],
            **node_options()),
        *rviz_actions(LaunchConfiguration("rviz"), LaunchConfiguration("rviz_config")),
        *lifecycle_manager("lifecycle_manager", ["collision_server", "orca_node"],
                           use_sim_time=False),
    ])
