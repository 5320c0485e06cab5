"""Features beyond RVO2: per-agent parameters, responsibility, symmetry breaking, side
preference, hard separation and gentle separation of overlapping agents."""

import numpy as np
from orca_scenarios import (
    BLOCKS_OBSTACLES,
    BLOCKS_PARAMS,
    CIRCLE_PARAMS,
    REQUIRED_FRACTION,
    TOLERANCE,
    blocks_agents,
    closest_pair,
    goal_velocities,
    record_rvo2,
    replay,
)

from planning_collision.orca import OrcaSimulator, build_obstacles, compute_velocities
from planning_collision.orca.symmetry_breaking import pair_direction, perturbation

BASE = dict(time_step=0.25, radius=1.5, max_speed=2.0, neighbor_dist=15.0, max_neighbors=10,
            time_horizon=10.0, time_horizon_obst=10.0)


def test_per_agent_parameters_agree_with_rvo2():
    """Heterogeneous radius, speed, range, neighbour count and horizons, against pyrvo."""
    rng = np.random.default_rng(7)
    n = 60
    starts = rng.uniform(-25.0, 25.0, (n, 2))
    keep = [0]
    for i in range(1, n):  # no overlaps at the start
        if np.all(np.hypot(*(starts[keep] - starts[i]).T) > 4.5):
            keep.append(i)
    starts = starts[keep]
    n = len(starts)
    per_agent = dict(radius=rng.uniform(0.5, 2.0, n), max_speed=rng.uniform(0.5, 2.5, n),
                     neighbor_dist=rng.uniform(5.0, 20.0, n),
                     max_neighbors=rng.integers(1, 12, n),
                     time_horizon=rng.uniform(2.0, 10.0, n),
                     time_horizon_obst=rng.uniform(2.0, 10.0, n))
    # RVO2 stores parameters as float32: give both sides the same values.
    per_agent = {k: (v if k == "max_neighbors" else v.astype(np.float32).astype(float))
                 for k, v in per_agent.items()}
    run = record_rvo2(CIRCLE_PARAMS, starts, -starts, steps=400, every=4, per_agent=per_agent)
    errors, unexplained, _, neighbor_mismatch = replay(run)
    assert len(run.steps) >= 100
    assert np.mean(errors <= TOLERANCE) >= REQUIRED_FRACTION
    assert unexplained == [] and neighbor_mismatch == 0


def test_max_speed_is_per_agent():
    sim = OrcaSimulator(*CIRCLE_PARAMS)
    sim.add_agent((0.0, 0.0), max_speed=0.5)
    sim.add_agent((50.0, 0.0), max_speed=3.0)
    sim.set_pref_velocities([[10.0, 0.0], [-10.0, 0.0]])
    v = sim.step().velocities
    assert np.allclose(np.hypot(*v.T), [0.5, 3.0])


def encounter(person_responsibility, steps=32):
    """A person who does not avoid walks at a robot, head-on, from 3 m (a sudden encounter)."""
    sim = OrcaSimulator(0.25, 10.0, 10, 4.0, 4.0, 0.5, 1.5)
    sim.add_agent((-1.5, 0.0))  # robot, wants to go +x at 1 m/s
    sim.add_agent((1.5, 0.05), responsibility=person_responsibility, reactive=False)
    closest = np.inf
    person_track = []
    for _ in range(steps):
        pos = sim.positions
        closest = min(closest, float(np.hypot(*(pos[0] - pos[1]))))
        person_track.append(pos[1].copy())
        sim.set_pref_velocities([[1.0, 0.0], [-1.5, 0.0]])
        sim.step()
    return closest, np.array(person_track)


def test_non_reactive_agent_is_avoided_with_full_responsibility():
    closest_full, track = encounter(1.0)
    assert closest_full >= 1.0 - 1e-6
    # The person kept walking straight at its preferred velocity.
    assert np.allclose(track[:, 1], 0.05) and np.allclose(np.diff(track[:, 0]), -0.375)
    # With the reciprocal default the robot takes only half of the avoidance: collision.
    closest_half, _ = encounter(0.5)
    assert closest_half < 1.0 - 0.02


def _closest_approach(rel_pos, rel_vel, horizon):
    """Smallest ``|rel_pos + t * rel_vel|`` for ``t`` in ``[0, horizon]``; ``rel_pos`` and
    ``rel_vel`` are the other agent's position and velocity relative to the robot."""
    speed_sq = rel_vel @ rel_vel
    t = 0.0 if speed_sq == 0 else float(np.clip(-(rel_pos @ rel_vel) / speed_sq, 0, horizon))
    return float(np.hypot(*(rel_pos + t * rel_vel)))


