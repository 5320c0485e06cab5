"""OrcaSimulator: RVO2's RVOSimulator on arrays, with per-agent extensions.

A step computes every agent's new velocity from the current state (positions, velocities,
preferred velocities) with :func:`~planning_collision.orca.velocities.solve_velocities`,
then sets ``velocity = new velocity`` and ``position += velocity * time_step`` for all
agents, as RVO2's ``doStep`` does.  Differential-drive agents instead follow the unicycle
command that tracks their new (holonomic) velocity, see
:mod:`planning_collision.orca.diff_drive`.
"""

from typing import NamedTuple

import numpy as np

from .agent_threads import resolve_threads
from .constants import DEFAULT_KEEP_APART_MARGIN
from .diff_drive import (
    DiffDriveLimits,
    check_limits,
    diff_drive_constraints,
    integrate_unicycle,
    trackable_polygon,
    unicycle_commands,
)
from .obstacles import ObstacleTree, build_obstacles, empty_obstacles
from .obstacles import query_visibility as _query_visibility
from .validation import (
    as_agent_points,
    as_orca_points,
    as_position,
    as_scalar,
)
from .velocities import (
    AgentParameters,
    VelocityResult,
    agent_parameters,
    collect_lines,
    no_constraint_lines,
    solve_velocities,
    step_options,
)


class AgentHalfPlanes(NamedTuple):
    """One agent's half-planes: ``points`` and unit ``directions`` (M, 2); permitted
    velocities lie left of each direction (RVO2's ORCA lines)."""

    points: np.ndarray
    directions: np.ndarray


_FLOAT_PARAMS = ("radius", "max_speed", "neighbor_dist", "time_horizon", "time_horizon_obst",
                 "responsibility")


