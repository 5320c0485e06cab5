"""FleetController: ORCA for a robot fleet, from timestamped samples to safe commands.

The pure core of orca_node (no ROS): per agent, samples go in (odometry, localization, goals
or the navigation stack's command), and one :meth:`FleetController.step` per control period
turns the latest of them into body-frame commands for the controlled agents, plus what the
status and the markers show. The node around it only converts messages and publishes.

Agents. The first ``controlled`` agents are commanded; the others are observed (robots
without ORCA, tracked people, robots run by another node): avoided, never commanded.

Time and latency. Every sample carries the time it describes (its header stamp, on the
caller's clock) and the time it arrived. A sample's age at the control time is ``now -
stamp`` (the arrival time stands in for a missing stamp, or for one from the future, which
means the clocks disagree). Each agent's position is extrapolated to the control time with
its measured velocity, and, because extrapolation cannot foresee a change of velocity, the
agent's radius in the ORCA problem grows by ``max_speed * (age - latency_allowance)`` once
its odometry is older than ``latency_allowance``: a late or overloaded node is more cautious,
never less safe. Odometry older than ``odom_timeout`` is stale: a controlled agent is sent
zero velocity and stays in the problem as a standing disc (grown by the distance it could
have covered meanwhile), an observed one is forgotten.

Localization. Each agent's odometry frame is placed in the global frame by its
:class:`~planning_collision.fleet.localization.MapFromOdom` (``pose_source``: a fixed
``odom_origin``, the localizer's pose fused by timestamp, or tf's ``map -> odom``). A
correction older than ``localization_timeout`` (for ``pose_topic``: and the robot has since
driven more than ``localization_travel`` by its odometry, since AMCL publishes only after
moving) is stale: a controlled agent is stopped, as for stale odometry, because its place in
the map drifts from then on; an observed one stays avoided where its odometry puts it.

Who is commanded. A controlled agent is *engaged* while it is ``enabled`` (a run-time switch
that hands it to docking or teleop) and, in ``cmd_vel`` mode, while its navigation command is
younger than ``stop_pub_timeout``. Only engaged agents are commanded; when an agent stops
being engaged it gets one zero command and then nothing (:attr:`FleetStep.publish`), as a
safety filter falls silent when its input does. An agent that is not engaged is avoided by
the others with full responsibility, as an observed agent that does not avoid anyone.

Safety. Inputs that cannot be true are dropped with a warning (NaN or inf, a zero
quaternion, coordinates beyond :data:`MAX_COORD`); a measured velocity faster than
``plausible_speed_factor`` times the agent's max speed is bounded to that. With
``wait_for_all_agents``, no controlled agent moves until every controlled agent has been
placed once (a robot nobody has seen cannot be avoided). Every command is checked last: finite,
linear speed within the agent's ``max_speed``, turn rate within ``max_angular_speed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.common.checks import finite_scalar
from planning_collision.orca import DiffDriveLimits
from planning_collision.orca.checked_settings import CheckedSettings
from planning_collision.orca.heading_guard import guarded_forward_speeds
from planning_collision.orca.validation import MAX_MAGNITUDE

from .latency import (
    REACH_TIME,
    StepPeriods,
    braking_growth,
    clip_growth,
    latency_growth,
    loop_latency,
    merge_lines,
    per_agent_lines,
    reachable_lines,
)
from .localization import ODOM_ORIGIN, POSE_TOPIC, MapFromOdom
from .progress import ProgressMonitor

GOAL, CMD_VEL = "goal", "cmd_vel"
PREFERRED_VELOCITY_SOURCES = (GOAL, CMD_VEL)
# Coordinates a sample may carry (metres): half of ORCA's working range, so that positions
# extrapolated by a step's travel stay inside it.
MAX_COORD = 0.5 * MAX_MAGNITUDE
# A stamp this far ahead of its arrival says the clocks disagree: the arrival time is used.
FUTURE_TOLERANCE = 0.5


#: The bounds of every number of :class:`FleetSettings` and :class:`AgentSpec`, as keywords of
#: :func:`~planning_collision.common.checks.finite_scalar`: their ``check`` methods apply
#: them, and orca_node declares them on its parameters (``ros2 param describe`` shows them).
SETTING_BOUNDS: dict[str, dict] = {
    **dict.fromkeys(("time_step", "odom_timeout", "pref_speed", "neighbor_dist",
                     "time_horizon", "time_horizon_obst", "max_angular_speed", "time_to_holo",
                     "tracking_error", "stop_pub_timeout", "passage_max_wait"), {"above": 0.0}),
    **dict.fromkeys(("latency_allowance", "goal_tolerance", "safety_margin",
                     "symmetry_breaking", "keep_apart_margin", "localization_timeout",
                     "localization_travel", "command_latency"), {"at_least": 0.0}),
    "plausible_speed_factor": {"at_least": 1.0},  # a robot may drive at its max_speed
    "side_preference": {},
    "max_neighbors": {"at_least": 0, "integer": True},
}
AGENT_BOUNDS: dict[str, dict] = {
    "radius": {"above": 0.0},
    "max_speed": {"above": 0.0},
    "responsibility": {"at_least": 0.0, "at_most": 1.0},
    "max_linear_accel": {"at_least": 0.0},  # 0: none (the base reaches a command at once)
    "max_angular_accel": {"at_least": 0.0},
}


@dataclass(frozen=True)
class FleetSettings:
    """Node-wide settings; every field may change while the fleet runs (:meth:`configure`)."""

    time_step: float = 0.05
    odom_timeout: float = 0.5
    latency_allowance: float = 0.1
    plausible_speed_factor: float = 3.0
    preferred_velocity_source: str = GOAL
    pref_speed: float = 0.5
    goal_tolerance: float = 0.1
    safety_margin: float = 0.05
    neighbor_dist: float = 3.0
    max_neighbors: int = 10
    time_horizon: float = 2.0
    time_horizon_obst: float = 1.0
    side_preference: float = 0.35
    symmetry_breaking: float = 0.001
    keep_apart: bool = True
    keep_apart_margin: float = 0.05
    max_angular_speed: float = 2.0
    time_to_holo: float = 0.4
    tracking_error: float = 0.05
    wait_for_all_agents: bool = True
    stop_pub_timeout: float = 0.5
    localization_timeout: float = 1.0
    localization_travel: float = 0.5
    command_latency: float = 0.0  # seconds from publishing a command to the base applying it
    passage_max_wait: float = 6.0  # seconds a side waits for a passage before it turns

    def check(self) -> None:
        """Raise ValueError naming the first setting the fleet cannot run with."""
        for name, bounds in SETTING_BOUNDS.items():
            finite_scalar(getattr(self, name), name, **bounds)
        if self.preferred_velocity_source not in PREFERRED_VELOCITY_SOURCES:
            raise ValueError(f"preferred_velocity_source must be one of "
                             f"{', '.join(PREFERRED_VELOCITY_SOURCES)}, got "
                             f"{self.preferred_velocity_source!r}")


@dataclass(frozen=True)
class AgentSpec:
    """One agent. ``radius``, ``max_speed``, ``responsibility`` and ``enabled`` may change
    while the fleet runs (:meth:`FleetController.set_agent`); the rest is fixed."""

    name: str
    radius: float = 0.25
    max_speed: float = 0.6
    holonomic: bool = True  # controlled agents only
    responsibility: float | None = None  # None: 0.5 controlled, 1.0 observed
    goal: tuple[float, float] | None = None  # controlled agents, goal mode
    pose_source: str = ODOM_ORIGIN
    odom_origin: tuple[float, float, float] = (0.0, 0.0, 0.0)
    enabled: bool = True  # controlled agents: False hands the robot to someone else
    max_linear_accel: float = 0.0  # m/s^2 the base changes its velocity by; 0: at once
    max_angular_accel: float = 0.0  # rad/s^2 (differential drive); 0: at once

    def check(self) -> None:
        for key, bounds in AGENT_BOUNDS.items():
            if getattr(self, key) is not None:  # responsibility None: the default
                finite_scalar(getattr(self, key), f"{self.name}.{key}", **bounds)
        if len(self.odom_origin) != 3 or not all(math.isfinite(v) for v in self.odom_origin):
            raise ValueError(f"{self.name}.odom_origin must be 3 finite numbers [x, y, yaw], "
                             f"got {list(self.odom_origin)}")
        if self.goal is not None and (len(self.goal) != 2 or not all(
                math.isfinite(v) and abs(v) <= MAX_COORD for v in self.goal)):
            raise ValueError(f"{self.name}.goal must be [] or 2 finite numbers [x, y], got "
                             f"{list(self.goal)}")


class StepLines(NamedTuple):
    """The controlled agents' half-planes of one step, when requested: ``per_agent[i]`` is
    agent i's (points, directions), all of them (None when inactive); ``drawn_*`` the ones
    markers draw (without the differential-drive limits) in CSR form over the controlled
    agents."""

    per_agent: list
    drawn_offsets: np.ndarray
    drawn_points: np.ndarray
    drawn_directions: np.ndarray


class FleetStep(NamedTuple):
    """What one :meth:`FleetController.step` decided (controlled agents first, ``k`` of
    them; arrays over all ``n`` agents where the name says so)."""

    commands: np.ndarray  # (k, 3): body-frame vx, vy, omega
    active: np.ndarray  # (k,) commanded by ORCA this step (else zero velocity)
    reasons: list[str]  # (k,) why an agent is not active ("" when it is)
    known: np.ndarray  # (n,) placed in the global frame at least once
    fresh: np.ndarray  # (n,) odometry younger than odom_timeout
    positions: np.ndarray  # (n, 2) global frame, at the control time
    headings: np.ndarray  # (n,)
    velocities: np.ndarray  # (n, 2) measured, global frame
    radii: np.ndarray  # (n,) radius in the ORCA problem (margins and latency growth)
    ages: np.ndarray  # (n,) seconds since the latest odometry sample (inf: none)
    preferred: np.ndarray  # (k, 2) preferred velocities, global frame
    chosen: np.ndarray  # (k, 2) ORCA velocities, global frame (zero when inactive)
    distance_to_goal: np.ndarray  # (k,) NaN without a goal
    infeasible: np.ndarray  # (k,) linearProgram3 was needed
    agent_neighbors: np.ndarray  # (k,)
    obstacle_lines: np.ndarray  # (k,)
    lines: StepLines | None
    events: list[str]  # what changed since the previous step, for the log (info level)
    publish: np.ndarray  # (k,) send commands[i] this step (engaged, or its one final zero)
    engaged: np.ndarray  # (k,) enabled and (goal mode, or its navigation command is fresh)
    localization_ages: np.ndarray  # (n,) seconds since the localization correction
    localization_stale: np.ndarray  # (n,) the correction is too old to trust (see settings)


class _Placement(NamedTuple):
    """Every agent at the control time (over all ``n`` agents)."""

    known: np.ndarray  # placed in the global frame (odometry and a localization)
    fresh: np.ndarray  # known, and its odometry younger than odom_timeout
    ages: np.ndarray  # seconds since the latest odometry sample (inf: none)
    positions: np.ndarray  # (n, 2) global frame, extrapolated to the control time
    headings: np.ndarray
    velocities: np.ndarray  # (n, 2) measured, global frame
    radii: np.ndarray  # radius in the ORCA problem (margins and latency growth)
    localization_ages: np.ndarray
    localization_stale: np.ndarray
    latency: np.ndarray  # seconds from the odometry's measurement to the command in force


class _Activity(NamedTuple):
    """Who is commanded (over the ``k`` controlled agents)."""

    engaged: np.ndarray  # enabled and (goal mode, or its navigation command is fresh)
    active: np.ndarray  # engaged, placed with fresh odometry and localization, fleet placed
    reasons: list[str]  # why not active ("" when active)
    publish: np.ndarray  # engaged, or its one final zero


class _Preferred(NamedTuple):
    """The controlled agents' preferred velocities (zero when not active)."""

    velocities: np.ndarray  # (k, 2) global frame
    distance_to_goal: np.ndarray  # (k,) NaN without a goal, or not placed, or cmd_vel mode
    navigation: np.ndarray | None  # (k, 3) the navigation commands, body frame (cmd_vel)


