"""orca_node: ORCA collision avoidance between robots, people and static obstacles, over ROS 2.

A thin adapter around :func:`planning_collision.orca.compute_velocities`. The node controls the
robots named in ``agents`` and watches those in ``observed`` (robots without ORCA, tracked
people, or robots run by another orca_node). Per controlled agent ``<name>``:

* in: ``<name>/odom`` (nav_msgs/Odometry) and the preferred velocity, either from a goal
  (``<name>/goal_pose``, geometry_msgs/PoseStamped: straight towards it at ``pref_speed``,
  zero once within ``goal_tolerance``) or from the navigation stack's command
  (``<name>/cmd_vel_nav``, as Nav2's velocity smoother hands it to collision_monitor);
* out: ``<name>/cmd_vel``, TwistStamped or Twist in the robot's body frame: the ORCA
  velocity for a holonomic robot, the differential-drive command (v, omega) that tracks it
  for a unicycle (NH-ORCA, see :mod:`planning_collision.orca.diff_drive`).

Observed agents only need ``<name>/odom``. Per agent, ``<name>.odom_origin``, ``.radius``,
``.max_speed`` and, for controlled agents, ``.holonomic`` and ``.goal`` (a goal from the start),
for observed ones ``.responsibility`` are declared once ``agents`` and ``observed`` are read
(:func:`declare_agent_parameters`). Static obstacles come from an ObstacleArray topic
and, with ``use_map_obstacles``, from the occupied regions of the map (traced once per map).
Once per step the node publishes ``orca/status`` (planning_collision_interfaces/OrcaStatus)
and, at ``marker_rate_hz``, ``orca/markers`` (see :mod:`.orca_markers`), each only while
someone subscribes.

Frames. Everything is computed in ``global_frame``. Without tf2 (no wheel here), each agent's
odometry frame is placed in it by a fixed pose, the ``<name>.odom_origin`` parameter (a static
map -> odom transform; [0, 0, 0] when odometry is already global). The odometry's twist is in
the body frame (REP-105) and is rotated into ``global_frame``; it is each agent's current
velocity in the ORCA problem (for a differential-drive robot ORCA uses its previous holonomic
velocity instead, as NH-ORCA does).

Safety. An agent whose odometry is older than ``odom_timeout`` is sent zero velocity and
stays in the problem as a standing disc at its last pose (it was told to stop there); an
observed agent whose odometry is that old is forgotten. Odometry, commands and goals with NaN
or inf are dropped with a warning; a message that cannot be read is dropped, never raised.

Speed. Subscription callbacks only store the message and its arrival time; one timer at
``rate_hz`` does the whole step on arrays. By default odometry, commands, status and markers
travel as serialized bytes (:mod:`.cdr`), which spares building a Python message object per
Odometry (the dominant cost with hundreds of robots), and the node spins rclpy's
EventsExecutor (rclpy's Python executors rebuild a wait set of every subscription for each
message).

Run: ``ros2 run planning_collision orca_node --ros-args --params-file config/orca.yaml -p
"agents:=[robot1, robot2]"`` or ``python -m planning_collision.ros.orca_node``.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np
from geometry_msgs.msg import Point, PoseStamped, Twist, TwistStamped, Vector3
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from visualization_msgs.msg import MarkerArray

from planning_collision import grid, orca
from planning_collision.orca import DiffDriveLimits, ObstacleTree
from planning_collision.scenario import NAME_PATTERN
from planning_collision_interfaces.msg import ObstacleArray, OrcaAgentStatus, OrcaStatus

from . import cdr
from .conversions import RequestError, pose_xyyaw
from .markers import MarkerData, marker_from_data
from .orca_markers import observed_markers, step_markers
from .orca_obstacles import covered_polygons, map_polygons, obstacle_array_polygons
from .parameters import Param, ParameterError, declare
from .run import run_node

STRINGS = Parameter.Type.STRING_ARRAY
DOUBLES = Parameter.Type.DOUBLE_ARRAY
GOAL, CMD_VEL = "goal", "cmd_vel"

PARAMETERS = (
    Param("agents", [], "Namespaces of the robots this node controls, e.g. [robot1, robot2]. "
          "One node can run a whole fleet, or one node per robot (agents: [robotK], "
          "observed: the others) to spread a large fleet over machines.", type_hint=STRINGS),
    Param("observed", [], "Namespaces of agents only watched through their odometry: robots "
          "without ORCA, tracked people, or robots run by another orca_node. They are "
          "avoided (see <name>.responsibility) and never commanded.", type_hint=STRINGS),
    Param("global_frame", "map", "Frame of the computation, of goals, obstacles, map, status "
          "and markers. Goals, obstacle sets and maps in another frame are ignored with a "
          "warning (no tf2 here)."),
    Param("rate_hz", 20.0, "Control steps per second (one timer); also ORCA's time step."),
    Param("odom_topic", "odom", "nav_msgs/Odometry topic inside each agent's namespace."),
    Param("odom_timeout", 0.5, "Seconds (wall clock, since arrival) after which an agent's "
          "odometry is stale: a controlled agent is sent zero velocity, an observed one is "
          "forgotten. Also the age at which a cmd_vel_in command stops counting."),
    Param("preferred_velocity_source", GOAL, "Where each controlled agent's preferred "
          "velocity comes from: 'goal' (goal_topic, straight to the goal at pref_speed) or "
          "'cmd_vel' (cmd_vel_in_topic, the navigation stack's command).",
          choices=(GOAL, CMD_VEL)),
    Param("goal_topic", "goal_pose", "geometry_msgs/PoseStamped goal topic inside each "
          "controlled agent's namespace (goal mode); frame global_frame (empty means it)."),
    Param("goal_subscribe_transient_local", False, "Subscribe to goals reliable + "
          "transient_local (latched goals reach a node started later); false: volatile, "
          "which also matches RViz's goal tool."),
    Param("pref_speed", 0.5, "Speed towards the goal in m/s (at most the agent's max_speed)."),
    Param("goal_tolerance", 0.1, "Metres: within this distance of its goal an agent's "
          "preferred velocity is zero."),
    Param("cmd_vel_in_topic", "cmd_vel_nav", "Navigation command topic inside each "
          "controlled agent's namespace (cmd_vel mode), body frame. When ORCA leaves the "
          "command unchanged it is passed on exactly, angular velocity included."),
    Param("cmd_vel_out_topic", "cmd_vel", "Velocity command topic inside each controlled "
          "agent's namespace, body frame, published every step (zero when the agent is "
          "inactive)."),
    Param("stamped_cmd_vel", True, "geometry_msgs/TwistStamped on cmd_vel_out_topic and "
          "cmd_vel_in_topic (as Nav2 on Kilted; frame_id = the odometry's child_frame_id); "
          "false: geometry_msgs/Twist."),
    Param("radius", 0.25, "Agent radius in metres (default of <name>.radius)."),
    Param("max_speed", 0.6, "Largest speed in m/s (default of <name>.max_speed); for a "
          "differential-drive agent its largest linear speed."),
    Param("holonomic", True, "Whether controlled agents drive holonomically (default of "
          "<name>.holonomic); false: differential drive, commanded (v, omega)."),
    Param("safety_margin", 0.05, "Metres added to every radius in the ORCA problem, for the "
          "distance robots travel between an odometry sample and the command's effect."),
    Param("neighbor_dist", 3.0, "ORCA: how far (m) an agent looks for other agents."),
    Param("max_neighbors", 10, "ORCA: at most this many agents (nearest first) are avoided."),
    Param("time_horizon", 2.0, "ORCA: seconds ahead within which collisions with other "
          "agents are avoided."),
    Param("time_horizon_obst", 1.0, "ORCA: seconds ahead within which collisions with static "
          "obstacles are avoided."),
    Param("side_preference", 0.35, "A robot held back by a half-plane aims this fraction of "
          "its preferred speed to its right, so crossing flows pass each other instead of "
          "jamming (0 = RVO2's behaviour; negative: to the left)."),
    Param("symmetry_breaking", 0.001, "Largest deterministic perturbation (m/s) of the "
          "preferred velocities, so perfectly symmetric encounters do not deadlock."),
    Param("keep_apart", True, "Add hard half-planes that keep every pair of agents that "
          "could touch within one step apart, also when ORCA's program is infeasible."),
    Param("keep_apart_margin", 0.05, "With keep_apart: ORCA's agent half-planes use radii "
          "grown by this fraction, so agents pressed together keep moving as in RVO2 (at exact "
          "contact ORCA has them stop for good); the hard separation lines keep the real "
          "radii."),
    Param("max_angular_speed", 2.0, "Differential drive: largest turn rate, rad/s."),
    Param("time_to_holo", 0.4, "Differential drive: seconds in which a heading change "
          "towards the ORCA velocity is completed."),
    Param("tracking_error", 0.05, "Differential drive: largest distance (m) between the "
          "robot and the holonomic path it tracks; added to its radius in ORCA."),
    Param("obstacles_topic", "obstacles", "planning_collision_interfaces/ObstacleArray of "
          "static obstacles; each message replaces the set. Concave polygons are used as "
          "they are."),
    Param("obstacles_subscribe_transient_local", True, "Obstacles QoS: reliable + "
          "transient_local depth 1 (a latched set, as map_publisher sends it); false: "
          "reliable + volatile."),
    Param("use_map_obstacles", False, "Also avoid the occupied regions of the map: traced "
          "into polygons once per map."),
    Param("map_topic", "map", "nav_msgs/OccupancyGrid used when use_map_obstacles is true."),
    Param("map_subscribe_transient_local", True, "Map QoS: reliable + transient_local depth 1 "
          "(map_server's latched map); false: reliable + volatile (costmap-style topics)."),
    Param("map_simplify_tolerance", 0.05, "Metres a traced map boundary may depart from the "
          "cell edges (fewer vertices, faster ORCA)."),
    Param("occupied_threshold", 65, "Map cells with occupancy >= this (1..100) are obstacles."),
    Param("unknown_is_occupied", False, "Unknown map cells (-1) are obstacles too."),
    Param("publish_markers", True, "Publish orca/markers (MarkerArray) while subscribed: per "
          "controlled agent its disc, preferred and chosen velocity, its half-planes; per "
          "observed agent its disc and measured velocity."),
    Param("marker_rate_hz", 10.0, "Publications per second of orca/markers (at most "
          "rate_hz)."),
    Param("publish_orca_lines", False, "Fill each agent's orca_line_points / "
          "orca_line_directions in orca/status (velocity space, permitted side on the left)."),
    Param("raw_messages", True, "Receive odometry and commands, and send commands, status "
          "and markers, as serialized CDR bytes (much cheaper with many robots). Used only when "
          "a start-up check against the RMW's serializer passes; false: always Python "
          "message objects."),
)

# Per-agent parameters, declared as <name>.<parameter> once `agents` and `observed` are known.
ODOM_ORIGIN_HELP = (
    "[x, y, yaw] (m, m, rad) of this agent's odometry frame in global_frame: the pose where "
    "its odometry reads zero. It stands in for the static map -> odom transform (no tf2 "
    "here); [0.0, 0.0, 0.0] when the odometry is already in global_frame.")
RADIUS_HELP = "This agent's radius in metres (default: the node's radius)."
MAX_SPEED_HELP = "This agent's largest speed in m/s (default: the node's max_speed)."
HOLONOMIC_HELP = ("Controlled agents: true for a holonomic robot, false for a differential "
                  "drive commanded (v, omega) (default: the node's holonomic).")
GOAL_HELP = ("Controlled agents, goal mode: a goal [x, y] in global_frame to head for from the "
             "start, until a goal_pose message replaces it; [] (default): none.")
RESPONSIBILITY_HELP = (
    "Observed agents: the share of avoiding this agent that the controlled agents take. 1.0 "
    "(default) for people and robots without ORCA; 0.5 for a robot run by another orca_node, "
    "which avoids its share itself.")

RELIABLE_LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                              reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.TRANSIENT_LOCAL)
LATEST = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                    reliability=ReliabilityPolicy.BEST_EFFORT)  # matches any publisher
COMMANDS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE)
WARN_PERIOD = 5.0
PHASES = ("inputs", "orca", "commands", "status", "markers")
MARKER_BYTES = 300  # a serialized Marker without its points, roughly
MARKER_CHUNK_BYTES = 48_000  # below a UDP datagram, so DDS need not fragment
PHASE_LOG_PERIOD = 10.0  # seconds between the debug lines that break a step's time down


class StepLines(NamedTuple):
    """The controlled agents' half-planes of one step: counts, and the lines when the step
    returned them (``every[i]``: all of agent i's lines; the drawn ones, without the
    differential-drive limits, in CSR form over the controlled agents)."""

    agent_neighbors: np.ndarray
    obstacle_lines: np.ndarray
    every: list | None = None
    drawn_offsets: np.ndarray | None = None
    drawn_points: np.ndarray | None = None
    drawn_directions: np.ndarray | None = None


@dataclass(frozen=True)
class AgentTable:
    """Names and per-agent settings; the ``controlled`` first agents are commanded."""

    names: tuple[str, ...]
    controlled: int
    origin: np.ndarray  # (N, 3) odometry frame in global_frame
    radius: np.ndarray
    max_speed: np.ndarray
    holonomic: np.ndarray  # (N,) bool, True for observed agents
    responsibility: np.ndarray  # others' share when avoiding the agent
    goals: np.ndarray  # (controlled, 2) initial goals, NaN: none


def _finite(name: str, value: float, positive: bool = True) -> None:
    if not (math.isfinite(value) and (value > 0.0 if positive else value >= 0.0)):
        raise ParameterError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, "
                             f"got {value}")


def _relative_topic(name: str, value: str) -> str:
    if not value or value.startswith(("/", "~")):
        raise ParameterError(f"{name} must be a relative topic name, got {value!r}")
    return value


def check_parameters(p) -> None:
    """Raise ParameterError for node-wide values the node cannot run with."""
    for name in ("rate_hz", "odom_timeout", "radius", "max_speed", "pref_speed",
                 "neighbor_dist", "time_horizon", "time_horizon_obst", "max_angular_speed",
                 "time_to_holo", "tracking_error", "marker_rate_hz"):
        _finite(name, getattr(p, name))
    for name in ("goal_tolerance", "safety_margin", "symmetry_breaking",
                 "map_simplify_tolerance", "keep_apart_margin"):
        _finite(name, getattr(p, name), positive=False)
    if not math.isfinite(p.side_preference):
        raise ParameterError(f"side_preference must be finite, got {p.side_preference}")
    if p.max_neighbors < 0:
        raise ParameterError(f"max_neighbors must be >= 0, got {p.max_neighbors}")
    if not 1 <= p.occupied_threshold <= 100:
        raise ParameterError(f"occupied_threshold must be in 1..100, got "
                             f"{p.occupied_threshold}")
    for name in ("odom_topic", "goal_topic", "cmd_vel_in_topic", "cmd_vel_out_topic"):
        _relative_topic(name, getattr(p, name))
    names = list(p.agents) + list(p.observed)
    for name in names:
        if not NAME_PATTERN.fullmatch(name):
            raise ParameterError(f"agent name {name!r} is not a plain namespace (letters, "
                                 f"digits and single underscores, starting with a letter)")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ParameterError(f"agents and observed name {', '.join(twice)} more than once")


def declare_agent_parameters(node: Node, p) -> AgentTable:
    """Declare ``<name>.odom_origin``, ``.radius``, ``.max_speed`` for every agent, plus
    ``.holonomic`` and ``.goal`` for controlled and ``.responsibility`` for observed ones;
    check them."""
    specs: list[Param] = []
    for name in p.agents:
        specs += [Param(f"{name}.odom_origin", [0.0, 0.0, 0.0], ODOM_ORIGIN_HELP),
                  Param(f"{name}.radius", p.radius, RADIUS_HELP),
                  Param(f"{name}.max_speed", p.max_speed, MAX_SPEED_HELP),
                  Param(f"{name}.holonomic", p.holonomic, HOLONOMIC_HELP),
                  Param(f"{name}.goal", [], GOAL_HELP, type_hint=DOUBLES)]
    for name in p.observed:
        specs += [Param(f"{name}.odom_origin", [0.0, 0.0, 0.0], ODOM_ORIGIN_HELP),
                  Param(f"{name}.radius", p.radius, RADIUS_HELP),
                  Param(f"{name}.max_speed", p.max_speed, MAX_SPEED_HELP),
                  Param(f"{name}.responsibility", 1.0, RESPONSIBILITY_HELP)]
    try:
        values = vars(declare(node, tuple(specs)))
    except InvalidParameterTypeException as exc:
        raise ParameterError(f"{exc} (write floats with a decimal point, e.g. "
                             f"[1.0, 0.0, 0.0])") from None
    names = tuple(p.agents) + tuple(p.observed)
    origin = np.zeros((len(names), 3))
    for i, name in enumerate(names):
        value = list(values[f"{name}.odom_origin"])
        if len(value) != 3 or not all(math.isfinite(v) for v in value):
            raise ParameterError(f"{name}.odom_origin must be 3 finite numbers [x, y, yaw], "
                                 f"got {value}")
        origin[i] = value
        _finite(f"{name}.radius", values[f"{name}.radius"])
        _finite(f"{name}.max_speed", values[f"{name}.max_speed"])
    goals = np.full((len(p.agents), 2), np.nan)
    for i, name in enumerate(p.agents):
        goal = list(values[f"{name}.goal"])
        if goal and (len(goal) != 2 or not all(math.isfinite(v) for v in goal)):
            raise ParameterError(f"{name}.goal must be [] or 2 finite numbers [x, y], got "
                                 f"{goal}")
        if goal:
            goals[i] = goal
    responsibility = [0.5] * len(p.agents)
    for name in p.observed:
        share = values[f"{name}.responsibility"]
        if not 0.0 <= share <= 1.0:
            raise ParameterError(f"{name}.responsibility must be in [0, 1], got {share}")
        responsibility.append(share)
    return AgentTable(
        names=names, controlled=len(p.agents), origin=origin,
        radius=np.array([values[f"{n}.radius"] for n in names], dtype=np.float64),
        max_speed=np.array([values[f"{n}.max_speed"] for n in names], dtype=np.float64),
        holonomic=np.array([values[f"{n}.holonomic"] for n in p.agents] +
                           [True] * len(p.observed), dtype=bool),
        responsibility=np.array(responsibility, dtype=np.float64), goals=goals)


class OrcaNode(Node):
    def __init__(self, **node_kwargs):
        super().__init__("orca_node", **node_kwargs)
        self.params = p = declare(self, PARAMETERS)
        check_parameters(p)
        self.agents = a = declare_agent_parameters(self, p)
        log = self.get_logger()
        n, k = len(a.names), a.controlled
        self.dt = 1.0 / p.rate_hz
        self.pref_speed = np.minimum(p.pref_speed, a.max_speed[:k])
        self.limits = [None if a.holonomic[i] else DiffDriveLimits(
            float(a.max_speed[i]), p.max_angular_speed, p.time_to_holo, p.tracking_error)
            for i in range(k)]
        groups: dict[DiffDriveLimits, list[int]] = {}
        for i, lim in enumerate(self.limits):
            if lim is not None:
                groups.setdefault(lim, []).append(i)
        # Differential-drive agents by limits: one unicycle_commands call per group.
        self.limit_groups = [(lim, np.array(members)) for lim, members in groups.items()]
        polygons: dict[DiffDriveLimits, np.ndarray] = {}
        self.trackable = [None if lim is None else
                          polygons.setdefault(lim, orca.trackable_polygon(lim))
                          for lim in self.limits]

        started = time.perf_counter()
        orca.warmup()
        if p.use_map_obstacles:
            grid.warmup()
        log.info(f"kernels ready in {time.perf_counter() - started:.2f} s")
        problem = cdr.self_check() if p.raw_messages else "raw_messages is false"
        self.raw = not problem
        if problem and p.raw_messages:
            log.warning(f"serialized messages not used ({problem}); using message objects")

        # Latest inputs, written by the callbacks: (message or bytes, arrival time).
        self._odom_in: list[tuple | None] = [None] * n
        self._cmd_in: list[tuple | None] = [None] * k
        # Decoded state, written by the step only.
        self._odom_seen: list[object] = [None] * n
        self._odom = np.zeros((n, 9))  # x, y, qx, qy, qz, qw, vx, vy, wz (odometry frame)
        self._odom_time = np.full(n, -np.inf)
        self._cmd_seen: list[object] = [None] * k
        self._cmd = np.zeros((k, 3))
        self._cmd_time = np.full(k, -np.inf)
        self._goals = a.goals.copy()
        self._frames: list[bytes | None] = [None] * k  # odometry child_frame_id
        self._suffix = [cdr.frame_suffix("")] * k
        self._last_holonomic = np.zeros((k, 2))  # unicycles: last ORCA velocity
        self._was_active = np.zeros(k, dtype=bool)
        self._was_fresh = np.zeros(n, dtype=bool)
        self._warned: dict[str, float] = {}
        self._steps = 0
        self._step_starts: deque[float] = deque()
        self._markers_due = 0.0
        self.phase_seconds = dict.fromkeys(PHASES, 0.0)
        self._phase_steps = 0
        self._phases_since = time.monotonic()
        self._lap_start = 0.0

        # Static obstacles: polygons per source, combined into one ObstacleSet.
        self._array_polygons: list[np.ndarray] = []
        self._map_polygons: list[np.ndarray] = []
        self._map_slack = 0.0
        self._map_key: tuple | None = None
        self.obstacles: ObstacleTree | None = None

        # Outputs.
        self._cmd_type = TwistStamped if p.stamped_cmd_vel else Twist
        out_topic = p.cmd_vel_out_topic
        self._cmd_pubs = [self.create_publisher(self._cmd_type, f"{name}/{out_topic}",
                                                COMMANDS) for name in a.names[:k]]
        self._cmd_msgs = [self._cmd_type() for _ in range(k)]
        self._status_pub = self.create_publisher(OrcaStatus, "orca/status", 10)
        self._marker_pub = (self.create_publisher(MarkerArray, "orca/markers", 50)
                            if p.publish_markers else None)

        # Inputs (after the warm-up: nothing queues up while the kernels load).
        self.create_subscription(ObstacleArray, p.obstacles_topic, self._on_obstacles,
                                 RELIABLE_LATCHED if p.obstacles_subscribe_transient_local
                                 else COMMANDS)
        if p.use_map_obstacles:
            self.create_subscription(OccupancyGrid, p.map_topic, self._on_map,
                                     RELIABLE_LATCHED if p.map_subscribe_transient_local
                                     else COMMANDS)
        goal_qos = RELIABLE_LATCHED if p.goal_subscribe_transient_local else COMMANDS
        for i, name in enumerate(a.names[:k]):
            if p.preferred_velocity_source == GOAL:
                self.create_subscription(PoseStamped, f"{name}/{p.goal_topic}",
                                         partial(self._on_goal, i), goal_qos)
            else:
                self.create_subscription(self._cmd_type, f"{name}/{p.cmd_vel_in_topic}",
                                         partial(self._on_command, i), LATEST, raw=self.raw)
        for i, name in enumerate(a.names):
            self.create_subscription(Odometry, f"{name}/{p.odom_topic}",
                                     partial(self._on_odometry, i), LATEST, raw=self.raw)
        self.create_timer(self.dt, self._step)
        log.info(f"ready: {k} agents, {n - k} observed, {p.rate_hz:g} Hz, preferred velocity "
                 f"from {p.preferred_velocity_source}, "
                 f"{'serialized' if self.raw else 'object'} messages")

    # ------------------------------------------------------------------ callbacks: store only
    def _on_odometry(self, i: int, msg) -> None:
        self._odom_in[i] = (msg, time.monotonic())

    def _on_command(self, i: int, msg) -> None:
        self._cmd_in[i] = (msg, time.monotonic())

    def _on_goal(self, i: int, msg: PoseStamped) -> None:
        name = self.agents.names[i]
        frame = msg.header.frame_id
        if frame and frame != self.params.global_frame:
            self._warn(f"goal-frame/{name}", f"{name}: goal in frame '{frame}' ignored: "
                       f"global_frame is '{self.params.global_frame}'", 1.0)
            return
        try:
            x, y, _ = pose_xyyaw(msg.pose, "pose")
        except RequestError as exc:
            self._warn(f"goal-value/{name}", f"{name}: goal ignored: {exc}", 1.0)
            return
        self._goals[i] = (x, y)
        self.get_logger().info(f"{name}: goal ({x:.2f}, {y:.2f})")

    def _on_obstacles(self, msg: ObstacleArray) -> None:
        if msg.header.frame_id != self.params.global_frame:
            self.get_logger().warning(f"obstacles in frame '{msg.header.frame_id}' ignored: "
                                      f"global_frame is '{self.params.global_frame}'")
            return
        try:
            polygons, problems = obstacle_array_polygons(msg)
        except Exception as exc:  # nothing a topic sends may take the node down
            self.get_logger().error(f"obstacles ignored: {exc}")
            return
        for problem in problems:
            self.get_logger().warning(f"{problem}; skipped")
        self._array_polygons = [polygon for _, polygon in polygons]
        self._rebuild_obstacles("obstacles")

    def _on_map(self, msg: OccupancyGrid) -> None:
        p = self.params
        if msg.header.frame_id != p.global_frame:
            self.get_logger().warning(f"map in frame '{msg.header.frame_id}' ignored: "
                                      f"global_frame is '{p.global_frame}'")
            return
        info = msg.info
        key = (info.width, info.height, info.resolution, info.origin.position.x,
               info.origin.position.y, info.origin.orientation.z, info.origin.orientation.w,
               bytes(msg.data))
        if key == self._map_key:
            return  # the same map again (republished): traced already
        started = time.perf_counter()
        try:
            polygons = map_polygons(msg, p.occupied_threshold, p.unknown_is_occupied,
                                    p.map_simplify_tolerance)
        except RequestError as exc:
            self.get_logger().warning(f"map ignored: {exc}")
            return
        except Exception as exc:
            self.get_logger().error(f"map ignored: {exc}")
            return
        self._map_key = key
        self._map_polygons = polygons
        # How far the traced outline of an obstacle can lie outside it: a cell's diagonal
        # plus the simplification.
        self._map_slack = math.sqrt(2.0) * info.resolution + p.map_simplify_tolerance
        self.get_logger().info(
            f"map {info.width} x {info.height}: {len(polygons)} polygons, "
            f"{sum(len(q) for q in polygons)} vertices, traced in "
            f"{(time.perf_counter() - started) * 1e3:.1f} ms")
        self._rebuild_obstacles("map")

    def _rebuild_obstacles(self, source: str) -> None:
        # A map region an ObstacleArray polygon already covers is left out: overlapping
        # obstacles trap agents (see orca_obstacles).
        covered = covered_polygons(self._map_polygons, self._array_polygons, self._map_slack)
        if covered.any():
            self.get_logger().info(f"{int(covered.sum())} map polygons left out: obstacles on "
                                   f"{self.params.obstacles_topic} cover them")
        polygons = self._array_polygons + [q for q, c in zip(self._map_polygons, covered,
                                                               strict=True) if not c]
        try:
            self.obstacles = orca.build_obstacles(polygons) if polygons else None
        except Exception:  # e.g. a polygon repeating a vertex: keep the ones that build alone
            usable = []
            for polygon in polygons:
                try:
                    orca.build_obstacles([polygon])
                    usable.append(polygon)
                except Exception as exc:
                    self.get_logger().warning(f"{source}: a polygon skipped: {exc}")
            polygons = usable
            try:
                self.obstacles = orca.build_obstacles(polygons) if polygons else None
            except Exception as exc:
                self.get_logger().error(f"{source}: obstacles not updated: {exc}")
                return
        self.get_logger().info(f"{source} updated: {len(polygons)} obstacle polygons in use")

    # ------------------------------------------------------------------ logging
    def _warn(self, key: str, text: str, period: float = WARN_PERIOD) -> None:
        """A warning at most once per ``period`` seconds for each ``key``."""
        now = time.monotonic()
        if period > 0.0 and now - self._warned.get(key, -math.inf) < period:
            return
        self._warned[key] = now
        self.get_logger().warning(text)

    # ------------------------------------------------------------------ the step
    def _step(self) -> None:
        started = self._lap_start = time.perf_counter()
        now = time.monotonic()
        self._phase_steps += 1
        self._step_starts.append(now)
        while self._step_starts[0] <= now - 1.0:
            self._step_starts.popleft()
        try:
            self._control(now, started)
        except Exception as exc:  # a bug must not leave robots driving on old commands
            if not self.context.ok():
                return  # shutting down: publishers are gone
            self.get_logger().error(f"step failed, commanding zero velocity: {exc}\n"
                                    f"{traceback.format_exc()}", throttle_duration_sec=5.0)
            k = self.agents.controlled
            try:
                self._publish_commands(np.zeros((k, 3)))
            except Exception as inner:
                self.get_logger().error(f"publishing zero velocity failed: {inner}",
                                        throttle_duration_sec=5.0)
        self._steps += 1
        if now - self._phases_since >= PHASE_LOG_PERIOD and self._phase_steps:
            per_step = ", ".join(f"{name} {seconds / self._phase_steps * 1e3:.2f}"
                                 for name, seconds in self.phase_seconds.items())
            self.get_logger().debug(f"ms per step over {self._phase_steps} steps: {per_step}")
            self.phase_seconds = dict.fromkeys(PHASES, 0.0)
            self._phase_steps = 0
            self._phases_since = now

    def _lap(self, phase: str) -> None:
        """Add the time since the previous lap to ``phase`` (a step's cost, by part)."""
        now = time.perf_counter()
        self.phase_seconds[phase] += now - self._lap_start
        self._lap_start = now

    def _refresh_inputs(self) -> None:
        """Decode what arrived since the last step; drop unreadable and non-finite messages."""
        names = self.agents.names
        decode = cdr.decode_odometry if self.raw else cdr.odometry_numbers
        for i, entry in enumerate(self._odom_in):
            if entry is None or entry[0] is self._odom_seen[i]:
                continue
            msg, arrived = entry
            self._odom_seen[i] = msg
            try:
                numbers, child = decode(msg)
            except Exception as exc:  # cdr.DecodeError, or whatever a bad message causes
                self._warn(f"odom/{names[i]}", f"{names[i]}: odometry dropped: {exc}")
                continue
            if not all(map(math.isfinite, numbers)):
                self._warn(f"odom/{names[i]}", f"{names[i]}: odometry with NaN or inf "
                           f"dropped")
                continue
            self._odom[i] = numbers
            self._odom_time[i] = arrived
            if i < len(self._frames) and child != self._frames[i]:
                self._frames[i] = child
                self._suffix[i] = cdr.frame_suffix(child.decode(errors="replace"))
        if self.params.preferred_velocity_source != CMD_VEL:
            return
        stamped = self.params.stamped_cmd_vel
        for i, entry in enumerate(self._cmd_in):
            if entry is None or entry[0] is self._cmd_seen[i]:
                continue
            msg, arrived = entry
            self._cmd_seen[i] = msg
            try:
                numbers = cdr.decode_twist(msg, stamped) if self.raw else cdr.twist_numbers(msg)
            except Exception as exc:  # cdr.DecodeError, or whatever a bad message causes
                self._warn(f"cmd/{names[i]}", f"{names[i]}: command dropped: {exc}")
                continue
            if not all(map(math.isfinite, numbers)):
                self._warn(f"cmd/{names[i]}", f"{names[i]}: command with NaN or inf dropped")
                continue
            self._cmd[i] = numbers
            self._cmd_time[i] = arrived

    def _report_freshness(self, known: np.ndarray, fresh: np.ndarray) -> None:
        a, p = self.agents, self.params
        k = a.controlled
        for i in np.flatnonzero(self._was_fresh & ~fresh):
            what = ("commanding zero velocity" if i < k else "forgotten")
            self.get_logger().warning(f"{a.names[i]}: odometry older than {p.odom_timeout:g} "
                                      f"s, {what}")
        for i in np.flatnonzero(~self._was_fresh & fresh):
            self.get_logger().info(f"{a.names[i]}: odometry received")
        self._was_fresh = fresh.copy()
        stale = [a.names[i] for i in np.flatnonzero(known[:k] & ~fresh[:k])]
        missing = [a.names[i] for i in np.flatnonzero(~known[:k])]
        for key, names, text in (("stale", stale, "stale odometry, stopped"),
                                 ("missing", missing, "no odometry yet")):
            if names:
                shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
                self._warn(key, f"{len(names)} agents with {text}: {shown}")

    def _control(self, now: float, started: float) -> None:
        a, p = self.agents, self.params
        n, k = len(a.names), a.controlled
        self._refresh_inputs()

        # Poses and velocities in global_frame.
        x, y, qx, qy, qz, qw, vx, vy, wz = self._odom.T
        yaw = np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
        ox, oy, oyaw = a.origin.T
        c0, s0 = np.cos(oyaw), np.sin(oyaw)
        pos = np.column_stack([ox + c0 * x - s0 * y, oy + s0 * x + c0 * y])
        heading = oyaw + yaw
        ch, sh = np.cos(heading), np.sin(heading)
        vel = np.column_stack([ch * vx - sh * vy, sh * vx + ch * vy])
        known = np.isfinite(self._odom_time)
        fresh = known & (now - self._odom_time <= p.odom_timeout)
        self._report_freshness(known, fresh)
        active = fresh[:k]

        # Preferred velocities of the controlled agents.
        pref = np.zeros((k, 2))
        distance = np.full(k, np.nan)
        cmd_fresh = np.zeros(k, dtype=bool)
        if p.preferred_velocity_source == GOAL:
            to_goal = self._goals - pos[:k]
            distance = np.hypot(to_goal[:, 0], to_goal[:, 1])
            moving = active & np.isfinite(distance) & (distance > p.goal_tolerance)
            scale = np.where(moving, self.pref_speed / np.where(moving, distance, 1.0), 0.0)
            pref = to_goal * scale[:, None]
            pref[~moving] = 0.0
            distance[~known[:k]] = np.nan
        else:
            cmd_fresh = active & (now - self._cmd_time <= p.odom_timeout)
            bx, by = self._cmd[:, 0], self._cmd[:, 1]
            pref = np.column_stack([ch[:k] * bx - sh[:k] * by, sh[:k] * bx + ch[:k] * by])
            pref[~cmd_fresh] = 0.0

        # The ORCA problem: controlled agents with a known pose, observed ones fresh.
        in_problem = np.concatenate([known[:k], fresh[k:]])
        rows = np.flatnonzero(in_problem)
        row_of = np.full(n, -1)
        row_of[rows] = np.arange(rows.size)
        reactive_all = np.zeros(n, dtype=bool)
        reactive_all[:k] = active
        unicycle = np.zeros(n, dtype=bool)
        unicycle[:k] = ~a.holonomic[:k]
        velocities = vel.copy()
        velocities[:k][known[:k] & ~active] = 0.0  # told to stop
        reuse = unicycle[:k] & active & self._was_active
        velocities[:k][reuse] = self._last_holonomic[reuse]
        preferred_all = velocities.copy()
        preferred_all[:k][active] = pref[active]
        radius = a.radius + p.safety_margin + np.where(unicycle, p.tracking_error, 0.0)
        responsibility = a.responsibility.copy()
        responsibility[:k][~active] = 1.0
        constrained = [self.trackable[i] if i < k and reactive_all[i] else None for i in rows]
        constraint_counts = np.array([0 if c is None else len(c) for c in constrained],
                                     np.int64)
        want_status = self._status_pub.get_subscription_count() > 0
        want_markers = (self._marker_pub is not None and now >= self._markers_due
                        and self._marker_pub.get_subscription_count() > 0)
        want_lines = want_markers or (want_status and p.publish_orca_lines)
        result = None
        self._lap("inputs")
        if rows.size:
            result = orca.compute_velocities(
                pos[rows], velocities[rows], preferred_all[rows], time_step=self.dt,
                radius=radius[rows], max_speed=a.max_speed[rows],
                neighbor_dist=p.neighbor_dist,
                max_neighbors=np.where(reactive_all[rows], p.max_neighbors, 0),
                time_horizon=p.time_horizon, time_horizon_obst=p.time_horizon_obst,
                responsibility=responsibility[rows], reactive=reactive_all[rows],
                obstacles=self.obstacles, symmetry_breaking=p.symmetry_breaking,
                seed=self._steps, side_preference=p.side_preference,
                keep_apart=p.keep_apart, keep_apart_margin=p.keep_apart_margin,
                constraint_lines=(orca.diff_drive_constraints(heading[rows], constrained)
                                  if constraint_counts.any() else None),
                return_lines=want_lines)

        self._lap("orca")
        # Commands in each robot's body frame.
        chosen = np.zeros((k, 2))
        commands = np.zeros((k, 3))
        if result is not None and active.any():
            mine = np.flatnonzero(active)
            chosen[mine] = result.velocities[row_of[mine]]
            # Within the symmetry-breaking perturbation of the preferred velocity, nothing
            # held the agent back: keep the preferred velocity exactly (no creeping at rest).
            unchanged = active & (np.abs(chosen - pref).max(axis=1)
                                  <= p.symmetry_breaking + 1e-9)
            chosen[unchanged] = pref[unchanged]
            hc, hs = ch[:k], sh[:k]
            commands[:, 0] = hc * chosen[:, 0] + hs * chosen[:, 1]
            commands[:, 1] = -hs * chosen[:, 0] + hc * chosen[:, 1]
            for limits, members in self.limit_groups:
                driven = members[active[members]]
                if driven.size:
                    v, w = orca.unicycle_commands(chosen[driven], heading[driven], limits)
                    commands[driven, 0], commands[driven, 1], commands[driven, 2] = v, 0.0, w
            if p.preferred_velocity_source == CMD_VEL:
                passed = unchanged & cmd_fresh
                commands[passed] = self._cmd[passed]
        self._last_holonomic = chosen
        self._was_active = active.copy()
        self._publish_commands(commands)
        self._lap("commands")

        if want_status or want_markers:
            stamp = self.get_clock().now().to_msg()
            lines = (self._step_lines(result, rows, row_of, active, constraint_counts)
                     if result is not None
                     else StepLines(np.zeros(k, np.int64), np.zeros(k, np.int64)))
            if want_status:
                self._publish_status(stamp, started, result, row_of, active, distance, pref,
                                     chosen, lines)
                self._lap("status")
            if want_markers:
                self._markers_due = now + 1.0 / min(p.marker_rate_hz, p.rate_hz) - 0.5 * self.dt
                lifetime = max(1.0, 3.0 / p.marker_rate_hz)
                self._publish_markers(stamp, step_markers(
                    a.names[:k], known[:k], active, self._infeasible(result, row_of), pos[:k],
                    a.radius[:k], a.max_speed[:k], pref, chosen, lines.drawn_offsets,
                    lines.drawn_points, lines.drawn_directions, lifetime=lifetime)
                    + observed_markers(a.names[k:], fresh[k:], pos[k:], a.radius[k:],
                                       vel[k:], lifetime=lifetime))
                self._lap("markers")

    def _infeasible(self, result, row_of) -> np.ndarray:
        k = self.agents.controlled
        out = np.zeros(k, dtype=bool)
        if result is not None:
            mine = row_of[:k] >= 0
            out[mine] = result.infeasible[row_of[:k][mine]]
        return out

    def _step_lines(self, result, rows, row_of, active, constraint_counts) -> StepLines:
        """Neighbour and obstacle-line counts of the controlled agents and, when the step
        returned them, their half-planes.

        A step's lines are ordered obstacles, differential-drive limits, separations (see
        keep_apart), agents; the drawing leaves out the differential-drive limits."""
        k = self.agents.controlled
        mine = np.flatnonzero(active)  # active agents are in the problem
        agent_neighbors = np.zeros(k, np.int64)
        obstacle_lines = np.zeros(k, np.int64)
        hard = result.num_obstacle_lines  # the obstacle lines come first
        agent_neighbors[mine] = result.num_neighbors[row_of[mine]]
        obstacle_lines[mine] = hard[row_of[mine]]
        lines = result.lines
        if lines is None:
            return StepLines(agent_neighbors, obstacle_lines)
        per_row = np.diff(lines.offsets)
        owner = np.repeat(np.arange(rows.size), per_row)
        position = np.arange(owner.size) - lines.offsets[owner]  # index within its agent
        shown_rows = np.zeros(rows.size, dtype=bool)
        shown_rows[row_of[mine]] = True
        drawn = shown_rows[owner] & ~((position >= hard[owner]) &
                                      (position < hard[owner] + constraint_counts[owner]))
        counts = np.zeros(k, np.int64)
        counts[mine] = np.bincount(owner[drawn], minlength=rows.size)[row_of[mine]]
        offsets = np.zeros(k + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        every = [None] * k
        for i in mine.tolist():
            lo, hi = lines.offsets[row_of[i]], lines.offsets[row_of[i] + 1]
            every[i] = (lines.points[lo:hi], lines.directions[lo:hi])
        return StepLines(agent_neighbors, obstacle_lines, every, offsets,
                         lines.points[drawn], lines.directions[drawn])

    # ------------------------------------------------------------------ outputs
    def _publish_commands(self, commands: np.ndarray) -> None:
        rows = commands.tolist()
        if self.raw:
            if self.params.stamped_cmd_vel:
                stamp = self.get_clock().now().to_msg()
                sec, nanosec = stamp.sec, stamp.nanosec
                for publisher, suffix, (cx, cy, cw) in zip(self._cmd_pubs, self._suffix, rows,
                                                           strict=True):
                    publisher.publish(cdr.encode_twist_stamped(sec, nanosec, suffix, cx, cy,
                                                               cw))
            else:
                for publisher, (cx, cy, cw) in zip(self._cmd_pubs, rows, strict=True):
                    publisher.publish(cdr.encode_twist(cx, cy, cw))
            return
        stamped = self.params.stamped_cmd_vel
        stamp = self.get_clock().now().to_msg() if stamped else None
        for i, (publisher, msg, (cx, cy, cw)) in enumerate(zip(self._cmd_pubs, self._cmd_msgs,
                                                               rows, strict=True)):
            twist = msg.twist if stamped else msg
            if stamped:
                msg.header.stamp = stamp
                frame = self._frames[i]
                msg.header.frame_id = frame.decode(errors="replace") if frame else ""
            twist.linear.x, twist.linear.y, twist.angular.z = cx, cy, cw
            publisher.publish(msg)

    def _publish_markers(self, stamp, data: list[MarkerData]) -> None:
        """Publish in MarkerArrays of at most about MARKER_CHUNK_BYTES each: DDS sends a
        larger message in fragments, which costs far more per byte (and RViz takes any
        number of arrays)."""
        frame = self.params.global_frame
        start, size = 0, 0
        for end, m in enumerate(data, start=1):
            size += MARKER_BYTES + (0 if m.points is None else 24 * m.points.shape[0])
            if size >= MARKER_CHUNK_BYTES or end == len(data):
                chunk = data[start:end]
                if self.raw:
                    self._marker_pub.publish(cdr.encode_marker_array(frame, stamp.sec,
                                                                     stamp.nanosec, chunk))
                else:
                    self._marker_pub.publish(MarkerArray(
                        markers=[marker_from_data(frame, stamp, m) for m in chunk]))
                start, size = end, 0

    def _publish_status(self, stamp, started, result, row_of, active, distance, pref, chosen,
                        lines) -> None:
        k = self.agents.controlled
        active_list = active.tolist()
        infeasible = (self._infeasible(result, row_of) & active).tolist()
        every = (lines.every if self.params.publish_orca_lines and lines.every is not None
                 else [None] * k)
        args = (self.agents.names[:k], active_list, lines.agent_neighbors.tolist(),
                lines.obstacle_lines.tolist(), infeasible, distance.tolist(), pref.tolist(),
                chosen.tolist(), every)
        frame = self.params.global_frame
        rate = float(len(self._step_starts))
        compute_time = time.perf_counter() - started
        if self.raw:
            self._status_pub.publish(cdr.encode_orca_status(
                frame, stamp.sec, stamp.nanosec, compute_time, rate, *args))
            return
        msg = orca_status_message(*args)
        msg.header.stamp = stamp
        msg.header.frame_id = frame
        msg.achieved_rate = rate
        msg.compute_time = compute_time
        self._status_pub.publish(msg)


def orca_status_message(names, active, agent_neighbors, obstacle_neighbors, infeasible,
                        distance, preferred, velocity, lines) -> OrcaStatus:
    """OrcaStatus (without header and timing) from the per-agent lists that
    :func:`.cdr.encode_orca_status` also takes."""
    agents = []
    for i, name in enumerate(names):
        st = OrcaAgentStatus(name=name, active=active[i], agent_neighbors=agent_neighbors[i],
                             obstacle_neighbors=obstacle_neighbors[i],
                             infeasible=infeasible[i], distance_to_goal=distance[i])
        st.preferred_velocity.x, st.preferred_velocity.y = preferred[i]
        st.velocity.x, st.velocity.y = velocity[i]
        if lines[i] is not None:
            st.orca_line_points = orca_points(lines[i][0])
            st.orca_line_directions = orca_vectors(lines[i][1])
        agents.append(st)
    return OrcaStatus(agents=agents)


def orca_points(xy: np.ndarray) -> list[Point]:
    return [Point(x=px, y=py) for px, py in xy.tolist()]


def orca_vectors(xy: np.ndarray) -> list[Vector3]:
    return [Vector3(x=px, y=py) for px, py in xy.tolist()]


def make_executor(node=None):
    """rclpy's EventsExecutor (much less overhead per message with hundreds of
    subscriptions), or a SingleThreadedExecutor where this rclpy has none."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()


def main(args=None) -> int:
    """Spin an OrcaNode until SIGINT or SIGTERM, on :func:`make_executor`'s executor."""
    return run_node(OrcaNode, args, make_executor=make_executor)


if __name__ == "__main__":
    sys.exit(main())
