"""Start collision_server with its YAML defaults.

    ros2 launch planning_collision collision_server.launch.py
    ros2 launch planning_collision collision_server.launch.py namespace:=robot1 \
        map_topic:=/map params_file:=/path/to/my_params.yaml
    ros2 launch planning_collision collision_server.launch.py use_lifecycle_manager:=true
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from planning_collision.launch_support import autostart, lifecycle_arguments, lifecycle_manager


def generate_launch_description():
    share = get_package_share_directory("planning_collision")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="",
                              description="Namespace of the node, its services and topics"),
        DeclareLaunchArgument(
            "params_file", default_value=os.path.join(share, "config", "collision_server.yaml"),
            description="collision_server parameters"),
        DeclareLaunchArgument("map_topic", default_value="map",
                              description="OccupancyGrid topic the server subscribes to"),
        DeclareLaunchArgument("obstacles_topic", default_value="obstacles",
                              description="ObstacleArray topic the server subscribes to"),
        *lifecycle_arguments(),
        Node(
            package="planning_collision",
            executable="collision_server",
            name="collision_server",
            namespace=LaunchConfiguration("namespace"),
            parameters=[LaunchConfiguration("params_file"), {"autostart": autostart()}],
            remappings=[("map", LaunchConfiguration("map_topic")),
                        ("obstacles", LaunchConfiguration("obstacles_topic"))],
            output="screen",
            emulate_tty=True,
        ),
        *lifecycle_manager("lifecycle_manager_collision", ["collision_server"],
                           LaunchConfiguration("namespace")),
    ])
