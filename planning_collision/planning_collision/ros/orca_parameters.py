"""orca_node's parameters, declared in one place (as Nav2's collision_monitor does), and their
translation into the fleet controller's settings.

``PARAMETERS`` are node-wide; once ``agents`` and ``observed`` are read, every agent gets its
own ``<name>.<parameter>`` (:func:`agent_parameters`). Parameters marked ``dynamic`` may change
while the node runs (``ros2 param set``, rqt_reconfigure): the node checks a new value exactly
as at start-up, refuses a bad one with the reason (the old value stays) and applies a good one
at the next control step. Topic names, frames, QoS choices and the agent lists are read-only.
"""

from __future__ import annotations

from dataclasses import fields, replace

from rclpy.exceptions import InvalidParameterTypeException
from rclpy.node import Node
from rclpy.parameter import Parameter

from planning_collision.fleet import (
    CMD_VEL,
    GOAL,
    ODOM_ORIGIN,
    POSE_SOURCES,
    AgentSpec,
    FleetController,
    FleetSettings,
)
from planning_collision.fleet.controller import AGENT_BOUNDS, SETTING_BOUNDS
from planning_collision.fleet.zones import parse_zones
from planning_collision.sim.scenario import NAME_PATTERN

from .lifecycle import AUTOSTART
from .parameters import Param, ParameterError, check_bounds, declare, relative_topic

STRINGS = Parameter.Type.STRING_ARRAY
DOUBLES = Parameter.Type.DOUBLE_ARRAY
POSE_WITH_COVARIANCE, POSE_STAMPED = "PoseWithCovarianceStamped", "PoseStamped"



def bounds_of(name: str) -> dict:
    """The bounds a fleet setting or an agent's number has in :mod:`planning_collision.fleet`
    (declared there once), as :class:`Param` keywords."""
    bounds = SETTING_BOUNDS.get(name) or AGENT_BOUNDS.get(name.rpartition(".")[2], {})
    return {key: value for key, value in bounds.items() if key != "integer"}