def test_full_responsibility_alone_leaves_the_velocity_obstacle():
    """One step: the robot's new velocity alone (the other keeps its velocity) is
    collision-free for the time horizon with share 1.0, not with share 0.5."""
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(100):
        angle = rng.uniform(0, 2 * np.pi)
        other = rng.uniform(4.0, 8.0) * np.array([np.cos(angle), np.sin(angle)])
        pos = np.array([[0.0, 0.0], other])
        vel = np.array([other / np.hypot(*other), rng.uniform(-1, 1, 2)])
        if _closest_approach(other, vel[1] - vel[0], 10.0) > 2.5:
            continue  # no real conflict
        closest = {}
        for share in (0.5, 1.0):
            r = compute_velocities(pos, vel, vel, **BASE, responsibility=[0.5, share],
                                   reactive=[True, False])
            assert not r.infeasible[0]
            closest[share] = _closest_approach(other, vel[1] - r.velocities[0], 10.0)
        assert closest[1.0] >= 3.0 - 1e-9
        assert closest[0.5] < 3.0 - 1e-3  # half an escape is not an escape
        checked += 1
    assert checked >= 20


def test_responsibility_moves_the_half_plane():
    """The line point is v + share * u: share 1.0 moves it twice as far as 0.5."""
    pos = np.array([[0.0, 0.0], [4.0, 0.5]])
    vel = np.array([[1.0, 0.0], [-1.0, 0.0]])
    lines = {}
    for share in (0.5, 1.0):
        r = compute_velocities(pos, vel, vel, **BASE, responsibility=[0.5, share],
                               return_lines=True)
        lines[share] = r.lines.points[r.lines.offsets[0]]
    assert np.allclose(lines[1.0] - vel[0], 2.0 * (lines[0.5] - vel[0]))


def test_symmetry_breaking_is_deterministic_and_bounded():
    offsets = np.array([perturbation(i, 5, 1e-3) for i in range(1000)])
    assert np.all(np.hypot(*offsets.T) < 1e-3)
    assert np.std(offsets[:, 0]) > 2e-4  # spread in all directions
    again = np.array([perturbation(i, 5, 1e-3) for i in range(1000)])
    assert np.array_equal(offsets, again)
    other = np.array([perturbation(i, 6, 1e-3) for i in range(1000)])
    assert not np.array_equal(offsets, other)
    d01 = np.array(pair_direction(0, 1))
    assert np.allclose(np.array(pair_direction(1, 0)), -d01) and np.isclose(np.hypot(*d01), 1)


def test_symmetry_breaking_perturbs_only_the_target():
    rng = np.random.default_rng(2)
    pos = rng.uniform(-10, 10, (30, 2))
    vel = rng.uniform(-1, 1, (30, 2))
    plain = compute_velocities(pos, vel, vel, **BASE).velocities
    a = compute_velocities(pos, vel, vel, **BASE, symmetry_breaking=1e-4, seed=3).velocities
    b = compute_velocities(pos, vel, vel, **BASE, symmetry_breaking=1e-4, seed=3).velocities
    c = compute_velocities(pos, vel, vel, **BASE, symmetry_breaking=1e-4, seed=4).velocities
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.abs(a - plain).max() < 1e-3


def test_side_preference_shifts_constrained_agents_to_the_right():
    rng = np.random.default_rng(5)
    shifted = 0
    for _ in range(200):
        pos = np.array([[0.0, 0.0], rng.uniform(-6, 6, 2)])
        if np.hypot(*pos[1]) < 3.5:
            continue
        pref = np.array([[1.0, 0.0], rng.uniform(-1, 1, 2)])
        vel = pref.copy()
        plain = compute_velocities(pos, vel, pref, **BASE)
        if plain.infeasible[0]:
            continue
        for side in (0.35, -0.35):
            lean = compute_velocities(pos, vel, pref, **BASE, side_preference=side)
            right = -(lean.velocities[0, 1] - plain.velocities[0, 1])  # right of +x is -y
            assert np.sign(side) * right >= -1e-12
            shifted += abs(right) > 1e-3
    assert shifted > 20


def test_side_preference_ignores_obstacles_alone():
    """An agent pressed against a wall slides along it; side preference (meant for other
    agents) must not cancel the sliding, which would pin it to the wall for good."""
    wall = build_obstacles([[(0.0, -10.0), (10.0, -10.0), (10.0, 10.0), (0.0, 10.0)]])
    pos = np.array([[-1.5, 0.0]])  # touching the wall's face x = 0
    pref = np.array([[0.94, 0.34]])  # towards a goal behind the wall
    plain = compute_velocities(pos, pref, pref, **BASE, obstacles=wall)
    lean = compute_velocities(pos, pref, pref, **BASE, obstacles=wall, side_preference=0.35)
    assert np.array_equal(lean.velocities, plain.velocities)
    assert abs(lean.velocities[0, 0]) < 1e-9 and lean.velocities[0, 1] > 0.3  # slides
    # Held back by an oncoming agent (with the wall's half-plane still in its program), it
    # leans to the right again.
    pos2 = np.array([[-15.0, 0.0], [-9.0, 0.5]])
    pref2 = np.array([[0.94, 0.34], [-1.0, 0.0]])
    plain = compute_velocities(pos2, pref2, pref2, **BASE, obstacles=wall)
    lean = compute_velocities(pos2, pref2, pref2, **BASE, obstacles=wall, side_preference=0.35)
    assert plain.num_hard_lines[0] >= 1
    right = np.array([pref2[0, 1], -pref2[0, 0]])
    assert (lean.velocities[0] - plain.velocities[0]) @ right > 1e-3


