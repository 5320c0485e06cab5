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
  this fraction, while the separation half-planes keep the real radii (see below).  A pair
  that really overlaps (a person, who avoids nobody, walked into a robot, or a delay let
  the discs meet) is asked to part at ``share * overlap / overlap_time``, but never faster
  than the agent's max speed: asked for more, the hard lines had no common velocity and
  the least-violation answer, scaled to the separation lines, was zero, so the robot stood
  while the person walked on into it (issue #24).  Asked for its max speed (less a
  relative 1e-6, ``orca_lines.PARTING_SLACK``) it flees straight away at full speed; the
  obstacle and extra lines stay hard, and where they, or two overlaps from opposite sides,
  leave no such velocity the least-violation answer is kept as before;
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
from .neighbors import AgentGrid, GridShape, build_grid, find_agent_neighbors, find_agents_within
from .obstacles import ObstacleTree, empty_obstacles, find_obstacle_neighbors
from .orca_lines import agent_line, obstacle_lines, separation_line
from .symmetry_breaking import perturbation
from .validation import (
    agent_arrays,
    as_agent_counts,
    as_agent_flags,
    as_agent_points,
    as_agent_values,
    as_orca_points,
    as_scalar,
)
from .vector import Vector


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


def with_horizons(plain, neighbor_dist, time_horizon, time_horizon_obst):
    """Positions, velocities, preferred velocities and :class:`AgentParameters` from the
    arrays :func:`~planning_collision.orca.validation.agent_arrays` checked and the checked
    (N,) ``neighbor_dist``, ``time_horizon`` and ``time_horizon_obst``."""
    pos, vel, pref, radius, max_speed, responsibility, max_neighbors, reactive = plain
    return pos, vel, pref, AgentParameters(
        radius=radius, max_speed=max_speed, neighbor_dist=neighbor_dist,
        max_neighbors=max_neighbors, time_horizon=time_horizon,
        time_horizon_obst=time_horizon_obst, responsibility=responsibility, reactive=reactive)


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
                       obstacles: ObstacleTree | None = None, symmetry_breaking=0.0, seed=0,
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
    plain = agent_arrays(positions, velocities, pref_velocities, radius, max_speed,
                         responsibility, max_neighbors, reactive)
    if plain is None:  # each argument on its own, the first refused one named
        pos = as_orca_points(positions, "positions")
        n = pos.shape[0]
        vel = as_agent_points(velocities, n, "velocities")
        pref = as_agent_points(pref_velocities, n, "pref_velocities")
        params = agent_parameters(n, radius=radius, max_speed=max_speed,
                                  neighbor_dist=neighbor_dist, max_neighbors=max_neighbors,
                                  time_horizon=time_horizon,
                                  time_horizon_obst=time_horizon_obst,
                                  responsibility=responsibility, reactive=reactive)
    else:
        n = plain[0].shape[0]
        pos, vel, pref, params = with_horizons(
            plain, as_agent_values(neighbor_dist, n, "neighbor_dist"),
            as_agent_values(time_horizon, n, "time_horizon", time=True),
            as_agent_values(time_horizon_obst, n, "time_horizon_obst", time=True))
    options = step_options(time_step=time_step, overlap_time=overlap_time,
                           symmetry_breaking=symmetry_breaking, seed=seed,
                           side_preference=side_preference, keep_apart=keep_apart,
                           keep_apart_margin=keep_apart_margin)
    if obstacles is None:
        obstacles = empty_obstacles()
    elif not isinstance(obstacles, ObstacleTree):
        raise ValueError("obstacles must be an ObstacleTree (see build_obstacles)")
    extra = (no_constraint_lines(n) if constraint_lines is None
             else check_constraint_lines(constraint_lines, n))
    resolve_threads(threads, n)
    return solve_velocities(pos, vel, pref, params, obstacles, extra, options,
                            return_lines=return_lines, return_neighbors=return_neighbors,
                            threads=threads)


