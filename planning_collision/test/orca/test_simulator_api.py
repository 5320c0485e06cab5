"""OrcaSimulator and compute_velocities: the public API, its conventions and its checks."""

import numpy as np
import pyrvo
import pytest
from orca_scenarios import CIRCLE_PARAMS, circle_positions, goal_velocities

from planning_collision.orca import (
    ConstraintLines,
    OrcaSimulator,
    build_obstacles,
    compute_velocities,
    warmup,
)

BASE = dict(time_step=0.25, radius=1.5, max_speed=2.0, neighbor_dist=15.0, max_neighbors=10,
            time_horizon=10.0, time_horizon_obst=10.0)


def crowd(n=40, seed=0):
    rng = np.random.default_rng(seed)
    pos = circle_positions(n, 12.0) + rng.uniform(-0.3, 0.3, (n, 2))
    vel = rng.uniform(-1, 1, (n, 2))
    return pos, vel, goal_velocities(pos, -pos)


def test_defaults_are_those_of_rvo2_circle_example():
    sim = OrcaSimulator()
    assert sim.time_step == 0.25
    assert sim.add_agent((0, 0)) == 0 and sim.add_agent((5, 0), radius=0.5) == 1
    assert list(sim.agent_parameter("radius")) == [1.5, 0.5]
    assert list(sim.agent_parameter("max_neighbors")) == [10, 10]
    assert sim.agent_parameter("neighbor_dist")[0] == 15.0
    assert sim.agent_parameter("time_horizon")[0] == sim.agent_parameter("time_horizon_obst")[0]
    assert sim.agent_parameter("max_speed")[0] == 2.0
    assert sim.agent_parameter("responsibility")[0] == 0.5


def test_step_sets_velocity_then_moves_by_it():
    sim = OrcaSimulator()
    sim.add_agent((0.0, 0.0), velocity=(0.3, 0.0))
    sim.set_pref_velocities([[1.0, 1.0]])
    result = sim.step()
    assert np.allclose(sim.velocities, [[1.0, 1.0]]) and np.array_equal(
        sim.velocities, result.velocities)
    assert np.allclose(sim.positions, [[0.25, 0.25]])
    assert sim.global_time == 0.25 and sim.step_count == 1


def test_state_can_be_assigned_to_resume():
    pos, vel, pref = crowd()
    a, b = OrcaSimulator(), OrcaSimulator()
    for p in pos:
        a.add_agent(p)
        b.add_agent((0, 0))
    a.velocities = vel
    for _ in range(5):
        a.set_pref_velocities(goal_velocities(a.positions, -pos))
        a.step()
    b.positions, b.velocities = a.positions, a.velocities
    b.step_count = a.step_count
    a.set_pref_velocities(pref)
    b.set_pref_velocities(pref)
    assert np.array_equal(a.step().velocities, b.step().velocities)


def test_orca_lines_and_neighbors_are_rvo2s():
    pos, vel, pref = crowd()
    pos, vel, pref = (np.asarray(x, np.float32).astype(float) for x in (pos, vel, pref))
    ours, rvo = OrcaSimulator(*CIRCLE_PARAMS), pyrvo.RVOSimulator(*CIRCLE_PARAMS)
    for i in range(len(pos)):
        ours.add_agent(pos[i], velocity=vel[i])
        rvo.add_agent(tuple(pos[i]), 15.0, 10, 10.0, 10.0, 1.5, 2.0, tuple(vel[i]))
        rvo.set_agent_pref_velocity(i, tuple(pref[i]))
    assert ours.orca_lines(0)[0].shape == (0, 2)  # nothing before the first step
    ours.set_pref_velocities(pref)
    result = ours.step()
    rvo.do_step()
    for i in range(len(pos)):
        points, dirs = ours.orca_lines(i)
        lines = [rvo.get_agent_orca_line(i, k) for k in range(rvo.get_agent_num_orca_lines(i))]
        assert points.shape == (len(lines), 2)
        assert np.abs(dirs - [ln[0] for ln in lines]).max() < 1e-5
        assert np.abs(points - [ln[1] for ln in lines]).max() < 1e-5
        neighbors = [rvo.get_agent_agent_neighbor(i, k)
                     for k in range(rvo.get_agent_num_agent_neighbors(i))]
        assert list(ours.neighbors(i)) == neighbors
        assert result.num_neighbors[i] == len(neighbors)
        # Permitted side: the new velocity is left of (or on) every line.
        v = result.velocities[i]
        if not result.infeasible[i]:
            assert np.all(dirs[:, 0] * (v[1] - points[:, 1])
                          - dirs[:, 1] * (v[0] - points[:, 0]) >= -1e-9)


def test_compute_velocities_is_the_simulators_step_and_returns_csr_lines():
    pos, vel, pref = crowd(60)
    obstacles = build_obstacles([[(-2, -2), (2, -2), (2, 2), (-2, 2)]])
    sim = OrcaSimulator()
    for p, v in zip(pos, vel, strict=True):
        sim.add_agent(p, velocity=v)
    sim.add_obstacle([(-2, -2), (2, -2), (2, 2), (-2, 2)])
    sim.process_obstacles()
    sim.set_pref_velocities(pref)
    stepped = sim.step()
    r = compute_velocities(pos, vel, pref, **BASE, obstacles=obstacles, return_lines=True,
                           return_neighbors=True)
    assert np.array_equal(r.velocities, stepped.velocities)
    assert r.lines.offsets.shape == (61,) and r.neighbors.offsets.shape == (61,)
    assert np.array_equal(np.diff(r.lines.offsets), r.num_lines)
    assert np.array_equal(np.diff(r.neighbors.offsets), r.num_neighbors)
    for i in range(60):
        a, b = r.lines.offsets[i], r.lines.offsets[i + 1]
        points, dirs = sim.orca_lines(i)
        assert np.array_equal(points, r.lines.points[a:b])
        assert np.array_equal(dirs, r.lines.directions[a:b])
        a, b = r.neighbors.offsets[i], r.neighbors.offsets[i + 1]
        assert np.array_equal(sim.neighbors(i), r.neighbors.indices[a:b])
    assert r.num_hard_lines.max() > 0 and r.infeasible.dtype == bool


