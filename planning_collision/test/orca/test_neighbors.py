"""Neighbour search: RVO2's semantics (k nearest within range), against brute force."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision.orca.neighbors import (
    CELLS_PER_AGENT,
    build_grid,
    find_agent_neighbors,
    find_agents_within,
)


def brute_force(positions, i, range_sq, k):
    d = np.sum((positions - positions[i]) ** 2, axis=1)
    candidates = [(d[j], j) for j in range(len(positions)) if j != i and d[j] < range_sq]
    return [j for _, j in sorted(candidates)[:k]]


scene = st.tuples(
    st.integers(1, 60),            # agents
    st.sampled_from([1.0, 7.0, 40.0, 3000.0]),  # extent: dense ... very spread out
    st.booleans(),                 # snap to a lattice (many equal distances)
    st.integers(0, 2**32 - 1),     # seed
)


@settings(max_examples=120, deadline=None)
@given(scene)
def test_neighbors_match_brute_force(params):
    n, extent, lattice, seed = params
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-extent, extent, (n, 2))
    if lattice:
        pos = np.round(pos / (extent / 4)) * (extent / 4)  # duplicates and ties
    ranges = rng.uniform(0.0, 2.0 * extent, n)
    ks = rng.integers(0, 12, n)
    grid = build_grid(pos, ranges.max())
    out_index = np.empty(13, np.int64)
    out_dist = np.empty(13)
    for i in range(n):
        count = find_agent_neighbors(i, pos[i, 0], pos[i, 1], ranges[i] ** 2, ks[i], *grid,
                                     out_index, out_dist)
        assert list(out_index[:count]) == brute_force(pos, i, ranges[i] ** 2, ks[i])
        d = np.sum((pos[out_index[:count]] - pos[i]) ** 2, axis=1)
        assert np.array_equal(out_dist[:count], d)


@settings(max_examples=60, deadline=None)
@given(scene, st.floats(0.1, 50.0))
def test_agents_within_match_brute_force(params, reach):
    n, extent, _, seed = params
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-extent, extent, (n, 2))
    grid = build_grid(pos, 2 * extent)
    out = np.empty(n, np.int64)
    for i in range(n):
        count = find_agents_within(i, pos[i, 0], pos[i, 1], reach**2, *grid, out)
        expected = brute_force(pos, i, reach**2, n)
        assert sorted(out[:count]) == sorted(expected)


def test_grid_stays_linear_in_size_for_spread_out_scenes():
    pos = np.array([[0.0, 0.0], [1e6, 1e6], [5.0, 5.0]])
    grid = build_grid(pos, 1.0)
    assert len(grid.cell_start) - 1 <= CELLS_PER_AGENT * len(pos) + 16
    assert grid.shape.columns * grid.shape.rows == len(grid.cell_start) - 1
    assert grid.shape.cell > 1.0  # the cells grew