def solve_velocities(pos, vel, pref, params: AgentParameters, obstacles: ObstacleTree,
                     extra: ConstraintLines, options: StepOptions, *, return_lines=False,
                     return_neighbors=False, threads=None) -> VelocityResult:
    """:func:`compute_velocities` on inputs that are already validated (no checks)."""
    n = pos.shape[0]
    out = StepOutputs(velocities=np.empty((n, 2)), num_neighbors=np.zeros(n, np.int64),
                      num_lines=np.zeros(n, np.int64), num_hard_lines=np.zeros(n, np.int64),
                      num_obstacle_lines=np.zeros(n, np.int64),
                      infeasible=np.zeros(n, np.bool_), speed_clamped=np.zeros(n, np.bool_))
    if n:
        _run_kernel(Agents(pos, vel, pref), params, obstacles, extra, options, threads, out,
                    _NO_CSR)
    result = VelocityResult(out.velocities, out.num_neighbors, out.infeasible, out.num_lines,
                            out.num_hard_lines, out.num_obstacle_lines, out.speed_clamped)
    if return_lines or return_neighbors:
        lines, neighbors = collect_lines(pos, vel, params, obstacles, extra, options, result,
                                         threads=threads)
        result = result._replace(lines=lines if return_lines else None,
                                 neighbors=neighbors if return_neighbors else None)
    return result


class StepLines(NamedTuple):
    """Every agent's half-planes and neighbours of a step (see :func:`collect_lines`)."""

    lines: LineSet
    neighbors: NeighborSet


def collect_lines(pos, vel, params: AgentParameters, obstacles: ObstacleTree,
                  extra: ConstraintLines, options: StepOptions, result: VelocityResult, *,
                  threads=None) -> StepLines:
    """Half-planes and neighbours (CSR) of the step that produced ``result``.

    Recomputes them from the same validated inputs (deterministic, so identical to the
    ones the step used).
    """
    n = pos.shape[0]
    line_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(result.num_lines, out=line_offsets[1:])
    nb_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(result.num_neighbors, out=nb_offsets[1:])
    csr = CsrOutputs(line_offsets=line_offsets,
                     line_points=np.empty((line_offsets[-1], 2)),
                     line_directions=np.empty((line_offsets[-1], 2)),
                     neighbor_offsets=nb_offsets,
                     neighbor_indices=np.empty(nb_offsets[-1], np.int64))
    if n:
        out = StepOutputs(result.velocities, result.num_neighbors, result.num_lines,
                          result.num_hard_lines, result.num_obstacle_lines, result.infeasible,
                          result.speed_clamped)
        _run_kernel(Agents(pos, vel, vel), params, obstacles, extra, options, threads, out,
                    csr)
    return StepLines(LineSet(csr.line_offsets, csr.line_points, csr.line_directions),
                     NeighborSet(csr.neighbor_offsets, csr.neighbor_indices))


def largest_neighbor_dist(neighbor_dist, max_neighbors) -> float:
    """Largest neighbour distance of the agents that look for neighbours (sizes the grid)."""
    active = neighbor_dist[max_neighbors > 0]
    return float(active.max()) if active.size else 0.0


# ------------------------------------------------------------------ the kernel and its inputs
class Agents(NamedTuple):
    """The agents' state: (N, 2) positions, current and preferred velocities."""

    positions: np.ndarray
    velocities: np.ndarray
    pref_velocities: np.ndarray


class KernelSettings(NamedTuple):
    """The scalars of a step as the kernel uses them (from :class:`StepOptions`).

    ``plan_scale`` multiplies the radii in the agent half-planes (``1 + keep_apart_margin``
    with ``keep_apart``, else exactly 1); ``reach`` is the largest
    ``radius + max_speed * time_step`` (for ``keep_apart``).
    """

    time_step: float
    overlap_time: float
    inv_overlap_time: float
    symmetry_breaking: float
    side_preference: float
    seed: int
    keep_apart: bool
    plan_scale: float
    reach: float


class ScratchSizes(NamedTuple):
    """Capacities of each thread's scratch buffers (see :func:`_scratch_sizes`)."""

    neighbors: int
    lines: int
    tree_stack: int
    separations: int


