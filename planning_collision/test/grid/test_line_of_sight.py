"""Line of sight: exact cell sets against scikit-image and a brute-force segment/square test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skimage.draw import line as sk_line

from planning_collision.grid import (
    GridMap,
    LosResult,
    bresenham_cells,
    conservative_cells,
    line_of_sight,
    line_of_sight_batch,
    supercover_cells,
    traversed_cells,
)

MODES = ("bresenham", "supercover", "conservative")


def _skimage_cells(start, goal):
    rr, cc = sk_line(int(start[1]), int(start[0]), int(goal[1]), int(goal[0]))
    return np.stack([cc, rr], axis=1)


def _bresenham_workload(rng):
    """>= 10,000 rays: random in all octants, zero length, axis-aligned and 45 degrees."""
    rays = [rng.integers(-60, 60, size=4) for _ in range(9000)]
    rays += [np.r_[a, a] for a in rng.integers(-5, 5, size=(100, 2))]  # zero length
    for _ in range(400):
        a = rng.integers(-40, 40, size=2)
        n = int(rng.integers(1, 50))
        for d in ((1, 0), (-1, 0), (0, 1), (0, -1)):  # axis-aligned
            rays.append(np.r_[a, a + n * np.array(d)])
        for d in ((1, 1), (-1, 1), (1, -1), (-1, -1)):  # 45 degrees
            rays.append(np.r_[a, a + n * np.array(d)])
    return np.array(rays, dtype=np.int64)


def test_bresenham_equals_skimage_on_10k_rays(rng):
    rays = _bresenham_workload(rng)
    assert len(rays) >= 10_000
    d = rays[:, 2:] - rays[:, :2]
    octants = {
        (int(np.sign(dx)), int(np.sign(dy)), bool(abs(dx) > abs(dy)))
        for dx, dy in d if dx and dy and abs(dx) != abs(dy)
    }
    assert len(octants) == 8
    ax, ay = np.abs(d[:, 0]), np.abs(d[:, 1])
    assert np.sum((ax == 0) & (ay == 0)) >= 100
    assert np.sum((ax == ay) & (ax > 0)) >= 1600
    assert np.sum((ax == 0) != (ay == 0)) >= 1600
    for ray in rays:
        ours = bresenham_cells(ray[:2], ray[2:])
        np.testing.assert_array_equal(ours, _skimage_cells(ray[:2], ray[2:]))


def test_bresenham_ties_go_away_from_the_start():
    # dx = 2, dy = 1: the minor step falls on the exact half-way tie.
    assert bresenham_cells((0, 0), (2, 1)).tolist() == [[0, 0], [1, 1], [2, 1]]
    assert bresenham_cells((2, 1), (0, 0)).tolist() == [[2, 1], [1, 0], [0, 0]]


def test_bresenham_minor_offset_formula(rng):
    for _ in range(300):
        s = rng.integers(-30, 30, 2)
        g = rng.integers(-30, 30, 2)
        cells = bresenham_cells(s, g)
        d = np.abs(g - s)
        major = int(np.argmax(d)) if d[0] != d[1] else 0
        n = d[major]
        minor = d[1 - major]
        assert len(cells) == n + 1
        i = np.arange(n + 1)
        off = (2 * i * minor + n) // (2 * n) if n else np.zeros(1, int)
        sign = np.where(g - s > 0, 1, -1)
        np.testing.assert_array_equal(cells[:, major], s[major] + sign[major] * i)
        np.testing.assert_array_equal(cells[:, 1 - major], s[1 - major] + sign[1 - major] * off)


def _corner_rays(rng, count):
    """Rays whose segment passes exactly through lattice corners: (dx, dy) = m * (odd, odd)."""
    rays = []
    for _ in range(count):
        p, q = (2 * rng.integers(0, 6, 2) + 1) * rng.choice([-1, 1], 2)
        m = int(rng.integers(1, 4))
        a = rng.integers(-10, 10, 2)
        rays.append((a, a + m * np.array([p, q])))
    return rays


@pytest.mark.parametrize(("mode", "closed"), [("supercover", False), ("conservative", True)])
def test_cover_modes_equal_brute_force(rng, brute_force_cells, mode, closed):
    rays = [(rng.integers(-12, 12, 2), rng.integers(-12, 12, 2)) for _ in range(250)]
    rays += _corner_rays(rng, 120)
    rays += [((3, 3), (3, 3)), ((0, 0), (5, 0)), ((0, 0), (0, -4)), ((0, 0), (4, 4))]
    corner_rays_seen = 0
    for s, g in rays:
        cells = traversed_cells(s, g, mode)
        as_set = {tuple(c) for c in cells.tolist()}
        assert len(as_set) == len(cells), "a cell is visited twice"
        assert as_set == brute_force_cells(s, g, closed), (s, g)
        assert tuple(cells[0]) == tuple(s) and tuple(cells[-1]) == tuple(g)
        # A ray crosses a lattice corner exactly when some closed square is touched whose
        # open interior is not (the oracle's two answers differ), whatever the mode.
        open_set = brute_force_cells(s, g, False)
        closed_set = brute_force_cells(s, g, True)
        through_corner = closed_set != open_set
        corner_rays_seen += through_corner
        if through_corner:
            # the two modes really differ on this ray: supercover steps diagonally past
            # the corner, conservative takes the two side cells as well
            assert (as_set == closed_set) == closed and (as_set == open_set) != closed
    assert corner_rays_seen > 100


@pytest.mark.parametrize("mode", ["supercover", "conservative"])
def test_cover_modes_walk_in_order(rng, mode):
    """Cells come in order of the segment parameter at which the segment reaches them."""
    for _ in range(200):
        s = rng.integers(-15, 15, 2)
        g = rng.integers(-15, 15, 2)
        cells = traversed_cells(s, g, mode)
        step = np.abs(np.diff(cells, axis=0))
        assert np.all(step.max(axis=1) == 1)  # 4- or 8-neighbours, no jumps
        a = s + 0.5
        d = (g - s).astype(float)
        if not d.any():
            continue
        # Entry parameter of each cell's closed square (Liang-Barsky lower bound).
        entry = []
        for c in cells:
            lo = 0.0
            for k in range(2):
                if d[k]:
                    t0, t1 = (c[k] - a[k]) / d[k], (c[k] + 1 - a[k]) / d[k]
                    lo = max(lo, min(t0, t1))
            entry.append(lo)
        assert np.all(np.diff(entry) >= -1e-12)


def test_supercover_steps_diagonally_at_corners_conservative_takes_all_four():
    assert supercover_cells((0, 0), (2, 2)).tolist() == [[0, 0], [1, 1], [2, 2]]
    assert conservative_cells((0, 0), (1, 1)).tolist() == [[0, 0], [1, 0], [0, 1], [1, 1]]
    assert conservative_cells((0, 0), (-1, 1)).tolist() == [[0, 0], [-1, 0], [0, 1], [-1, 1]]


@settings(deadline=None, max_examples=60, derandomize=True)
@given(st.tuples(*[st.integers(-40, 40)] * 4))
def test_cover_modes_are_symmetric_under_reversal(ray):
    s, g = ray[:2], ray[2:]
    for mode in ("supercover", "conservative"):
        fwd = traversed_cells(s, g, mode)
        bwd = traversed_cells(g, s, mode)
        assert {tuple(c) for c in fwd.tolist()} == {tuple(c) for c in bwd.tolist()}
        if mode == "supercover":
            np.testing.assert_array_equal(fwd, bwd[::-1])


@settings(deadline=None, max_examples=60, derandomize=True)
@given(st.tuples(*[st.integers(-40, 40)] * 4))
def test_mode_nesting_and_counts(ray):
    s, g = ray[:2], ray[2:]
    b = {tuple(c) for c in bresenham_cells(s, g).tolist()}
    sc = {tuple(c) for c in supercover_cells(s, g).tolist()}
    co = {tuple(c) for c in conservative_cells(s, g).tolist()}
    dx, dy = abs(ray[2] - ray[0]), abs(ray[3] - ray[1])
    assert len(b) == max(dx, dy) + 1
    assert sc <= co
    corners = (len(co) - len(sc)) // 2
    assert len(sc) == dx + dy + 1 - corners
    assert len(co) == dx + dy + 1 + corners
    assert (corners > 0) == (dx > 0 and dy > 0 and ((dx // math.gcd(dx, dy)) % 2 == 1)
                             and ((dy // math.gcd(dx, dy)) % 2 == 1))


def _first_blocked_oracle(grid_blocked, cells, oob_blocked):
    h, w = grid_blocked.shape
    for k, (x, y) in enumerate(cells.tolist()):
        inside = 0 <= x < w and 0 <= y < h
        if (grid_blocked[y, x] if inside else oob_blocked):
            return (x, y), k + 1
    return None, len(cells)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("out_of_map", ["blocked", "free"])
def test_line_of_sight_matches_cell_walk_and_batch(rng, random_grid_data, mode, out_of_map):
    data = random_grid_data(rng, 25, 30, p_occ=0.08, p_unknown=0.02)
    grid = GridMap(data, 0.1, origin=(-1.0, 2.0, 0.7))
    blocked = grid.blocked_mask()
    starts = rng.integers(-5, 35, size=(400, 2))
    goals = rng.integers(-5, 35, size=(400, 2))
    clear, first = line_of_sight_batch(grid, starts, goals, mode=mode, out_of_map=out_of_map)
    assert clear.dtype == bool and first.shape == (400, 2)
    again, first_again, checked = line_of_sight_batch(grid, starts, goals, mode=mode,
                                                      out_of_map=out_of_map, cells_checked=True)
    assert np.array_equal(again, clear) and np.array_equal(first_again, first)
    n_clear = 0
    for k in range(400):
        res = line_of_sight(grid, starts[k], goals[k], mode=mode, out_of_map=out_of_map)
        assert isinstance(res, LosResult)
        assert checked[k] == res.cells_checked
        cells = traversed_cells(starts[k], goals[k], mode)
        want, count = _first_blocked_oracle(blocked, cells, out_of_map == "blocked")
        assert res.first_blocked == want
        assert res.clear == (want is None) == bool(clear[k])
        if out_of_map == "blocked" or grid.in_bounds([starts[k], goals[k]]).all():
            assert res.cells_checked == count
        else:  # cells outside a free outside may be skipped
            assert res.cells_checked <= count
        if want is None:
            n_clear += 1
            assert first[k].tolist() == [-1, -1]
        else:
            assert first[k].tolist() == list(want)
    assert 0 < n_clear < 400


@pytest.mark.parametrize("mode", MODES)
def test_free_outside_rays_from_far_away(rng, random_grid_data, mode):
    """With a free outside the walk skips to where the ray can enter the map; the answer
    must equal the full walk's, and the work must not grow with the ray's length."""
    data = random_grid_data(rng, 25, 30, p_occ=0.1, p_unknown=0.0)
    grid = GridMap(data, 0.1)
    blocked = grid.blocked_mask()
    hits = 0
    for k in range(600):
        if k % 3 == 0:  # aimed through the map from far away
            mid = rng.integers(0, 25, 2)
            d = rng.integers(-300, 300, 2)
            s, g = mid - d, mid + d + rng.integers(-3, 3, 2)
        else:
            s, g = rng.integers(-120, 150, 2), rng.integers(-120, 150, 2)
        res = line_of_sight(grid, s, g, mode=mode, out_of_map="free")
        want, _ = _first_blocked_oracle(blocked, traversed_cells(s, g, mode), False)
        assert res.first_blocked == want, (s, g)
        assert res.cells_checked <= 2 * (25 + 30) + 4
        hits += want is not None
    assert hits > 80
    far = line_of_sight(grid, (-2**28, -2**28 + 7), (2**28, 2**28 - 3), mode, "free")
    assert far.cells_checked <= 2 * (25 + 30) + 4


def test_conservative_cannot_squeeze_between_diagonal_cells():
    data = np.zeros((4, 4), np.int8)
    data[1, 2] = 100  # cell (2, 1)
    data[2, 1] = 100  # cell (1, 2)
    grid = GridMap(data, 1.0)
    assert line_of_sight(grid, (0, 0), (3, 3), "bresenham").clear
    assert line_of_sight(grid, (0, 0), (3, 3), "supercover").clear
    res = line_of_sight(grid, (0, 0), (3, 3), "conservative")
    # (0,0); corner (1,1): (1,0), (0,1), (1,1); corner (2,2): (2,1) is blocked.
    assert res == LosResult(False, (2, 1), 5)


def test_start_and_goal_cells_are_checked():
    data = np.zeros((3, 5), np.int8)
    data[1, 4] = 100
    grid = GridMap(data, 1.0)
    for mode in MODES:
        assert line_of_sight(grid, (0, 1), (4, 1), mode).first_blocked == (4, 1)
        assert line_of_sight(grid, (4, 1), (0, 1), mode) == LosResult(False, (4, 1), 1)
        assert line_of_sight(grid, (4, 1), (4, 1), mode) == LosResult(False, (4, 1), 1)
        assert line_of_sight(grid, (1, 1), (1, 1), mode) == LosResult(True, None, 1)


def test_out_of_map_policy():
    grid = GridMap(np.zeros((5, 5), np.int8), 1.0)
    # Leaves the map at x = 5.
    res = line_of_sight(grid, (2, 2), (8, 2))
    assert res == LosResult(False, (5, 2), 4)
    assert line_of_sight(grid, (2, 2), (8, 2), out_of_map="free").clear
    # Entirely outside, crossing the map.
    assert line_of_sight(grid, (-3, -3), (9, 9), "conservative", "free").clear
    assert line_of_sight(grid, (-3, -3), (9, 9)).first_blocked == (-3, -3)
    data = np.zeros((5, 5), np.int8)
    data[2, 2] = 100
    grid2 = GridMap(data, 1.0)
    res = line_of_sight(grid2, (-3, -3), (9, 9), "supercover", "free")
    assert res.first_blocked == (2, 2)


def test_world_wrapper_on_rotated_map():
    yaw = 0.5
    data = np.zeros((20, 20), np.int8)
    data[5:15, 10] = 100  # a wall in column 10
    grid = GridMap(data, 0.25, origin=(3.0, -2.0, yaw))
    start = grid.cell_to_world([2, 10])
    goal = grid.cell_to_world([18, 10])
    res = grid.line_of_sight(start, goal, "supercover")
    assert not res.clear and res.first_blocked_cell == (10, 10)
    np.testing.assert_allclose(res.first_blocked_point, grid.cell_to_world([10, 10]))
    # Same answer when the map, the points and the rotation move together.
    c, s = math.cos(yaw), math.sin(yaw)
    local = GridMap(data, 0.25)
    to_local = lambda p: np.array([[c, s], [-s, c]]) @ (np.asarray(p) - [3.0, -2.0])  # noqa: E731
    assert local.line_of_sight(to_local(start), to_local(goal), "supercover") == res._replace(
        first_blocked_point=local.line_of_sight(
            to_local(start), to_local(goal), "supercover").first_blocked_point
    )
    ok = grid.line_of_sight(start, grid.cell_to_world([8, 2]))
    assert ok.clear and ok.first_blocked_point is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: line_of_sight(g, (0, 0), (1, 1), mode="dda"), "mode"),
        (lambda g: line_of_sight(g, (0, 0), (1, 1), out_of_map="wrap"), "out_of_map"),
        (lambda g: line_of_sight(g, (0, float("nan")), (1, 1)), "NaN or inf"),
        (lambda g: line_of_sight(g, (0, 0.5), (1, 1)), "fractional"),
        (lambda g: line_of_sight(g, (0, 0, 0), (1, 1)), "shape"),
        (lambda g: line_of_sight(g, (0, 2**40), (1, 1)), "beyond"),
        (lambda g: line_of_sight("map", (0, 0), (1, 1)), "GridMap"),
        (lambda g: line_of_sight_batch(g, np.zeros((3, 2)), np.zeros((4, 2))), "shape"),
        (lambda g: line_of_sight_batch(g, [[0, 0]], [[np.inf, 0]]), "NaN or inf"),
        (lambda g: line_of_sight_batch(g, [[0, 0]], [[1, 1]], mode="fast"), "mode"),
        (lambda g: g.line_of_sight((0.0, np.nan), (1.0, 1.0)), "NaN or inf"),
        (lambda g: bresenham_cells((0, 0), ("a", 1)), "integer"),
        (lambda g: bresenham_cells((0, 0), np.array([True, False])), "integer"),
        (lambda g: traversed_cells((0, 0), (1, 1), "nope"), "mode"),
    ],
)
def test_bad_input_raises_value_error(call, message):
    grid = GridMap(np.zeros((3, 3), np.int8), 1.0)
    with pytest.raises(ValueError, match=message):
        call(grid)


def test_batch_accepts_empty_and_float_integral_input():
    grid = GridMap(np.zeros((3, 3), np.int8), 1.0)
    clear, first = line_of_sight_batch(grid, np.zeros((0, 2)), np.zeros((0, 2)))
    assert clear.shape == (0,) and first.shape == (0, 2)
    clear, _ = line_of_sight_batch(grid, np.array([[0.0, 0.0]]), np.array([[2.0, 2.0]]))
    assert clear.tolist() == [True]


def test_world_wrapper_equals_the_vectorised_path():
    """GridMap.line_of_sight's scalar shortcut gives world_to_cell + line_of_sight_batch."""
    rng = np.random.default_rng(21)
    data = rng.choice(np.array([0, 0, 0, 100, -1], np.int8), size=(40, 60))
    grid = GridMap(data, 0.1, origin=(-1.3, 2.2, 0.7))
    starts = rng.uniform(-4, 4, (500, 2))
    goals = rng.uniform(-4, 4, (500, 2))
    # Points exactly on cell edges, where floor must agree.
    starts[:50] = grid.cell_to_world(rng.integers(-5, 45, (50, 2))) - 0.05
    for mode in ("bresenham", "supercover", "conservative"):
        clear, first = line_of_sight_batch(grid, grid.world_to_cell(starts),
                                           grid.world_to_cell(goals), mode)
        for i in range(len(starts)):
            res = grid.line_of_sight(starts[i], goals[i], mode)
            assert res.clear == clear[i]
            if not res.clear:
                assert res.first_blocked_cell == tuple(first[i])
                np.testing.assert_allclose(res.first_blocked_point,
                                           grid.cell_to_world(first[i]), atol=1e-12)