class _Problem(NamedTuple):
    """The ORCA problem (arrays over the ``n`` agents unless over its rows)."""

    rows: np.ndarray  # agent of each row
    row_of: np.ndarray  # (n,) row of each agent, -1 when not in the problem
    reactive: np.ndarray  # avoids the others (the active agents)
    velocities: np.ndarray  # (n, 2) current velocities as ORCA sees them
    preferred: np.ndarray  # (n, 2)
    responsibility: np.ndarray
    constrained: list  # per row: the trackable polygon of an active differential drive
    constraint_counts: np.ndarray  # per row: its limit lines (differential drive, reachable)
    reachable: list | None = None  # per row: the reachable velocities' lines (acceleration)


class _Commands(NamedTuple):
    """What the controlled agents are told (over the ``k`` controlled agents)."""

    commands: np.ndarray  # (k, 3) body frame, within every limit
    chosen: np.ndarray  # (k, 2) ORCA velocities, global frame (zero when not active)
    infeasible: np.ndarray
    agent_neighbors: np.ndarray
    obstacle_lines: np.ndarray


@dataclass
class _Sample:
    """The latest command of the navigation stack for one agent."""

    time: float = -math.inf
    value: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class _Agent:
    spec: AgentSpec
    localization: MapFromOdom
    odom: tuple | None = None  # (x, y, yaw, vx, vy, wz) in the odometry frame, body twist
    odom_time: float = -math.inf
    command: _Sample = field(default_factory=_Sample)


def sample_time(stamp: float | None, arrival: float) -> float:
    """The time a sample describes: its stamp, or its arrival when the stamp is missing
    (zero) or lies in the future by more than FUTURE_TOLERANCE."""
    if stamp is None or stamp <= 0.0 or stamp > arrival + FUTURE_TOLERANCE:
        return arrival
    return stamp