class StepOutputs(NamedTuple):
    """Per-agent outputs of the kernel (the arrays of :class:`VelocityResult`)."""

    velocities: np.ndarray
    num_neighbors: np.ndarray
    num_lines: np.ndarray
    num_hard_lines: np.ndarray
    num_obstacle_lines: np.ndarray
    infeasible: np.ndarray
    speed_clamped: np.ndarray


class CsrOutputs(NamedTuple):
    """Where the kernel copies every agent's half-planes and neighbours (CSR), when asked."""

    line_offsets: np.ndarray
    line_points: np.ndarray
    line_directions: np.ndarray
    neighbor_offsets: np.ndarray
    neighbor_indices: np.ndarray


_NO_CSR = CsrOutputs(np.zeros(1, np.int64), np.zeros((0, 2)), np.zeros((0, 2)),
                     np.zeros(1, np.int64), np.zeros(0, np.int64))


def _run_kernel(agents: Agents, params: AgentParameters, obstacles: ObstacleTree,
                extra: ConstraintLines, options: StepOptions, threads, out: StepOutputs,
                csr: CsrOutputs):
    """Solve every agent (``csr`` is ``_NO_CSR``) or copy their lines and neighbours."""
    n = agents.positions.shape[0]
    grid = build_grid(agents.positions,
                      largest_neighbor_dist(params.neighbor_dist, params.max_neighbors))
    inv_overlap = 1.0 / options.overlap_time
    settings = KernelSettings(
        # overlap_time as the kernel has always derived it (1 / (1 / t): bit for bit).
        time_step=options.time_step, overlap_time=1.0 / inv_overlap,
        inv_overlap_time=inv_overlap, symmetry_breaking=options.symmetry_breaking,
        side_preference=options.side_preference, seed=int(np.int64(options.seed)),
        keep_apart=options.keep_apart,
        # Radius factor of the agent half-planes: exactly 1.0 (RVO2's radii) without
        # keep_apart.
        plan_scale=1.0 + options.keep_apart_margin if options.keep_apart else 1.0,
        reach=float(np.max(params.radius + params.max_speed * options.time_step)))

    # Plain tuples across the Python -> numba boundary (see _process_plain).
    plain = (tuple(agents), tuple(params), tuple(obstacles), tuple(extra), tuple(settings),
             (tuple(grid.shape),) + tuple(grid)[1:], tuple(out), tuple(csr))

    def process(lo, hi):
        _process_plain(lo, hi, *plain)

    run_in_chunks(process, n, resolve_threads(threads, n))


class AgentLines(NamedTuple):
    """How an agent's half-planes are laid out: obstacles first (``0:obstacle``), then extra
    constraints, then separations (``separation_start:separation_end``), which end the hard
    lines (``hard``), then one per agent neighbour (``neighbors`` of them) up to ``total``."""

    obstacle: int
    separation_start: int
    separation_end: int
    hard: int
    total: int
    neighbors: int


class Choice(NamedTuple):
    """A velocity chosen by the linear programs; ``infeasible`` when linearProgram3 chose."""

    x: float
    y: float
    infeasible: bool


class CheckedVelocity(NamedTuple):
    """The last check's result: ``clamped`` when it had to act."""

    x: float
    y: float
    clamped: bool


# The kernels below run per agent.  Named tuples of scalars (settings, layouts, results)
# cost nothing there, but taking an array out of a named tuple costs numba an atomic
# reference count: done per agent and per line it slowed a step by 40 % (measured).  So
# the chunk kernel takes the named tuples apart once, and per-agent kernels get plain
# arrays.  (Passing a named tuple into a kernel from Python costs about 1.5 us of type
# dispatch per tuple, some 10 us per step.)


@numba.njit(cache=True, error_model="numpy")
def _solve(line_points, line_dirs, n_lines, n_hard, speed, ox, oy, proj_points, proj_dirs):
    """RVO2's program: LP2 towards ``(ox, oy)``, LP3 if infeasible -> a :class:`Choice`."""
    result = solve_incremental(line_points, line_dirs, n_lines, speed, ox, oy, False)
    if result.failed_line < n_lines:
        v = solve_least_violation(line_points, line_dirs, n_lines, n_hard, result.failed_line,
                                  speed, result.x, result.y, proj_points, proj_dirs)
        return Choice(v.x, v.y, True)
    return Choice(result.x, result.y, False)


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
    return Vector(rx * scale, ry * scale)


