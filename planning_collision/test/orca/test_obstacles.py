"""Polygon obstacles: RVO2's processing (tree with cut edges), visibility and obstacle
half-planes, against pyrvo on random scenes."""

import numpy as np
import pyrvo
import pytest

from planning_collision.orca import (
    OrcaSimulator,
    build_obstacles,
    compute_velocities,
    query_visibility,
)
from planning_collision.orca.obstacles import empty_obstacles


def f32(a):
    """Values RVO2 can represent exactly, so both sides get the same input."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def random_scene(rng):
    """Convex and star-shaped (often non-convex) CCW polygons and two-vertex walls."""
    polys = []
    for _ in range(rng.integers(1, 6)):
        centre = rng.uniform(-20, 20, 2)
        kind = rng.integers(3)
        if kind == 2:
            polys.append(f32([centre, centre + rng.uniform(-8, 8, 2)]))
            continue
        m = rng.integers(3, 9)
        angles = np.sort(rng.uniform(0, 2 * np.pi, m))
        radii = rng.uniform(1, 6) if kind == 0 else rng.uniform(1, 6, m)
        ring = np.column_stack([np.cos(angles), np.sin(angles)])
        polys.append(f32(centre + np.atleast_1d(radii)[:, None] * ring))
    return polys


def rvo2_with(polys, agent=None):
    sim = pyrvo.RVOSimulator(0.25, 15.0, 10, 5.0, 5.0, 0.5, 2.0)
    for poly in polys:
        sim.add_obstacle([tuple(v) for v in poly])
    sim.process_obstacles()
    return sim


def test_processing_matches_rvo2_including_cut_edges():
    rng = np.random.default_rng(0)
    scenes_with_cuts = 0
    for _ in range(30):
        polys = random_scene(rng)
        ours = build_obstacles(polys)
        sim = rvo2_with(polys)
        n = sim.get_num_obstacle_vertices()
        assert ours.num_vertices == n
        points = np.array([sim.get_obstacle_vertex(k).to_tuple() for k in range(n)])
        assert np.abs(ours.points - points).max() < 1e-4  # cut points: float32 in RVO2
        assert list(ours.next_vertex) == [sim.get_next_obstacle_vertex(k) for k in range(n)]
        assert list(ours.prev_vertex) == [sim.get_prev_obstacle_vertex(k) for k in range(n)]
        scenes_with_cuts += ours.num_vertices > ours.num_input_vertices
    assert scenes_with_cuts >= 5


def test_visibility_matches_rvo2():
    rng = np.random.default_rng(1)
    for _ in range(20):
        polys = random_scene(rng)
        ours = build_obstacles(polys)
        sim = rvo2_with(polys)
        answers = []
        for q in range(150):
            a, b = f32(rng.uniform(-25, 25, 2)), f32(rng.uniform(-25, 25, 2))
            radius = float(np.float32(rng.uniform(0, 1.5))) if q % 2 else 0.0
            expected = sim.query_visibility(tuple(a), tuple(b), radius)
            assert query_visibility(ours, a, b, radius) == expected
            answers.append(expected)
        assert 0 < sum(answers) < len(answers) or len(polys) == 0


def test_obstacle_half_planes_match_rvo2():
    rng = np.random.default_rng(2)
    with_lines = 0
    for _ in range(30):
        polys = random_scene(rng)
        ours = build_obstacles(polys)
        for _ in range(40):
            p, v, pref = (f32(rng.uniform(-25, 25, 2)), f32(rng.uniform(-2, 2, 2)),
                          f32(rng.uniform(-2, 2, 2)))
            sim = rvo2_with(polys)
            sim.add_agent(tuple(p), 15.0, 10, 5.0, 5.0, 0.5, 2.0, tuple(v))
            sim.set_agent_pref_velocity(0, tuple(pref))
            sim.do_step()
            m = sim.get_agent_num_orca_lines(0)
            lines = [sim.get_agent_orca_line(0, k) for k in range(m)]
            r = compute_velocities(p[None], v[None], pref[None], time_step=0.25, radius=0.5,
                                   max_speed=2.0, neighbor_dist=15.0, max_neighbors=10,
                                   time_horizon=5.0, time_horizon_obst=5.0, obstacles=ours,
                                   return_lines=True)
            assert len(r.lines.points) == m == r.num_hard_lines[0] == \
                r.num_obstacle_lines[0]
            if m:
                with_lines += 1
                assert np.abs(r.lines.directions - [ln[0] for ln in lines]).max() < 1e-4
                assert np.abs(r.lines.points - [ln[1] for ln in lines]).max() < 1e-4
            assert np.abs(r.velocities[0] - sim.get_agent_velocity(0).to_tuple()).max() < 1e-4
    assert with_lines > 300


def test_convexity_and_two_vertex_walls():
    square_with_notch = [(0, 0), (4, 0), (4, 4), (2, 2), (0, 4)]  # CCW, reflex at (2, 2)
    obs = build_obstacles([square_with_notch, [(10, 0), (12, 0)]])
    assert list(obs.convex[:5]) == [True, True, True, False, True]
    assert list(obs.convex[5:7]) == [True, True]
    assert list(obs.next_vertex[5:7]) == [6, 5]
    assert np.allclose(np.hypot(*obs.directions.T), 1.0)


def test_empty_obstacles_block_nothing():
    empty = empty_obstacles()
    assert empty.num_vertices == 0
    assert query_visibility(empty, (0, 0), (100, 100), 5.0)


@pytest.mark.parametrize("polys, message", [
    ([[(0.0, 0.0)]], "at least 2"),
    ([[(0.0, 0.0), (float("nan"), 1.0)]], "NaN"),
    ([[(0.0, 0.0), (1.0, 1.0), (1.0, 1.0)]], "consecutive equal"),
    ([[0.0, 1.0, 2.0]], "shape"),
])
def test_bad_obstacles_raise(polys, message):
    with pytest.raises(ValueError, match=message):
        build_obstacles(polys)


def test_bad_visibility_radius_raises():
    with pytest.raises(ValueError, match="radius"):
        query_visibility(empty_obstacles(), (0, 0), (1, 1), -1.0)


def test_clockwise_boundary_encloses_agents_like_rvo2():
    boundary = [(-10.0, -10.0), (-10.0, 10.0), (10.0, 10.0), (10.0, -10.0)]  # clockwise
    ours = build_obstacles([boundary])
    assert not ours.convex.any()  # every corner is reflex, seen from inside
    rng = np.random.default_rng(4)
    for _ in range(100):
        p, v = f32(rng.uniform(-8, 8, 2)), f32(rng.uniform(-2, 2, 2))
        pref = f32(2.0 * p / max(np.hypot(*p), 1e-6))  # head for the wall
        sim = rvo2_with([boundary])
        sim.add_agent(tuple(p), 15.0, 10, 5.0, 5.0, 0.5, 2.0, tuple(v))
        sim.set_agent_pref_velocity(0, tuple(pref))
        sim.do_step()
        r = compute_velocities(p[None], v[None], pref[None], time_step=0.25, radius=0.5,
                               max_speed=2.0, neighbor_dist=15.0, max_neighbors=10,
                               time_horizon=5.0, time_horizon_obst=5.0, obstacles=ours)
        assert np.abs(r.velocities[0] - sim.get_agent_velocity(0).to_tuple()).max() < 1e-4
    # Agents driven at the wall stay inside it.
    walled = OrcaSimulator(0.25, 15.0, 10, 5.0, 5.0, 0.5, 2.0)
    walled.add_obstacle(boundary)
    walled.process_obstacles()
    for a in np.linspace(0, 2 * np.pi, 12, endpoint=False):
        walled.add_agent((3 * np.cos(a), 3 * np.sin(a)))
    for _ in range(200):
        pos = walled.positions
        walled.set_pref_velocities(2.0 * pos / np.hypot(*pos.T)[:, None])
        walled.step()
        assert np.abs(walled.positions).max() <= 10.0 - 0.5 + 1e-6


def test_an_agent_centred_on_an_obstacle_edge_sees_it():
    """RVO2 only considers edges the agent is strictly right of: an agent whose centre lies
    exactly on an edge's line (overlapping the wall) saw no edge there and drove into it."""
    obstacles = build_obstacles([[(1.0, 1.0), (2.0, 1.0), (2.0, 2.0), (1.0, 2.0)],
                                 [(-3.0, 0.0), (-3.0, 1.0)]])
    inward = {(1.5, 1.0): (0.0, 1.0), (1.0, 1.0): (1.0, 1.0), (2.0, 1.5): (-1.0, 0.0),
              (-3.0, 0.5): (1.0, 0.0)}
    for position, towards in inward.items():
        r = compute_velocities([position], [[0.0, 0.0]], [towards], time_step=0.1,
                               radius=0.3, max_speed=1.0, neighbor_dist=5.0, max_neighbors=10,
                               time_horizon=2.0, time_horizon_obst=2.0, obstacles=obstacles)
        assert r.num_obstacle_lines[0] >= 1
        assert np.dot(r.velocities[0], towards) <= 1e-12  # no velocity into the obstacle
