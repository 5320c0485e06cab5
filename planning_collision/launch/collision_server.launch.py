"""Start collision_server with its YAML defaults.

    ros2 launch planning_collision collision_server.launch.py
    ros2 launch planning_collision collision_server.launch.py namespace:=robot1 \
        map_topic:=/map params_file:=/path/to/my_params.yaml
    ros2 launch planning_collision collision_server.launch.py use_lifecycle_manager:=true

Arguments: namespace, params_file, map_topic, obstacles_topic, and Nav2's standard
use_sim_time, autostart, use_respawn, log_level, use_lifecycle_manager (see
planning_collision/launch_support.py).
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
    return LaunchDescription([
        *standard_arguments(os.path.join(share, "config", "collision_server.yaml"),
                            "collision_server parameters"),
        DeclareLaunchArgument("map_topic", default_value="map",
                              description="OccupancyGrid topic the server subscribes to"),
        DeclareLaunchArgument("obstacles_topic", default_value="obstacles",
                              description="ObstacleArray topic the server subscribes to"),
        Node(
            package="planning_collision",
            executable="collision_server",
            name="collision_server",
            namespace=LaunchConfiguration("namespace"),
            parameters=[LaunchConfiguration("params_file"),
                        {"autostart": autostart(), **sim_time()}],
            remappings=[("map", LaunchConfiguration("map_topic")),
                        ("obstacles", LaunchConfiguration("obstacles_topic"))],
            **node_options(),
        ),
        *lifecycle_manager("lifecycle_manager_collision", ["collision_server"],
                           LaunchConfiguration("namespace")),
    ])