def test_world_wrapper_walks_between_cell_centres():
    """The documented semantics of GridMap.line_of_sight with off-centre endpoints: both
    points snap to their cells, the walk runs centre to centre, the first blocked point is a
    cell centre, and the world segment itself can clip a cell the walk never visits."""
    from planning_collision.geometry import ConvexShape
    from planning_collision.grid import footprint_cells, footprint_collides

    start, goal = (0.95, 0.95), (6.5, 1.5)  # cells (0, 0) and (6, 1), start off-centre
    free = GridMap(np.zeros((4, 8), np.int8), 1.0)
    for mode in MODES:
        walk = {tuple(c) for c in traversed_cells((0, 0), (6, 1), mode).tolist()}
        res = free.line_of_sight(start, goal, mode)
        assert res.clear and res.cells_checked == len(walk)
    # the world segment crosses cell (1, 1) (it reaches y = 1 at x ~ 1.45); the
    # centre-to-centre walk (y = 1 only at x = 3.5) does not, in any mode
    thin = ConvexShape.capsule(start, goal, 1e-3)
    world_cells = {tuple(c) for c in footprint_cells(free, thin, (0, 0, 0)).tolist()}
    assert (1, 1) in world_cells
    data = np.zeros((4, 8), np.int8)
    data[1, 1] = 100
    grid = GridMap(data, 1.0)
    for mode in MODES:
        assert (1, 1) not in {tuple(c) for c in traversed_cells((0, 0), (6, 1), mode).tolist()}
        assert grid.line_of_sight(start, goal, mode).clear
    # the capsule check suggested in the docstring does see it
    assert footprint_collides(grid, thin, [0, 0, 0]).tolist() == [True]
    # snapping the endpoints to their cell centres makes the walk exact for the points
    centres = grid.cell_to_world([[0, 0], [6, 1]])
    exact = ConvexShape.capsule(centres[0], centres[1], 1e-9)
    assert not footprint_collides(grid, exact, [0, 0, 0])[0]
    # first_blocked_point is the blocked cell's centre, which is not on the world segment
    data = np.zeros((4, 8), np.int8)
    data[1, 5] = 100
    res = GridMap(data, 1.0).line_of_sight(start, goal, "supercover")
    assert not res.clear and res.first_blocked_cell == (5, 1)
    assert res.first_blocked_point == (5.5, 1.5)
    d = np.subtract(goal, start)
    offset = np.subtract(res.first_blocked_point, start)
    assert abs(d[0] * offset[1] - d[1] * offset[0]) / np.hypot(*d) > 0.05
