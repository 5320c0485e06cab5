"""One ORCA control step over arrays: :func:`compute_velocities`.

This is the pure function that :class:`~planning_collision.orca.simulator.OrcaSimulator`
and the ROS node both call.  From positions, current velocities and preferred velocities
(N, 2) and per-agent parameters it returns each agent's new velocity as RVO2 computes it:
the velocity closest to the preferred one inside all ORCA half-planes and the max-speed
disc, or, when these are infeasible, the velocity of least worst violation of the agent
half-planes (RVO2's linearProgram3; obstacle and other hard half-planes stay satisfied).
No velocity is ever faster than the agent's max speed (see :func:`compute_velocities`).
Agents are independent; large crowds are shared among threads
(:mod:`~planning_collision.orca.agent_threads`).

Beyond RVO2 (all off by default, so the defaults reproduce RVO2):

* ``responsibility`` per agent: the share of the avoidance that *other* agents take when
  they avoid this agent (0.5 reciprocal; 1.0 for a person or a robot that does not run
  ORCA, which is then avoided fully);
* ``reactive`` per agent: False keeps the preferred velocity, limited to the max speed (no
  avoidance);
* ``symmetry_breaking``: a deterministic perturbation of the preferred velocities, of at
  most this length, drawn from ``(agent, seed)`` (RVO2's examples use random noise);
* ``side_preference``: an agent held back by other agents (by their half-planes or by
  separation half-planes; obstacles and kinematic limits alone do not count) aims this
  fraction of its preferred speed to the right (left if negative) of its preferred
  velocity, so crossing flows turn into a roundabout instead of a jam (0.35 is a good
  value);
* ``keep_apart``: hard half-planes that keep every pair of agents that could touch within
  the step apart (they contain the zero velocity, so they never make the program
  infeasible), a guarantee ORCA alone loses when its program is infeasible;
  ``keep_apart_margin`` (default ``DEFAULT_KEEP_APART_MARGIN`` = 0.05, used only with
  ``keep_apart``): the agent half-planes are then computed for every radius enlarged by
  this fraction, while the separation half-planes keep the real radii (see below);
* ``overlap_time``: opt-in.  By default (None: the time step) overlapping agents get
  RVO2's half-plane, which asks them to part within one time step -- a jump to up to
  ``overlap / time_step`` (e.g. 2 m/s for a 0.5 m overlap at 0.25 s), clipped to the max
  speed.  With ``overlap_time`` set, they part within that time instead, at about
  ``overlap / overlap_time``, so they separate without velocity spikes;
* ``constraint_lines``: extra hard half-planes per agent (e.g. the trackable velocities of
  a differential-drive robot, see :mod:`planning_collision.orca.diff_drive`).

What each symmetry option contributes (measured in ``test/orca/test_scenarios.py``):

* the perturbation alone is deterministic (a function of agent and seed) and breaks exact
  ties such as a perfectly aligned head-on pair, but it does not unlock a symmetric
  crowd: 32 agents on a circle of radius 30 lock up in a ring around the centre with any
  perturbation up to 1e-2 (a ring of touching agents admits no velocity towards the
  centre, and perturbations inside that locked set change nothing);
* side preference is what unlocks that ring, together with a perturbation it can amplify
  (1e-2 in the tests; 1e-3 is too small, measured): without any perturbation the ring
  stays perfectly symmetric and locks as well;
* ``keep_apart`` is what keeps pairs at least ``2 * radius`` apart: without it a dense
  crowd overlaps, as in RVO2 (measured with pyrvo: its Circle with 250 agents comes to
  2.36 for a contact distance of 3, its Blocks to 3.82 to 3.92 for a contact distance of
  4; with side preference but no ``keep_apart`` the 32-agent circle comes to 2.99);
* ``keep_apart_margin`` keeps a ``keep_apart`` crowd moving.  Touching agents at rest are a
  fixed point of ORCA: each pair's half-plane passes through the current (zero) relative
  velocity and each separation half-plane through the zero velocity, so the program stays
  feasible and its optimum is zero for every agent whose preferred velocity points into
  its contacts.  RVO2 never settles there because its pressed agents overlap slightly and
  their overlap half-planes ask them to part, which keeps the crowd moving (its
  least-violation program pushes agents aside).  Hard separation stops every pair exactly
  at contact, so without a margin a pressed crowd freezes for good (Blocks with the
  RVO2-sized perturbation: 1 agent of 100 within 20 of its goal after 3,000 steps).  With
  the margin ORCA sees pressed pairs as overlapping while the real discs are still apart:
  inside the margin the crowd moves as RVO2's does, and the separation half-planes keep
  the real discs apart.  Blocks with the RVO2-sized perturbation and ``keep_apart``: 95 %
  of the agents within 20 of their goals after 3,000 to 5,500 steps in 22 of 24 runs
  (noise sequences), against 2,850 to 5,030 for RVO2 itself (16 sequences); in the other two,
  agents meeting head-on along a wall hold a few up (93-94 % at step 6,000); with side
  preference added the same two sequences reach 95 % after 3,378 and 3,195 steps.

The scenario tests therefore use all of them ("symmetry breaking on": perturbation 1e-2,
side preference 0.35, ``keep_apart`` with the default margin): only this combination
brings Circle (250 and 32 agents) and Blocks to their goals without any pair closer than
``2 * radius``; on Blocks it reaches 95 % within 20 of the goals after 2,250 to 3,750
steps (24 runs), faster than RVO2.
"""