def _bounded(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """``params``, each fleet setting and agent number with its bounds."""
    return tuple(replace(p, **bounds_of(p.name)) if bounds_of(p.name) else p for p in params)


PARAMETERS = _bounded((
    AUTOSTART,
    Param("agents", [], "Namespaces of the robots this node controls, e.g. [robot1, robot2]. "
          "One node can run a whole fleet, or one node per robot (agents: [robotK], "
          "observed: the others) to spread a large fleet over machines.", type_hint=STRINGS),
    Param("observed", [], "Namespaces of agents only watched through their odometry: robots "
          "without ORCA, tracked people, or robots run by another orca_node. They are "
          "avoided (see <name>.responsibility) and never commanded.", type_hint=STRINGS),
    Param("global_frame", "map", "Frame of the computation, of goals, obstacles, map, status "
          "and markers. Goals, obstacle sets and maps in another frame are ignored with a "
          "warning."),
    Param("rate_hz", 20.0, "Control steps per second (one timer); also ORCA's time step.",
          above=0.0),
    Param("odom_topic", "odom", "nav_msgs/Odometry topic inside each agent's namespace."),
    Param("pose_source", ODOM_ORIGIN, "Where each agent's odometry frame lies in "
          "global_frame (default of <name>.pose_source): 'odom_origin' (the fixed "
          "<name>.odom_origin), 'pose_topic' (the localizer's pose on pose_topic, fused with "
          "the odometry by timestamp) or 'tf' (the global_frame -> odom_frame transform on "
          "tf_topic / tf_static_topic).", choices=POSE_SOURCES),
    Param("pose_topic", "amcl_pose", "pose_source 'pose_topic': the localizer's pose of the "
          "robot in global_frame, inside each agent's namespace (AMCL's and slam_toolbox's "
          "amcl_pose)."),
    Param("pose_topic_type", POSE_WITH_COVARIANCE, "Message type of pose_topic.",
          choices=(POSE_WITH_COVARIANCE, POSE_STAMPED)),
    Param("tf_topic", "/tf", "pose_source 'tf': tf2_msgs/TFMessage topic with the "
          "global_frame -> odom_frame transforms. Absolute (/tf): one topic for the fleet; "
          "relative (tf): inside each agent's namespace, as Nav2's multi-robot bringup "
          "remaps it."),
    Param("tf_static_topic", "/tf_static", "pose_source 'tf': the static transforms' topic "
          "(absolute or relative, as tf_topic)."),
    Param("odom_frame", "{name}/odom", "pose_source 'tf': each agent's odometry frame; "
          "'{name}' stands for the agent's name (use 'odom' with per-robot tf topics)."),
    Param("odom_timeout", 0.5, "Seconds after which an agent's odometry is stale (its age "
          "is taken from the header stamp; the arrival time when the stamp is zero or in the "
          "future): a controlled agent is sent zero velocity, an observed one is forgotten.",
          dynamic=True),
    Param("localization_timeout", 1.0, "Seconds after which an agent's localization "
          "correction (pose_source tf: the newest global_frame -> odom_frame transform; "
          "pose_topic: the newest localized pose, once the robot has also driven "
          "localization_travel since, as AMCL publishes only after moving) is stale: a "
          "controlled agent is stopped until a new one comes, an observed one stays avoided "
          "where its odometry puts it; both are reported in status and /diagnostics. "
          "odom_origin and static transforms never go stale; 0 turns the check off.",
          dynamic=True),
    Param("localization_travel", 0.5, "pose_source pose_topic: metres a robot may drive by "
          "its odometry after its last localized pose before a pose older than "
          "localization_timeout counts as stale (more than AMCL's update_min_d).",
          dynamic=True),
    Param("odometry_resubscribe_tries", 3, "How many times an agent's odometry is "
          "subscribed again when its publisher matched but sent nothing for 5 s (a Fast DDS 3 "
          "discovery race can leave such a match silent for good); then one warning. 0: never "
          "(see doc/workarounds.md).", at_least=0),
    Param("latency_allowance", 0.1, "Seconds of odometry age that safety_margin covers. "
          "Older odometry is extrapolated to the control time with its velocity, and the "
          "agent's radius in ORCA grows by max_speed x (age - latency_allowance), up to "
          "odom_timeout: late odometry makes robots more cautious.", dynamic=True),
    Param("command_latency", 0.0, "Seconds from publishing a command to the base applying "
          "it (network, a velocity smoother, the base's own loop): the whole loop's latency "
          "is this plus the odometry's age plus how much longer than a period the node's "
          "recent steps took, and every radius grows by max_speed x (that - "
          "latency_allowance). See doc/delays.md.", dynamic=True),
    Param("max_linear_accel", 0.0, "The bases' largest change of velocity, m/s^2 (default "
          "of every <name>.max_linear_accel); 0: a command is reached at once. With a limit "
          "each agent's radius grows by its braking distance (speed^2 / (2 x limit)) and a "
          "holonomic robot is given only velocities it can reach (doc/delays.md).",
          at_least=0.0),
    Param("max_angular_accel", 0.0, "Differential drive: the bases' largest change of turn "
          "rate, rad/s^2 (default of every <name>.max_angular_accel); a limit lengthens the "
          "turn ORCA plans with (time_to_holo + max_angular_speed / limit). 0: none.",
          at_least=0.0),
    Param("plausible_speed_factor", 3.0, "A measured velocity (odometry twist) faster than "
          "this many times the agent's max_speed is not physically plausible: it is bounded "
          "to that speed, keeping its direction, with a warning.", dynamic=True),
    Param("wait_for_all_agents", True, "No controlled agent moves until every controlled "
          "agent has been placed in global_frame once (a robot whose odometry never arrived "
          "cannot be avoided); the status names the ones missing.", dynamic=True),
    Param("preferred_velocity_source", GOAL, "Where each controlled agent's preferred "
          "velocity comes from: 'goal' (goal_topic, straight to the goal at pref_speed) or "
          "'cmd_vel' (cmd_vel_in_topic, the navigation stack's command).",
          choices=(GOAL, CMD_VEL)),
    Param("footprint_topic", "", "geometry_msgs/PolygonStamped of each agent's footprint "
          "inside its namespace; each message sets <name>.radius to the footprint's "
          "circumscribed radius (robot origin to farthest vertex), at run time. In the robot's "
          "own frame, or in global_frame or odom_frame (Nav2's published_footprint: the "
          "radius is taken about the robot's position there at the polygon's stamp). Empty: "
          "the radius parameters only."),
    Param("goal_topic", "goal_pose", "geometry_msgs/PoseStamped goal topic inside each "
          "controlled agent's namespace (goal mode); frame global_frame (empty means it)."),
    Param("goal_subscribe_transient_local", False, "Subscribe to goals reliable + "
          "transient_local (latched goals reach a node started later); false: volatile, "
          "which also matches RViz's goal tool."),
    Param("pref_speed", 0.5, "Speed towards the goal in m/s (at most the agent's max_speed); in a "
          "single-lane passage longer to drive than passage_max_wait, on its side's turn, the "
          "agent's max_speed (doc/narrow_spaces.md).",
          dynamic=True),
    Param("goal_tolerance", 0.1, "Metres: within this distance of its goal an agent's "
          "preferred velocity is zero.", dynamic=True),
    Param("cmd_vel_in_topic", "cmd_vel_smoothed", "Navigation command topic inside each "
          "controlled agent's namespace (cmd_vel mode), body frame. When ORCA leaves the "
          "command unchanged it is passed on exactly, angular velocity included (bounded by "
          "max_angular_speed)."),
    Param("cmd_vel_out_topic", "cmd_vel", "Velocity command topic inside each controlled "
          "agent's namespace, body frame: every step while the robot is commanded (goal mode: "
          "while <name>.enabled; cmd_vel mode: also while its navigation command is fresh, see "
          "stop_pub_timeout), zero while it must stop, one zero when it stops being commanded."),
    Param("stop_pub_timeout", 0.5, "cmd_vel mode: seconds a robot's navigation command "
          "counts. orca_node commands a robot only while its navigation command is at most "
          "this old; then it sends one zero command and nothing more until the next one (as "
          "collision_monitor does), so docking, teleop or a twist_mux can take over. A robot "
          "not commanded is avoided by the others with full responsibility.", dynamic=True),
    Param("stamped_cmd_vel", True, "geometry_msgs/TwistStamped on cmd_vel_out_topic and "
          "cmd_vel_in_topic (as Nav2 on Kilted; frame_id = the odometry's child_frame_id); "
          "false: geometry_msgs/Twist."),
    Param("radius", 0.25, "Agent radius in metres: the default of every <name>.radius, and, "
          "set at run time, the new radius of every agent.", dynamic=True),
    Param("max_speed", 0.6, "Largest speed in m/s (for a differential-drive agent its "
          "largest linear speed): the default of every <name>.max_speed, and, set at run "
          "time, the new value of every agent.", dynamic=True),
    Param("holonomic", True, "Whether controlled agents drive holonomically (default of "
          "<name>.holonomic); false: differential drive, commanded (v, omega)."),
    Param("safety_margin", 0.05, "Metres added to every radius in the ORCA problem, for the "
          "distance robots travel between an odometry sample and the command's effect.",
          dynamic=True),
    Param("neighbor_dist", 3.0, "ORCA: how far (m) an agent looks for other agents.",
          dynamic=True),
    Param("max_neighbors", 10, "ORCA: at most this many agents (nearest first) are avoided.",
          dynamic=True),
    Param("time_horizon", 2.0, "ORCA: seconds ahead within which collisions with other "
          "agents are avoided.", dynamic=True),
    Param("time_horizon_obst", 1.0, "ORCA: seconds ahead within which collisions with static "
          "obstacles are avoided.", dynamic=True),
    Param("side_preference", 0.35, "A robot held back by a half-plane aims this fraction of "
          "its preferred speed to its right, so crossing flows pass each other instead of "
          "jamming (0 = RVO2's behaviour; negative: to the left).", dynamic=True),
    Param("symmetry_breaking", 0.001, "Largest deterministic perturbation (m/s) of the "
          "preferred velocities, so perfectly symmetric encounters do not deadlock.",
          dynamic=True),
    Param("keep_apart", True, "Add hard half-planes that keep every pair of agents that "
          "could touch within one step apart, also when ORCA's program is infeasible.",
          dynamic=True),
    Param("keep_apart_margin", 0.05, "With keep_apart: ORCA's agent half-planes use radii "
          "grown by this fraction, so agents pressed together keep moving as in RVO2 (at exact "
          "contact ORCA has them stop for good); the hard separation lines keep the real "
          "radii.", dynamic=True),
    Param("max_angular_speed", 2.0, "Largest commanded turn rate, rad/s: differential-drive "
          "agents turn at most this fast, and a passed-through navigation command's angular "
          "velocity is bounded by it.", dynamic=True),
    Param("time_to_holo", 0.4, "Differential drive: seconds in which a heading change "
          "towards the ORCA velocity is completed.", dynamic=True),
    Param("tracking_error", 0.05, "Differential drive: largest distance (m) between the "
          "robot and the holonomic path it tracks; added to its radius in ORCA.",
          dynamic=True),
    Param("obstacles_topic", "obstacles", "planning_collision_interfaces/ObstacleArray of "
          "static obstacles; each message replaces the set. Concave polygons are used as "
          "they are."),
    Param("obstacles_subscribe_transient_local", True, "Obstacles QoS: reliable + "
          "transient_local depth 1 (a latched set, as map_publisher sends it); false: "
          "reliable + volatile."),
    Param("use_map_obstacles", False, "Also avoid the occupied regions of the map: traced "
          "into polygons once per map."),
    Param("map_topic", "map", "nav_msgs/OccupancyGrid used when use_map_obstacles is true."),
    Param("route_planning", True, "With use_map_obstacles, in goal mode: each robot heads "
          "for the next waypoint of a route around the map (a navigation function on the "
          "grid, recomputed for each new map) instead of straight at its goal (issue #22; "
          "doc/narrow_spaces.md)."),
    Param("passages", True, "With use_map_obstacles: passages too narrow for two robots, "
          "found on the map, let one direction through at a time (robots with a goal)."),
    Param("passage_zone", 1.5, "Metres around a passage in which robots of the waiting "
          "direction stop (backing away from its mouth within 1 m).", above=0.0),
    Param("passage_max_wait", 6.0, "With passages: seconds the robots of one side may wait "
          "for a passage; then it admits nobody more of the side it serves and turns to them "
          "once the robots already in it are through (decided from the control clock and "
          "the positions, the same on every node). Through a passage that takes longer than "
          "this to drive at pref_speed, that driving time replaces it, so that a turn lets "
          "more than one robot in (doc/narrow_spaces.md).", dynamic=True, above=0.0),
    Param("passage_zones", [], "With passages: more passages, declared as polygons in "
          "global_frame (as Open-RMF's mutex groups), each one string of at least three "
          "vertices 'x1 y1, x2 y2, x3 y3, ...': robots go through each one direction at a "
          "time, as through the passages found on the map (doc/narrow_spaces.md).",
          type_hint=STRINGS),
    Param("map_subscribe_transient_local", True, "Map QoS: reliable + transient_local depth 1 "
          "(map_server's latched map); false: reliable + volatile (costmap-style topics)."),
    Param("map_simplify_tolerance", 0.05, "Metres a traced map boundary may depart from the "
          "cell edges (fewer vertices, faster ORCA).", at_least=0.0),
    Param("occupied_threshold", 65, "Map cells with occupancy >= this (1..100) are obstacles.",
          at_least=1, at_most=100),
    Param("unknown_is_occupied", False, "Unknown map cells (-1) are obstacles too."),
    Param("publish_markers", True, "Publish ~/markers (MarkerArray) while subscribed: per "
          "controlled agent its disc, preferred and chosen velocity, its half-planes; per "
          "observed agent its disc and measured velocity.", dynamic=True),
    Param("marker_rate_hz", 10.0, "Publications per second of ~/markers (at most "
          "rate_hz).", dynamic=True, above=0.0),
    Param("publish_orca_lines", False, "Fill each agent's orca_line_points / "
          "orca_line_directions in ~/status (velocity space, permitted side on the left).",
          dynamic=True),
    Param("raw_messages", True, "Receive odometry and commands, and send commands, markers "
          "and status, as serialized CDR bytes (much cheaper with many robots). Used only "
          "when a start-up check against the RMW's serializer passes; false: always Python "
          "message objects."),
    # Seen only by sensors (issue #25; ros/orca_scans.py, tracking/).
    Param("scan_topic", "", "sensor_msgs/LaserScan topic inside each controlled agent's "
          "namespace (e.g. scan): what the lasers see that no odometry reports (people, "
          "other vendors' robots) is clustered, tracked and avoided with full "
          "responsibility. Empty: no scans."),
    Param("scan_mount", [0.0, 0.0, 0.0], "[x, y, yaw] of the laser on each robot (its "
          "frame in the robot's base frame).", type_hint=DOUBLES),
    Param("scan_agent_margin", 0.15, "Metres around every other agent placed from odometry "
          "whose scan points are not tracked (the scanning robot's own points are dropped "
          "within its radius only: someone pressed against it stays tracked).",
          at_least=0.0),
    Param("scan_static_margin", 0.15, "Metres around the static obstacles' and the map's "
          "edges whose scan points are not tracked.", at_least=0.0),
    Param("cluster_gap", 0.15, "Metres between neighbouring scan points that start a new "
          "cluster (plus the beams' spread at that range).", above=0.0),
    Param("cluster_max_radius", 1.5, "Clusters wider than this radius (m) are not tracked "
          "(walls missing from the map).", above=0.0),
    Param("track_lost_after", 0.25, "Seconds a track may go unseen before it is deleted.",
          above=0.0),
    Param("track_confirm_hits", 2, "Scans that must see a track before it is avoided and "
          "published.", at_least=1),
    Param("track_measurement_noise", 0.05, "Standard deviation (m) of a cluster's centre.",
          above=0.0),
    Param("track_accel_noise", 0.1, "How fast (m^2/s^3, white-noise acceleration) a "
          "track's velocity may change.", above=0.0),
    Param("track_still_speed", 0.1, "Tracks slower than this (m/s) are avoided as standing "
          "obstacles.", at_least=0.0),
    Param("brake_time", 0.3, "Seconds: a robot whose ORCA command would touch a tracked "
          "disc within this time is sent zero (passive safety: a robot may be run into, "
          "never run into someone; at rest even when standing is touched sooner). 0: off.",
          at_least=0.0),
    Param("tracks_topic", "~/tracks", "planning_collision_interfaces/TrackArray: this node's "
          "tracks each step, with scan_topic or external_tracks_topic set (empty: not "
          "published)."),
    Param("track_polygons_topic", "", "geometry_msgs/PolygonInstanceStamped per track (id = "
          "track id), a polygon around its disc, as collision_monitor's polygon source reads "
          "them (empty: none)."),
    Param("external_tracks_topic", "", "planning_collision_interfaces/TrackArray from another "
          "tracker (people trackers): avoided as this node's own tracks are, each message "
          "replacing that topic's previous set (empty: none)."),
    Param("cloud_topic", "", "sensor_msgs/PointCloud2 topic inside each controlled agent's "
          "namespace (e.g. points), x, y, z FLOAT32 in the robot's base frame (z up from the "
          "floor): its points within the height band are tracked like a scan's. Empty: none."),
    Param("cloud_min_z", 0.05, "Points of a cloud below this height (m, base frame) are "
          "left out (the floor)."),
    Param("cloud_max_z", 2.0, "Points of a cloud above this height (m, base frame) are left "
          "out (what hangs above the robots)."),
))
BY_NAME = {p.name: p for p in PARAMETERS}
DYNAMIC = frozenset(p.name for p in PARAMETERS if p.dynamic)
SETTINGS_FIELDS = frozenset(f.name for f in fields(FleetSettings))
AGENT_DYNAMIC = ("radius", "max_speed", "responsibility", "enabled")

ODOM_ORIGIN_HELP = (
    "[x, y, yaw] (m, m, rad) of this agent's odometry frame in global_frame, for pose_source "
    "'odom_origin': the pose where its odometry reads zero (a static map -> odom); "
    "[0.0, 0.0, 0.0] when the odometry is already in global_frame.")
POSE_SOURCE_HELP = "This agent's pose source (default: the node's pose_source)."
RADIUS_HELP = "This agent's radius in metres (default: the node's radius)."
MAX_SPEED_HELP = "This agent's largest speed in m/s (default: the node's max_speed)."
HOLONOMIC_HELP = ("Controlled agents: true for a holonomic robot, false for a differential "
                  "drive commanded (v, omega) (default: the node's holonomic).")
GOAL_HELP = ("Controlled agents, goal mode: a goal [x, y] in global_frame to head for from the "
             "start, until a goal_pose message replaces it; [] (default): none.")
ACCEL_HELP = "This agent's base: largest change of velocity, m/s^2 (default: the node's)."
ANGULAR_ACCEL_HELP = ("This agent's base: largest change of turn rate, rad/s^2 (default: the "
                      "node's).")
ENABLED_HELP = (
    "Controlled agents: false hands the robot over (docking, teleop): orca_node sends one zero "
    "command, then nothing for it, and the others avoid it fully; true takes it back. Also "
    "set by the std_srvs/SetBool service <name>/orca/enable.")
RESPONSIBILITY_HELP = (
    "Observed agents: the share of avoiding this agent that the controlled agents take. 1.0 "
    "(default) for people and robots without ORCA; 0.5 for a robot run by another orca_node, "
    "which avoids its share itself.")


def settings_of(values) -> FleetSettings:
    """The fleet settings of a parameter set (an object with the parameters as attributes),
    checked: ParameterError names the first bad one."""
    fleet = {name: getattr(values, name) for name in SETTINGS_FIELDS
             if name not in ("time_step",) and hasattr(values, name)}
    settings = FleetSettings(time_step=1.0 / values.rate_hz, **fleet)
    try:
        settings.check()
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    return settings


def check_parameters(p) -> FleetSettings:
    """Raise ParameterError for node-wide values the node cannot run with (their bounds, then
    the rules no bound states); return the fleet settings."""
    check_bounds(PARAMETERS, p)  # also a value set before configure, which rclpy let pass
    for name in ("odom_topic", "goal_topic", "cmd_vel_in_topic", "cmd_vel_out_topic",
                 "pose_topic"):
        relative_topic(name, getattr(p, name))
    if "{name}" not in p.odom_frame and len(p.agents) + len(p.observed) > 1 \
            and p.tf_topic.startswith("/"):
        raise ParameterError(f"odom_frame {p.odom_frame!r} must contain '{{name}}' when the "
                             f"agents share one tf_topic ({p.tf_topic})")
    names = list(p.agents) + list(p.observed)
    for name in names:
        if not NAME_PATTERN.fullmatch(name):
            raise ParameterError(f"agent name {name!r} is not a plain namespace (letters, "
                                 f"digits and single underscores, starting with a letter)")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ParameterError(f"agents and observed name {', '.join(twice)} more than once")
    if not p.cloud_min_z < p.cloud_max_z:
        raise ParameterError(f"cloud_min_z ({p.cloud_min_z:g}) must be below cloud_max_z "
                             f"({p.cloud_max_z:g})")
    try:
        parse_zones(p.passage_zones)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    return settings_of(p)


def agent_parameters(p) -> tuple[Param, ...]:
    """The per-agent parameters of every agent of ``p.agents`` and ``p.observed``."""
    specs: list[Param] = []
    for name in list(p.agents) + list(p.observed):
        controlled = name in p.agents
        specs += [Param(f"{name}.pose_source", p.pose_source, POSE_SOURCE_HELP,
                        choices=POSE_SOURCES),
                  Param(f"{name}.odom_origin", [0.0, 0.0, 0.0], ODOM_ORIGIN_HELP),
                  Param(f"{name}.radius", p.radius, RADIUS_HELP, dynamic=True),
                  Param(f"{name}.max_speed", p.max_speed, MAX_SPEED_HELP, dynamic=True),
                  Param(f"{name}.max_linear_accel", p.max_linear_accel, ACCEL_HELP),
                  Param(f"{name}.max_angular_accel", p.max_angular_accel,
                        ANGULAR_ACCEL_HELP)]
        if controlled:
            specs += [Param(f"{name}.holonomic", p.holonomic, HOLONOMIC_HELP),
                      Param(f"{name}.goal", [], GOAL_HELP, type_hint=DOUBLES),
                      Param(f"{name}.enabled", True, ENABLED_HELP, dynamic=True)]
        else:
            specs.append(Param(f"{name}.responsibility", 1.0, RESPONSIBILITY_HELP,
                               dynamic=True))
    return _bounded(tuple(specs))


def declare_agents(node: Node, p) -> tuple[list[AgentSpec], list[AgentSpec]]:
    """Declare every agent's parameters and return the checked (controlled, observed) specs."""
    try:
        values = vars(declare(node, agent_parameters(p)))
    except InvalidParameterTypeException as exc:
        raise ParameterError(f"{exc} (write floats with a decimal point, e.g. "
                             f"[1.0, 0.0, 0.0])") from None
    out: tuple[list[AgentSpec], list[AgentSpec]] = ([], [])
    for name in list(p.agents) + list(p.observed):
        controlled = name in p.agents
        goal = list(values.get(f"{name}.goal", []))
        spec = AgentSpec(
            name, radius=values[f"{name}.radius"], max_speed=values[f"{name}.max_speed"],
            holonomic=values.get(f"{name}.holonomic", True),
            enabled=values.get(f"{name}.enabled", True),
            responsibility=None if controlled else values[f"{name}.responsibility"],
            goal=tuple(goal) if goal else None, pose_source=values[f"{name}.pose_source"],
            odom_origin=tuple(values[f"{name}.odom_origin"]),
            max_linear_accel=values[f"{name}.max_linear_accel"],
            max_angular_accel=values[f"{name}.max_angular_accel"])
        try:
            if len(spec.odom_origin) != 3:
                raise ValueError(f"{name}.odom_origin must be 3 finite numbers [x, y, yaw], "
                                 f"got {list(spec.odom_origin)}")
            spec.check()
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
        out[0 if controlled else 1].append(spec)
    return out


def requested_changes(fleet: FleetController, params) -> tuple[FleetSettings, dict]:
    """The fleet settings and the per-agent changes (name -> {field: value}) a run-time
    parameter change asks for, checked exactly as at start-up: ValueError names the first bad
    value, and nothing is applied."""
    values = {p.name: p.value for p in params}
    settings = replace(fleet.settings, **{n: v for n, v in values.items()
                                          if n in SETTINGS_FIELDS})
    settings.check()
    agents: dict[str, dict] = {}
    for name, value in values.items():
        agent, _, key = name.partition(".")
        if key in AGENT_DYNAMIC:
            agents.setdefault(agent, {})[key] = value
        elif name in ("radius", "max_speed"):  # node-wide: every agent's new value
            for spec in fleet.specs:
                agents.setdefault(spec.name, {})[name] = value
        elif name in BY_NAME:  # rclpy enforces inclusive bounds only
            BY_NAME[name].check(value)
    for name, changes in agents.items():
        replace(fleet.specs[fleet.index[name]], **changes).check()
    return settings, agents
