"""What the launch files share: optional packages, and nav2_lifecycle_manager for the managed
nodes (collision_server, orca_node). Imports launch only when called, from a launch file.

With ``use_lifecycle_manager:=true`` a launch file sets the managed nodes' ``autostart`` to
false and starts ``nav2_lifecycle_manager`` (when installed) to configure and activate them,
as Nav2's bringup does. ``bond_timeout: 0.0``: these Python nodes publish no bond heartbeat
(Nav2's C++ nodes do, through bondcpp), so the manager must not wait for one; it still
checks the nodes' states through their lifecycle services.
"""

from __future__ import annotations

from ament_index_python import packages

LIFECYCLE_MANAGER = "nav2_lifecycle_manager"


def installed(package: str) -> bool:
    try:
        packages.get_package_prefix(package)
    except packages.PackageNotFoundError:
        return False
    return True


def lifecycle_arguments() -> list:
    from launch.actions import DeclareLaunchArgument

    return [DeclareLaunchArgument(
        "use_lifecycle_manager", default_value="false",
        description="Let nav2_lifecycle_manager configure and activate the managed nodes "
                    "(their autostart is then false)")]


def autostart():
    """The managed nodes' ``autostart``: unless a lifecycle manager drives them."""
    from launch.substitutions import LaunchConfiguration, NotSubstitution

    return NotSubstitution(LaunchConfiguration("use_lifecycle_manager"))


def lifecycle_manager(name: str, node_names: list, namespace=None) -> list:
    """nav2_lifecycle_manager for ``node_names`` with use_lifecycle_manager:=true (a message
    instead when it is not installed: launch would fail on it after starting the others)."""
    from launch.actions import LogInfo
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    wanted = IfCondition(LaunchConfiguration("use_lifecycle_manager"))
    if not installed(LIFECYCLE_MANAGER):
        return [LogInfo(msg=f"use_lifecycle_manager: {LIFECYCLE_MANAGER} is not installed (apt "
                            f"install ros-$ROS_DISTRO-nav2-lifecycle-manager); the nodes wait "
                            f"unconfigured", condition=wanted)]
    return [Node(package=LIFECYCLE_MANAGER, executable="lifecycle_manager", name=name,
                 namespace=namespace, output="screen", condition=wanted,
                 parameters=[{"autostart": True, "node_names": node_names,
                              "bond_timeout": 0.0}])]