import math
from typing import NamedTuple

import numba
import numpy as np

from .agent_threads import resolve_threads, run_in_chunks
from .constants import DEFAULT_KEEP_APART_MARGIN, SPEED_TOLERANCE
from .linear_program import solve_incremental, solve_least_violation
from .neighbors import build_grid, find_agent_neighbors, find_agents_within
from .obstacles import ObstacleSet, empty_obstacles, find_obstacle_neighbors
from .orca_lines import agent_line, obstacle_lines, separation_line
from .symmetry_breaking import perturbation
from .validation import (
    as_agent_counts,
    as_agent_flags,
    as_agent_points,
    as_agent_values,
    as_points,
    as_scalar,
)


class LineSet(NamedTuple):
    """Half-planes of all agents in CSR form: agent ``i`` owns rows ``offsets[i]:offsets[i+1]``.

    Each agent's hard lines come first (obstacles, extra constraints, separation), then one
    line per agent neighbour in neighbour order.  Permitted side: left of the direction.
    """

    offsets: np.ndarray
    points: np.ndarray
    directions: np.ndarray


class NeighborSet(NamedTuple):
    """Agent neighbours in CSR form, nearest first: ``indices[offsets[i]:offsets[i+1]]``."""

    offsets: np.ndarray
    indices: np.ndarray


class VelocityResult(NamedTuple):
    """Output of :func:`compute_velocities`.

    ``velocities`` (N, 2) new velocities, each finite with
    ``|v| <= max_speed * (1 + SPEED_TOLERANCE)`` (1e-12); ``speed_clamped`` (N,) True where
    the last check before returning found a velocity that was not finite or faster than
    that and replaced it (scaled to ``max_speed``, or zero if not finite) -- never expected,
    reported so that a caller can log it; ``num_neighbors`` (N,) agent neighbours used;
    ``infeasible`` (N,) True where the half-planes had no common velocity within max speed
    (RVO2's linearProgram3 was used); ``num_lines`` and ``num_hard_lines`` (N,) count each
    agent's half-planes and the hard ones among them, ``num_obstacle_lines`` (N,) the
    obstacle half-planes, which come first; ``lines`` and ``neighbors`` are filled when
    requested.
    """

    velocities: np.ndarray
    num_neighbors: np.ndarray
    infeasible: np.ndarray
    num_lines: np.ndarray
    num_hard_lines: np.ndarray
    num_obstacle_lines: np.ndarray
    speed_clamped: np.ndarray
    lines: LineSet | None = None
    neighbors: NeighborSet | None = None


class AgentParameters(NamedTuple):
    """Per-agent parameters as validated (N,) arrays (see :func:`agent_parameters`)."""

    radius: np.ndarray
    max_speed: np.ndarray
    neighbor_dist: np.ndarray
    max_neighbors: np.ndarray
    time_horizon: np.ndarray
    time_horizon_obst: np.ndarray
    responsibility: np.ndarray
    reactive: np.ndarray


class ConstraintLines(NamedTuple):
    """Extra hard half-planes per agent (CSR): agent ``i`` owns ``offsets[i]:offsets[i+1]``."""

    offsets: np.ndarray
    points: np.ndarray
    directions: np.ndarray


