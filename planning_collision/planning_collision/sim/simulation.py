"""The fleet simulator's core: kinematics, contacts, arrivals and trajectories (no ROS).

:class:`FleetSimulation` advances every robot of a
:class:`~planning_collision.sim.scenario.Scenario` by a fixed step. ORCA robots follow their
latest velocity command (body frame, clamped to the robot's ``max_speed``, optionally rate-
limited, dropped to zero once older than the command timeout); non-ORCA agents (people) walk
straight to their goal at ``max_speed``. Both drives integrate the body twist exactly over the
step (the SE(2) exponential): a unicycle follows the exact arc, a holonomic robot that does not
turn moves by its velocity rotated into the global frame.

:class:`ContactMonitor` finds the contacts of one configuration: robot against robot (centre
distance below the sum of the radii by more than ``CONTACT_SLACK``), robot against an obstacle
(exact disc-polygon penetration deeper than ``CONTACT_SLACK``, from the geometry core) and
robot against the map (a blocked cell overlapped with positive area, from the grid core).
The simulation counts each contact once, when it begins, and tracks the smallest robot-robot
separation (centre distance minus both radii, negative when overlapping).
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from planning_collision.common import se2
from planning_collision.common.checks import finite_scalar
from planning_collision.geometry import ConvexShape, ObstacleSet, decompose
from planning_collision.geometry.batch import signed_distance_batch
from planning_collision.grid import GridMap, footprint_collides
from planning_collision.sim.scenario import (
    RESERVED_ID,
    BoxObstacle,
    CircleObstacle,
    Noise,
    Obstacle,
    PolygonObstacle,
    Scenario,
)

CONTACT_SLACK = 1e-9
MAP_ID = RESERVED_ID  # the "other" of a contact with the map's blocked cells


def obstacle_shapes(obstacles: tuple[Obstacle, ...]) -> tuple[list[ConvexShape], list[str]]:
    """Convex parts of scenario obstacles and, for each part, its obstacle's id."""
    parts: list[ConvexShape] = []
    ids: list[str] = []
    for obstacle in obstacles:
        if isinstance(obstacle, PolygonObstacle):
            shapes = decompose(np.array(obstacle.vertices))
        elif isinstance(obstacle, CircleObstacle):
            shapes = [ConvexShape.circle(obstacle.center, obstacle.radius)]
        elif isinstance(obstacle, BoxObstacle):
            shapes = [ConvexShape.box(obstacle.center, obstacle.heading, obstacle.length,
                                      obstacle.width)]
        else:
            raise TypeError(f"not a scenario obstacle: {obstacle!r}")
        parts.extend(shapes)
        ids.extend([obstacle.id] * len(shapes))
    return parts, ids


def integrate_twist(poses: np.ndarray, twists: np.ndarray, dt: float) -> np.ndarray:
    """New poses (N, 3) after moving each pose (x, y, yaw) with its constant body twist
    (vx, vy, wz) for ``dt`` seconds: the exact SE(2) exponential, no approximation."""
    vx, vy, wz = twists[:, 0], twists[:, 1], twists[:, 2]
    turn = wz * dt
    small = np.abs(turn) < 1e-6
    safe = np.where(small, 1.0, wz)
    # Integrals over the step of cos(wz t) and sin(wz t) (series near wz = 0).
    along = np.where(small, dt * (1.0 - turn * turn / 6.0), np.sin(turn) / safe)
    across = np.where(small, 0.5 * dt * turn * (1.0 - turn * turn / 12.0),
                      2.0 * np.sin(0.5 * turn) ** 2 / safe)
    dx = vx * along - vy * across
    dy = vx * across + vy * along
    x, y, yaw = se2.compose(tuple(poses.T), (dx, dy, turn))
    return np.column_stack([x, y, yaw])