class OrcaSimulator:
    """Multi-agent ORCA simulation with RVO2's semantics.

    ``time_step`` and the agent defaults (RVO2's ``setAgentDefaults``; the default values
    are those of RVO2's Circle example) come first.  The keyword options beyond RVO2
    (``symmetry_breaking``, ``side_preference``, ``keep_apart`` with ``keep_apart_margin``,
    ``overlap_time``; see :mod:`planning_collision.orca.velocities`) apply to all agents;
    all off by default, which reproduces RVO2.  In particular ``overlap_time=None`` is
    RVO2's one-step separation of overlapping agents (a velocity jump of up to
    ``overlap / time_step``); set it (seconds) to separate them gently, without velocity
    spikes.  ``threads`` as in
    :func:`~planning_collision.orca.velocities.compute_velocities`.
    """

    def __init__(self, time_step=0.25, neighbor_dist=15.0, max_neighbors=10, time_horizon=10.0,
                 time_horizon_obst=10.0, radius=1.5, max_speed=2.0, *, responsibility=0.5,
                 symmetry_breaking=0.0, side_preference=0.0, keep_apart=False,
                 keep_apart_margin=DEFAULT_KEEP_APART_MARGIN, overlap_time=None,
                 threads=None):
        self._options = step_options(time_step=time_step, overlap_time=overlap_time,
                                     symmetry_breaking=symmetry_breaking,
                                     side_preference=side_preference, keep_apart=keep_apart,
                                     keep_apart_margin=keep_apart_margin)
        resolve_threads(threads, 0)  # validate
        self.threads = threads
        self._defaults = dict(radius=radius, max_speed=max_speed, neighbor_dist=neighbor_dist,
                              max_neighbors=max_neighbors, time_horizon=time_horizon,
                              time_horizon_obst=time_horizon_obst,
                              responsibility=responsibility, reactive=True)
        agent_parameters(1, **self._defaults)  # validate the defaults
        self._positions = np.zeros((0, 2))
        self._velocities = np.zeros((0, 2))
        self._pref = np.zeros((0, 2))
        self._params = agent_parameters(0, **{k: np.zeros(0) for k in _FLOAT_PARAMS},
                                        max_neighbors=np.zeros(0, np.int64),
                                        reactive=np.zeros(0, np.bool_))
        self._headings = np.zeros(0)
        self._models: list[DiffDriveLimits] = []  # distinct differential-drive limits
        self._polygons: list[np.ndarray] = []  # their trackable polygons
        self._model = np.zeros(0, np.int64)  # per agent: index into _models, -1 holonomic
        self._commands = np.zeros((0, 2))
        self._obstacle_vertices: list[np.ndarray] = []
        self._obstacles: ObstacleTree = empty_obstacles()
        self.global_time = 0.0
        self.step_count = 0
        self._last = None  # inputs and result of the last step, for lines and neighbours
        self._last_lines = None

    # ----------------------------------------------------------------- agents
    @property
    def num_agents(self) -> int:
        return int(self._positions.shape[0])

    def add_agent(self, position, velocity=(0.0, 0.0), *, heading=0.0, diff_drive=None,
                  **overrides) -> int:
        """Add an agent; returns its index.

        ``overrides`` may set any of radius, max_speed, neighbor_dist, max_neighbors,
        time_horizon, time_horizon_obst, responsibility (share others take when avoiding
        this agent; 1.0 for agents that do not avoid) and reactive (False: the agent keeps
        its preferred velocity, up to its max speed).  ``diff_drive`` (a
        :class:`DiffDriveLimits`) makes it a unicycle with the given ``heading`` (rad).
        """
        unknown = set(overrides) - set(self._defaults)
        if unknown:
            raise ValueError(f"unknown agent parameter(s): {sorted(unknown)}")
        values = {**self._defaults, **overrides}
        one = agent_parameters(1, **values)
        pos = as_position(position, "position")
        vel = as_position(velocity, "velocity")
        head = as_scalar(heading, "heading", minimum=-np.inf)
        limits = None if diff_drive is None else check_limits(diff_drive)
        self._positions = np.vstack([self._positions, pos])
        self._velocities = np.vstack([self._velocities, vel])
        self._pref = np.vstack([self._pref, np.zeros(2)])
        self._params = AgentParameters(*(np.concatenate([old, new])
                                         for old, new in zip(self._params, one, strict=True)))
        self._headings = np.append(self._headings, head)
        model = -1
        if limits is not None:
            if limits not in self._models:
                self._models.append(limits)
                self._polygons.append(trackable_polygon(limits))
            model = self._models.index(limits)
        self._model = np.append(self._model, model)
        self._commands = np.vstack([self._commands, np.zeros(2)])
        self._last = None
        self._last_lines = None
        return self.num_agents - 1

    def set_agent(self, index: int, **values) -> None:
        """Change per-agent parameters of agent ``index`` (same names as in add_agent)."""
        i = self._index(index)
        unknown = set(values) - set(self._defaults)
        if unknown:
            raise ValueError(f"unknown agent parameter(s): {sorted(unknown)}")
        current = {name: getattr(self._params, name)[i] for name in self._defaults}
        current.update(values)
        one = agent_parameters(1, **current)
        changed = {}
        for name in self._defaults:
            arr = getattr(self._params, name).copy()  # the last step keeps its own arrays
            arr[i] = getattr(one, name)[0]
            changed[name] = arr
        self._params = self._params._replace(**changed)

    def agent_parameter(self, name: str) -> np.ndarray:
        """Copy of the (N,) array of one per-agent parameter."""
        if name not in self._defaults:
            raise ValueError(f"unknown agent parameter: {name!r}")
        return getattr(self._params, name).copy()

    @property
    def positions(self) -> np.ndarray:
        """(N, 2) positions (a copy; assign a whole array to change them)."""
        return self._positions.copy()

    @positions.setter
    def positions(self, value) -> None:
        self._positions = as_agent_points(value, self.num_agents, "positions")

    @property
    def velocities(self) -> np.ndarray:
        """(N, 2) current velocities (a copy; assign a whole array to change them)."""
        return self._velocities.copy()

    @velocities.setter
    def velocities(self, value) -> None:
        self._velocities = as_agent_points(value, self.num_agents, "velocities")

    @property
    def pref_velocities(self) -> np.ndarray:
        return self._pref.copy()

    @pref_velocities.setter
    def pref_velocities(self, value) -> None:
        self.set_pref_velocities(value)

    def set_pref_velocities(self, value) -> None:
        """Set all preferred velocities from an (N, 2) array."""
        self._pref = as_agent_points(value, self.num_agents, "pref_velocities")

    @property
    def headings(self) -> np.ndarray:
        """Headings (rad) of the agents (only differential-drive agents turn)."""
        return self._headings.copy()

    @headings.setter
    def headings(self, value) -> None:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("headings must be numeric") from None
        if arr.shape != (self.num_agents,) or not np.all(np.isfinite(arr)):
            raise ValueError(f"headings must be finite with shape ({self.num_agents},)")
        self._headings = arr.copy()

    @property
    def unicycle_commands(self) -> np.ndarray:
        """(N, 2) last commands (v, omega) of differential-drive agents (0 for others)."""
        return self._commands.copy()

    # -------------------------------------------------------------- obstacles
    def add_obstacle(self, vertices) -> int:
        """Add a polygon (RVO2's rules); returns the index of its first vertex.

        Counter-clockwise for an obstacle, clockwise for an enclosing boundary, at least two
        vertices.  Takes effect at :meth:`process_obstacles`.
        """
        verts = as_orca_points(vertices, "obstacle vertices")
        if verts.shape[0] < 2:
            raise ValueError(f"an obstacle needs at least 2 vertices, got {verts.shape[0]}")
        build_obstacles([verts])  # validate now (e.g. repeated vertices)
        first = sum(v.shape[0] for v in self._obstacle_vertices)
        self._obstacle_vertices.append(verts)
        return first

    def process_obstacles(self) -> None:
        """Build the obstacle structure from all polygons added so far."""
        self._obstacles = build_obstacles(self._obstacle_vertices)

    @property
    def obstacles(self) -> ObstacleTree:
        """The processed obstacles (as used by :func:`compute_velocities`)."""
        return self._obstacles

    def query_visibility(self, point1, point2, radius: float = 0.0) -> bool:
        """Whether a disc of ``radius`` moving from ``point1`` to ``point2`` hits no obstacle."""
        return _query_visibility(self._obstacles, point1, point2, radius)

    # ------------------------------------------------------------------ steps
    def _effective_inputs(self):
        params = self._params
        constraints = no_constraint_lines(self.num_agents)
        if self._models:
            errors = np.array([m.tracking_error for m in self._models] + [0.0])
            params = params._replace(radius=params.radius + errors[self._model])
            polygons = [None if m < 0 else self._polygons[m] for m in self._model]
            constraints = diff_drive_constraints(self._headings, polygons, self.num_agents)
        return params, constraints

    @property
    def time_step(self) -> float:
        return self._options.time_step

    @property
    def options(self):
        """The :class:`~planning_collision.orca.velocities.StepOptions` of every step."""
        return self._options

    def step(self) -> VelocityResult:
        """Advance one time step (RVO2's doStep); returns the velocity computation."""
        params, constraints = self._effective_inputs()
        options = self._options._replace(seed=self.step_count)
        pos, vel, pref = self._positions, self._velocities, self._pref
        result = solve_velocities(pos, vel, pref, params, self._obstacles, constraints,
                                  options, threads=self.threads)
        new_vel = result.velocities
        new_pos = pos + new_vel * self.time_step
        if self._models:
            commands = np.zeros_like(self._commands)
            headings = self._headings.copy()
            for m, limits in enumerate(self._models):
                idx = self._model == m
                v, w = unicycle_commands(new_vel[idx], self._headings[idx], limits)
                commands[idx, 0] = v
                commands[idx, 1] = w
                new_pos[idx], headings[idx] = integrate_unicycle(
                    pos[idx], self._headings[idx], v, w, self.time_step)
            self._commands = commands
            self._headings = headings
        self._last = (pos, vel, params, self._obstacles, constraints, options, result)
        self._last_lines = None
        self._velocities = new_vel
        self._positions = new_pos
        self.global_time += self.time_step
        self.step_count += 1
        return result

    def _lines(self):
        if self._last is None:
            return None
        if self._last_lines is None:
            pos, vel, params, obstacles, constraints, options, result = self._last
            self._last_lines = collect_lines(pos, vel, params, obstacles, constraints, options,
                                             result, threads=self.threads)
        return self._last_lines

    def _index(self, index) -> int:
        i = int(index)
        if not 0 <= i < self.num_agents:
            raise ValueError(f"agent index {index} out of range [0, {self.num_agents})")
        return i

    def orca_lines(self, index: int) -> AgentHalfPlanes:
        """Half-planes agent ``index`` used in the last step (points and directions, (M, 2)).

        Permitted velocities are left of each direction (RVO2's convention); hard lines
        (obstacles, kinematic limits) first, then one per agent neighbour.  Empty before the
        first step.
        """
        i = self._index(index)
        lines = self._lines()
        if lines is None:
            return AgentHalfPlanes(np.zeros((0, 2)), np.zeros((0, 2)))
        a, b = lines.lines.offsets[i], lines.lines.offsets[i + 1]
        return AgentHalfPlanes(lines.lines.points[a:b].copy(),
                               lines.lines.directions[a:b].copy())

    def neighbors(self, index: int) -> np.ndarray:
        """Agent neighbours (indices, nearest first) agent ``index`` used in the last step."""
        i = self._index(index)
        lines = self._lines()
        if lines is None:
            return np.zeros(0, np.int64)
        a, b = lines.neighbors.offsets[i], lines.neighbors.offsets[i + 1]
        return lines.neighbors.indices[a:b].copy()

    @property
    def last_result(self) -> VelocityResult | None:
        """The :class:`VelocityResult` of the last step (neighbour counts, LP3 flags)."""
        return None if self._last is None else self._last[-1]