class StepOptions(NamedTuple):
    """Scalar settings of a step (see :func:`compute_velocities`); validated."""

    time_step: float
    overlap_time: float
    symmetry_breaking: float = 0.0
    seed: int = 0
    side_preference: float = 0.0
    keep_apart: bool = False
    keep_apart_margin: float = DEFAULT_KEEP_APART_MARGIN


def agent_parameters(n, *, radius, max_speed, neighbor_dist, max_neighbors, time_horizon,
                     time_horizon_obst, responsibility=0.5, reactive=True) -> AgentParameters:
    """Validate and broadcast per-agent parameters (scalars or (N,) arrays)."""
    return AgentParameters(
        radius=as_agent_values(radius, n, "radius"),
        max_speed=as_agent_values(max_speed, n, "max_speed"),
        neighbor_dist=as_agent_values(neighbor_dist, n, "neighbor_dist"),
        max_neighbors=as_agent_counts(max_neighbors, n, "max_neighbors"),
        time_horizon=as_agent_values(time_horizon, n, "time_horizon", time=True),
        time_horizon_obst=as_agent_values(time_horizon_obst, n, "time_horizon_obst", time=True),
        responsibility=as_agent_values(responsibility, n, "responsibility", maximum=1.0),
        reactive=as_agent_flags(reactive, n, "reactive"),
    )


def step_options(*, time_step, overlap_time=None, symmetry_breaking=0.0, seed=0,
                 side_preference=0.0, keep_apart=False,
                 keep_apart_margin=DEFAULT_KEEP_APART_MARGIN) -> StepOptions:
    """Validate the scalar settings of a step (``overlap_time`` None: the time step)."""
    time_step = as_scalar(time_step, "time_step", time=True)
    overlap = time_step if overlap_time is None else as_scalar(
        overlap_time, "overlap_time", time=True)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ValueError(f"seed must be an integer, got {seed!r}") from None
    return StepOptions(time_step=time_step, overlap_time=overlap,
                       symmetry_breaking=as_scalar(symmetry_breaking, "symmetry_breaking"),
                       seed=seed,
                       side_preference=as_scalar(side_preference, "side_preference",
                                                 minimum=-np.inf),
                       keep_apart=bool(keep_apart),
                       keep_apart_margin=as_scalar(keep_apart_margin, "keep_apart_margin"))


def no_constraint_lines(n: int) -> ConstraintLines:
    """No extra half-planes for any of ``n`` agents."""
    return ConstraintLines(np.zeros(n + 1, np.int64), np.zeros((0, 2)), np.zeros((0, 2)))


def check_constraint_lines(lines: ConstraintLines, n: int) -> ConstraintLines:
    """Validate extra half-planes for ``n`` agents."""
    try:
        offsets = np.ascontiguousarray(np.asarray(lines.offsets, dtype=np.int64))
    except (AttributeError, TypeError, ValueError):
        raise ValueError("constraint_lines must be a ConstraintLines") from None
    if offsets.shape != (n + 1,) or offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise ValueError(f"constraint_lines.offsets must be non-decreasing, shape ({n + 1},), "
                         "starting at 0")
    m = int(offsets[-1])
    points = as_agent_points(lines.points, m, "constraint_lines.points")
    directions = as_agent_points(lines.directions, m, "constraint_lines.directions")
    if m and np.any(np.abs(np.hypot(directions[:, 0], directions[:, 1]) - 1.0) > 1e-9):
        raise ValueError("constraint_lines.directions must be unit vectors")
    return ConstraintLines(offsets, points, directions)