def test_side_preference_leaves_free_agents_alone():
    pos = np.array([[0.0, 0.0], [100.0, 0.0]])
    pref = np.array([[1.0, 0.0], [0.0, 1.0]])
    r = compute_velocities(pos, pref, pref, **BASE, side_preference=0.35)
    assert np.array_equal(r.velocities, pref)


def dense_swap(**options):
    """Two 5x5 blocks of agents (radius 0.5, 1.2 apart) swapping places."""
    grid = np.array([(x, y) for x in range(5) for y in range(5)], float) * 1.2
    starts = np.vstack([grid - [8.0, 2.4], grid + [3.2, -2.4]])
    goals = np.vstack([grid + [3.2, -2.4], grid - [8.0, 2.4]])
    sim = OrcaSimulator(0.1, 5.0, 10, 2.0, 2.0, 0.5, 1.5, **options)
    for p in starts:
        sim.add_agent(p)
    closest = np.inf
    for _ in range(400):
        pos = sim.positions
        d = pos[:, None, :] - pos[None, :, :]
        dist = np.hypot(d[..., 0], d[..., 1]) + np.eye(len(pos)) * 1e9
        closest = min(closest, float(dist.min()))
        sim.set_pref_velocities(goal_velocities(pos, goals) * 1.5)
        sim.step()
    return closest


def test_keep_apart_prevents_the_overlaps_of_an_infeasible_crowd():
    assert dense_swap() < 1.0 - 1e-3  # plain ORCA (RVO2) lets this crowd overlap
    assert dense_swap(keep_apart=True) >= 1.0 - 1e-6


def test_keep_apart_lines_are_hard_and_contain_zero():
    pos = np.array([[0.0, 0.0], [3.2, 0.0], [0.0, 3.1]])
    vel = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, -2.0]])
    r = compute_velocities(pos, vel, vel, **BASE, keep_apart=True, return_lines=True)
    for i in range(3):
        a, b = r.lines.offsets[i], r.lines.offsets[i + 1]
        hard = slice(a, a + r.num_hard_lines[i])
        # Pairs that can touch within the step: (0, 1) and (0, 2); 1 and 2 are 4.45 apart
        # and at most 3 + 4 * 0.25 = 4 can be closed.
        assert r.num_hard_lines[i] == (2 if i == 0 else 1)
        assert r.num_obstacle_lines[i] == 0  # separations are hard, but not obstacles
        p, d = r.lines.points[hard], r.lines.directions[hard]
        # The zero velocity is permitted (left of, or on, each direction).
        assert np.all(d[:, 0] * (0 - p[:, 1]) - d[:, 1] * (0 - p[:, 0]) >= 0)
        assert b - a == r.num_hard_lines[i] + r.num_neighbors[i]


def test_keep_apart_margin_enlarges_only_the_agent_half_planes():
    rng = np.random.default_rng(4)
    pos = rng.uniform(-8, 8, (25, 2))
    vel = rng.uniform(-1, 1, (25, 2))
    pref = goal_velocities(pos, -pos)

    def lines(**options):
        r = compute_velocities(pos, vel, pref, **{**BASE, **options}, return_lines=True)
        hard = np.zeros(r.lines.points.shape[0], dtype=bool)
        for i in range(len(pos)):
            hard[r.lines.offsets[i]:r.lines.offsets[i] + r.num_hard_lines[i]] = True
        return r, hard

    r, hard = lines(keep_apart=True, keep_apart_margin=0.05)
    assert hard.any() and (~hard).any()
    # The agent half-planes are those of radii 5 % larger ...
    bigger, hard_bigger = lines(radius=1.5 * (1.0 + 0.05))
    assert np.array_equal(r.lines.points[~hard], bigger.lines.points[~hard_bigger])
    assert np.array_equal(r.lines.directions[~hard], bigger.lines.directions[~hard_bigger])
    # ... while the separation half-planes are those of the real radii.
    none, hard_none = lines(keep_apart=True, keep_apart_margin=0.0)
    assert np.array_equal(r.lines.points[hard], none.lines.points[hard_none])
    assert not np.array_equal(r.lines.points[~hard], none.lines.points[~hard_none])
    # Without keep_apart the margin is ignored: RVO2's half-planes, bit for bit.
    plain, _ = lines()
    ignored, _ = lines(keep_apart_margin=0.3)
    assert np.array_equal(plain.velocities, ignored.velocities)
    assert np.array_equal(plain.lines.points, ignored.lines.points)


