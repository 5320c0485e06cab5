"""RVO2's example scenarios and recorded RVO2 (pyrvo) steps, shared by the ORCA tests.

pyrvo wraps the C++ RVO2 library and is the oracle.  An oracle run drives pyrvo through a
scenario and records, at sampled steps, the state before the step (positions, velocities,
preferred velocities, all float32 values as RVO2 stores them), RVO2's new velocities and,
for later diagnosis, its neighbours and ORCA lines; over every step it also measures how
close RVO2 lets two agents, and an agent and an obstacle, come.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import pyrvo
from scipy.spatial import cKDTree

from planning_collision.orca import OrcaSimulator
from planning_collision.orca.linear_program import solve_incremental, solve_least_violation

TWO_PI_F32 = np.float32(6.28318530717958647692)

# RVO2's examples: (time_step, neighbor_dist, max_neighbors, time_horizon,
# time_horizon_obst, radius, max_speed).
CIRCLE_PARAMS = (0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
BLOCKS_PARAMS = (0.25, 15.0, 10, 5.0, 5.0, 2.0, 2.0)

BLOCKS_OBSTACLES = [
    [(-10.0, 40.0), (-40.0, 40.0), (-40.0, 10.0), (-10.0, 10.0)],
    [(10.0, 40.0), (10.0, 10.0), (40.0, 10.0), (40.0, 40.0)],
    [(10.0, -40.0), (40.0, -40.0), (40.0, -10.0), (10.0, -10.0)],
    [(-10.0, -40.0), (-10.0, -10.0), (-40.0, -10.0), (-40.0, -40.0)],
]


def circle_positions(n: int, radius: float) -> np.ndarray:
    """RVO2's Circle start: angle computed in float32 as in the C++ example."""
    angle = np.arange(n, dtype=np.float32) * TWO_PI_F32 / np.float32(n)
    return radius * np.column_stack([np.cos(angle), np.sin(angle)]).astype(np.float64)


def blocks_agents():
    """RVO2's Blocks start positions and goals (100 agents)."""
    starts, goals = [], []
    for i in range(5):
        for j in range(5):
            for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
                starts.append((sx * (55.0 + i * 10.0), sy * (55.0 + j * 10.0)))
                goals.append((-sx * 75.0, -sy * 75.0))
    return np.array(starts), np.array(goals)


