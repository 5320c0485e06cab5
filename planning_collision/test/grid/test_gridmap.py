"""GridMap: construction, semantics, conversions and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision.grid import GridMap


def test_shares_the_int8_buffer_without_copy():
    data = np.zeros((300, 200), dtype=np.int8)
    grid = GridMap(data, 0.05)
    assert np.shares_memory(grid.data, data)
    occ, lo, hi = grid.kernel_args
    assert np.shares_memory(occ, data)
    assert occ.dtype == np.uint8 and not occ.flags.writeable
    assert (grid.width, grid.height, grid.shape) == (200, 300, (300, 200))


def test_flat_buffer_with_width_and_height_is_a_view_in_row_major_order():
    flat = np.arange(12, dtype=np.int8)
    grid = GridMap(flat, 1.0, width=4, height=3)
    assert np.shares_memory(grid.data, flat)
    # index = mx + my * width
    assert grid.data[2, 1] == 1 + 2 * 4


def test_non_contiguous_input_is_copied_once_and_original_untouched():
    big = np.zeros((10, 20), dtype=np.int8)
    view = big[:, ::2]
    grid = GridMap(view, 1.0)
    assert grid.data.flags.c_contiguous
    assert not np.shares_memory(grid.data, big)


def test_immutable():
    grid = GridMap(np.zeros((3, 3), np.int8), 1.0)
    with pytest.raises(AttributeError):
        grid.resolution = 2.0
    with pytest.raises(ValueError):
        grid.data[0, 0] = 100  # read-only view


@pytest.mark.parametrize(
    ("value", "threshold", "unknown_occ", "blocked"),
    [
        (0, 65, True, False),
        (64, 65, True, False),
        (65, 65, True, True),
        (100, 65, True, True),
        (-1, 65, True, True),
        (-1, 65, False, False),
        (100, 65, False, True),
        (50, 50, False, True),
        (49, 50, False, False),
    ],
)
def test_blocked_semantics(value, threshold, unknown_occ, blocked):
    data = np.full((2, 2), value, dtype=np.int8)
    grid = GridMap(data, 1.0, occupied_threshold=threshold, unknown_is_occupied=unknown_occ)
    assert grid.is_blocked([[1, 1]])[0] == blocked
    assert grid.blocked_mask()[1, 1] == blocked


def test_is_blocked_out_of_map_policy():
    grid = GridMap(np.zeros((2, 2), np.int8), 1.0)
    cells = np.array([[-1, 0], [0, 2], [1, 1]])
    assert grid.is_blocked(cells).tolist() == [True, True, False]
    assert grid.is_blocked(cells, "free").tolist() == [False, False, False]


def test_world_to_cell_floors_negative_coordinates():
    grid = GridMap(np.zeros((4, 4), np.int8), 0.5, origin=(1.0, 2.0, 0.0))
    pts = np.array([[1.0, 2.0], [0.99, 1.99], [1.49, 2.5], [-0.01 + 1.0, 2.0], [3.0, 4.0]])
    assert grid.world_to_cell(pts).tolist() == [[0, 0], [-1, -1], [0, 1], [-1, 0], [4, 4]]
    assert grid.world_to_cell([1.26, 2.74]).tolist() == [0, 1]


def test_rotated_origin_conversions_match_hand_computation():
    yaw = math.radians(30.0)
    grid = GridMap(np.zeros((10, 10), np.int8), 0.2, origin=(5.0, -3.0, yaw))
    # Centre of cell (2, 1): map-frame (0.5, 0.3), rotated by 30 degrees, plus origin.
    mx, my = 2.5 * 0.2, 1.5 * 0.2
    expect = (5.0 + math.cos(yaw) * mx - math.sin(yaw) * my,
              -3.0 + math.sin(yaw) * mx + math.cos(yaw) * my)
    np.testing.assert_allclose(grid.cell_to_world([2, 1]), expect, atol=1e-12)
    assert grid.world_to_cell(expect).tolist() == [2, 1]
    # Map-frame (-0.01, 0.05): just left of the map, so column -1, row 0.
    p = (5.0 + math.cos(yaw) * -0.01 - math.sin(yaw) * 0.05,
         -3.0 + math.sin(yaw) * -0.01 + math.cos(yaw) * 0.05)
    assert grid.world_to_cell(p).tolist() == [-1, 0]


@settings(deadline=None, max_examples=60, derandomize=True)
@given(
    st.integers(-500, 500), st.integers(-500, 500),
    st.floats(-math.pi, math.pi), st.floats(0.01, 2.0),
    st.floats(-100, 100), st.floats(-100, 100),
)
def test_cell_centre_round_trip(mx, my, yaw, res, ox, oy):
    grid = GridMap(np.zeros((2, 2), np.int8), res, origin=(ox, oy, yaw))
    centre = grid.cell_to_world([mx, my])
    assert grid.world_to_cell(centre).tolist() == [mx, my]


def test_vectorised_shapes():
    grid = GridMap(np.zeros((2, 2), np.int8), 1.0)
    pts = np.zeros((3, 4, 2))
    assert grid.world_to_cell(pts).shape == (3, 4, 2)
    assert grid.cell_to_world(np.zeros((5, 2), int)).shape == (5, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(data=np.zeros((2, 2), np.int16), resolution=1.0), "dtype"),
        (dict(data=np.zeros((2, 2), np.uint8), resolution=1.0), "dtype"),
        (dict(data=[[0, 1]], resolution=1.0), "dtype"),
        (dict(data=np.zeros(5, np.int8), resolution=1.0, width=2, height=3), "width \\* height"),
        (dict(data=np.zeros((3, 2), np.int8), resolution=1.0, width=3, height=2), "shape"),
        (dict(data=np.zeros(6, np.int8), resolution=1.0), "height, width"),
        (dict(data=np.zeros(6, np.int8), resolution=1.0, width=6), "both width and height"),
        (dict(data=np.zeros((0, 3), np.int8), resolution=1.0), "at least one cell"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=0.0), "resolution"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=-1.0), "resolution"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=float("nan")), "resolution"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=1.0, origin=(0, float("inf"), 0)),
         "origin y"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=1.0, origin=(0,)), "origin"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=1.0, occupied_threshold=0),
         "occupied_threshold"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=1.0, occupied_threshold=101),
         "occupied_threshold"),
        (dict(data=np.zeros((2, 2), np.int8), resolution=1.0, unknown_is_occupied=1),
         "unknown_is_occupied"),
    ],
)
def test_bad_construction_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GridMap(**kwargs)


def test_bad_conversion_input():
    grid = GridMap(np.zeros((2, 2), np.int8), 1.0)
    with pytest.raises(ValueError, match="NaN or inf"):
        grid.world_to_cell([float("nan"), 0.0])
    with pytest.raises(ValueError, match="shape"):
        grid.world_to_cell([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="fractional"):
        grid.cell_to_world([0.5, 1.0])
    with pytest.raises(ValueError, match="cells from the map origin"):
        grid.world_to_cell([1e12, 0.0])
    with pytest.raises(ValueError, match="out_of_map"):
        grid.is_blocked([0, 0], out_of_map="maybe")


def test_queries_do_not_copy_the_map():
    """Building a GridMap and querying it allocates nothing near the map's size."""
    import tracemalloc

    from planning_collision.grid import footprint_collides, line_of_sight_batch

    data = np.zeros((2000, 2000), np.int8)  # 4 MB
    data[::7, ::5] = 100
    small = GridMap(data[:10, :10].copy(), 0.05)
    starts = np.array([[0, 0], [1999, 3]])
    goals = np.array([[1999, 1999], [5, 1500]])
    box = np.array([[-0.3, -0.2], [0.3, -0.2], [0.3, 0.2], [-0.3, 0.2]])
    line_of_sight_batch(small, starts, goals)  # compile / load outside the measurement
    footprint_collides(small, box, [[0.2, 0.2, 0.0]])
    tracemalloc.start()
    try:
        grid = GridMap(data, 0.05)
        line_of_sight_batch(grid, starts, goals, mode="conservative")
        footprint_collides(grid, box, [[10.0, 10.0, 0.3], [50.0, 60.0, 1.0]])
        grid.is_blocked([[3, 4]])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < data.nbytes // 50
