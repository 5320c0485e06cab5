"""Whole scenarios: Circle (250 and 32 agents), Blocks, a head-on pair."""

import numpy as np
from orca_scenarios import (
    BLOCKS_OBSTACLES,
    BLOCKS_PARAMS,
    CIRCLE_PARAMS,
    blocks_agents,
    circle_positions,
    goal_velocities,
)
from scipy.spatial import cKDTree

from planning_collision.orca import OrcaSimulator

# Symmetry breaking "on": RVO2-sized deterministic noise, a side preference and the hard
# separation half-planes (which keep pairs apart when ORCA's program is infeasible).
SYMMETRY_BREAKING = dict(symmetry_breaking=1e-4, side_preference=0.35, keep_apart=True)


def closest_pair(positions: np.ndarray, below: float) -> float:
    """Smallest pairwise distance if some pair is closer than ``below``, else ``below``."""
    pairs = cKDTree(positions).query_pairs(below, output_type="ndarray")
    if len(pairs) == 0:
        return below
    d = positions[pairs[:, 0]] - positions[pairs[:, 1]]
    return float(np.hypot(d[:, 0], d[:, 1]).min())


def run_circle(n, radius, steps, **options):
    sim = OrcaSimulator(*CIRCLE_PARAMS, **options)
    starts = circle_positions(n, radius)
    for p in starts:
        sim.add_agent(p)
    goals = -starts
    closest = np.inf
    arrived_at = None
    for step in range(steps + 1):
        pos = sim.positions
        closest = min(closest, closest_pair(pos, 3.0))
        dist = np.hypot(*(goals - pos).T)
        if arrived_at is None and np.all(dist <= 0.5):
            arrived_at = step
        if step < steps:
            sim.set_pref_velocities(goal_velocities(pos, goals))
            sim.step()
    return sim, closest, arrived_at, dist


def test_circle_250_with_symmetry_breaking_arrives_without_contact():
    sim, closest, arrived_at, dist = run_circle(250, 200.0, 2000, **SYMMETRY_BREAKING)
    assert closest >= 2 * 1.5 - 1e-6
    assert arrived_at is not None and arrived_at <= 2000, dist.max()
    assert np.all(dist <= 0.5)


def test_circle_32_locks_up_without_symmetry_breaking_and_not_with_it():
    # RVO2 itself never resolves this perfectly symmetric ring (nor does our faithful mode).
    _, _, arrived_plain, dist_plain = run_circle(32, 30.0, 2000)
    assert arrived_plain is None and dist_plain.max() > 10.0
    _, closest, arrived, _ = run_circle(32, 30.0, 2000, **SYMMETRY_BREAKING)
    assert arrived is not None
    assert closest >= 3.0 - 1e-6


def _box_clearance(positions):
    """Signed distance of each position to the nearest Blocks square (negative inside)."""
    best = np.full(len(positions), np.inf)
    for poly in BLOCKS_OBSTACLES:
        p = np.array(poly)
        lo, hi = p.min(axis=0), p.max(axis=0)
        outside = np.maximum(np.maximum(lo - positions, positions - hi), 0.0)
        dist = np.hypot(outside[:, 0], outside[:, 1])
        inside = np.all((positions > lo) & (positions < hi), axis=1)
        depth = np.min(np.minimum(positions - lo, hi - positions), axis=1)
        best = np.minimum(best, np.where(inside, -depth, dist))
    return best


def test_blocks_with_perturbation_keeps_agents_out_of_obstacles_and_apart():
    starts, goals = blocks_agents()
    sim = OrcaSimulator(*BLOCKS_PARAMS, symmetry_breaking=1e-4, keep_apart=True)
    for p in starts:
        sim.add_agent(p)
    for poly in BLOCKS_OBSTACLES:
        sim.add_obstacle(poly)
    sim.process_obstacles()
    radius = BLOCKS_PARAMS[5]
    closest, clearance, progress = np.inf, np.inf, []
    for _ in range(1500):
        pos = sim.positions
        closest = min(closest, closest_pair(pos, 2 * radius))
        clearance = min(clearance, float(_box_clearance(pos).min()))
        sim.set_pref_velocities(goal_velocities(pos, goals))
        sim.step()
        progress.append(np.hypot(*(goals - pos).T).mean())
    assert closest >= 2 * radius - 1e-6
    assert clearance >= radius - 1e-6
    # The crowd does move towards its goals (with hard separation the central crossing
    # eventually gridlocks: the agents stop rather than push through each other).
    assert progress[-1] < 0.7 * progress[0]


def test_blocks_rvo2_mode_keeps_agents_out_of_obstacles():
    """Without the extensions the obstacles still hold (RVO2's obstacle lines are hard)."""
    starts, goals = blocks_agents()
    sim = OrcaSimulator(*BLOCKS_PARAMS)
    for p in starts:
        sim.add_agent(p)
    for poly in BLOCKS_OBSTACLES:
        sim.add_obstacle(poly)
    sim.process_obstacles()
    rng = np.random.default_rng(3)
    clearance = np.inf
    for _ in range(1500):
        pos = sim.positions
        clearance = min(clearance, float(_box_clearance(pos).min()))
        angle = rng.random(len(pos)) * 2 * np.pi
        noise = rng.random(len(pos))[:, None] * 1e-4 * np.column_stack([np.cos(angle),
                                                                        np.sin(angle)])
        sim.set_pref_velocities(goal_velocities(pos, goals) + noise)
        sim.step()
    assert clearance >= BLOCKS_PARAMS[5] - 1e-6


def test_head_on_pair_passes():
    for options in ({}, SYMMETRY_BREAKING):
        sim = OrcaSimulator(*CIRCLE_PARAMS, **options)
        sim.add_agent((-10.0, 0.0))
        sim.add_agent((10.0, 0.0))
        goals = np.array([[10.0, 0.0], [-10.0, 0.0]])
        closest, swerve = np.inf, 0.0
        for _ in range(200):
            pos = sim.positions
            closest = min(closest, float(np.hypot(*(pos[0] - pos[1]))))
            swerve = max(swerve, float(np.abs(pos[:, 1]).max()))
            sim.set_pref_velocities(goal_velocities(pos, goals))
            sim.step()
        assert np.all(np.hypot(*(goals - sim.positions).T) < 1e-3)
        assert closest >= 3.0 - 1e-6
        assert swerve > 1.0  # they went around each other, not through
