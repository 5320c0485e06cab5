"""RVO2's example scenarios and recorded RVO2 (pyrvo) steps, shared by the ORCA tests.

pyrvo wraps the C++ RVO2 library and is the oracle.  An oracle run drives pyrvo through a
scenario and records, at sampled steps, the state before the step (positions, velocities,
preferred velocities, all float32 values as RVO2 stores them), RVO2's new velocities and,
for later diagnosis, its neighbours and ORCA lines.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import pyrvo

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
    for step in range(steps):
        pos = _read(sim, n, "get_agent_position")
        vel = _read(sim, n, "get_agent_velocity")
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
    return OracleRun(params, list(obstacles), recorded, dict(per_agent or {}))


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


def replay(run):
    """Our step from every recorded state of an oracle run.

    Returns ``(errors, unexplained, explained, neighbor_mismatch)``: all per-agent maximum
    velocity differences, the disagreements (> ``TOLERANCE``) that are not explained by
    float32 rounding of RVO2's half-planes (see test_rvo2_agreement), the number that are,
    and the number of agents whose neighbour set differs from RVO2's.
    """
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
        for i in np.nonzero(err > TOLERANCE)[0]:
            rvo_points, rvo_dirs = rec.lines[i]
            ours_points, _ = sim.orca_lines(i)
            same_neighbors = sorted(sim.neighbors(i)) == sorted(rec.neighbors[i])
            same_count = len(rvo_points) == len(ours_points)
            hard = result.num_hard_lines[i]
            pref = rec.pref_velocities[i]
            # Either the rounding of RVO2's half-planes explains it (our program on RVO2's
            # half-planes gives RVO2's answer) or the float32 arithmetic of RVO2's program
            # does (the same program in float32 gives RVO2's answer).
            reproduced = same_count and (
                np.allclose(_solve(rvo_points, rvo_dirs, hard, speed[i], pref),
                            rec.new_velocities[i], atol=1e-5)
                or np.allclose(solve_float32(rvo_points, rvo_dirs, hard, speed[i], pref),
                               rec.new_velocities[i], atol=1e-5))
            if same_neighbors and reproduced:
                explained += 1
            else:
                unexplained.append((rec.step, int(i), float(err[i])))
    return np.concatenate(errors), unexplained, explained, neighbor_mismatch