@numba.njit(cache=True, error_model="numpy")
def _within_speed(rx, ry, speed):
    """Last line of defence: a :class:`CheckedVelocity`, finite and within the speed limit.

    The programs already return velocities within ``speed * (1 + SPEED_TOLERANCE)``; a
    velocity that is not (a bug) is scaled back to ``speed`` (zero if not finite) and
    reported.
    """
    limit = speed * (1.0 + SPEED_TOLERANCE)
    if rx * rx + ry * ry <= limit * limit:
        return CheckedVelocity(rx, ry, False)
    if not (math.isfinite(rx) and math.isfinite(ry)):
        return CheckedVelocity(0.0, 0.0, True)
    scale = speed / math.hypot(rx, ry)
    return CheckedVelocity(rx * scale, ry * scale, True)


@numba.njit(cache=True, error_model="numpy")
def _choose_velocity(i, pref_x, pref_y, speed, reactive, settings, layout, line_points,
                     line_dirs, proj_points, proj_dirs):
    """Agent ``i``'s new velocity (a :class:`Choice`) from its half-planes, laid out as
    ``layout`` (:class:`AgentLines`) says."""
    if not reactive:
        # The preferred velocity, limited to the max speed as the programs start from.
        rx = pref_x
        ry = pref_y
        if rx * rx + ry * ry > speed * speed:
            norm = math.sqrt(rx * rx + ry * ry)
            rx = rx / norm * speed
            ry = ry / norm * speed
        return Choice(rx, ry, False)
    ox = pref_x
    oy = pref_y
    if settings.symmetry_breaking > 0.0:
        offset = perturbation(i, settings.seed, settings.symmetry_breaking)
        ox += offset.x
        oy += offset.y
    choice = _solve(line_points, line_dirs, layout.total, layout.hard, speed, ox, oy,
                    proj_points, proj_dirs)
    if settings.side_preference != 0.0:
        # Held back by other agents (their half-planes or separations), not only by
        # obstacles or kinematic limits: aim to the right of the preferred velocity (left
        # if negative), so that crossing agents pass each other consistently.  (Against a
        # wall alone the shift would cancel the sliding along it and trap the agent.)
        free = solve_incremental(line_points, line_dirs, layout.separation_start, speed, ox,
                                 oy, False)
        if choice.x != free.x or choice.y != free.y:
            choice = _solve(line_points, line_dirs, layout.total, layout.hard, speed,
                            ox + settings.side_preference * pref_y,
                            oy - settings.side_preference * pref_x, proj_points, proj_dirs)
    if settings.keep_apart:
        v = _respect_separation(choice.x, choice.y, line_points, line_dirs,
                                layout.separation_start, layout.separation_end)
        choice = Choice(v.x, v.y, choice.infeasible)
    return choice


@numba.njit(cache=True, error_model="numpy")
def _copy_rows(source, target, start, count):
    for k in range(count):
        target[start + k, 0] = source[k, 0]
        target[start + k, 1] = source[k, 1]