def test_threads_do_not_change_the_result():
    rng = np.random.default_rng(4)
    n = 3000
    pos = rng.uniform(-150, 150, (n, 2))
    vel = rng.uniform(-1, 1, (n, 2))
    one = compute_velocities(pos, vel, -pos / 150, **BASE, threads=1, return_lines=True)
    two = compute_velocities(pos, vel, -pos / 150, **BASE, threads=2, return_lines=True)
    assert np.array_equal(one.velocities, two.velocities)
    assert np.array_equal(one.lines.points, two.lines.points)


def test_constraint_lines_are_hard():
    # Agent 0 may not move with positive x: point (0, 0), direction (0, 1) (left: x <= 0).
    lines = ConstraintLines(np.array([0, 1, 1]), np.array([[0.0, 0.0]]),
                            np.array([[0.0, 1.0]]))
    pos = np.array([[0.0, 0.0], [50.0, 0.0]])
    pref = np.array([[1.0, 0.5], [1.0, 0.0]])
    r = compute_velocities(pos, pref, pref, **BASE, constraint_lines=lines)
    assert np.allclose(r.velocities, [[0.0, 0.5], [1.0, 0.0]]) and r.num_hard_lines[0] == 1


def test_empty_simulation():
    sim = OrcaSimulator()
    result = sim.step()
    assert result.velocities.shape == (0, 2) and sim.positions.shape == (0, 2)
    r = compute_velocities(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), **BASE,
                           return_lines=True)
    assert r.lines.offsets.tolist() == [0]


@pytest.mark.parametrize("change, message", [
    (dict(positions=np.full((3, 2), np.nan)), "positions contains NaN"),
    (dict(positions=np.zeros((3, 3))), "positions must have shape"),
    (dict(velocities=np.zeros((2, 2))), "velocities must have shape"),
    (dict(radius=-1.0), r"radius must be finite and in \[0, 1e\+09\], got -1.0"),
    (dict(radius=[1.0, 1.0]), "radius must be a scalar or have shape"),
    (dict(time_horizon=0.0), r"time_horizon must be finite and in \[1e-09, 1e\+09\], got 0.0"),
    (dict(max_neighbors=2.5), "max_neighbors must hold whole numbers"),
    (dict(max_neighbors=-1), "max_neighbors must be >= 0"),
    (dict(responsibility=1.5), r"responsibility must be finite and in \[0, 1\], got 1.5"),
    (dict(time_step=float("inf")), r"time_step must be finite and in \[1e-09, 1e\+09\], got inf"),
    (dict(reactive=[1, 0, 1]), "reactive must be boolean"),
    (dict(obstacles=[[0, 0], [1, 1]]), "obstacles must be an ObstacleTree"),
    (dict(threads=0), "threads must be a positive integer"),
    (dict(seed="x"), "seed must be an integer"),
    (dict(keep_apart=True, keep_apart_margin=-0.1),
     r"keep_apart_margin must be finite and in \[0, 1e\+09\], got -0.1"),
])
def test_bad_input_raises_value_error(change, message):
    args = dict(positions=np.zeros((3, 2)) + [[0, 0], [5, 0], [0, 5]],
                velocities=np.zeros((3, 2)), pref_velocities=np.zeros((3, 2)), **BASE)
    args.update(change)
    with pytest.raises(ValueError, match=message):
        compute_velocities(**args)


def test_simulator_rejects_bad_input():
    sim = OrcaSimulator()
    with pytest.raises(ValueError, match="radius"):
        sim.add_agent((0, 0), radius=-0.1)
    with pytest.raises(ValueError, match="unknown agent parameter"):
        sim.add_agent((0, 0), colour="red")
    with pytest.raises(ValueError, match="position contains NaN"):
        sim.add_agent((np.nan, 0))
    sim.add_agent((0, 0))
    with pytest.raises(ValueError, match="positions must have shape"):
        sim.positions = np.zeros((2, 2))
    with pytest.raises(ValueError, match="pref_velocities contains NaN"):
        sim.set_pref_velocities([[np.inf, 0.0]])
    with pytest.raises(ValueError, match="at least 2 vertices"):
        sim.add_obstacle([(0, 0)])
    with pytest.raises(ValueError, match="out of range"):
        sim.orca_lines(3)
    with pytest.raises(ValueError, match="time_step"):
        OrcaSimulator(time_step=-1)


def test_add_obstacle_returns_first_vertex_and_applies_on_process():
    sim = OrcaSimulator()
    assert sim.add_obstacle([(0, 0), (1, 0), (1, 1)]) == 0
    assert sim.add_obstacle([(5, 5), (6, 5)]) == 3
    assert sim.query_visibility((0.5, -5), (0.5, 5))  # not processed yet
    sim.process_obstacles()
    assert not sim.query_visibility((0.5, -5), (0.5, 5))
    assert sim.query_visibility((-5, -5), (-5, 5), 0.5)


def test_warmup_runs_every_kernel():
    assert warmup() >= 0.0