def relative_poses(origins: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """Each pose (N, 3) expressed in the frame of the matching origin pose (N, 3)."""
    return np.column_stack(se2.between(tuple(origins.T), tuple(poses.T)))


def frames_of(poses: np.ndarray, odometry: np.ndarray) -> np.ndarray:
    """The frames (N, 3) in which the ``odometry`` poses (N, 3) are the global ``poses``:
    ``map -> odom = pose * odometry^-1``."""
    x, y, yaw = se2.compose(tuple(poses.T), se2.inverse(tuple(odometry.T)))
    return np.column_stack([x, y, yaw])


def add_noise(poses: np.ndarray, noise: Noise, rng: np.random.Generator) -> np.ndarray:
    """Poses (N, 3) with independent Gaussian noise: std ``noise.position`` on x and y,
    ``noise.yaw`` on yaw (wrapped). A new array; zero noise draws nothing."""
    out = poses.copy()
    if noise.position > 0.0:
        out[:, :2] += rng.normal(0.0, noise.position, (len(out), 2))
    if noise.yaw > 0.0:
        out[:, 2] = se2.wrap_angle(out[:, 2] + rng.normal(0.0, noise.yaw, len(out)))
    return out


def clamp_twist(twist, holonomic: bool, max_speed: float) -> tuple[float, float, float]:
    """A body twist within the robot's limits: planar speed at most ``max_speed`` (direction
    kept); a unicycle's lateral velocity is dropped. Raises ValueError for NaN or inf."""
    vx, vy, wz = (float(v) for v in twist)
    if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(wz)):
        raise ValueError("command contains NaN or inf")
    if not holonomic:
        vy = 0.0
    biggest = max(abs(vx), abs(vy))
    if biggest > 0.0:
        speed = biggest * math.hypot(vx / biggest, vy / biggest)  # no overflow for huge values
        if speed > max_speed:
            scale = max_speed / speed
            vx, vy = vx * scale, vy * scale
    return vx, vy, wz


def limit_rate(current: np.ndarray, target: np.ndarray, max_linear: float, max_angular: float,
               dt: float) -> np.ndarray:
    """Twists (N, 3) moved from ``current`` towards ``target`` by at most the accelerations
    (m/s^2 on the planar velocity vector, rad/s^2 on wz) over ``dt``; 0 = no limit."""
    out = target.copy()
    if max_linear > 0.0:
        change = target[:, :2] - current[:, :2]
        size = np.hypot(change[:, 0], change[:, 1])
        allowed = max_linear * dt
        scale = np.where(size > allowed, allowed / np.where(size > 0.0, size, 1.0), 1.0)
        out[:, :2] = current[:, :2] + change * scale[:, None]
    if max_angular > 0.0:
        allowed = max_angular * dt
        out[:, 2] = current[:, 2] + np.clip(target[:, 2] - current[:, 2], -allowed, allowed)
    return out