def test_keep_apart_margin_keeps_a_pressed_crowd_moving():
    """Touching agents at rest are a fixed point of ORCA; the margin gets them moving.

    RVO2's Blocks with keep_apart and no margin freezes in the central crossing: every pair
    stops exactly at contact, and from that state neither that mode nor RVO2's own
    half-planes move anyone (all velocities within rounding of zero).  With the margin the
    pressed agents see their neighbours as overlapping, get parting velocities from the
    least-violation program, and the crowd moves again, still without an overlap.
    """
    starts, goals = blocks_agents()
    sim = OrcaSimulator(*BLOCKS_PARAMS, symmetry_breaking=1e-4, keep_apart=True,
                        keep_apart_margin=0.0)
    for p in starts:
        sim.add_agent(p)
    for poly in BLOCKS_OBSTACLES:
        sim.add_obstacle(poly)
    sim.process_obstacles()
    for _ in range(1500):
        sim.set_pref_velocities(goal_velocities(sim.positions, goals))
        sim.step()
    pos, vel = sim.positions, sim.velocities
    pref = goal_velocities(pos, goals)
    assert closest_pair(pos, 4.0) < 4.0 + 1e-6  # pressed into contact
    assert np.sum(np.hypot(*(goals - pos).T) <= 20.0) <= 2  # hardly anybody got through
    step, radius, max_speed, neighbor_dist, max_neighbors, horizon, horizon_obst = (
        BLOCKS_PARAMS[0], BLOCKS_PARAMS[5], BLOCKS_PARAMS[6], BLOCKS_PARAMS[1],
        BLOCKS_PARAMS[2], BLOCKS_PARAMS[3], BLOCKS_PARAMS[4])
    args = dict(time_step=step, radius=radius, max_speed=max_speed,
                neighbor_dist=neighbor_dist, max_neighbors=max_neighbors,
                time_horizon=horizon, time_horizon_obst=horizon_obst,
                obstacles=sim.obstacles)

    def moving(**options):
        v = compute_velocities(pos, vel, pref, **args, **options).velocities
        return int(np.sum(np.hypot(*v.T) > 0.01)), v

    frozen, _ = moving(keep_apart=True, keep_apart_margin=0.0)
    rvo2, _ = moving()
    moved, v = moving(keep_apart=True)
    assert frozen <= 5 and rvo2 <= 5
    assert moved >= 30
    assert closest_pair(pos + v * step, 4.0) >= 4.0 - 1e-6


def overlapping_pair(**options):
    sim = OrcaSimulator(*CIRCLE_PARAMS, **options)
    sim.add_agent((0.0, 0.0))
    sim.add_agent((1.0, 0.0))  # combined radius 3: overlap of 2
    speeds, dists, changes = [], [], []
    previous = np.zeros((2, 2))
    for _ in range(60):
        sim.set_pref_velocities(np.zeros((2, 2)))
        v = sim.step().velocities
        speeds.append(np.hypot(*v.T).max())
        changes.append(np.abs(v - previous).max())
        previous = v
        dists.append(np.hypot(*(sim.positions[0] - sim.positions[1])))
    return np.array(speeds), np.array(dists), np.array(changes)


def test_overlapping_agents_separate_without_velocity_spikes():
    # RVO2: part within one step, which asks for more than the maximum speed at once.
    speeds, dists, _ = overlapping_pair()
    assert speeds[0] == 2.0
    # With overlap_time = 2 s they part at about overlap / overlap_time, smoothly.
    speeds, dists, changes = overlapping_pair(overlap_time=2.0)
    assert speeds.max() <= 0.5 + 1e-9
    assert changes.max() <= 0.5 + 1e-9
    assert np.all(np.diff(dists) >= -1e-12)
    # The overlap decays with time constant overlap_time: 2 * exp(-15 / 2) after 15 s.
    assert dists[-1] >= 3.0 - 2e-3


def test_agents_at_the_same_place_get_opposite_finite_velocities():
    pos = np.zeros((2, 2))
    vel = np.zeros((2, 2))
    for options in ({}, dict(overlap_time=1.0, keep_apart=True)):
        v = compute_velocities(pos, vel, vel, **BASE, **options).velocities
        assert np.all(np.isfinite(v)) and np.hypot(*v[0]) > 0.1
        assert np.allclose(v[0], -v[1])
