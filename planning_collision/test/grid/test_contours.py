"""occupied_polygons: simple, disjoint, correctly oriented rings that cover the blocked cells."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import shapely
from shapely.geometry import LinearRing, Polygon, box
from shapely.ops import unary_union
from skimage.measure import label

from planning_collision.grid import GridMap, occupied_polygons


def _blob_map(rng, h, w, n_rects=25, p_noise=0.03):
    data = np.zeros((h, w), np.int8)
    for _ in range(n_rects):
        x, y = rng.integers(0, w), rng.integers(0, h)
        data[y : y + rng.integers(1, 8), x : x + rng.integers(1, 8)] = 100
    data[rng.random((h, w)) < p_noise] = 100
    data[rng.random((h, w)) < p_noise] = -1
    return data


def _to_map_frame(grid, pts):
    ox, oy, yaw = grid.origin
    c, s = math.cos(yaw), math.sin(yaw)
    d = np.asarray(pts) - [ox, oy]
    return np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]], 1) / grid.resolution


def _inside_count(rings, pts):
    """How many rings contain each point (even-odd nesting: odd = inside the obstacles)."""
    count = np.zeros(len(pts), int)
    for r in rings:
        count += shapely.contains_xy(Polygon(r), pts[:, 0], pts[:, 1])
    return count


def _dist_to_cells(cells, pts):
    """Distance from points to the union of the unit squares of cells (lattice units)."""
    if len(cells) == 0:
        return np.full(len(pts), np.inf)
    lo = cells[None, :, :].astype(float)
    d = np.maximum(np.maximum(lo - pts[:, None, :], pts[:, None, :] - (lo + 1)), 0.0)
    return np.sqrt((d**2).sum(-1)).min(axis=1)


def _pinch_vertices(blocked):
    p = np.pad(blocked, 1)
    a, b, c, d = p[:-1, :-1], p[:-1, 1:], p[1:, :-1], p[1:, 1:]
    return int(np.sum((a & d & ~b & ~c) | (b & c & ~a & ~d)))


@pytest.mark.parametrize("tol_cells", [0.0, 0.4, 1.0, 2.5])
@pytest.mark.parametrize("unknown_is_occupied", [True, False])
def test_polygons_cover_blocked_cells_within_tolerance(rng, tol_cells, unknown_is_occupied):
    data = _blob_map(rng, 30, 40)
    res = 0.05
    grid = GridMap(data, res, origin=(1.5, -0.5, 0.6), unknown_is_occupied=unknown_is_occupied)
    tol = tol_cells * res
    world_rings = occupied_polygons(grid, tol)
    rings = [_to_map_frame(grid, r) for r in world_rings]
    blocked = grid.blocked_mask()

    # Every ring: at least a triangle, simple, and no two rings touch.
    lrs = [LinearRing(r) for r in rings]
    assert all(len(r) >= 3 and lr.is_simple for r, lr in zip(rings, lrs, strict=True))
    tree = shapely.STRtree(lrs)
    for i, j in zip(*tree.query(lrs, predicate="intersects"), strict=True):
        assert i == j, "two rings touch"

    # Orientation follows nesting: depth 0, 2, ... counter-clockwise; 1, 3, ... clockwise.
    firsts = np.array([r[0] for r in rings])
    depth = _inside_count(rings, firsts)  # a ring does not contain its own vertex
    ccw = np.array([lr.is_ccw for lr in lrs])
    assert np.array_equal(ccw, depth % 2 == 0)

    # Ring counts from skimage.measure: one CCW ring per 4-connected blocked component,
    # one CW ring per enclosed 8-connected free component.
    n_blocked = label(blocked, connectivity=1).max()
    free_lab = label(np.pad(~blocked, 1, constant_values=True), connectivity=2)
    assert ccw.sum() == n_blocked
    assert (~ccw).sum() == free_lab.max() - 1

    # Blocked cell centres are inside (or within tolerance); free cell centres farther than
    # the tolerance from any blocked cell are outside.
    jj, ii = np.mgrid[0:30, 0:40]
    centres = np.stack([ii.ravel() + 0.5, jj.ravel() + 0.5], 1)
    inside = _inside_count(rings, centres) % 2 == 1
    is_blocked = blocked.ravel()
    cells = np.argwhere(blocked)[:, ::-1]
    dist_rings = shapely.distance(unary_union(lrs), shapely.points(centres))
    assert np.all(inside[is_blocked] | (dist_rings[is_blocked] <= tol_cells + 1e-9))
    far_free = ~is_blocked & (_dist_to_cells(cells, centres) > tol_cells + 1e-9)
    assert far_free.sum() > 100
    assert not np.any(inside[far_free])

    # Random points: inside the polygons means within tolerance of a blocked cell, outside
    # means within tolerance of free space (or of the map's outside).
    pts = rng.uniform([-2, -2], [42, 32], size=(3000, 2))
    inside_p = _inside_count(rings, pts) % 2 == 1
    assert np.all(_dist_to_cells(cells, pts[inside_p]) <= tol_cells + 1e-9)
    free_cells = np.argwhere(~blocked)[:, ::-1]
    in_map = (pts[:, 0] > 0) & (pts[:, 0] < 40) & (pts[:, 1] > 0) & (pts[:, 1] < 30)
    out_inner = ~inside_p & in_map
    d_free = _dist_to_cells(free_cells, pts[out_inner])
    d_edge = np.minimum.reduce([pts[out_inner, 0], 40 - pts[out_inner, 0],
                                pts[out_inner, 1], 30 - pts[out_inner, 1]])
    assert np.all(np.minimum(d_free, d_edge) <= tol_cells + 1e-9)

    # Area against shapely's union of the blocked squares.
    signed = sum(Polygon(r).area * (1 if c else -1) for r, c in zip(rings, ccw, strict=True))
    true_area = unary_union([box(i, j, i + 1, j + 1) for i, j in cells]).area
    assert true_area == blocked.sum()
    if tol_cells == 0.0:
        notch = 2 * _pinch_vertices(blocked) * (1 / 64) ** 2 / 2
        assert abs(signed - (true_area - notch)) < 1e-9
    else:
        perimeter = sum(lr.length for lr in lrs)
        assert abs(signed - true_area) <= tol_cells * perimeter
    # World-frame output matches the map-frame rings (rotation keeps orientation).
    assert [LinearRing(r).is_ccw for r in world_rings] == ccw.tolist()


def test_simplification_reduces_vertices():
    yy, xx = np.mgrid[0:80, 0:80]
    disc = ((xx - 40) ** 2 + (yy - 40) ** 2 < 30**2).astype(np.int8) * 100
    grid = GridMap(disc, 0.1)
    exact = occupied_polygons(grid, 0.0)
    coarse = occupied_polygons(grid, 0.15)
    assert len(exact) == len(coarse) == 1
    assert len(coarse[0]) < len(exact[0]) / 3
    area_true = disc.astype(bool).sum() * 0.01
    assert Polygon(exact[0]).area == pytest.approx(area_true, abs=1e-12)
    assert abs(Polygon(coarse[0]).area - area_true) < 0.15 * Polygon(exact[0]).length


def test_hole_island_and_diagonal_contact():
    data = np.zeros((9, 9), np.int8)
    data[1:8, 1:8] = 100
    data[2:7, 2:7] = 0  # a hole
    data[4, 4] = 100  # an island in the hole
    data[0, 0] = 100  # touches the ring only at a corner: separate 4-connected region
    grid = GridMap(data, 1.0)
    rings = occupied_polygons(grid, 0.0)
    ccw = sorted((LinearRing(r).is_ccw, round(Polygon(r).area, 6)) for r in rings)
    notch = (1 / 64) ** 2 / 2
    # The corner contact between cell (0, 0) and the ring notches both of them.
    expect = [(False, 25.0), (True, 1.0 - notch), (True, 1.0), (True, 49.0 - notch)]
    assert ccw == [(c, round(a, 6)) for c, a in expect]
    for a, b in itertools.combinations(rings, 2):
        assert not LinearRing(a).intersects(LinearRing(b))
    # With a large tolerance the island must not end up outside its hole.
    coarse = occupied_polygons(grid, 3.0)
    island = [r for r in coarse if Polygon(r).area < 2 and Polygon(r).centroid.distance(
        shapely.Point(4.5, 4.5)) < 1]
    assert len(island) == 1
    hole = [r for r in coarse if not LinearRing(r).is_ccw]
    assert len(hole) == 1 and Polygon(hole[0]).contains(Polygon(island[0]))


def test_empty_and_full_maps():
    assert occupied_polygons(GridMap(np.zeros((5, 6), np.int8), 0.5), 0.1) == []
    full = occupied_polygons(GridMap(np.full((5, 6), 100, np.int8), 0.5, (1, 2, 0)), 0.0)
    assert len(full) == 1
    np.testing.assert_allclose(full[0], [[4.0, 2.0], [4.0, 4.5], [1.0, 4.5], [1.0, 2.0]])


@pytest.mark.parametrize("tol", [-0.1, float("nan"), "x"])
def test_bad_tolerance(tol):
    with pytest.raises(ValueError, match="simplify_tolerance"):
        occupied_polygons(GridMap(np.zeros((2, 2), np.int8), 1.0), tol)
    with pytest.raises(ValueError, match="GridMap"):
        occupied_polygons(np.zeros((2, 2), np.int8), 0.1)


def _ring_checks(rings):
    """(all simple, pairwise disjoint, orientation matches nesting parity)."""
    lrs = [LinearRing(r) for r in rings]
    tree = shapely.STRtree(lrs)
    disjoint = all(i == j for i, j in zip(*tree.query(lrs, predicate="intersects"), strict=True))
    firsts = np.array([r[0] for r in rings])
    depth = _inside_count(rings, firsts)
    nesting = np.array_equal(np.array([lr.is_ccw for lr in lrs]), depth % 2 == 0)
    return all(lr.is_simple for lr in lrs), disjoint, nesting


def test_large_tolerance_keeps_rings_simple_disjoint_and_nested(rng):
    """Caves with islands and coarse tolerances: plain Douglas-Peucker breaks some of these
    (crossings, or an island cut out of its cave); the result must not."""
    from planning_collision.grid.contours import _douglas_peucker, _padded_mask, _trace_rings

    plain_dp_broken = 0
    for _ in range(80):
        h, w = rng.integers(8, 20, 2)
        data = np.full((h, w), 100, np.int8)
        for _ in range(rng.integers(1, 6)):
            x, y = rng.integers(0, w), rng.integers(0, h)
            data[y : y + rng.integers(1, 6), x : x + rng.integers(1, 8)] = 0
        data[rng.random((h, w)) < 0.08] = 100
        grid = GridMap(data, 0.5, origin=(0.0, 0.0, 0.0))
        tol_cells = rng.uniform(0.5, 4.0)
        rings = [r / 0.5 for r in occupied_polygons(grid, tol_cells * 0.5)]
        assert _ring_checks(rings) == (True, True, True)
        occ, lo, hi = grid.kernel_args
        xs, ys, starts = _trace_rings(_padded_mask(occ, lo, hi))
        keep = np.zeros(len(xs), bool)
        _douglas_peucker(xs, ys, starts, tol_cells, keep)
        plain = [np.c_[xs[a:b][keep[a:b]], ys[a:b][keep[a:b]]]
                 for a, b in zip(starts[:-1], starts[1:], strict=True)]
        plain_dp_broken += _ring_checks(plain) != (True, True, True)
    assert plain_dp_broken >= 2