class ContactMonitor:
    """Which discs (robots) overlap each other, the obstacles or the map's blocked cells."""

    def __init__(self, names, radii, parts=(), part_ids=(), grid: GridMap | None = None):
        self.names = tuple(names)
        self.radii = np.asarray(radii, dtype=np.float64)
        self.part_ids = tuple(part_ids)
        parts = list(parts)
        self.obstacles = ObstacleSet.from_shapes(parts) if parts else None
        self._part_boxes = np.array([s.aabb() for s in parts]).reshape(-1, 4)
        self.grid = grid
        n = len(self.names)
        self._upper = np.triu_indices(n, k=1)
        self._sum_radii = (self.radii[:, None] + self.radii[None, :])[self._upper]
        self._footprints = {float(r): ConvexShape.circle((0.0, 0.0), float(r))
                            for r in np.unique(self.radii)}
        if grid is not None:
            # Summed-area table of the blocked cells: robots with no blocked cell near them
            # skip the exact footprint test.
            table = np.zeros((grid.height + 1, grid.width + 1), dtype=np.int64)
            table[1:, 1:] = np.cumsum(np.cumsum(grid.blocked_mask(), axis=0), axis=1)
            self._blocked_table = table

    def separations(self, xy: np.ndarray) -> np.ndarray:
        """Centre distance minus both radii for every pair i < j (in ``np.triu_indices``
        order)."""
        i, j = self._upper
        return np.hypot(xy[i, 0] - xy[j, 0], xy[i, 1] - xy[j, 1]) - self._sum_radii

    def pair(self, k: int) -> tuple[str, str]:
        """Names of the k-th pair of :meth:`separations`."""
        return self.names[self._upper[0][k]], self.names[self._upper[1][k]]

    def contacts(self, poses: np.ndarray) -> set[tuple[str, str]]:
        """Current contacts as (robot, other) pairs: other is a robot (then robot < other in
        scenario order), an obstacle id or ``"map"``."""
        xy = np.ascontiguousarray(poses[:, :2])
        found: set[tuple[str, str]] = set()
        if len(self.names) > 1:
            gaps = self.separations(xy)
            found |= {self.pair(k) for k in np.flatnonzero(gaps < -CONTACT_SLACK)}
        found |= self._obstacle_contacts(xy)
        found |= self._map_contacts(poses)
        return found

    def obstacle_clearance(self, poses: np.ndarray) -> np.ndarray:
        """Signed distance (N,) from each robot to its nearest obstacle (inf if none)."""
        if self.obstacles is None:
            return np.full(len(self.names), np.inf)
        xy = np.ascontiguousarray(poses[:, :2]).reshape(-1, 1, 2)
        ones = np.ones(len(self.names), dtype=np.int64)
        return self.obstacles.nearest(xy, ones, self.radii, signed=True).distance

    def _obstacle_contacts(self, xy: np.ndarray) -> set[tuple[str, str]]:
        if self.obstacles is None:
            return set()
        lo, hi = xy - self.radii[:, None], xy + self.radii[:, None]
        boxes = self._part_boxes
        overlap = ((lo[:, None, 0] <= boxes[None, :, 2]) & (hi[:, None, 0] >= boxes[None, :, 0])
                   & (lo[:, None, 1] <= boxes[None, :, 3]) & (hi[:, None, 1] >= boxes[None, :, 1]))
        q, o = np.nonzero(overlap)
        if q.size == 0:
            return set()
        obs = self.obstacles
        ones = np.ones(q.size, dtype=np.int64)
        signed = signed_distance_batch(xy[q].reshape(-1, 1, 2), ones, self.radii[q],
                                       obs.points[o], obs.counts[o], obs.radii[o])
        deep = signed < -CONTACT_SLACK
        return {(self.names[a], self.part_ids[b]) for a, b in zip(q[deep], o[deep], strict=True)}

    def _near_blocked(self, poses: np.ndarray) -> np.ndarray:
        """Whether a blocked cell (or the map's edge) lies within one cell of each robot's
        bounding square: the robots the exact footprint test must look at."""
        g = self.grid
        ox, oy, oyaw = g.origin
        c, s = math.cos(oyaw), math.sin(oyaw)
        dx, dy = poses[:, 0] - ox, poses[:, 1] - oy
        mx = (c * dx + s * dy) / g.resolution
        my = (-s * dx + c * dy) / g.resolution
        reach = self.radii / g.resolution + 1.0
        with np.errstate(invalid="ignore"):
            i0, i1 = np.floor(mx - reach), np.floor(mx + reach)
            j0, j1 = np.floor(my - reach), np.floor(my + reach)
        off_map = ~((i0 >= 0) & (j0 >= 0) & (i1 < g.width) & (j1 < g.height))
        near = off_map.copy()
        inside = np.flatnonzero(~off_map)
        if inside.size:
            a0, a1 = i0[inside].astype(np.int64), i1[inside].astype(np.int64) + 1
            b0, b1 = j0[inside].astype(np.int64), j1[inside].astype(np.int64) + 1
            t = self._blocked_table
            count = t[b1, a1] - t[b0, a1] - t[b1, a0] + t[b0, a0]
            near[inside] = count > 0
        return near

    def _map_contacts(self, poses: np.ndarray) -> set[tuple[str, str]]:
        if self.grid is None:
            return set()
        found = set()
        near = self._near_blocked(poses)
        for radius, footprint in self._footprints.items():
            rows = np.flatnonzero((self.radii == radius) & near)
            if rows.size == 0:
                continue
            try:
                hit = footprint_collides(self.grid, footprint, poses[rows])
            except ValueError:  # absurdly far from the map: certainly off it
                hit = np.ones(rows.size, dtype=bool)
            found |= {(self.names[k], MAP_ID) for k in rows[hit]}
        return found


@dataclass(frozen=True)
class ContactEvent:
    time: float
    robot: str
    other: str

    @property
    def pair(self) -> str:
        return f"{self.robot}-{self.other}"