def compute_velocities(positions, velocities, pref_velocities, *, time_step, radius,
                       max_speed, neighbor_dist, max_neighbors, time_horizon,
                       time_horizon_obst, responsibility=0.5, reactive=True,
                       obstacles: ObstacleSet | None = None, symmetry_breaking=0.0, seed=0,
                       side_preference=0.0, keep_apart=False,
                       keep_apart_margin=DEFAULT_KEEP_APART_MARGIN, overlap_time=None,
                       constraint_lines: ConstraintLines | None = None, return_lines=False,
                       return_neighbors=False, threads=None) -> VelocityResult:
    """New ORCA velocities for N agents (one RVO2 ``doStep`` without the position update).

    ``positions``, ``velocities`` and ``pref_velocities`` are (N, 2); every per-agent
    parameter is a scalar or an (N,) array.  ``obstacles`` comes from
    :func:`~planning_collision.orca.obstacles.build_obstacles` (built once per obstacle
    set).  The options beyond RVO2 are described in the module docstring; ``seed`` varies
    the symmetry-breaking perturbation (pass a step counter).  ``keep_apart_margin``
    (>= 0, only with ``keep_apart``) enlarges the radii of the agent half-planes by that
    fraction.  ``overlap_time`` is opt-in: None (default) is RVO2's behaviour, overlapping
    agents are asked to part within one time step (a velocity jump of up to
    ``overlap / time_step``, clipped to the max speed); a time in seconds makes them part
    within that time, without velocity spikes.  ``return_lines`` and
    ``return_neighbors`` add every agent's half-planes and neighbours in CSR form.
    ``threads`` (None: automatic, one thread below
    :data:`~planning_collision.orca.agent_threads.PARALLEL_MIN_AGENTS` agents) sets how
    many threads share the agents.

    Every returned velocity is finite with ``|v| <= max_speed * (1 + SPEED_TOLERANCE)``
    (a relative 1e-12), for every input accepted; a non-reactive agent gets its preferred
    velocity limited to its max speed.  Raises ValueError on malformed input and on values
    outside ORCA's working range (:mod:`~planning_collision.orca.validation`: magnitudes up
    to 1e9, times from 1e-9 s; numbers below 1e-100 count as zero), naming the argument.
    """
    pos = as_points(positions, "positions")
    n = pos.shape[0]
    vel = as_agent_points(velocities, n, "velocities")
    pref = as_agent_points(pref_velocities, n, "pref_velocities")
    params = agent_parameters(n, radius=radius, max_speed=max_speed,
                              neighbor_dist=neighbor_dist, max_neighbors=max_neighbors,
                              time_horizon=time_horizon, time_horizon_obst=time_horizon_obst,
                              responsibility=responsibility, reactive=reactive)
    options = step_options(time_step=time_step, overlap_time=overlap_time,
                           symmetry_breaking=symmetry_breaking, seed=seed,
                           side_preference=side_preference, keep_apart=keep_apart,
                           keep_apart_margin=keep_apart_margin)
    if obstacles is None:
        obstacles = empty_obstacles()
    elif not isinstance(obstacles, ObstacleSet):
        raise ValueError("obstacles must be an ObstacleSet (see build_obstacles)")
    extra = (no_constraint_lines(n) if constraint_lines is None
             else check_constraint_lines(constraint_lines, n))
    resolve_threads(threads, n)
    return solve_velocities(pos, vel, pref, params, obstacles, extra, options,
                            return_lines=return_lines, return_neighbors=return_neighbors,
                            threads=threads)


def solve_velocities(pos, vel, pref, params: AgentParameters, obstacles: ObstacleSet,
                     extra: ConstraintLines, options: StepOptions, *, return_lines=False,
                     return_neighbors=False, threads=None) -> VelocityResult:
    """:func:`compute_velocities` on inputs that are already validated (no checks)."""
    n = pos.shape[0]
    out_vel = np.empty((n, 2))
    num_neighbors = np.zeros(n, np.int64)
    num_lines = np.zeros(n, np.int64)
    num_hard = np.zeros(n, np.int64)
    num_obstacle = np.zeros(n, np.int64)
    infeasible = np.zeros(n, np.bool_)
    speed_clamped = np.zeros(n, np.bool_)
    if n:
        _run_kernel(pos, vel, pref, params, obstacles, extra, options, False, threads,
                    out_vel, num_neighbors, num_lines, num_hard, num_obstacle, infeasible,
                    speed_clamped, _NO_OFFSETS, _NO_POINTS, _NO_POINTS, _NO_OFFSETS,
                    _NO_OFFSETS)
    result = VelocityResult(out_vel, num_neighbors, infeasible, num_lines, num_hard,
                            num_obstacle, speed_clamped)
    if return_lines or return_neighbors:
        lines, neighbors = collect_lines(pos, vel, params, obstacles, extra, options, result,
                                         threads=threads)
        result = result._replace(lines=lines if return_lines else None,
                                 neighbors=neighbors if return_neighbors else None)
    return result


