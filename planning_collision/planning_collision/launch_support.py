"""What the launch files share: Nav2's standard launch arguments, the options every node gets
from them, optional packages, and nav2_lifecycle_manager for the managed nodes
(collision_server, orca_node). Imports launch only when called, from a launch file.

Arguments (as nav2_bringup names them), each declared before any action reads it: launch
gives a configuration its default only when it reaches the declaration, so a file lists
:func:`standard_arguments` first.

* ``autostart`` (true): the managed nodes configure and activate themselves, or, with
  ``use_lifecycle_manager:=true``, the manager does. False: nobody does; the nodes wait
  unconfigured (for ``ros2 lifecycle set`` or a manager's service).
* ``use_lifecycle_manager`` (false): the managed nodes start with ``autostart: false`` and
  ``nav2_lifecycle_manager`` (when installed) configures and activates them, as Nav2's
  bringup does. ``bond_timeout: 0.0``: these Python nodes publish no bond heartbeat (Nav2's
  C++ nodes do, through bondcpp), so the manager must not wait for one; it still drives and
  checks the nodes through their lifecycle services.
* ``use_respawn`` (false): restart a node that died (after 2 s), as Nav2 does.
* ``log_level`` (info): the nodes' ``--log-level``.
* ``namespace``, ``use_sim_time``, ``params_file``: where they mean something.
"""

from __future__ import annotations

from ament_index_python import packages

LIFECYCLE_MANAGER = "nav2_lifecycle_manager"
RESPAWN_DELAY = 2.0  # seconds, as nav2_bringup


def installed(package: str) -> bool:
    try:
        packages.get_package_prefix(package)
    except packages.PackageNotFoundError:
        return False
    return True


def standard_arguments(params_file: str | None = None, params_description: str = "",
                       *, namespace: bool = True, use_sim_time: bool = True) -> list:
    """Nav2's standard launch arguments, plus ``use_lifecycle_manager``: ``params_file``
    (with this default) only when given, ``namespace`` and ``use_sim_time`` unless turned
    off (the demo has neither: its topics are fixed and nothing publishes /clock)."""
    from launch.actions import DeclareLaunchArgument

    arguments = []
    if namespace:
        arguments.append(DeclareLaunchArgument(
            "namespace", default_value="",
            description="Namespace of the nodes (and of their relative topics and services)"))
    if use_sim_time:
        arguments.append(DeclareLaunchArgument(
            "use_sim_time", default_value="false",
            description="Use the simulator's /clock"))
    if params_file is not None:
        arguments.append(DeclareLaunchArgument(
            "params_file", default_value=params_file,
            description=params_description or "Parameters file"))
    arguments += [
        DeclareLaunchArgument(
            "autostart", default_value="true",
            description="Configure and activate the managed nodes at start (with "
                        "use_lifecycle_manager:=true: let the manager do it); false: they "
                        "wait unconfigured"),
        DeclareLaunchArgument(
            "use_respawn", default_value="false",
            description="Restart a node that died"),
        DeclareLaunchArgument(
            "log_level", default_value="info",
            description="The nodes' log level: debug, info, warn, error or fatal"),
        DeclareLaunchArgument(
            "use_lifecycle_manager", default_value="false",
            description="Let nav2_lifecycle_manager configure and activate the managed nodes "
                        "(their own autostart is then false)"),
    ]
    return arguments


def autostart():
    """The managed nodes' own ``autostart``: asked for, and no lifecycle manager drives them."""
    from launch.substitutions import AndSubstitution, LaunchConfiguration, NotSubstitution

    return AndSubstitution(LaunchConfiguration("autostart"),
                           NotSubstitution(LaunchConfiguration("use_lifecycle_manager")))


def node_options() -> dict:
    """Keyword arguments of every Node: respawn and log level from the standard arguments."""
    from launch.substitutions import LaunchConfiguration

    return {"respawn": LaunchConfiguration("use_respawn"), "respawn_delay": RESPAWN_DELAY,
            "ros_arguments": ["--log-level", LaunchConfiguration("log_level")],
            "output": "screen", "emulate_tty": True}


def sim_time() -> dict:
    """The inline ``use_sim_time`` parameter (a file declaring ``use_sim_time`` in full)."""
    from launch.substitutions import LaunchConfiguration

    return {"use_sim_time": LaunchConfiguration("use_sim_time")}


def lifecycle_manager(name: str, node_names: list, namespace=None,
                      use_sim_time: bool = True) -> list:
    """nav2_lifecycle_manager for ``node_names`` (strings or substitutions) with
    use_lifecycle_manager:=true; a message instead when it is not installed (launch would
    fail on it after starting the others)."""
    from launch.actions import LogInfo
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    wanted = IfCondition(LaunchConfiguration("use_lifecycle_manager"))
    if not installed(LIFECYCLE_MANAGER):
        return [LogInfo(msg=f"use_lifecycle_manager: {LIFECYCLE_MANAGER} is not installed (apt "
                            f"install ros-$ROS_DISTRO-nav2-lifecycle-manager); the nodes wait "
                            f"unconfigured", condition=wanted)]
    parameters = {
        "autostart": LaunchConfiguration("autostart"),
        # One list per name: launch_ros joins a list that holds a substitution into a
        # single string; a list of lists becomes a list of strings (node_names is one).
        "node_names": [[node_name] for node_name in node_names],
        "bond_timeout": 0.0,
    }
    if use_sim_time:
        parameters.update(sim_time())
    options = node_options()
    del options["respawn"], options["respawn_delay"]  # the manager itself is not respawned
    return [Node(package=LIFECYCLE_MANAGER, executable="lifecycle_manager", name=name,
                 namespace=namespace, condition=wanted, parameters=[parameters], **options)]
