"""A Nav2 fleet with one orca_node: namespaces robot1..N, each with its own Nav2, and one
orca_node that turns every robot's smoothed navigation command into a collision-free one.

    ros2 launch planning_collision nav2_fleet.launch.py map:=/path/to/map.yaml
    ros2 launch planning_collision nav2_fleet.launch.py robots:=robot1,robot2,robot3 \
        orca_params_file:=/path/to/my_fleet_orca.yaml use_sim_time:=true

Each robot's chain, inside its namespace (Nav2 on Jazzy and Kilted, nav2_bringup's
navigation_launch.py):

    controller_server --cmd_vel_nav--> velocity_smoother --cmd_vel_smoothed--> orca_node
        --cmd_vel_orca--> collision_monitor --cmd_vel--> the base

orca_node reads every robot's ``cmd_vel_smoothed`` and ``odom``, places each robot with its
localizer's ``map -> odom`` transform on the robot's own ``tf`` topic (``pose_source: tf``, as
nav2_bringup remaps /tf to tf in a namespace), and publishes ``cmd_vel_orca``, which each
robot's collision_monitor reads (``cmd_vel_in_topic: cmd_vel_orca``, set here by rewriting
the Nav2 parameters file; collision_monitor keeps the last word on ``cmd_vel``). Without a
collision_monitor, set orca_node's ``cmd_vel_out_topic: cmd_vel``. config/nav2_fleet_orca.yaml
holds orca_node's side.

Each robot's Nav2 comes from nav2_bringup's bringup_launch.py (map server, AMCL, navigation)
in the robot's namespace, and only when nav2_bringup is installed; otherwise this file says
so and starts orca_node alone (it then waits for the robots' odometry and tf). The robots
themselves (a simulator or real bases publishing <robot>/odom, <robot>/tf and scans) are
not started here; neither are their initial poses set (AMCL's ``set_initial_pose``).

Nav2's lifecycle managers bring up Nav2's nodes; orca_node starts itself (autostart), or,
with use_lifecycle_manager:=true, nav2_lifecycle_manager drives it with ``bond_timeout: 0.0``:
orca_node is a Python node and publishes no bond heartbeat. To put orca_node in one of
Nav2's own managers instead, that manager needs ``bond_timeout: 0.0`` too (which turns the
bond off for every node it manages), or bondpy's heartbeat where it is installed.

Arguments: robots, orca_params_file, nav2_params_file, map, and Nav2's standard
use_sim_time, autostart, use_respawn, log_level, use_lifecycle_manager (see
planning_collision/launch_support.py).
"""

import os
import re

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from planning_collision.launch_support import (
    autostart,
    installed,
    lifecycle_manager,
    node_options,
    sim_time,
    standard_arguments,
)

NAV2_BRINGUP = "nav2_bringup"
ROBOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def robot_names(text: str) -> list[str]:
    """``robot1,robot2`` (commas or spaces) -> the names; a clear error for a bad one."""
    names = [name for name in re.split(r"[,\s]+", text.strip()) if name]
    if not names:
        raise ValueError("robots: name at least one robot, e.g. robots:=robot1,robot2")
    for name in names:
        if not ROBOT_NAME.fullmatch(name):
            raise ValueError(f"robots: {name!r} is not a valid namespace (letters, digits, "
                             f"underscores; a letter first)")
    if len(set(names)) != len(names):
        raise ValueError(f"robots: a name appears twice in {names}")
    return names


def nav2_stack(robot: str, context) -> list:
    """nav2_bringup's bringup_launch.py in ``robot``'s namespace, its collision_monitor fed
    by orca_node (cmd_vel_in_topic: cmd_vel_orca)."""
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from nav2_common.launch import RewrittenYaml

    bringup = get_package_share_directory(NAV2_BRINGUP)
    params = LaunchConfiguration("nav2_params_file").perform(context) or os.path.join(
        bringup, "params", "nav2_params.yaml")
    arguments = {
        "namespace": robot,
        "use_namespace": "True",  # Jazzy's bringup_launch.py; later ones ignore it
        # Every cmd_vel_in_topic of the file: in nav2_bringup's, collision_monitor's only.
        "params_file": RewrittenYaml(source_file=params,
                                     param_rewrites={"cmd_vel_in_topic": "cmd_vel_orca"},
                                     convert_types=True),
        "use_sim_time": LaunchConfiguration("use_sim_time"),
        "autostart": LaunchConfiguration("autostart"),
        "use_respawn": LaunchConfiguration("use_respawn"),
        "log_level": LaunchConfiguration("log_level"),
    }
    map_yaml = LaunchConfiguration("map").perform(context)
    if map_yaml:
        arguments["map"] = map_yaml
    return [IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(bringup, "launch", "bringup_launch.py")),
        launch_arguments=arguments.items())]


def fleet(context) -> list:
    robots = robot_names(LaunchConfiguration("robots").perform(context))
    share = get_package_share_directory("planning_collision")
    actions = [
        Node(
            package="planning_collision", executable="orca_node", name="orca_node",
            parameters=[os.path.join(share, "config", "orca.yaml"),
                        LaunchConfiguration("orca_params_file"),
                        {"agents": robots, "autostart": autostart(), **sim_time()}],
            **node_options()),
        *lifecycle_manager("lifecycle_manager_orca", ["orca_node"]),
    ]
    if not installed(NAV2_BRINGUP):
        return [LogInfo(msg=f"nav2_bringup is not installed (apt install "
                            f"ros-$ROS_DISTRO-navigation2 ros-$ROS_DISTRO-nav2-bringup): "
                            f"starting orca_node alone for {', '.join(robots)}; it waits for "
                            f"their odometry and tf"), *actions]
    stacks = [action for robot in robots for action in nav2_stack(robot, context)]
    return [*stacks, *actions]


def generate_launch_description():
    share = get_package_share_directory("planning_collision")
    return LaunchDescription([
        *standard_arguments(namespace=False),
        DeclareLaunchArgument(
            "robots", default_value="robot1,robot2",
            description="The robots' namespaces, comma-separated; each gets its own Nav2"),
        DeclareLaunchArgument(
            "orca_params_file",
            default_value=os.path.join(share, "config", "nav2_fleet_orca.yaml"),
            description="orca_node parameters (applied over config/orca.yaml)"),
        DeclareLaunchArgument(
            "nav2_params_file", default_value="",
            description="Nav2 parameters of every robot (empty: nav2_bringup's "
                        "nav2_params.yaml); collision_monitor's cmd_vel_in_topic is set to "
                        "cmd_vel_orca"),
        DeclareLaunchArgument(
            "map", default_value="",
            description="Map YAML for every robot's map_server (empty: nav2_bringup's "
                        "default)"),
        OpaqueFunction(function=fleet),
    ])