def collect_lines(pos, vel, params: AgentParameters, obstacles: ObstacleSet,
                  extra: ConstraintLines, options: StepOptions, result: VelocityResult, *,
                  threads=None):
    """Half-planes and neighbours (CSR) of the step that produced ``result``.

    Recomputes them from the same validated inputs (deterministic, so identical to the
    ones the step used); returns ``(LineSet, NeighborSet)``.
    """
    n = pos.shape[0]
    line_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(result.num_lines, out=line_offsets[1:])
    nb_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(result.num_neighbors, out=nb_offsets[1:])
    line_points = np.empty((line_offsets[-1], 2))
    line_dirs = np.empty((line_offsets[-1], 2))
    nb_indices = np.empty(nb_offsets[-1], np.int64)
    if n:
        _run_kernel(pos, vel, vel, params, obstacles, extra, options, True, threads,
                    result.velocities, result.num_neighbors, result.num_lines,
                    result.num_hard_lines, result.num_obstacle_lines, result.infeasible,
                    result.speed_clamped, line_offsets, line_points,
                    line_dirs, nb_offsets, nb_indices)
    return LineSet(line_offsets, line_points, line_dirs), NeighborSet(nb_offsets, nb_indices)


_NO_OFFSETS = np.zeros(1, np.int64)
_NO_POINTS = np.zeros((0, 2))


def largest_neighbor_dist(neighbor_dist, max_neighbors) -> float:
    """Largest neighbour distance of the agents that look for neighbours (sizes the grid)."""
    active = neighbor_dist[max_neighbors > 0]
    return float(active.max()) if active.size else 0.0


def _run_kernel(pos, vel, pref, params, obstacles, extra, options, write_csr, threads,
                *outputs):
    n = pos.shape[0]
    grid = build_grid(pos, largest_neighbor_dist(params.neighbor_dist, params.max_neighbors))
    kmax = min(int(params.max_neighbors.max()), n - 1)
    most_extra = int(np.diff(extra.offsets).max())
    separations = n if options.keep_apart else 0
    sizes = (kmax, obstacles.points.shape[0] + most_extra + separations + kmax + 1,
             2 * obstacles.tree_vertex.shape[0] + 2, separations)
    reach = float(np.max(params.radius + params.max_speed * options.time_step))
    # Radius factor of the agent half-planes: exactly 1.0 (RVO2's radii) without keep_apart.
    plan_scale = 1.0 + options.keep_apart_margin if options.keep_apart else 1.0

    def process(lo, hi):
        _process_agents(lo, hi, write_csr, pos, vel, pref, *params, obstacles.points,
                        obstacles.directions, obstacles.next_vertex, obstacles.prev_vertex,
                        obstacles.convex, obstacles.tree_vertex, obstacles.tree_left,
                        obstacles.tree_right, *extra, options.time_step,
                        1.0 / options.overlap_time, options.symmetry_breaking,
                        options.side_preference, np.int64(options.seed), options.keep_apart,
                        plan_scale, reach, grid, sizes, *outputs)

    run_in_chunks(process, n, resolve_threads(threads, n))


@numba.njit(cache=True, error_model="numpy")
def _solve(line_points, line_dirs, n_lines, n_hard, speed, ox, oy, proj_points, proj_dirs):
    """RVO2's program: LP2 towards ``(ox, oy)``, LP3 if infeasible -> ``(x, y, infeasible)``."""
    fail, rx, ry = solve_incremental(line_points, line_dirs, n_lines, speed, ox, oy, False)
    if fail < n_lines:
        rx, ry = solve_least_violation(line_points, line_dirs, n_lines, n_hard, fail, speed,
                                       rx, ry, proj_points, proj_dirs)
        return rx, ry, True
    return rx, ry, False


@numba.njit(cache=True, error_model="numpy")
def _respect_separation(rx, ry, line_points, line_dirs, start, end):
    """Scale ``(rx, ry)`` down until it satisfies the separation half-planes ``start:end``.

    These contain the zero velocity (up to rounding, for agents that do not overlap), so
    the scaled velocity keeps every pair apart even where the linear program failed
    numerically.
    """
    scale = 1.0
    for k in range(start, end):
        # Half-plane v . e <= c with e = (d_y, -d_x) and c = point . e.
        ex = line_dirs[k, 1]
        ey = -line_dirs[k, 0]
        c = line_points[k, 0] * ex + line_points[k, 1] * ey
        along = rx * ex + ry * ey
        if along > c and along > 0.0:
            scale = min(scale, max(c, 0.0) / along)
    return rx * scale, ry * scale


