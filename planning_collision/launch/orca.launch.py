"""Start orca_node with its YAML defaults and your fleet's parameters.

    ros2 launch planning_collision orca.launch.py params_file:=/path/to/my_fleet.yaml
    ros2 launch planning_collision orca.launch.py params_file:=/path/to/robot3.yaml \
        node_name:=orca_robot3
    ros2 launch planning_collision orca.launch.py params_file:=... use_lifecycle_manager:=true

config/orca.yaml holds every node-wide default; params_file (applied after it) names the
agents and observed agents and sets the per-agent parameters (<name>.odom_origin, ...): see
config/demo_orca.yaml for a fleet, config/nav2_fleet_orca.yaml for one beside Nav2. For one
node per robot, give each its own node_name (and a params file whose section matches it, or
the /** wildcard).

Arguments: namespace, node_name, params_file, and Nav2's standard use_sim_time, autostart,
use_respawn, log_level, use_lifecycle_manager (see planning_collision/launch_support.py).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from planning_collision.launch_support import (
    autostart,
    lifecycle_manager,
    node_options,
    sim_time,
    standard_arguments,
)


def generate_launch_description():
    share = get_package_share_directory("planning_collision")
    defaults = os.path.join(share, "config", "orca.yaml")
    return LaunchDescription([
        *standard_arguments(defaults, "orca_node parameters: agents, observed, per-agent "
                                     "settings, overrides of config/orca.yaml"),
        DeclareLaunchArgument("node_name", default_value="orca_node",
                              description="Name of the node (one per robot: make it unique)"),
        Node(
            package="planning_collision",
            executable="orca_node",
            name=LaunchConfiguration("node_name"),
            namespace=LaunchConfiguration("namespace"),
            parameters=[defaults, LaunchConfiguration("params_file"),
                        {"autostart": autostart(), **sim_time()}],
            **node_options(),
        ),
        *lifecycle_manager("lifecycle_manager_orca", [LaunchConfiguration("node_name")],
                           LaunchConfiguration("namespace")),
    ])