@numba.njit(cache=True, error_model="numpy")
def _scratch_sizes(max_neighbors, extra_offsets, obstacle_vertices, tree_nodes, keep_apart):
    """Capacities of the scratch buffers: the most neighbours any agent takes and the most
    half-planes any agent can have."""
    n = max_neighbors.shape[0]
    kmax = 0
    most_extra = 0
    for i in range(n):
        kmax = max(kmax, max_neighbors[i])
        most_extra = max(most_extra, extra_offsets[i + 1] - extra_offsets[i])
    kmax = min(kmax, n - 1)
    separations = n if keep_apart else 0
    return ScratchSizes(kmax, obstacle_vertices + most_extra + separations + kmax + 1,
                        2 * tree_nodes + 2, separations)


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _process_plain(lo, hi, agents, params, obstacles, extra, settings, grid, out, csr):
    """:func:`_process_agents` with its named tuples passed as plain tuples.

    numba's dispatcher types a plain tuple of arrays in C but a named tuple field by field in
    Python, about 1 us per field: with the ~40 arrays of a step that was 20 % of a
    100-agent step.  The named tuples are rebuilt here, inside compiled code, for free.
    """
    _process_agents(lo, hi, Agents(*agents), AgentParameters(*params),
                    ObstacleTree(*obstacles), ConstraintLines(*extra), KernelSettings(*settings),
                    AgentGrid(GridShape(*grid[0]), grid[1], grid[2], grid[3]),
                    StepOutputs(*out), CsrOutputs(*csr))


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _process_agents(lo, hi, agents, params, obstacles, extra, settings, grid, out, csr):
    """Agents ``lo..hi-1``: solve them into ``out`` (a :class:`StepOutputs`) or, when
    ``csr`` has room (not ``_NO_CSR``), copy their half-planes and neighbours into it.

    ``agents`` (:class:`Agents`), ``params`` (:class:`AgentParameters`), ``obstacles``
    (:class:`ObstacleTree`), ``extra`` (:class:`ConstraintLines`), ``settings``
    (:class:`KernelSettings`), ``grid`` (:class:`AgentGrid`).
    """
    write_csr = csr.line_offsets.shape[0] > 1
    # Every array is taken out of its named tuple here, once (see above).
    positions = agents.positions
    velocities = agents.velocities
    prefs = agents.pref_velocities
    radius = params.radius
    max_speed = params.max_speed
    neighbor_dist = params.neighbor_dist
    max_neighbors = params.max_neighbors
    time_horizon = params.time_horizon
    time_horizon_obst = params.time_horizon_obst
    responsibility = params.responsibility
    reactive = params.reactive
    obs_points = obstacles.points
    obs_dirs = obstacles.directions
    obs_next = obstacles.next_vertex
    obs_prev = obstacles.prev_vertex
    obs_convex = obstacles.convex
    tree_vertex = obstacles.tree_vertex
    tree_left = obstacles.tree_left
    tree_right = obstacles.tree_right
    extra_offsets = extra.offsets
    extra_points = extra.points
    extra_dirs = extra.directions
    shape = grid.shape
    cell_start = grid.cell_start
    order = grid.order
    sorted_pos = grid.sorted_positions
    time_step = settings.time_step
    plan_scale = settings.plan_scale
    # Scratch buffers of this chunk.
    sizes = _scratch_sizes(max_neighbors, extra_offsets, obs_points.shape[0],
                           tree_vertex.shape[0], settings.keep_apart)
    line_points = np.empty((sizes.lines, 2))
    line_dirs = np.empty((sizes.lines, 2))
    proj_points = np.empty((sizes.lines, 2))
    proj_dirs = np.empty((sizes.lines, 2))
    nb_index = np.empty(sizes.neighbors + 1, np.int64)
    nb_dist_sq = np.empty(sizes.neighbors + 1)
    ob_vertex = np.empty(obs_points.shape[0] + 1, np.int64)
    ob_dist_sq = np.empty(obs_points.shape[0] + 1)
    stack_node = np.empty(sizes.tree_stack, np.int64)
    stack_side = np.empty(sizes.tree_stack)
    sep_index = np.empty(sizes.separations, np.int64)
    out_velocities = out.velocities
    out_neighbors = out.num_neighbors
    out_lines = out.num_lines
    out_hard = out.num_hard_lines
    out_obstacle = out.num_obstacle_lines
    out_clamped = out.speed_clamped
    out_infeasible = out.infeasible
    csr_line_offsets = csr.line_offsets
    csr_points = csr.line_points
    csr_dirs = csr.line_directions
    csr_nb_offsets = csr.neighbor_offsets
    csr_nb_indices = csr.neighbor_indices
    for i in range(lo, hi):
        # Half-planes of agent i: obstacles (nearest first), extra constraints, separation
        # (keep_apart), then one per agent neighbour (nearest first).
        px = positions[i, 0]
        py = positions[i, 1]
        vx = velocities[i, 0]
        vy = velocities[i, 1]
        r = radius[i]
        n_lines = 0
        if tree_vertex.shape[0] > 0:
            seen = time_horizon_obst[i] * max_speed[i] + r
            count = find_obstacle_neighbors(px, py, seen * seen, obs_points, obs_next,
                                            tree_vertex, tree_left, tree_right, ob_vertex,
                                            ob_dist_sq, stack_node, stack_side)
            n_lines = obstacle_lines(px, py, vx, vy, r, 1.0 / time_horizon_obst[i], ob_vertex,
                                     count, obs_points, obs_dirs, obs_next, obs_prev,
                                     obs_convex, line_points, line_dirs)
        n_obstacle = n_lines
        for e in range(extra_offsets[i], extra_offsets[i + 1]):
            line_points[n_lines, 0] = extra_points[e, 0]
            line_points[n_lines, 1] = extra_points[e, 1]
            line_dirs[n_lines, 0] = extra_dirs[e, 0]
            line_dirs[n_lines, 1] = extra_dirs[e, 1]
            n_lines += 1
        sep_start = n_lines
        if settings.keep_apart:
            # Agents that could touch this one within the step get a hard half-plane.
            reach_i = r + max_speed[i] * time_step + settings.reach
            count = find_agents_within(i, px, py, reach_i * reach_i, shape, cell_start, order,
                                       sorted_pos, sep_index)
            for k in range(count):
                j = sep_index[k]
                qx = positions[j, 0] - px
                qy = positions[j, 1] - py
                pair = r + radius[j] + (max_speed[i] + max_speed[j]) * time_step
                if qx * qx + qy * qy >= pair * pair:
                    continue
                line = separation_line(i, j, px, py, r, positions[j, 0], positions[j, 1],
                                       radius[j], responsibility[j], time_step,
                                       settings.overlap_time, max_speed[i])
                line_points[n_lines, 0] = line.point_x
                line_points[n_lines, 1] = line.point_y
                line_dirs[n_lines, 0] = line.direction_x
                line_dirs[n_lines, 1] = line.direction_y
                n_lines += 1
        sep_end = n_lines
        n_hard = n_lines
        nd = neighbor_dist[i]
        nn = find_agent_neighbors(i, px, py, nd * nd, max_neighbors[i], shape, cell_start,
                                  order, sorted_pos, nb_index, nb_dist_sq)
        inv_th = 1.0 / time_horizon[i]
        r_plan = r * plan_scale
        for k in range(nn):
            j = nb_index[k]
            line = agent_line(i, j, px, py, vx, vy, r_plan, positions[j, 0], positions[j, 1],
                              velocities[j, 0], velocities[j, 1], radius[j] * plan_scale,
                              inv_th, settings.inv_overlap_time, responsibility[j])
            line_points[n_lines, 0] = line.point_x
            line_points[n_lines, 1] = line.point_y
            line_dirs[n_lines, 0] = line.direction_x
            line_dirs[n_lines, 1] = line.direction_y
            n_lines += 1
        layout = AgentLines(n_obstacle, sep_start, sep_end, n_hard, n_lines, nn)
        if write_csr:
            base = csr_line_offsets[i]
            rows = min(n_lines, csr_line_offsets[i + 1] - base)
            _copy_rows(line_points, csr_points, base, rows)
            _copy_rows(line_dirs, csr_dirs, base, rows)
            base = csr_nb_offsets[i]
            for k in range(min(nn, csr_nb_offsets[i + 1] - base)):
                csr_nb_indices[base + k] = nb_index[k]
            continue
        out_neighbors[i] = nn
        out_lines[i] = n_lines
        out_hard[i] = n_hard
        out_obstacle[i] = n_obstacle
        choice = _choose_velocity(i, prefs[i, 0], prefs[i, 1], max_speed[i], reactive[i],
                                  settings, layout, line_points, line_dirs, proj_points,
                                  proj_dirs)
        checked = _within_speed(choice.x, choice.y, max_speed[i])
        out_velocities[i, 0] = checked.x
        out_velocities[i, 1] = checked.y
        out_clamped[i] = checked.clamped
        out_infeasible[i] = choice.infeasible
