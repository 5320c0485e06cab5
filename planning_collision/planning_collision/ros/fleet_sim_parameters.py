"""fleet_sim's parameters, declared in one place with their bounds, and their check.

The bounds of each number are in its :class:`~.parameters.Param` (``declare`` refuses a value
outside them by name, and ``ros2 param describe`` shows them); :func:`check_parameters` adds
the rules no bound states. The sensors' parameters are in :mod:`.fleet_sim_sensors`.
"""

from __future__ import annotations

from .fleet_sim_sensors import PARAMETERS as SENSOR_PARAMETERS
from .parameters import Param, relative_topic

START_CHOICES = ("now", "wait", "commands")
PARAMETERS = (
    Param("scenario", "", "Scenario YAML to simulate (robots, obstacles, map)."),
    Param("rate_hz", 50.0, "Simulation steps per second; each step advances 1 / rate_hz "
          "seconds of simulated time. Odometry is published after every timer tick; a tick "
          "that comes late runs the missed steps first (at most 5; a longer stall is dropped "
          "and reported as dropped_time on ~/status), so simulated time keeps up with the "
          "wall clock.", above=0.0),
    Param("stamped_cmd_vel", True, "Subscribe geometry_msgs/TwistStamped on cmd_vel (as Nav2 "
          "on Kilted); false: geometry_msgs/Twist."),
    Param("cmd_vel_timeout", 0.5, "Seconds after which a robot's last command is stale and "
          "the robot stops, counted from a TwistStamped's stamp (by the ROS clock, as "
          "ros2_control's diff_drive_controller judges it: a command that arrives 0.4 s late "
          "stands 0.1 s; one older than this is dropped), from its arrival for a Twist; a "
          "zero stamp counts as now.", above=0.0),
    Param("odom_frames_at_start", True, "True: each robot's odometry is in its own frame "
          "'<name>/odom' whose origin is its start pose, so it starts at zero like a real "
          "robot's; false: odometry is in the scenario's global frame."),
    Param("command_latency", 0.0, "Command network: seconds from a command's arrival at "
          "fleet_sim to the base applying it (the TwistStamped age check is made then).",
          at_least=0.0),
    Param("command_jitter", 0.0, "Command network: a further uniform 0..command_jitter "
          "seconds per command (seeded by noise_seed).", at_least=0.0),
    Param("command_loss", 0.0, "Command network: probability that a command is lost; a "
          "robot with no fresh command for cmd_vel_timeout stops.", at_least=0.0,
          at_most=1.0),
    Param("network_in_order", True, "Each stream's messages (odometry, commands, "
          "localization) arrive in the order sent, as a reliable DDS reader delivers them; "
          "false: a message with less jitter overtakes an earlier one."),
    Param("max_linear_accel", 0.0, "Largest change of a robot's planar velocity, m/s^2 "
          "(0 = unlimited: commands take effect at once).", at_least=0.0),
    Param("max_angular_accel", 0.0, "Largest change of a robot's turn rate, rad/s^2 "
          "(0 = unlimited).", at_least=0.0),
    Param("goal_tolerance", 0.15, "A robot has arrived once its centre is this close (m) to its "
          "goal.", above=0.0),
    Param("cmd_vel_topic", "cmd_vel", "Command topic inside each robot's namespace."),
    Param("odom_topic", "odom", "Odometry topic inside each robot's namespace."),
    Param("status_rate_hz", 2.0, "Publications per second of ~/status.", above=0.0),
    Param("publish_markers", True, "Publish ~/markers (robot discs, headings, goals, names)."),
    Param("marker_rate_hz", 10.0, "Publications per second of ~/markers.", above=0.0),
    Param("trajectory_file", "", "Where to write the recorded trajectories (.npz: names, "
          "times, x, y, yaw, ...) when the node stops; empty = not written."),
    Param("noise_seed", 0, "Seed of the odometry noise and of the signs of each robot's "
          "drift (the scenario's noise gives their sizes).", at_least=0),
    Param("start", "now", "When simulated time starts: 'now'; 'wait': when this parameter is "
          "set to 'now' (ros2 param set /fleet_sim start now); 'commands': once every ORCA "
          "robot has received a command (its controller runs), or when set to 'now'. Until "
          "then the robots stand at their starts and their odometry is still published. The "
          "one parameter that can be set while the node runs, and only to 'now'.",
          choices=START_CHOICES, dynamic=True),
    *SENSOR_PARAMETERS,
)


def check_parameters(p) -> None:
    """Raise ParameterError for what the bounds do not cover: topics inside each robot's
    namespace."""
    for name in ("cmd_vel_topic", "odom_topic", "pose_topic"):
        relative_topic(name, getattr(p, name))