@numba.njit(cache=True, error_model="numpy")
def _within_speed(rx, ry, speed):
    """Last line of defence: ``(x, y, acted)``, finite and within the speed limit.

    The programs already return velocities within ``speed * (1 + SPEED_TOLERANCE)``; a
    velocity that is not (a bug) is scaled back to ``speed`` (zero if not finite) and
    reported.
    """
    limit = speed * (1.0 + SPEED_TOLERANCE)
    if rx * rx + ry * ry <= limit * limit:
        return rx, ry, False
    if not (math.isfinite(rx) and math.isfinite(ry)):
        return 0.0, 0.0, True
    scale = speed / math.hypot(rx, ry)
    return rx * scale, ry * scale, True


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _process_agents(lo, hi, write_csr, pos, vel, pref, radius, max_speed, neighbor_dist,
                    max_neighbors, time_horizon, time_horizon_obst, responsibility, reactive,
                    obs_points, obs_dirs, obs_next, obs_prev, obs_convex, tree_vertex, tree_left,
                    tree_right, extra_offsets, extra_points, extra_dirs, time_step, inv_overlap,
                    symmetry_breaking, side_preference, seed, keep_apart, plan_scale, reach,
                    grid, sizes,
                    out_vel, out_neighbors, out_lines, out_hard, out_obstacle, out_infeasible,
                    out_clamped, line_offsets,
                    csr_points, csr_dirs, nb_offsets, csr_indices):
    """Agents ``lo..hi-1``: solve (``write_csr`` False) or copy lines and neighbours to CSR.

    ``plan_scale`` multiplies the radii in the agent half-planes (``1 + keep_apart_margin``
    with ``keep_apart``, else 1); ``reach`` is the largest ``radius + max_speed * time_step``
    (for ``keep_apart``);
    ``grid`` comes from :func:`build_grid` and ``sizes`` gives the scratch capacities.
    """
    geometry, cell_start, order, sorted_pos = grid
    kmax, line_cap, stack_cap, sep_cap = sizes
    sep_index = np.empty(sep_cap, np.int64)
    overlap_time = 1.0 / inv_overlap
    nb_index = np.empty(kmax + 1, np.int64)
    nb_dist_sq = np.empty(kmax + 1)
    ob_vertex = np.empty(obs_points.shape[0] + 1, np.int64)
    ob_dist_sq = np.empty(obs_points.shape[0] + 1)
    stack_node = np.empty(stack_cap, np.int64)
    stack_side = np.empty(stack_cap)
    line_points = np.empty((line_cap, 2))
    line_dirs = np.empty((line_cap, 2))
    proj_points = np.empty((line_cap, 2))
    proj_dirs = np.empty((line_cap, 2))
    has_obstacles = tree_vertex.shape[0] > 0
    for i in range(lo, hi):
        # Half-planes of agent i: obstacles (nearest first), extra constraints, separation
        # (keep_apart), then one per agent neighbour (nearest first).
        px = pos[i, 0]
        py = pos[i, 1]
        vx = vel[i, 0]
        vy = vel[i, 1]
        r = radius[i]
        n_lines = 0
        if has_obstacles:
            seen = time_horizon_obst[i] * max_speed[i] + r
            count = find_obstacle_neighbors(px, py, seen * seen, obs_points, obs_next,
                                            tree_vertex, tree_left, tree_right, ob_vertex,
                                            ob_dist_sq, stack_node, stack_side)
            n_lines = obstacle_lines(px, py, vx, vy, r, 1.0 / time_horizon_obst[i], ob_vertex,
                                     count, obs_points, obs_dirs, obs_next, obs_prev,
                                     obs_convex, line_points, line_dirs, 0)
        n_obstacle = n_lines
        for e in range(extra_offsets[i], extra_offsets[i + 1]):
            line_points[n_lines, 0] = extra_points[e, 0]
            line_points[n_lines, 1] = extra_points[e, 1]
            line_dirs[n_lines, 0] = extra_dirs[e, 0]
            line_dirs[n_lines, 1] = extra_dirs[e, 1]
            n_lines += 1
        sep_start = n_lines
        if keep_apart:
            # Agents that could touch this one within the step get a hard half-plane.
            reach_i = r + max_speed[i] * time_step + reach
            count = find_agents_within(i, px, py, reach_i * reach_i, geometry, cell_start,
                                       order, sorted_pos, sep_index)
            for k in range(count):
                j = sep_index[k]
                qx = pos[j, 0] - px
                qy = pos[j, 1] - py
                pair = r + radius[j] + (max_speed[i] + max_speed[j]) * time_step
                if qx * qx + qy * qy >= pair * pair:
                    continue
                lx, ly, dx, dy = separation_line(i, j, px, py, r, pos[j, 0], pos[j, 1],
                                                 radius[j], responsibility[j], time_step,
                                                 overlap_time)
                line_points[n_lines, 0] = lx
                line_points[n_lines, 1] = ly
                line_dirs[n_lines, 0] = dx
                line_dirs[n_lines, 1] = dy
                n_lines += 1
        sep_end = n_lines
        n_hard = n_lines
        nd = neighbor_dist[i]
        nn = find_agent_neighbors(i, px, py, nd * nd, max_neighbors[i], geometry, cell_start,
                                  order, sorted_pos, nb_index, nb_dist_sq)
        inv_th = 1.0 / time_horizon[i]
        r_plan = r * plan_scale
        for k in range(nn):
            j = nb_index[k]
            qx, qy, dx, dy = agent_line(i, j, px, py, vx, vy, r_plan, pos[j, 0], pos[j, 1],
                                        vel[j, 0], vel[j, 1], radius[j] * plan_scale, inv_th,
                                        inv_overlap, responsibility[j])
            line_points[n_lines, 0] = qx
            line_points[n_lines, 1] = qy
            line_dirs[n_lines, 0] = dx
            line_dirs[n_lines, 1] = dy
            n_lines += 1
        if write_csr:
            base = line_offsets[i]
            for k in range(min(n_lines, line_offsets[i + 1] - base)):
                csr_points[base + k, 0] = line_points[k, 0]
                csr_points[base + k, 1] = line_points[k, 1]
                csr_dirs[base + k, 0] = line_dirs[k, 0]
                csr_dirs[base + k, 1] = line_dirs[k, 1]
            base = nb_offsets[i]
            for k in range(min(nn, nb_offsets[i + 1] - base)):
                csr_indices[base + k] = nb_index[k]
            continue
        out_neighbors[i] = nn
        out_lines[i] = n_lines
        out_hard[i] = n_hard
        out_obstacle[i] = n_obstacle
        speed = max_speed[i]
        if not reactive[i]:
            # The preferred velocity, limited to the max speed as the programs start from.
            rx = pref[i, 0]
            ry = pref[i, 1]
            if rx * rx + ry * ry > speed * speed:
                norm = math.sqrt(rx * rx + ry * ry)
                rx = rx / norm * speed
                ry = ry / norm * speed
            out_vel[i, 0], out_vel[i, 1], out_clamped[i] = _within_speed(rx, ry, speed)
            out_infeasible[i] = False
            continue
        ox = pref[i, 0]
        oy = pref[i, 1]
        if symmetry_breaking > 0.0:
            ex, ey = perturbation(i, seed, symmetry_breaking)
            ox += ex
            oy += ey
        rx, ry, infeasible = _solve(line_points, line_dirs, n_lines, n_hard, speed, ox, oy,
                                    proj_points, proj_dirs)
        if side_preference != 0.0:
            # Held back by other agents (their half-planes or separations), not only by
            # obstacles or kinematic limits: aim to the right of the preferred velocity (left
            # if negative), so that crossing agents pass each other consistently.  (Against
            # a wall alone the shift would cancel the sliding along it and trap the agent.)
            _, fx, fy = solve_incremental(line_points, line_dirs, sep_start, speed, ox, oy,
                                          False)
            if rx != fx or ry != fy:
                rx, ry, infeasible = _solve(line_points, line_dirs, n_lines, n_hard, speed,
                                            ox + side_preference * pref[i, 1],
                                            oy - side_preference * pref[i, 0], proj_points,
                                            proj_dirs)
        if keep_apart:
            rx, ry = _respect_separation(rx, ry, line_points, line_dirs, sep_start, sep_end)
        out_vel[i, 0], out_vel[i, 1], out_clamped[i] = _within_speed(rx, ry, speed)
        out_infeasible[i] = infeasible