def goal_velocities(positions: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """RVO2's examples: unit vector to the goal, or the goal vector when closer than 1."""
    g = goals - positions
    dist = np.hypot(g[:, 0], g[:, 1])
    return np.where(dist[:, None] > 1.0, g / np.maximum(dist, 1e-300)[:, None], g)


def closest_pair(positions: np.ndarray, below: float) -> float:
    """Smallest pairwise distance if some pair is closer than ``below``, else ``below``."""
    pairs = cKDTree(positions).query_pairs(below, output_type="ndarray")
    if len(pairs) == 0:
        return below
    d = positions[pairs[:, 0]] - positions[pairs[:, 1]]
    return float(np.hypot(d[:, 0], d[:, 1]).min())


def obstacle_clearance(positions: np.ndarray, polygons) -> float:
    """Smallest signed distance of the positions to the polygons (negative inside one)."""
    best = np.inf
    for poly in polygons:
        a = np.asarray(poly, dtype=np.float64)
        b = np.roll(a, -1, axis=0)
        edge = b - a
        rel = positions[:, None, :] - a[None]
        t = np.clip(np.einsum("nkd,kd->nk", rel, edge) / np.einsum("kd,kd->k", edge, edge),
                    0.0, 1.0)
        gap = rel - t[..., None] * edge[None]
        dist = np.sqrt((gap * gap).sum(axis=2).min(axis=1))
        if len(a) > 2:
            # Crossing number of a ray towards +x (polygons with an interior only).
            y = positions[:, 1, None]
            crosses = (a[None, :, 1] > y) != (b[None, :, 1] > y)
            with np.errstate(divide="ignore", invalid="ignore"):
                x_at = a[None, :, 0] + (y - a[None, :, 1]) * edge[None, :, 0] / edge[None, :, 1]
            inside = np.sum(crosses & (positions[:, 0, None] < x_at), axis=1) % 2 == 1
            dist = np.where(inside, -dist, dist)
        best = min(best, float(dist.min()))
    return best


@dataclass
class OracleStep:
    """One recorded RVO2 step."""

    step: int
    positions: np.ndarray
    velocities: np.ndarray
    pref_velocities: np.ndarray
    new_velocities: np.ndarray
    neighbors: list = field(default_factory=list)
    lines: list = field(default_factory=list)  # per agent: (points (M, 2), directions (M, 2))


@dataclass
class OracleRun:
    params: tuple
    obstacles: list
    steps: list
    per_agent: dict = field(default_factory=dict)
    #: Over every step of the run: the closest two agents came (measured below twice the
    #: largest radius) and the smallest distance of an agent centre to an obstacle.
    closest: float = np.inf
    clearance: float = np.inf


def _read(sim, n, getter):
    return np.array([getattr(sim, getter)(i).to_tuple() for i in range(n)], dtype=np.float64)


PER_AGENT_SETTERS = {
    "radius": "set_agent_radius",
    "max_speed": "set_agent_max_speed",
    "neighbor_dist": "set_agent_neighbor_dist",
    "max_neighbors": "set_agent_max_neighbors",
    "time_horizon": "set_agent_time_horizon",
    "time_horizon_obst": "set_agent_time_horizon_obst",
}


def record_rvo2(params, starts, goals, *, obstacles=(), steps, every, noise=0.0, seed=0,
                details=True, per_agent=None) -> OracleRun:
    """Run pyrvo from ``starts`` towards ``goals`` and record every ``every``-th step.

    ``noise`` perturbs the preferred velocities as RVO2's Blocks example does (random angle,
    random length below ``noise``).  ``per_agent`` maps parameter names to (N,) arrays.
    """
    rng = np.random.default_rng(seed)
    sim = pyrvo.RVOSimulator(*params)
    n = len(starts)
    for p in starts:
        sim.add_agent((float(p[0]), float(p[1])))
    for name, values in (per_agent or {}).items():
        for i in range(n):
            value = int(values[i]) if name == "max_neighbors" else float(values[i])
            getattr(sim, PER_AGENT_SETTERS[name])(i, value)
    for poly in obstacles:
        sim.add_obstacle(poly)
    if obstacles:
        sim.process_obstacles()
    recorded = []
    closest, clearance = np.inf, np.inf
    near = 2.0 * max(params[5], *(per_agent or {}).get("radius", [0.0]))
    for step in range(steps):
        pos = _read(sim, n, "get_agent_position")
        vel = _read(sim, n, "get_agent_velocity")
        closest = min(closest, closest_pair(pos, near))
        if obstacles:
            clearance = min(clearance, obstacle_clearance(pos, obstacles))
        pref = goal_velocities(pos, goals)
        if noise:
            angle = rng.random(n) * 2.0 * math.pi
            length = rng.random(n) * noise
            pref = pref + length[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
        for i in range(n):
            sim.set_agent_pref_velocity(i, (float(pref[i, 0]), float(pref[i, 1])))
        sim.do_step()
        if step % every:
            continue
        rec = OracleStep(step, pos, vel, _read(sim, n, "get_agent_pref_velocity"),
                         _read(sim, n, "get_agent_velocity"))
        if details:
            for i in range(n):
                rec.neighbors.append([sim.get_agent_agent_neighbor(i, k)
                                      for k in range(sim.get_agent_num_agent_neighbors(i))])
                lines = [sim.get_agent_orca_line(i, k)
                         for k in range(sim.get_agent_num_orca_lines(i))]
                rec.lines.append((np.array([ln[1] for ln in lines]).reshape(-1, 2),
                                  np.array([ln[0] for ln in lines]).reshape(-1, 2)))
        recorded.append(rec)
    return OracleRun(params, list(obstacles), recorded, dict(per_agent or {}), closest,
                     clearance)


TOLERANCE = 1e-4
REQUIRED_FRACTION = 0.999


def _solve(points, directions, n_hard, speed, pref):
    """Our (float64) linear programs on given half-planes."""
    n = points.shape[0]
    fail, x, y = solve_incremental(points, directions, n, speed, pref[0], pref[1], False)
    if fail < n:
        x, y = solve_least_violation(points, directions, n, n_hard, fail, speed, x, y,
                                     np.empty((n, 2)), np.empty((n, 2)))
    return np.array([x, y])


F32 = np.float32
EPS32 = F32(1e-5)


def _det32(ax, ay, bx, by):
    return ax * by - ay * bx


def _on_line32(p, d, k, speed, opt, direction_opt):
    dot = p[k, 0] * d[k, 0] + p[k, 1] * d[k, 1]
    disc = dot * dot + speed * speed - (p[k, 0] * p[k, 0] + p[k, 1] * p[k, 1])
    if disc < 0:
        return None
    root = np.sqrt(disc)
    t_left, t_right = -dot - root, -dot + root
    for i in range(k):
        den = _det32(d[k, 0], d[k, 1], d[i, 0], d[i, 1])
        num = _det32(d[i, 0], d[i, 1], p[k, 0] - p[i, 0], p[k, 1] - p[i, 1])
        if abs(den) <= EPS32:
            if num < 0:
                return None
            continue
        t = num / den
        if den >= 0:
            t_right = min(t_right, t)
        else:
            t_left = max(t_left, t)
        if t_left > t_right:
            return None
    if direction_opt:
        t = t_right if opt[0] * d[k, 0] + opt[1] * d[k, 1] > 0 else t_left
    else:
        t = d[k, 0] * (opt[0] - p[k, 0]) + d[k, 1] * (opt[1] - p[k, 1])
        t = t_left if t < t_left else (t_right if t > t_right else t)
    return np.array([p[k, 0] + t * d[k, 0], p[k, 1] + t * d[k, 1]], F32)


def _incremental32(p, d, speed, opt, direction_opt):
    if direction_opt:
        result = opt * speed
    elif opt[0] * opt[0] + opt[1] * opt[1] > speed * speed:
        result = opt * (F32(1) / np.sqrt(opt[0] * opt[0] + opt[1] * opt[1])) * speed
    else:
        result = opt.copy()
    for i in range(len(p)):
        if _det32(d[i, 0], d[i, 1], p[i, 0] - result[0], p[i, 1] - result[1]) > 0:
            new = _on_line32(p, d, i, speed, opt, direction_opt)
            if new is None:
                return i, result
            result = new
    return len(p), result


def solve_float32(points, directions, n_hard, speed, pref):
    """RVO2's linearProgram2/3 in single precision (numpy float32 scalars), to show that a
    residual disagreement is RVO2's own float32 rounding."""
    p = np.asarray(points, F32)
    d = np.asarray(directions, F32)
    speed = F32(speed)
    fail, result = _incremental32(p, d, speed, np.asarray(pref, F32), False)
    if fail == len(p):
        return result.astype(np.float64)
    distance = F32(0)
    for i in range(fail, len(p)):
        if _det32(d[i, 0], d[i, 1], p[i, 0] - result[0], p[i, 1] - result[1]) > distance:
            proj_p, proj_d = list(p[:n_hard]), list(d[:n_hard])
            for j in range(n_hard, i):
                det = _det32(d[i, 0], d[i, 1], d[j, 0], d[j, 1])
                if abs(det) <= EPS32:
                    if d[i, 0] * d[j, 0] + d[i, 1] * d[j, 1] > 0:
                        continue
                    point = F32(0.5) * (p[i] + p[j])
                else:
                    s = _det32(d[j, 0], d[j, 1], p[i, 0] - p[j, 0], p[i, 1] - p[j, 1]) / det
                    point = p[i] + s * d[i]
                direction = d[j] - d[i]
                proj_p.append(point)
                proj_d.append(direction * (F32(1) / np.sqrt(direction @ direction)))
            proj_p = np.array(proj_p, F32).reshape(-1, 2)
            proj_d = np.array(proj_d, F32).reshape(-1, 2)
            ok, new = _incremental32(proj_p, proj_d, speed, np.array([-d[i, 1], d[i, 0]], F32),
                                     True)
            if ok == len(proj_p):
                result = new
            distance = _det32(d[i, 0], d[i, 1], p[i, 0] - result[0], p[i, 1] - result[1])
    return result.astype(np.float64)


#: Half-planes "equal to float32 tolerance": each component of ours within
#: ``LINE_FACTOR * (spread + EPS32 * (1 + |value|))`` of RVO2's, where ``spread`` is how far
#: the component moves when the state is perturbed at float32 rounding level (relative
#: ``EPS32``, ``LINE_SAMPLES`` draws).  The spread is the line's own conditioning: about
#: ``EPS32 * |value|`` for most lines, far more for a leg tangent to a disc the agent nearly
#: touches (``sqrt(d^2 - R^2)``), where RVO2's float32 line is only that good.
EPS32 = float(np.finfo(np.float32).eps)
LINE_SAMPLES = 6
LINE_FACTOR = 8.0


def agent_half_planes(sim, i, rvo2_neighbors):
    """Agent ``i``'s half-planes of the simulator's last step in RVO2's order: hard lines,
    then one per agent neighbour in the order of ``rvo2_neighbors`` (ties in distance may be
    ordered differently).  None when the neighbour sets differ."""
    points, dirs = sim.orca_lines(i)
    hard = int(sim.last_result.num_hard_lines[i])
    ours = [int(j) for j in sim.neighbors(i)]
    if sorted(ours) != sorted(int(j) for j in rvo2_neighbors):
        return None
    order = [ours.index(int(j)) for j in rvo2_neighbors]
    return (np.vstack([points[:hard], points[hard:][order]]),
            np.vstack([dirs[:hard], dirs[hard:][order]]))


def float32_spread(sim, rec, agents, rng):
    """Per agent of ``agents``: ``(points, directions)`` of the largest change of each
    half-plane component over ``LINE_SAMPLES`` steps from ``rec``'s state perturbed at float32
    rounding level.  Leaves the simulator's state perturbed (callers reset it per state)."""
    base = {i: agent_half_planes(sim, i, rec.neighbors[i]) for i in agents}
    spread = {i: (np.zeros_like(b[0]), np.zeros_like(b[1])) for i, b in base.items()
              if b is not None}
    shape = rec.positions.shape
    for _ in range(LINE_SAMPLES):
        sim.positions = rec.positions * (1.0 + EPS32 * rng.uniform(-1.0, 1.0, shape))
        sim.velocities = rec.velocities * (1.0 + EPS32 * rng.uniform(-1.0, 1.0, shape))
        sim.step()
        for i in spread:
            lines = agent_half_planes(sim, i, rec.neighbors[i])
            if lines is None or lines[0].shape != base[i][0].shape:
                continue  # a neighbour (or obstacle edge) entered or left: no information
            spread[i] = (np.maximum(spread[i][0], np.abs(lines[0] - base[i][0])),
                         np.maximum(spread[i][1], np.abs(lines[1] - base[i][1])))
    return spread


def half_plane_mismatch(ours, rvo2, spread) -> float:
    """Largest difference between our and RVO2's half-planes of one agent, in units of the
    float32 tolerance (<= 1: equal to float32 tolerance); inf when the counts differ."""
    (points, dirs), (rvo_points, rvo_dirs) = ours, rvo2
    if points.shape != rvo_points.shape:
        return np.inf
    if points.size == 0:
        return 0.0
    tol_points = LINE_FACTOR * (spread[0] + EPS32 * (1.0 + np.abs(points)))
    tol_dirs = LINE_FACTOR * (spread[1] + EPS32 * (1.0 + np.abs(dirs)))
    return float(max((np.abs(points - rvo_points) / tol_points).max(),
                     (np.abs(dirs - rvo_dirs) / tol_dirs).max()))


def oracle_simulator(run) -> OrcaSimulator:
    """Our simulator (RVO2-faithful mode) set up like the oracle run's."""
    sim = OrcaSimulator(*run.params)
    n = run.steps[0].positions.shape[0]
    for _ in range(n):
        sim.add_agent((0.0, 0.0))
    for poly in run.obstacles:
        sim.add_obstacle(poly)
    sim.process_obstacles()
    for name, values in run.per_agent.items():
        for i in range(n):
            sim.set_agent(i, **{name: values[i]})
    return sim


def replay(run, sim=None):
    """Our step from every recorded state of an oracle run (``sim``: default the
    RVO2-faithful :func:`oracle_simulator`).

    Returns ``(errors, unexplained, explained, neighbor_mismatch)``: all per-agent maximum
    velocity differences, the disagreements (> ``TOLERANCE``) that are not explained by
    RVO2's float32 rounding (see test_rvo2_agreement) as ``(step, agent, error, reason)``, the
    number that are, and the number of agents whose neighbour set differs from RVO2's.

    A disagreement is explained when (1) the neighbour sets are equal, (2) our half-planes
    equal RVO2's to float32 tolerance (:func:`half_plane_mismatch` <= 1), and (3) our program
    on RVO2's half-planes, or the same program in float32 (:func:`solve_float32`), gives
    RVO2's velocity.  Reasons: ``"neighbours"``, ``"program"``, ``"half-planes"`` (the first
    condition that fails; a half-plane bug fails (2) even where (3) holds).
    """
    if sim is None:
        sim = oracle_simulator(run)
    n = run.steps[0].positions.shape[0]
    rng = np.random.default_rng(0)
    errors, unexplained, explained, neighbor_mismatch = [], [], 0, 0
    speed = sim.agent_parameter("max_speed")
    for rec in run.steps:
        sim.positions = rec.positions
        sim.velocities = rec.velocities
        sim.set_pref_velocities(rec.pref_velocities)
        result = sim.step()
        err = np.abs(result.velocities - rec.new_velocities).max(axis=1)
        errors.append(err)
        for i in range(n):
            if sorted(sim.neighbors(i)) != sorted(rec.neighbors[i]):
                neighbor_mismatch += 1
        residual = [int(i) for i in np.nonzero(err > TOLERANCE)[0]]
        if not residual:
            continue
        ours = {i: agent_half_planes(sim, i, rec.neighbors[i]) for i in residual}
        hard = {i: int(result.num_hard_lines[i]) for i in residual}
        spread = float32_spread(sim, rec, residual, rng)
        for i in residual:
            rvo_points, rvo_dirs = rec.lines[i]
            pref = rec.pref_velocities[i]
            if ours[i] is None:
                unexplained.append((rec.step, i, float(err[i]), "neighbours"))
                continue
            # Either the rounding of RVO2's half-planes explains it (our program on RVO2's
            # half-planes gives RVO2's answer) or the float32 arithmetic of RVO2's program
            # does (the same program in float32 gives RVO2's answer) ...
            reproduced = len(rvo_points) == len(ours[i][0]) and (
                np.allclose(_solve(rvo_points, rvo_dirs, hard[i], speed[i], pref),
                            rec.new_velocities[i], atol=1e-5)
                or np.allclose(solve_float32(rvo_points, rvo_dirs, hard[i], speed[i], pref),
                               rec.new_velocities[i], atol=1e-5))
            if not reproduced:
                unexplained.append((rec.step, i, float(err[i]), "program"))
            # ... and only if our half-planes are RVO2's up to float32 rounding.
            elif half_plane_mismatch(ours[i], (rvo_points, rvo_dirs), spread[i]) > 1.0:
                unexplained.append((rec.step, i, float(err[i]), "half-planes"))
            else:
                explained += 1
    return np.concatenate(errors), unexplained, explained, neighbor_mismatch


def half_plane_agreement(run, every=1):
    """Compare every agent's half-planes with RVO2's in every ``every``-th recorded state.

    Returns ``(checked, worst)``: agents compared and the largest
    :func:`half_plane_mismatch` (<= 1: all equal to float32 tolerance; inf: a count or
    neighbour set differs).
    """
    sim = oracle_simulator(run)
    n = run.steps[0].positions.shape[0]
    rng = np.random.default_rng(0)
    checked, worst = 0, 0.0
    for rec in run.steps[::every]:
        sim.positions = rec.positions
        sim.velocities = rec.velocities
        sim.set_pref_velocities(rec.pref_velocities)
        sim.step()
        ours = {i: agent_half_planes(sim, i, rec.neighbors[i]) for i in range(n)}
        spread = float32_spread(sim, rec, range(n), rng)
        for i in range(n):
            checked += 1
            if ours[i] is None:
                return checked, np.inf
            worst = max(worst, half_plane_mismatch(ours[i], rec.lines[i], spread[i]))
    return checked, worst