class FleetController:
    """ORCA for a fleet: samples in, one :meth:`step` per control period, commands out.

    Three index spaces. *Agents* ``i`` in ``range(n)``: every agent, the controlled first, then
    the observed (arrays of length n, as in :class:`_Placement`). *Controlled agents*: the
    first ``k = self.controlled`` of them, the same ``i`` (arrays of length k, as in
    :class:`_Activity`, :class:`_Preferred`, :class:`_Commands`). *Problem rows* ``j``: the
    agents in this step's ORCA problem, ``rows[j]`` the agent of row j and ``row_of[i]`` the
    row of agent i (-1: not in the problem), as in :class:`_Problem` and ORCA's result.

    A step is phases, each returning a named result: place every agent, decide who is
    active (commanded by ORCA) and who is engaged, the preferred velocities, the ORCA
    problem, solve it, the body-frame commands, and remember what the next step needs
    (:meth:`_remember`, the only place a step writes to ``self``; :meth:`hold` and
    :meth:`release` change only the memory of who was commanded).

    ``warn(key, text)`` receives every warning (the node throttles them per key)."""

    def __init__(self, controlled: Sequence[AgentSpec], observed: Sequence[AgentSpec] = (),
                 settings: FleetSettings | None = None,
                 warn: Callable[[str, str], None] | None = None):
        names = [a.name for a in controlled] + [a.name for a in observed]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"agents and observed name {', '.join(twice)} more than once")
        self.settings = settings or FleetSettings()
        self.settings.check()
        self.warn = warn or (lambda key, text: None)
        self.controlled = len(controlled)
        self._agents: list[_Agent] = []
        for i, spec in enumerate(list(controlled) + list(observed)):
            spec.check()
            if spec.responsibility is None:
                spec = replace(spec, responsibility=0.5 if i < self.controlled else 1.0)
            if i >= self.controlled:
                spec = replace(spec, holonomic=True, goal=None)
            self._agents.append(_Agent(spec, MapFromOdom(spec.pose_source, spec.odom_origin)))
        self.names = tuple(names)
        self.index = {name: i for i, name in enumerate(names)}
        k = self.controlled
        self.goals = np.array([a.spec.goal if a.spec.goal is not None else (np.nan, np.nan)
                               for a in self._agents[:k]], dtype=np.float64).reshape(k, 2)
        self._last_holonomic = np.zeros((k, 2))
        self._was_active = np.zeros(k, dtype=bool)
        self._was_fresh = np.zeros(len(self._agents), dtype=bool)
        self._was_engaged = np.zeros(k, dtype=bool)
        self._was_stale_localization = np.zeros(len(self._agents), dtype=bool)
        self._placed_once = np.zeros(k, dtype=bool)
        self._periods = StepPeriods()  # the control periods achieved (the latency model)
        self.steps = 0
        self.routes = self.passages = None  # set_world (issue #22)
        # Deadlock resolution whatever the world: a fleet in open space, or without a map,
        # knots too (antipodal circle of 30, seed 87); set_world keeps its clocks.
        self.progress = ProgressMonitor(k)
        self._derive()

    # ------------------------------------------------------------------ settings
    @property
    def specs(self) -> tuple[AgentSpec, ...]:
        return tuple(a.spec for a in self._agents)

    def configure(self, settings: FleetSettings) -> None:
        """New node-wide settings (checked first; on ValueError nothing changes)."""
        settings.check()
        self.settings = settings
        self._derive()

    def set_agent(self, name: str, **changes) -> None:
        """Change an agent's ``radius``, ``max_speed``, ``responsibility`` or (a controlled
        agent's) ``enabled`` (checked first; on ValueError nothing changes)."""
        unknown = set(changes) - {"radius", "max_speed", "responsibility", "enabled"}
        if unknown:
            raise ValueError(f"{', '.join(sorted(unknown))} cannot change while running")
        agent = self._agents[self.index[name]]
        if "enabled" in changes and self.index[name] >= self.controlled:
            raise ValueError(f"{name} is observed: only controlled agents have 'enabled'")
        spec = replace(agent.spec, **changes)
        spec.check()
        agent.spec = spec
        self._derive()

    def _derive(self) -> None:
        """Per-agent arrays and differential-drive limits from the specs and settings."""
        s, specs, k = self.settings, self.specs, self.controlled
        self.radius = np.array([a.radius for a in specs], dtype=np.float64)
        self.max_speed = np.array([a.max_speed for a in specs], dtype=np.float64)
        self.responsibility = np.array([a.responsibility for a in specs], dtype=np.float64)
        self.unicycle = np.array([not a.holonomic for a in specs], dtype=bool)
        self.enabled = np.array([a.enabled for a in specs[:k]], dtype=bool)
        self.max_linear_accel = np.array([a.max_linear_accel for a in specs], dtype=np.float64)
        # A turn rate reached max_angular_speed / max_angular_accel late: a longer turn.
        limits = [None if a.holonomic else DiffDriveLimits(
            float(a.max_speed), s.max_angular_speed, s.time_to_holo + (
                s.max_angular_speed / a.max_angular_accel if a.max_angular_accel > 0.0
                else 0.0), s.tracking_error)
            for a in specs[:k]]
        groups: dict[DiffDriveLimits, list[int]] = {}
        for i, lim in enumerate(limits):
            if lim is not None:
                groups.setdefault(lim, []).append(i)
        # One unicycle_commands call per group of agents with the same limits.
        self.limit_groups = [(lim, np.array(members)) for lim, members in groups.items()]
        polygons: dict[DiffDriveLimits, np.ndarray] = {}
        self.trackable = [None if lim is None else
                          polygons.setdefault(lim, orca.trackable_polygon(lim))
                          for lim in limits]
        # The agents placed by a correction that changes (not a fixed odom_origin).
        self._corrected = [i for i, a in enumerate(self._agents)
                           if a.localization.source != ODOM_ORIGIN]
        # ORCA's scalar settings, checked here once instead of at every step.
        self._orca = CheckedSettings(
            time_step=s.time_step, neighbor_dist=s.neighbor_dist, time_horizon=s.time_horizon,
            time_horizon_obst=s.time_horizon_obst, symmetry_breaking=s.symmetry_breaking,
            side_preference=s.side_preference, keep_apart=s.keep_apart,
            keep_apart_margin=s.keep_apart_margin)

    # ------------------------------------------------------------------ samples in
    def odometry(self, i: int, arrival: float, stamp: float | None, x: float, y: float,
                 qx: float, qy: float, qz: float, qw: float, vx: float, vy: float,
                 wz: float) -> bool:
        """Agent ``i``'s odometry: pose in its odometry frame (quaternion of any norm), twist
        in its body frame. False (with a warning) when the sample cannot be used."""
        agent = self._agents[i]
        name = agent.spec.name
        numbers = (x, y, qx, qy, qz, qw, vx, vy, wz)
        if not all(map(math.isfinite, numbers)):
            self.warn(f"odom/{name}", f"{name}: odometry with NaN or inf dropped")
            return False
        yaw = se2.quaternion_yaw(qx, qy, qz, qw)
        if math.isnan(yaw):
            self.warn(f"odom/{name}", f"{name}: odometry with a zero quaternion dropped")
            return False
        if not (abs(x) <= MAX_COORD and abs(y) <= MAX_COORD):
            self.warn(f"odom/{name}", f"{name}: odometry at ({x:g}, {y:g}) dropped: beyond "
                      f"+-{MAX_COORD:g} m")
            return False
        t = sample_time(stamp, arrival)
        if stamp is not None and stamp > arrival + FUTURE_TOLERANCE:
            self.warn(f"odom-clock/{name}", f"{name}: odometry stamped {stamp - arrival:.3g} "
                      f"s in the future; its arrival time is used (are the clocks in sync?)")
        if t < agent.odom_time:
            return False  # older than what is known: out of order
        bound = self.settings.plausible_speed_factor * agent.spec.max_speed
        speed = math.hypot(vx, vy)
        if speed > bound:
            self.warn(f"odom-speed/{name}", f"{name}: measured speed {speed:.3g} m/s is more "
                      f"than plausible_speed_factor x max_speed = {bound:g} m/s; bounded")
            vx, vy = vx * (bound / speed), vy * (bound / speed)
        agent.odom = (x, y, yaw, vx, vy, wz)
        agent.odom_time = t
        agent.localization.add_odometry(t, (x, y, yaw))
        return True

    def localized_pose(self, i: int, stamp: float, x: float, y: float, qx: float, qy: float,
                       qz: float, qw: float) -> bool:
        """The localizer's pose of agent ``i`` in the global frame (pose_topic source)."""
        pose = self._pose(i, "localization", x, y, qx, qy, qz, qw)
        if pose is None:
            return False
        self._agents[i].localization.add_pose(stamp, pose)
        return True

    def odom_transform(self, i: int, stamp: float, x: float, y: float, qx: float, qy: float,
                       qz: float, qw: float, static: bool = False) -> bool:
        """The global frame -> agent ``i``'s odometry frame transform (tf source)."""
        pose = self._pose(i, "transform", x, y, qx, qy, qz, qw)
        if pose is None:
            return False
        self._agents[i].localization.add_transform(stamp, pose, static)
        return True

    def pose_at(self, i: int, t: float) -> tuple[float, float, float] | None:
        """Agent ``i``'s (x, y, yaw) in the global frame at time ``t`` (a sensor's stamp): its
        :meth:`odom_pose_at` placed by its localization (None when it is not placed)."""
        pose = self.odom_pose_at(i, t)
        return None if pose is None else self._agents[i].localization.map_pose(pose)

    def odom_pose_at(self, i: int, t: float) -> tuple[float, float, float] | None:
        """Agent ``i``'s (x, y, yaw) in its odometry frame at time ``t``: its latest odometry
        moved by its twist from the odometry's time to ``t``. None when ``t`` lies more than
        odom_timeout from its latest odometry."""
        agent = self._agents[i]
        dt = t - agent.odom_time
        if agent.odom is None or abs(dt) > self.settings.odom_timeout:
            return None
        x, y, yaw, vx, vy, wz = agent.odom
        gx, gy = se2.rotate(vx, vy, yaw)
        return x + gx * dt, y + gy * dt, yaw + wz * dt

    def _pose(self, i, what, x, y, qx, qy, qz, qw):
        name = self.names[i]
        yaw = se2.quaternion_yaw(qx, qy, qz, qw)
        if not (math.isfinite(x) and math.isfinite(y)) or math.isnan(yaw):
            self.warn(f"{what}/{name}", f"{name}: {what} with NaN, inf or a zero quaternion "
                      f"dropped")
            return None
        if not (abs(x) <= MAX_COORD and abs(y) <= MAX_COORD):
            self.warn(f"{what}/{name}", f"{name}: {what} at ({x:g}, {y:g}) dropped")
            return None
        return x, y, yaw

    def goal(self, i: int, x: float, y: float) -> bool:
        """A new goal (global frame) for controlled agent ``i``."""
        name = self.names[i]
        if not (math.isfinite(x) and math.isfinite(y)):
            self.warn(f"goal/{name}", f"{name}: goal ignored: pose.position contains NaN or "
                      f"inf")
            return False
        if not (abs(x) <= MAX_COORD and abs(y) <= MAX_COORD):
            self.warn(f"goal/{name}", f"{name}: goal ignored: pose.position ({x:g}, {y:g}) "
                      f"is beyond +-{MAX_COORD:g} m")
            return False
        self.goals[i] = (x, y)
        return True

    def nav_command(self, i: int, arrival: float, stamp: float | None, vx: float, vy: float,
                    wz: float) -> bool:
        """The navigation stack's command (body frame) for controlled agent ``i``."""
        name = self.names[i]
        if not all(map(math.isfinite, (vx, vy, wz))):
            self.warn(f"cmd/{name}", f"{name}: command with NaN or inf dropped")
            return False
        bound = self.settings.plausible_speed_factor * self._agents[i].spec.max_speed
        speed = math.hypot(vx, vy)
        if speed > bound:  # ORCA bounds it to max_speed anyway; this keeps it in range
            self.warn(f"cmd-speed/{name}", f"{name}: commanded speed {speed:.3g} m/s is more "
                      f"than plausible_speed_factor x max_speed = {bound:g} m/s; bounded")
            vx, vy = vx * (bound / speed), vy * (bound / speed)
        self._agents[i].command = _Sample(sample_time(stamp, arrival), (vx, vy, wz))
        return True

    # ------------------------------------------------------------------ the step
    def step(self, now: float, obstacles=None, want_lines: bool = False,
             discs=None) -> FleetStep:
        """One control step at time ``now`` (the samples' clock) against ``obstacles`` (an
        ORCA obstacle set or None); ``want_lines``: report the half-planes (:class:`StepLines`).
        ``discs``: things only sensors see (``positions`` (d, 2), ``velocities`` (d, 2) and
        ``radii`` (d,) at ``now``, e.g. tracked people), avoided as observed agents are, with
        full responsibility; they are not agents (no index, nothing reported)."""
        place = self._place(now, discs)
        activity = self._activity(now, place)
        preferred = self._preferred(place, activity.active)
        preferred = self._route(now, place, activity.active, preferred)
        problem = self._problem(place, activity, preferred)
        result = self._solve(place, problem, obstacles, want_lines, discs)
        if problem.reachable is not None and result is not None:
            problem, result = self._beyond_reach(place, problem, result, obstacles,
                                                 want_lines, discs)
        told = self._commands(place, activity.active, preferred, problem, result)
        told = self._guard_walls(place, activity.active, told, obstacles)
        lines = None
        if want_lines and result is not None and result.lines is not None:
            lines = half_planes(result, problem.rows, problem.row_of, activity.active,
                                problem.constraint_counts)
        events = self._events(place, activity.reasons)
        self._remember(now, place, activity, told)
        return FleetStep(
            commands=told.commands, active=activity.active, reasons=activity.reasons,
            known=place.known, fresh=place.fresh, positions=place.positions,
            headings=place.headings, velocities=place.velocities, radii=place.radii,
            ages=place.ages, preferred=preferred.velocities, chosen=told.chosen,
            distance_to_goal=preferred.distance_to_goal, infeasible=told.infeasible,
            agent_neighbors=told.agent_neighbors, obstacle_lines=told.obstacle_lines,
            lines=lines, events=events, publish=activity.publish, engaged=activity.engaged,
            localization_ages=place.localization_ages,
            localization_stale=place.localization_stale)

    def _place(self, now: float, discs=None) -> _Placement:
        """Every agent in the global frame at ``now``: its latest odometry placed by its
        localization, extrapolated to ``now`` while fresh; its radius in the problem grown by
        what the extrapolation cannot cover (at most what odom_timeout allows, and never into
        a neighbour or one of the ``discs``: :func:`.latency.clip_growth`)."""
        s, n = self.settings, len(self._agents)
        poses = np.zeros((n, 3))
        body = np.zeros((n, 2))
        ages = np.full(n, np.inf)
        known = np.zeros(n, dtype=bool)
        for i, agent in enumerate(self._agents):
            if agent.odom is None:
                continue
            placed = agent.localization.map_pose(agent.odom[:3])
            if placed is not None:
                known[i] = True
                poses[i] = placed
                body[i] = agent.odom[3:5]
                ages[i] = now - agent.odom_time
        fresh = known & (ages <= s.odom_timeout)
        headings = poses[:, 2]
        velocities = np.column_stack(se2.rotate(body[:, 0], body[:, 1], headings))
        late = np.clip(np.where(known, ages, 0.0), 0.0, s.odom_timeout)
        # The whole loop (fleet/latency.py): odometry age, command delivery, and for the
        # controlled agents how much longer than a period their commands may stand.
        lateness = np.zeros(n)
        lateness[:self.controlled] = min(self._periods.lateness(s.time_step, now),
                                          s.odom_timeout)
        latency = loop_latency(late, s.odom_timeout, s.command_latency, lateness)
        positions = poses[:, :2] + np.where(fresh[:, None], velocities * late[:, None], 0.0)
        radii = self.radius + s.safety_margin + np.where(self.unicycle, s.tracking_error, 0.0)
        present = np.concatenate([known[:self.controlled], fresh[self.controlled:]])
        growth = self._growth(latency, body, positions, radii, present, discs)
        localization_ages, localization_stale = self._localization(now, known)
        return _Placement(
            known=known, fresh=fresh, ages=ages, positions=positions,
            headings=headings, velocities=velocities, radii=radii + growth,
            localization_ages=localization_ages, localization_stale=localization_stale,
            latency=latency)

    def _growth(self, latency, body, positions, radii, present, discs) -> np.ndarray:
        """(n,) how much each radius grows: the loop latency and the braking distance
        (fleet/latency.py), up to the gap to every neighbour and disc (:func:`clip_growth`)."""
        speeds = np.minimum(np.hypot(body[:, 0], body[:, 1]), self.max_speed)
        growth = (latency_growth(latency, self.max_speed, self.settings.latency_allowance)
                  + braking_growth(speeds, self.max_linear_accel))
        return clip_growth(positions, radii, growth, present,
                           None if discs is None else (discs.positions, discs.radii))

    def _activity(self, now: float, place: _Placement) -> _Activity:
        """Who ORCA commands: engaged controlled agents with fresh odometry and localization
        (and, with wait_for_all_agents, only once every controlled agent was placed)."""
        k = self.controlled
        engaged = self.engaged(now)
        reasons = self._reasons(place, engaged)
        active = place.fresh[:k] & ~place.localization_stale[:k] & engaged
        missing = [self.names[i] for i in np.flatnonzero(~(self._placed_once | place.known[:k]))]
        if self.settings.wait_for_all_agents and missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            for i in np.flatnonzero(active):
                reasons[i] = f"waiting for every agent to be placed (missing: {shown})"
            active[:] = False
        return _Activity(engaged, active, reasons, engaged | self._was_engaged)

    def _preferred(self, place: _Placement, active: np.ndarray) -> _Preferred:
        """The active agents' preferred velocities (zero for the others): towards the goal at
        pref_speed (at most max_speed) until within goal_tolerance, or the navigation
        command turned into the global frame."""
        s, k = self.settings, self.controlled
        if s.preferred_velocity_source == CMD_VEL:
            navigation = np.array([a.command.value for a in self._agents[:k]],
                                  dtype=np.float64).reshape(k, 3)
            velocities = np.column_stack(se2.rotate(navigation[:, 0], navigation[:, 1],
                                                    place.headings[:k]))
            velocities[~active] = 0.0
            return _Preferred(velocities, np.full(k, np.nan), navigation)
        to_goal = self.goals - place.positions[:k]
        distance = np.hypot(to_goal[:, 0], to_goal[:, 1])
        moving = active & np.isfinite(distance) & (distance > s.goal_tolerance)
        speed = np.minimum(s.pref_speed, self.max_speed[:k])
        scale = np.where(moving, speed / np.where(moving, distance, 1.0), 0.0)
        velocities = np.where(moving[:, None], to_goal * scale[:, None], 0.0)
        distance[~place.known[:k]] = np.nan
        return _Preferred(velocities, distance, None)

    def _route(self, now: float, place: _Placement, active: np.ndarray,
               preferred: _Preferred) -> _Preferred:
        """With a route map (:meth:`set_world`), goal mode heads for each robot's next
        waypoint around the map instead of straight at the goal (same speed); with passages,
        one direction at a time through each passage too narrow for two (each robot's way by
        its route in goal mode, by its preferred velocity in cmd_vel mode: fleet/travel.py);
        robots stalled nose to nose yield by priority (fleet/progress.py).
        fleet/routes.py and fleet/passages.py (issue #22)."""
        velocities = preferred.velocities
        moving = active & (np.abs(velocities).max(axis=1) > 0.0)
        if not moving.any():
            return self._at_rest(now, preferred)
        velocities = velocities.copy()
        idx = np.flatnonzero(moving)
        # cmd_vel mode: the navigation stack plans, the goals are its own (travel.py)
        goals = self.goals if self.settings.preferred_velocity_source == GOAL else \
            np.full_like(self.goals, np.nan)
        here = place.positions[idx]
        if self.routes is not None and self.settings.preferred_velocity_source == GOAL:
            ahead = self.routes.waypoints(here, goals[idx])
            heading = ahead.points - here
            length = np.hypot(heading[:, 0], heading[:, 1])
            ok = ahead.routed & (length > 1e-9)
            speed = np.hypot(velocities[idx, 0], velocities[idx, 1])
            velocities[idx[ok]] = heading[ok] * (speed[ok] / length[ok])[:, None]
        plain = self._one_way(now, idx, here, goals, velocities)
        if self.progress is not None:
            velocities = self._unstall(now, place, active, goals, preferred, velocities,
                                       plain)
        navigation = preferred.navigation  # cmd_vel: told otherwise, not the command itself
        if navigation is not None:
            navigation = navigation.copy()
            navigation[(velocities != preferred.velocities).any(axis=1)] = np.nan
        return preferred._replace(velocities=velocities, navigation=navigation)

    def _one_way(self, now: float, idx: np.ndarray, here: np.ndarray, goals,
                 velocities: np.ndarray) -> np.ndarray:
        """One direction at a time through each passage (fleet/passages.py): the rows
        ``idx`` (the moving robots, at ``here``) of ``velocities`` (k, 2) as the passage
        rule tells them, in place; those it tells to hurry (in a long passage's core on
        their side's turn, goal mode only) at their own max_speed. Returns (k,) the robots
        round a passage: its users (by route, or without a goal, cmd_vel mode, by preferred
        velocity: travel.py) and those within its zone or its holding places' reach, who
        yield plainly (fleet/progress.py)."""
        plain = np.zeros(self.controlled, dtype=bool)
        if self.passages is None:
            return plain
        told = self.passages.coordinate(here, goals[idx], velocities[idx],
                                        np.ones(idx.size, dtype=bool), ids=idx,
                                        keep_clear=goals[np.isfinite(goals).all(axis=1)],
                                        now=now, max_wait=self.settings.passage_max_wait,
                                        speed=self.settings.pref_speed)
        velocities[idx] = told.velocities
        fast = idx[told.hurry]
        speed = np.hypot(velocities[fast, 0], velocities[fast, 1])
        go = speed > 0.0
        velocities[fast[go]] *= (self.max_speed[fast[go]] / speed[go])[:, None]
        plain[idx] = (told.passage >= 0) | self.passages.around(here)
        return plain

    def _at_rest(self, now: float, preferred: _Preferred) -> _Preferred:
        """No robot wants to move: every stall clock stops (:meth:`.ProgressMonitor.idle`),
        or the next goal would find an old one run out."""
        if self.progress is not None:
            self.progress.idle(now)
        return preferred

    def _unstall(self, now: float, place: _Placement, active: np.ndarray, goals,
                 preferred: _Preferred, velocities: np.ndarray,
                 plain: np.ndarray) -> np.ndarray:
        """The preferred ``velocities`` with the stalled robots yielding and the standing
        ones making room (fleet/progress.py): the ``active`` robots with a goal that want no
        velocity, at their goal or told to stand by the passage rule (robots filing in
        through a door stood beside the first one and hemmed it in for good: doorway of
        16, seed 9), and in cmd_vel mode (no goals) the robots whose navigation command the
        passage rule replaced by standing; progress by route to the goal where there is one,
        else along the preferred velocity. A robot whose step aside would end in a passage's
        mouth does not make room (:meth:`.PassageMap.in_mouth`: doorway of 16, seed 71);
        the robots round a passage (``plain``: its users and those within its zone or its
        holding places' reach) yield straight away from the nearest robot of higher
        priority, the others by the two-lane rule; none backs off or steps aside into a wall
        it touches (:meth:`.RouteMap.wall_normal`)."""
        wants = np.abs(velocities).max(axis=1) > 0.0
        distance = np.where(np.isfinite(preferred.distance_to_goal),
                            preferred.distance_to_goal, np.inf)
        if self.routes is not None:
            for i in np.flatnonzero(wants & np.isfinite(goals).all(axis=1)):
                distance[i] = self.routes.route_length(place.positions[i], goals[i])
        held = np.abs(preferred.velocities).max(axis=1) > 0.0  # wanted to move, told to stand
        parked = active & ~wants & (np.isfinite(goals).all(axis=1) | held)
        mouth = self.passages.in_mouth if self.passages is not None else None
        wall = self.routes.wall_normal if self.routes is not None else None
        velocities, _ = self.progress.resolve(now, place.positions[:self.controlled],
                                              velocities, distance, wants, parked, mouth,
                                              plain, wall)
        return velocities

    def set_world(self, routes=None, passages=None) -> None:
        """The route map and passages (fleet/routes.py, fleet/passages.py) built from the
        current map, or None: call again whenever the world changes.

        The progress monitor stays: orca_node calls this with every new map, and a costmap
        that changes every second would otherwise restart every stall clock and never let a
        robot count as stalled. Only the distances it compares are re-based
        (:meth:`.ProgressMonitor.rebase`), as a route around the new map measures otherwise."""
        if routes is not self.routes and self.progress is not None:
            self.progress.rebase()
        self.routes, self.passages = routes, passages

    def _problem(self, place: _Placement, activity: _Activity,
                 preferred: _Preferred) -> _Problem:
        """The ORCA problem: controlled agents placed once (the stopped ones as standing discs,
        those not engaged at their measured velocity), observed agents while fresh; only the
        active agents react, and the others leave them all the avoiding (responsibility 1)."""
        k, active = self.controlled, activity.active
        rows = np.flatnonzero(np.concatenate([place.known[:k], place.fresh[k:]]))
        row_of = np.full(len(self._agents), -1)
        row_of[rows] = np.arange(rows.size)
        reactive = np.zeros(len(self._agents), dtype=bool)
        reactive[:k] = active
        velocities = place.velocities.copy()
        # Told to stop (or of unknown velocity); an agent not engaged keeps its measured one.
        velocities[:k][place.known[:k] & ~active & (activity.engaged | ~place.fresh[:k])] = 0.0
        reuse = self.unicycle[:k] & active & self._was_active
        velocities[:k][reuse] = self._last_holonomic[reuse]
        preferred_all = velocities.copy()
        preferred_all[:k][active] = preferred.velocities[active]
        responsibility = self.responsibility.copy()
        responsibility[:k][~active] = 1.0
        constrained = [self.trackable[i] if i < k and reactive[i] else None for i in rows]
        # A holonomic base with an acceleration limit: only the velocities it reaches within
        # the time the command stands, from the one it may have by then (fleet/latency.py).
        holonomic = np.ones(len(self._agents), dtype=bool)
        holonomic[:k] = ~self.unicycle[:k]
        limited = (reactive & holonomic & (self.max_linear_accel > 0.0))[rows]
        reach = self.max_linear_accel * (place.latency
                                         + max(self.settings.time_step, REACH_TIME))
        reachable, reach_counts = (reachable_lines(velocities[rows], reach[rows], limited)
                                   if limited.any() else (None, 0))
        return _Problem(
            rows=rows, row_of=row_of, reactive=reactive, velocities=velocities,
            preferred=preferred_all, responsibility=responsibility, constrained=constrained,
            constraint_counts=np.array([0 if c is None else len(c) for c in constrained],
                                       np.int64) + reach_counts,
            reachable=reachable if limited.any() else None)

    def _solve(self, place: _Placement, problem: _Problem, obstacles,
               want_lines: bool, discs=None) -> orca.VelocityResult | None:
        """ORCA over the problem's rows (None when nobody is in it), then the ``discs`` as
        rows of their own (non-reactive, no lines: the result's rows past the problem's)."""
        s, rows = self.settings, problem.rows
        if not rows.size:
            return None
        lines = self._constraint_lines(place, problem)
        d = 0 if discs is None else len(discs.radii)

        def plus(values, extra):  # the problem's rows, then the discs'
            return np.concatenate((values, extra)) if d else values

        if d:
            speeds = np.hypot(discs.velocities[:, 0], discs.velocities[:, 1])
            if lines is not None:
                lines = lines._replace(offsets=plus(lines.offsets,
                                                    np.full(d, lines.offsets[-1])))
        result = self._orca.velocities(  # orca.compute_velocities with the settings
            plus(place.positions[rows], discs.positions if d else None),
            plus(problem.velocities[rows], discs.velocities if d else None),
            plus(problem.preferred[rows], discs.velocities if d else None),
            radius=plus(place.radii[rows], discs.radii if d else None),
            max_speed=plus(self.max_speed[rows], np.maximum(speeds, 1e-3) if d else None),
            max_neighbors=plus(np.where(problem.reactive[rows], s.max_neighbors, 0),
                               np.zeros(d, np.int64)),
            responsibility=plus(problem.responsibility[rows], np.ones(d)),
            reactive=plus(problem.reactive[rows], np.zeros(d, dtype=bool)),
            obstacles=obstacles, seed=self.steps, constraint_lines=lines,
            return_lines=want_lines)
        if result.speed_clamped.any():  # never seen: it would be a bug
            clamped = [self.names[rows[j]] for j in np.flatnonzero(result.speed_clamped)]
            self.warn("speed-clamped", f"ORCA's last check clamped the velocity of "
                      f"{', '.join(clamped)}")
        return result

    def _beyond_reach(self, place: _Placement, problem: _Problem, result, obstacles,
                      want_lines: bool, discs):
        """Rows whose program had no answer within their reachable velocities (an emergency
        the base cannot meet in time, e.g. someone who avoids nobody walking into a robot)
        are solved again without them: the base then at least accelerates as hard as it can
        the right way, where the limited answer had left it standing (fleet/latency.py)."""
        stuck = [j for j, lines in enumerate(problem.reachable)
                 if lines is not None and result.infeasible[j]]
        if not stuck:
            return problem, result
        reachable, counts = list(problem.reachable), problem.constraint_counts.copy()
        for j in stuck:
            counts[j] -= len(reachable[j][0])
            reachable[j] = None
        problem = problem._replace(
            reachable=reachable if any(r is not None for r in reachable) else None,
            constraint_counts=counts)
        return problem, self._solve(place, problem, obstacles, want_lines, discs)

    @staticmethod
    def _constraint_lines(place: _Placement, problem: _Problem):
        """The problem rows' hard limit lines: differential drive, then reachable velocities
        (None when no row has any)."""
        if not problem.constraint_counts.any():
            return None
        lines = orca.diff_drive_constraints(place.headings[problem.rows], problem.constrained)
        if problem.reachable is None:
            return lines
        return merge_lines(per_agent_lines(lines), problem.reachable)

    def _commands(self, place: _Placement, active: np.ndarray, preferred: _Preferred,
                  problem: _Problem, result) -> _Commands:
        """The active agents' ORCA velocities as body-frame commands (zero for the others),
        within every limit (:meth:`bounded`). Within the symmetry-breaking perturbation of
        the preferred velocity nothing held an agent back: it keeps the preferred velocity
        exactly (no creeping at rest), and in cmd_vel mode the navigation command itself."""
        k = self.controlled
        chosen, commands = np.zeros((k, 2)), np.zeros((k, 3))
        infeasible = np.zeros(k, dtype=bool)
        agent_neighbors, obstacle_lines = np.zeros(k, np.int64), np.zeros(k, np.int64)
        commanded = np.flatnonzero(active)
        if result is not None and commanded.size:
            row = problem.row_of[commanded]
            chosen[commanded] = result.velocities[row]
            infeasible[commanded] = result.infeasible[row]
            agent_neighbors[commanded] = result.num_neighbors[row]
            obstacle_lines[commanded] = result.num_obstacle_lines[row]
            unchanged = active & (np.abs(chosen - preferred.velocities).max(axis=1)
                                  <= self.settings.symmetry_breaking + 1e-9)
            chosen[unchanged] = preferred.velocities[unchanged]
            commands = self._body_commands(chosen, place.headings[:k], active)
            if preferred.navigation is not None:
                own = unchanged & np.isfinite(preferred.navigation).all(axis=1)
                commands[own] = preferred.navigation[own]
        commands[~active] = 0.0
        return _Commands(self.bounded(commands), chosen, infeasible, agent_neighbors,
                         obstacle_lines)

    def _body_commands(self, chosen: np.ndarray, headings: np.ndarray,
                       active: np.ndarray) -> np.ndarray:
        """(k, 3) the velocities ``chosen`` (global frame) in each robot's body frame; a
        differential-drive robot's as the forward speed and turn rate that track it."""
        commands = np.zeros((self.controlled, 3))
        commands[:, 0], commands[:, 1] = se2.to_body(chosen[:, 0], chosen[:, 1], headings)
        for limits, members in self.limit_groups:
            driven = members[active[members]]
            if driven.size:
                v, w = orca.unicycle_commands(chosen[driven], headings[driven], limits)
                commands[driven, 0], commands[driven, 1], commands[driven, 2] = v, 0.0, w
        return commands

    def _guard_walls(self, place: _Placement, active: np.ndarray, told: _Commands,
                     obstacles) -> _Commands:
        """The differential drives' forward speeds held so that their real motion, along
        their heading, keeps radius + safety_margin off every obstacle edge
        (:func:`~planning_collision.orca.heading_guard.guarded_forward_speeds`; issue #22)."""
        driven = np.flatnonzero(active & self.unicycle[:self.controlled])
        if obstacles is None or not driven.size:
            return told
        commands = told.commands.copy()
        commands[driven, 0] = guarded_forward_speeds(
            place.positions[driven], place.headings[driven], commands[driven, 0], obstacles,
            self.radius[driven] + self.settings.safety_margin, self.settings.time_horizon_obst)
        return told._replace(commands=commands)

    def _events(self, place: _Placement, reasons: list[str]) -> list[str]:
        """What changed since the previous step, for the log (and the waiting warnings)."""
        return self._report(place.fresh, reasons) + self._report_localization(
            place.localization_ages, place.localization_stale)

    def _remember(self, now: float, place: _Placement, activity: _Activity,
                  told: _Commands) -> None:
        """What the next step needs from this one: the only place a step writes to ``self``."""
        self._periods.step(now)
        self._placed_once |= place.known[:self.controlled]
        self._was_fresh = place.fresh.copy()
        self._was_stale_localization = place.localization_stale.copy()
        self._was_engaged = activity.engaged.copy()
        self._was_active = activity.active.copy()
        self._last_holonomic = told.chosen.copy()
        self.steps += 1

    # ------------------------------------------------------------------ who is commanded
    def engaged(self, now: float) -> np.ndarray:
        """(k,) the controlled agents commanded at ``now``: enabled and, in cmd_vel mode,
        with a navigation command at most ``stop_pub_timeout`` old."""
        engaged = self.enabled.copy()
        if self.settings.preferred_velocity_source == CMD_VEL:
            limit = self.settings.stop_pub_timeout
            engaged &= np.array([now - a.command.time <= limit
                                 for a in self._agents[:self.controlled]], dtype=bool)
        return engaged

    def hold(self, now: float) -> np.ndarray:
        """The agents to send a zero command at ``now`` in a step that holds every robot
        (kernels warming up, a failed step): the publish mask of :meth:`step` (engaged, or
        just stopped being: their one zero)."""
        engaged = self.engaged(now)
        publish = engaged | self._was_engaged
        self._was_engaged = engaged
        return publish

    def release(self) -> np.ndarray:
        """The agents commanded at the last step, each to get one final zero command (the
        node stops commanding); afterwards none counts as commanded."""
        released, self._was_engaged = self._was_engaged, np.zeros(self.controlled, bool)
        return released

    def _reasons(self, place: _Placement, engaged: np.ndarray) -> list[str]:
        """Why each controlled agent is not commanded by ORCA ("" when nothing stops it;
        waiting for the fleet is added by :meth:`_activity`)."""
        reasons = [""] * self.controlled
        cmd_vel = self.settings.preferred_velocity_source == CMD_VEL
        for i in range(self.controlled):
            if not place.known[i]:
                reasons[i] = ("no odometry yet" if self._agents[i].odom is None
                              else "no localization yet")
            elif not place.fresh[i]:
                reasons[i] = f"odometry stale ({place.ages[i]:.2f} s old)"
            elif place.localization_stale[i]:
                reasons[i] = f"localization stale ({place.localization_ages[i]:.2f} s old)"
            elif not self.enabled[i]:
                reasons[i] = "disabled (handed over: enabled is false)"
            elif cmd_vel and not engaged[i]:
                reasons[i] = "no navigation command"
        return reasons

    def _localization(self, now: float, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n,) each agent's localization age (0 for a fixed origin or a static transform,
        inf before any) and whether a placed agent's correction is stale: older than
        localization_timeout (0: never) and, for pose_topic, the robot drove more than
        localization_travel since (AMCL publishes only after the robot moved)."""
        s = self.settings
        ages = np.zeros(len(self._agents))  # a fixed origin's age is 0
        for i in self._corrected:
            ages[i] = max(self._agents[i].localization.age(now), 0.0)
        stale = np.zeros(len(self._agents), dtype=bool)
        if s.localization_timeout > 0.0:
            for i in np.flatnonzero(known & (ages > s.localization_timeout)):
                source = self._agents[i].localization
                stale[i] = (source.source != POSE_TOPIC
                            or source.travelled() > s.localization_travel)
        return ages, stale

    def _report_localization(self, ages: np.ndarray, stale: np.ndarray) -> list[str]:
        events = []
        for i in np.flatnonzero(stale & ~self._was_stale_localization):
            what = "stopped" if i < self.controlled else "still avoided where its odometry is"
            events.append(f"{self.names[i]}: localization {ages[i]:.2f} s old (more than "
                          f"localization_timeout {self.settings.localization_timeout:g} s), "
                          f"{what}")
        for i in np.flatnonzero(~stale & self._was_stale_localization):
            events.append(f"{self.names[i]}: localization received")
        return events

    def _report(self, fresh: np.ndarray, reasons: list[str]) -> list[str]:
        """Events for the log (odometry received, gone stale) and, through ``warn`` (which
        the node throttles), the agents still waiting for odometry or localization."""
        events = []
        for i in np.flatnonzero(self._was_fresh & ~fresh):
            what = "commanding zero velocity" if i < self.controlled else "forgotten"
            events.append(f"{self.names[i]}: odometry older than "
                          f"{self.settings.odom_timeout:g} s, {what}")
        for i in np.flatnonzero(~self._was_fresh & fresh):
            events.append(f"{self.names[i]}: odometry received")
        for reason in ("no odometry yet", "no localization yet"):
            waiting = [self.names[i] for i, r in enumerate(reasons) if r == reason]
            if waiting:
                shown = ", ".join(waiting[:10]) + (", ..." if len(waiting) > 10 else "")
                self.warn(reason, f"{len(waiting)} agents with {reason}: {shown}")
        return events

    def bounded(self, commands: np.ndarray) -> np.ndarray:
        """The commands (k, 3) within every agent's limits: finite (else zero, with a
        warning: it would be a bug), linear speed at most its max_speed, turn rate at most
        max_angular_speed. The last line of defence before a command leaves."""
        k = self.controlled
        commands = np.array(commands, dtype=np.float64, copy=True)
        bad = ~np.isfinite(commands).all(axis=1)
        if bad.any():
            self.warn("non-finite", f"non-finite command for "
                      f"{', '.join(self.names[i] for i in np.flatnonzero(bad))}; sending "
                      f"zero velocity")
            commands[bad] = 0.0
        speed = np.hypot(commands[:, 0], commands[:, 1])
        limit = self.max_speed[:k]
        fast = speed > limit
        commands[fast, :2] *= (limit[fast] / speed[fast])[:, None]
        turn = self.settings.max_angular_speed
        np.clip(commands[:, 2], -turn, turn, out=commands[:, 2])
        return commands


def half_planes(result: orca.VelocityResult, rows: np.ndarray, row_of: np.ndarray,
                active: np.ndarray, constraint_counts: np.ndarray) -> StepLines:
    """The active controlled agents' half-planes of a step whose ORCA ``result`` has lines,
    over the controlled agents (``len(active)``); ``rows``, ``row_of`` and
    ``constraint_counts`` describe the problem (:class:`FleetController`'s index spaces).

    A row's lines are ordered obstacles, differential-drive limits, separations (keep_apart),
    agents: ``per_agent`` has them all, the drawing leaves out the differential-drive limits
    (they bound the robot, not its surroundings). An agent not active has none."""
    k = active.size
    commanded = np.flatnonzero(active)  # active agents are in the problem
    hard = result.num_obstacle_lines  # the obstacle lines come first
    lines = result.lines
    # The problem's rows come first; the rows past them (tracked discs) may have lines of
    # their own, which are nobody's to draw.
    per_row = np.diff(lines.offsets)[:rows.size]
    span = int(lines.offsets[rows.size])
    owner = np.repeat(np.arange(rows.size), per_row)
    position = np.arange(owner.size) - lines.offsets[owner]  # index within its row
    shown_rows = np.zeros(rows.size, dtype=bool)
    shown_rows[row_of[commanded]] = True
    drawn = shown_rows[owner] & ~((position >= hard[owner]) &
                                  (position < hard[owner] + constraint_counts[owner]))
    counts = np.zeros(k, np.int64)
    counts[commanded] = np.bincount(owner[drawn], minlength=rows.size)[row_of[commanded]]
    offsets = np.zeros(k + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    per_agent = [None] * k
    for i in commanded.tolist():
        lo, hi = lines.offsets[row_of[i]], lines.offsets[row_of[i] + 1]
        per_agent[i] = (lines.points[lo:hi], lines.directions[lo:hi])
    return StepLines(per_agent, offsets, lines.points[:span][drawn],
                     lines.directions[:span][drawn])