def layout_problems(scenario: Scenario, grid: GridMap | None = None) -> list[str]:
    """What is wrong with a scenario's starts and goals: robots overlapping each other at
    their starts (or at their goals), or an obstacle or the map's blocked cells. Empty when
    every start and every goal is free."""
    parts, ids = obstacle_shapes(scenario.obstacles)
    monitor = ContactMonitor(scenario.names, [r.radius for r in scenario.robots], parts, ids,
                             grid)
    problems = []
    starts = np.array([r.start for r in scenario.robots], dtype=np.float64)
    goals = np.array([(*r.goal, 0.0) for r in scenario.robots], dtype=np.float64)
    for label, poses in (("start", starts), ("goal", goals)):
        for robot, other in sorted(monitor.contacts(poses)):
            problems.append(f"{robot} overlaps {other} at its {label}")
    return problems


class FleetSimulation:
    """Every robot of a scenario, stepped by ``dt``; see the module docstring.

    Robots are indexed in scenario order. ``poses`` (N, 3) are true poses (x, y, yaw) in the
    scenario's global frame; ``velocities`` (N, 3) the body twists used during the last step.
    """

    def __init__(self, scenario: Scenario, dt: float, grid: GridMap | None = None, *,
                 cmd_vel_timeout: float = 0.5, goal_tolerance: float = 0.15,
                 max_linear_accel: float = 0.0, max_angular_accel: float = 0.0,
                 record: bool = True, drift_seed: int = 0):
        for name, value in (("dt", dt), ("cmd_vel_timeout", cmd_vel_timeout),
                            ("goal_tolerance", goal_tolerance)):
            finite_scalar(value, name, above=0.0)
        for name, value in (("max_linear_accel", max_linear_accel),  # 0: unlimited
                            ("max_angular_accel", max_angular_accel)):
            finite_scalar(value, name, at_least=0.0)
        self.scenario = scenario
        self.dt = float(dt)
        self.cmd_vel_timeout = float(cmd_vel_timeout)
        self.goal_tolerance = float(goal_tolerance)
        self.max_linear_accel = float(max_linear_accel)
        self.max_angular_accel = float(max_angular_accel)
        robots = scenario.robots
        self.names = scenario.names
        self.index = {name: i for i, name in enumerate(self.names)}
        n = len(robots)
        self.starts = np.array([r.start for r in robots], dtype=np.float64)
        self.goals = np.array([r.goal for r in robots], dtype=np.float64)
        self.radii = np.array([r.radius for r in robots])
        self.max_speeds = np.array([r.max_speed for r in robots])
        self.holonomic = np.array([r.drive == "holonomic" for r in robots])
        self.orca = np.array([r.orca for r in robots])
        self.poses = self.starts.copy()
        self.velocities = np.zeros((n, 3))
        self.commands = np.zeros((n, 3))
        self.command_times = np.full(n, -np.inf)
        self.steps = 0
        # Odometry drift: each ORCA robot's own scale and heading bias (signs drawn once).
        signs = np.random.default_rng(drift_seed).choice([-1.0, 1.0], size=(n, 2))
        noise = scenario.noise
        self.drift = signs * np.array([noise.drift_scale, noise.drift_heading])
        self.drift[~self.orca] = 0.0
        self.odometry = np.zeros((n, 3))  # each robot's pose in its odometry frame

        parts, ids = obstacle_shapes(scenario.obstacles)
        self.monitor = ContactMonitor(self.names, self.radii, parts, ids, grid)
        self.current_contacts: set[tuple[str, str]] = set()
        self.events: list[ContactEvent] = []
        self.min_separation = math.inf
        self.min_separation_pair = ("", "")
        self.min_obstacle_clearance = math.inf
        self.arrival_times = np.full(n, np.nan)
        self._record = record
        self._times: list[float] = []
        self._poses: list[np.ndarray] = []
        self._commands: list[tuple] = []  # (time, robot, age, vx, vy, wz) as applied
        self._observe()

    # ------------------------------------------------------------------ state
    @property
    def time(self) -> float:
        return self.steps * self.dt

    @property
    def distances_to_goal(self) -> np.ndarray:
        return np.hypot(self.goals[:, 0] - self.poses[:, 0], self.goals[:, 1] - self.poses[:, 1])

    @property
    def arrived(self) -> np.ndarray:
        """Whether each robot has been within ``goal_tolerance`` of its goal at some step."""
        return ~np.isnan(self.arrival_times)

    def command_fresh(self) -> np.ndarray:
        return self.time - self.command_times < self.cmd_vel_timeout - 1e-9

    def contact_counts(self) -> dict[str, int]:
        """Contacts begun so far per robot (as either side of a pair)."""
        counts = dict.fromkeys(self.names, 0)
        for event in self.events:
            for side in (event.robot, event.other):
                if side in counts:
                    counts[side] += 1
        return counts

    # ------------------------------------------------------------------ inputs
    def command(self, name: str, twist, age: float = 0.0) -> tuple[float, float, float]:
        """Set a robot's body twist (vx, vy, wz); returns it clamped. ``age``: seconds since
        the command was stamped when it arrives; the base stops ``cmd_vel_timeout`` after the
        stamp, not after the arrival, as ros2_control's diff_drive_controller brakes (a
        command that arrived 0.45 s late stands 0.05 s, not 0.5 s: issue #24's crossing,
        where a late command carried robot22 into a robot that had stopped). Raises KeyError
        for an unknown robot, ValueError for NaN/inf or a robot that is not ORCA-driven."""
        i = self.index[name]
        if not self.orca[i]:
            raise ValueError(f"{name} is not ORCA-driven: it ignores commands")
        clamped = clamp_twist(twist, bool(self.holonomic[i]), float(self.max_speeds[i]))
        self.commands[i] = clamped
        self.command_times[i] = self.time - max(float(age), 0.0)
        if self._record:
            self._commands.append((self.time, i, max(float(age), 0.0), *clamped))
        return clamped

    def odometry_poses(self) -> np.ndarray:
        """Each robot's pose (N, 3) in its odometry frame, whose origin is its start pose:
        exact without drift; with drift, the integral of the misread twists (people's
        odometry never drifts)."""
        exact = relative_poses(self.starts, self.poses)
        if not self.drift.any():
            return exact
        return np.where(self.drift.any(axis=1)[:, None], self.odometry, exact)

    def odometry_frames(self) -> np.ndarray:
        """Where each robot's odometry frame lies in the global frame now (N, 3): the true
        ``map -> odom`` that a perfect localizer would publish (the start pose without
        drift)."""
        return frames_of(self.poses, self.odometry_poses())

    # ------------------------------------------------------------------ stepping
    def step(self) -> None:
        target = np.where(self.command_fresh()[:, None], self.commands, 0.0)
        twists = limit_rate(self.velocities, target, self.max_linear_accel,
                            self.max_angular_accel, self.dt)
        walkers = np.flatnonzero(~self.orca)
        poses = integrate_twist(self.poses, twists, self.dt)
        for i in walkers:
            poses[i], twists[i] = self._walk(i)
        if self.drift.any():
            measured = twists.copy()
            measured[:, :2] *= 1.0 + self.drift[:, :1]
            measured[:, 2] += self.drift[:, 1] * np.hypot(twists[:, 0], twists[:, 1])
            self.odometry = integrate_twist(self.odometry, measured, self.dt)
        self.poses = poses
        self.velocities = twists
        self.steps += 1
        self._observe()

    def _walk(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """A person's next pose and twist: straight to the goal at max_speed, facing it."""
        x, y, yaw = self.poses[i]
        dx, dy = self.goals[i, 0] - x, self.goals[i, 1] - y
        distance = math.hypot(dx, dy)
        if distance == 0.0:
            return self.poses[i].copy(), np.zeros(3)
        advance = min(self.max_speeds[i] * self.dt, distance)
        heading = math.atan2(dy, dx)
        pose = np.array([x + dx / distance * advance, y + dy / distance * advance, heading])
        return pose, np.array([advance / self.dt, 0.0, 0.0])

    def _observe(self) -> None:
        """Contacts, separation, arrivals and the trajectory sample of the current state."""
        now = self.time
        contacts = self.monitor.contacts(self.poses)
        for robot, other in sorted(contacts - self.current_contacts):
            self.events.append(ContactEvent(now, robot, other))
        self.current_contacts = contacts
        if len(self.names) > 1:
            gaps = self.monitor.separations(self.poses[:, :2])
            k = int(np.argmin(gaps))
            if gaps[k] < self.min_separation:
                self.min_separation = float(gaps[k])
                self.min_separation_pair = self.monitor.pair(k)
        clearance = self.monitor.obstacle_clearance(self.poses)
        if clearance.size:
            self.min_obstacle_clearance = min(self.min_obstacle_clearance,
                                              float(clearance.min()))
        reached = (self.distances_to_goal <= self.goal_tolerance) & np.isnan(self.arrival_times)
        self.arrival_times[reached] = now
        if self._record:
            self._times.append(now)
            self._poses.append(self.poses.copy())

    # ------------------------------------------------------------------ output
    def trajectory(self) -> dict[str, np.ndarray]:
        """Recorded states: names (N,), times (T,), x, y, yaw (T, N), plus the robots'
        radii, goals, drives and ORCA flags, the contact events and the commands applied."""
        poses = np.stack(self._poses) if self._poses else np.zeros((0, len(self.names), 3))
        commands = np.array(self._commands, dtype=np.float64).reshape(-1, 6)
        return {
            "names": np.array(self.names),
            "times": np.array(self._times),
            "x": poses[:, :, 0],
            "y": poses[:, :, 1],
            "yaw": poses[:, :, 2],
            "radius": self.radii.copy(),
            "goal_x": self.goals[:, 0].copy(),
            "goal_y": self.goals[:, 1].copy(),
            "orca": self.orca.copy(),
            "drive": np.array([r.drive for r in self.scenario.robots]),
            "arrival_time": self.arrival_times.copy(),
            "contact_time": np.array([e.time for e in self.events], dtype=np.float64),
            "contact_robot": np.array([e.robot for e in self.events], dtype=str),
            "contact_other": np.array([e.other for e in self.events], dtype=str),
            # Every command as the base applied it: when (simulated), whose, how old its
            # stamp was on arrival, the twist (how late each robot's commands came).
            "command_time": commands[:, 0].copy(),
            "command_robot": commands[:, 1].astype(np.int64),
            "command_age": commands[:, 2].copy(),
            "command_twist": commands[:, 3:6].copy(),
        }

    def save_trajectory(self, path: str | Path) -> Path:
        """Write :meth:`trajectory` as an .npz (no pickles), atomically: a reader never sees a
        half-written file."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **self.trajectory())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


@dataclass(frozen=True)
class LocalizationSample:
    """What a localizer publishes about every robot at one instant: ``stamp`` (the simulated
    time measured), each robot's pose in the global frame (N, 3) and the ``map -> odom``
    frames (N, 3) that go with it."""

    stamp: float
    poses: np.ndarray
    frames: np.ndarray


class SimulatedLocalizer:
    """A localizer (AMCL) for the simulated fleet: every ``1 / rate_hz`` seconds it measures
    each robot's true pose with Gaussian noise (``position``, ``yaw`` std) and the matching
    ``map -> odom``; each measurement is delivered ``latency`` seconds after its stamp, as a
    real localizer's estimate arrives after the scan it was computed from."""

    def __init__(self, rate_hz: float, latency: float = 0.0, position: float = 0.0,
                 yaw: float = 0.0, seed: int = 0):
        finite_scalar(rate_hz, "rate_hz", above=0.0)
        for name, value in (("latency", latency), ("position", position), ("yaw", yaw)):
            finite_scalar(value, name, at_least=0.0)
        self.period = 1.0 / rate_hz
        self.latency = latency
        self.noise = Noise(position=position, yaw=yaw)
        self._rng = np.random.default_rng(seed)
        self._next = 0.0
        self._queue: list[LocalizationSample] = []

    def step(self, sim: FleetSimulation) -> list[LocalizationSample]:
        """Measure if a measurement is due at ``sim.time``; return the ones due for delivery."""
        now = sim.time
        if now + 1e-9 >= self._next:
            self._next = now + self.period
            poses = add_noise(sim.poses, self.noise, self._rng)
            frames = frames_of(poses, sim.odometry_poses())
            self._queue.append(LocalizationSample(now, poses, frames))
        due = [m for m in self._queue if m.stamp + self.latency <= now + 1e-9]
        self._queue = [m for m in self._queue if m.stamp + self.latency > now + 1e-9]
        return due
