"""Footprints: exact positive-area rasterisation against shapely, batch collision checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon, box

from planning_collision.geometry import ConvexShape
from planning_collision.grid import (
    GridMap,
    convex_hull_ccw,
    footprint_cells,
    footprint_collides,
)


class Shape:
    """Duck-typed stand-in for geometry.ConvexShape (.points, .radius)."""

    def __init__(self, points, radius):
        self.points = np.asarray(points, dtype=float)
        self.radius = float(radius)


def _shapely_cells(grid, shape, pose):
    """Oracle: cells whose square overlaps the footprint with positive area (shapely), plus
    the cells too close to call (|distance - r| or overlap area within 1e-9, or, for
    radius 0, a zero-area contact within 1e-9)."""
    pts = np.atleast_2d(shape.points if hasattr(shape, "points") else shape)
    r = getattr(shape, "radius", 0.0)
    c, s = math.cos(pose[2]), math.sin(pose[2])
    world = pts @ np.array([[c, s], [-s, c]]) + pose[:2]
    ox, oy, oyaw = grid.origin
    oc, os_ = math.cos(oyaw), math.sin(oyaw)
    d = world - [ox, oy]
    m = np.stack([oc * d[:, 0] + os_ * d[:, 1], -os_ * d[:, 0] + oc * d[:, 1]], 1)
    m /= grid.resolution
    hull = Polygon(m).convex_hull if len(m) >= 3 else (Point(m[0]) if len(m) == 1 or
                                                       np.allclose(m[0], m[1]) else
                                                       LineString(m))
    rc = r / grid.resolution
    x0, y0, x1, y1 = hull.bounds
    sure, unsure = set(), set()
    for j in range(math.floor(y0 - rc) - 1, math.ceil(y1 + rc) + 1):
        for i in range(math.floor(x0 - rc) - 1, math.ceil(x1 + rc) + 1):
            sq = box(i, j, i + 1, j + 1)
            if rc > 0:
                dist = sq.distance(hull)
                if abs(dist - rc) < 1e-9:
                    unsure.add((i, j))
                elif dist < rc:
                    sure.add((i, j))
            else:
                area = sq.intersection(hull).area if hull.area > 0 else 0.0
                if area >= 1e-9:
                    sure.add((i, j))
                elif area > 0 or (hull.area > 0 and sq.distance(hull) < 1e-9):
                    # a sliver, or a cell touching the footprint along an edge or at a
                    # corner: which side of the cell boundary a footprint edge lying on it
                    # ends up on is decided by the rounding of the pose transform
                    unsure.add((i, j))
    return sure, unsure


def _random_shape(rng, kind):
    if kind == "polygon":
        return Shape(rng.normal(size=(int(rng.integers(3, 8)), 2)) * 0.3, 0.0)
    if kind == "rounded":
        return Shape(rng.normal(size=(int(rng.integers(3, 6)), 2)) * 0.2, rng.uniform(0.01, 0.2))
    if kind == "disc":
        return Shape(rng.normal(size=(1, 2)) * 0.1, rng.uniform(0.02, 0.4))
    return Shape(rng.normal(size=(2, 2)) * 0.3, rng.uniform(0.02, 0.2))  # capsule


@pytest.mark.parametrize("kind", ["polygon", "rounded", "disc", "capsule"])
def test_footprint_cells_equal_shapely_oracle(rng, kind):
    grid = GridMap(np.zeros((40, 40), np.int8), 0.1, origin=(-1.0, -2.0, 0.4))
    checked = 0
    for it in range(60):
        shape = _random_shape(rng, kind)
        if it % 4 == 0:  # vertices and poses on the lattice: edges along cell boundaries
            # (robot yaw = map yaw, so the robot frame is the map frame shifted by whole cells)
            shape.points = np.round(shape.points * 10) / 10
            pose = np.array([np.round(rng.uniform(0, 3), 1), np.round(rng.uniform(0, 3), 1),
                             0.4])
            pose[:2] = grid.cell_to_world(grid.world_to_cell(pose[:2])) - 0.05 * np.array(
                [math.cos(0.4) - math.sin(0.4), math.sin(0.4) + math.cos(0.4)])
        else:
            pose = np.array([rng.uniform(-1, 3), rng.uniform(-1, 3), rng.uniform(-4, 4)])
        ours = {tuple(c) for c in footprint_cells(grid, shape, pose).tolist()}
        sure, unsure = _shapely_cells(grid, shape, pose)
        assert sure <= ours, (shape.points, shape.radius, pose)
        assert ours <= sure | unsure
        checked += len(sure)
    assert checked > 500


def _real_shape(rng, kind, on_lattice=False):
    """A real ``geometry.ConvexShape`` footprint and, for the oracle, the same region described
    independently from the constructor's parameters (its points and radius are not used).

    ``on_lattice``: a box with heading 0 and corners on multiples of 0.1 m (the test grid's
    resolution), so that its edges run exactly along cell boundaries.
    """
    if kind == "box":
        if on_lattice:
            c = np.round(rng.uniform(-0.3, 0.3, 2), 1)
            length, width = 0.2 * rng.integers(1, 5, 2)
            heading = 0.0
        else:
            c = rng.normal(size=2) * 0.1
            heading = rng.uniform(-np.pi, np.pi)
            length, width = rng.uniform(0.05, 0.8, 2)
        u = np.array([math.cos(heading), math.sin(heading)]) * length / 2
        v = np.array([-math.sin(heading), math.cos(heading)]) * width / 2
        oracle = Shape([c + u + v, c - u + v, c - u - v, c + u - v], 0.0)
        return ConvexShape.box(c, heading, length, width), oracle
    if kind == "circle":
        c, r = rng.normal(size=2) * 0.1, rng.uniform(0.02, 0.4)
        return ConvexShape.circle(c, r), Shape([c], r)
    if kind == "capsule":
        p0, p1 = rng.normal(size=(2, 2)) * 0.3
        r = rng.uniform(0.02, 0.2)
        return ConvexShape.capsule(p0, p1, r), Shape([p0, p1], r)
    # rounded convex polygon: vertices at sorted angles on an ellipse, clockwise on purpose
    ang = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(3, 8))))[::-1]
    verts = np.c_[rng.uniform(0.1, 0.4) * np.cos(ang), rng.uniform(0.1, 0.4) * np.sin(ang)]
    r = rng.uniform(0.01, 0.2)
    return ConvexShape.polygon(verts, radius=r), Shape(verts, r)


@pytest.mark.parametrize("kind", ["box", "circle", "capsule", "rounded"])
def test_real_convex_shapes_equal_shapely_oracle(rng, kind):
    """geometry.ConvexShape footprints (not the duck-typed stand-in) against the oracle."""
    grid = GridMap(np.zeros((40, 40), np.int8), 0.1, origin=(-1.0, -2.0, 0.4))
    checked = 0
    for it in range(60):
        lattice = kind == "box" and it % 4 == 0
        shape, oracle = _real_shape(rng, kind, on_lattice=lattice)
        assert isinstance(shape, ConvexShape)
        if lattice:  # robot frame aligned with the cells (yaw = map yaw), on a cell corner
            pose = np.array([rng.uniform(0, 3), rng.uniform(0, 3), 0.4])
            pose[:2] = grid.cell_to_world(grid.world_to_cell(pose[:2])) - 0.05 * np.array(
                [math.cos(0.4) - math.sin(0.4), math.sin(0.4) + math.cos(0.4)])
        else:
            pose = np.array([rng.uniform(-1, 3), rng.uniform(-1, 3), rng.uniform(-4, 4)])
        ours = {tuple(c) for c in footprint_cells(grid, shape, pose).tolist()}
        sure, unsure = _shapely_cells(grid, oracle, pose)
        assert sure <= ours, (kind, shape, pose)
        assert ours <= sure | unsure, (kind, shape, pose)
        if lattice:  # the cells fully inside are certain, only slivers may be unsure
            assert len(sure) == round(shape.box_params[3] * shape.box_params[4] / 0.01)
        checked += len(sure)
    assert checked > 300


@pytest.mark.parametrize("kind", ["box", "circle", "capsule", "rounded"])
def test_real_convex_shapes_collide_like_the_oracle_on_a_random_map(rng, random_grid_data,
                                                                     kind):
    data = random_grid_data(rng, 30, 30, p_occ=0.04, p_unknown=0.01)
    grid = GridMap(data, 0.1, origin=(0.2, -0.3, -0.6))
    blocked = grid.blocked_mask()
    hits = 0
    for _ in range(8):
        shape, oracle = _real_shape(rng, kind)
        poses = np.column_stack([rng.uniform(-0.5, 3.5, 40), rng.uniform(-1.5, 2.5, 40),
                                 rng.uniform(-np.pi, np.pi, 40)])
        got = footprint_collides(grid, shape, poses)
        # the stand-in with the same points and radius takes the same path
        same = footprint_collides(grid, Shape(shape.points, shape.radius), poses)
        assert got.tolist() == same.tolist()
        for k, pose in enumerate(poses):
            sure, unsure = _shapely_cells(grid, oracle, pose)
            outside = [(i, j) for i, j in sure if not (0 <= i < 30 and 0 <= j < 30)]
            want = bool(outside) or any(blocked[j, i] for i, j in sure if (i, j) not in outside)
            if not unsure:
                assert got[k] == want, (kind, shape, pose)
            hits += int(got[k])
    assert 0 < hits < 8 * 40


def test_cell_aligned_box_touching_neighbours_does_not_collide():
    data = np.full((6, 6), 100, np.int8)
    data[2:4, 1:4] = 0  # a free 3 x 2 hole, cells x 1..3, y 2..3
    grid = GridMap(data, 1.0)
    hole = np.array([[1.0, 2.0], [4.0, 2.0], [4.0, 4.0], [1.0, 4.0]])  # exactly the hole
    assert footprint_collides(grid, hole, [0.0, 0.0, 0.0]).tolist() == [False]
    assert len(footprint_cells(grid, hole, [0.0, 0.0, 0.0])) == 6
    assert footprint_collides(grid, hole, [0.01, 0.0, 0.0]).tolist() == [True]
    # A disc of radius 1 centred in the hole's middle column only touches cells edges.
    disc = Shape([[0.0, 0.0]], 1.0)
    assert footprint_collides(grid, disc, [2.5, 3.0, 0.0]).tolist() == [False]
    assert footprint_collides(grid, disc, [2.5, 3.0 + 1e-6, 0.0]).tolist() == [True]


def test_interior_counts_not_only_the_perimeter():
    data = np.zeros((20, 20), np.int8)
    data[10, 10] = 100  # one obstacle strictly inside the footprint, far from its edges
    grid = GridMap(data, 0.1)
    big_box = np.array([[-0.6, -0.5], [0.6, -0.5], [0.6, 0.5], [-0.6, 0.5]])
    assert footprint_collides(grid, big_box, [1.05, 1.05, 0.3]).tolist() == [True]


def test_zero_area_footprints_collide_where_they_pass_through_a_cell():
    """Issue #20: exactly collinear footprint points overlapped nothing, while the same
    points off their line by rounding (a sliver polygon) collided; a segment or a point now
    collides with the cells whose interior it meets, not with a cell boundary it runs on."""
    grid = GridMap(np.full((10, 10), 100, np.int8), 1.0)
    assert footprint_collides(grid, [[1.0, 1.0], [8.0, 7.0]], [0, 0, 0]).tolist() == [True]
    assert footprint_collides(grid, [[1.0, 1.0], [3.0, 3.0], [5, 5]], [0, 0, 0]).tolist() == [
        True
    ]
    assert footprint_collides(grid, [[4.5, 4.5]], [0, 0, 0]).tolist() == [True]
    assert footprint_collides(grid, Shape([[4.5, 4.5]], 0.1), [0, 0, 0]).tolist() == [True]
    # on cell boundaries only: a grid line, a lattice point
    assert footprint_collides(grid, [[1.0, 3.0], [6.0, 3.0]], [0, 0, 0]).tolist() == [False]
    assert footprint_collides(grid, [[4.0, 1.0], [4.0, 6.0]], [0, 0, 0]).tolist() == [False]
    assert footprint_collides(grid, [[4.0, 4.0]], [0, 0, 0]).tolist() == [False]
    assert footprint_cells(grid, [[1.0, 1.0], [3.0, 3.0]], [0, 0, 0]).tolist() == [[1, 1],
                                                                                   [2, 2]]
    free = np.zeros((10, 10), np.int8)
    free[4, 6] = 100
    grid = GridMap(free, 1.0)
    assert footprint_collides(grid, [[5.5, 4.5], [7.5, 4.5]], [0, 0, 0]).tolist() == [True]
    assert footprint_collides(grid, [[5.5, 5.0], [7.5, 5.0]], [0, 0, 0]).tolist() == [False]


def _shapely_thin_cells(grid, points, pose):
    """Oracle for a footprint without area: cells whose open square the segment (or point)
    meets (shapely), and the cells within 1e-9 of that call."""
    c, s = math.cos(pose[2]), math.sin(pose[2])
    m = (np.asarray(points) @ np.array([[c, s], [-s, c]]) + pose[:2]) / grid.resolution
    ends = m[[np.argmin(m[:, 0] + 1e-3 * m[:, 1]), np.argmax(m[:, 0] + 1e-3 * m[:, 1])]]
    geom = Point(ends[0]) if np.allclose(ends[0], ends[1]) else LineString(ends)
    x0, y0, x1, y1 = geom.bounds
    sure, unsure = set(), set()
    for j in range(math.floor(y0) - 1, math.ceil(y1) + 1):
        for i in range(math.floor(x0) - 1, math.ceil(x1) + 1):
            if geom.intersects(box(i + 1e-9, j + 1e-9, i + 1 - 1e-9, j + 1 - 1e-9)):
                sure.add((i, j))
            elif geom.distance(box(i, j, i + 1, j + 1)) < 1e-9:
                unsure.add((i, j))
    return sure, unsure


def test_zero_area_footprints_equal_shapely_oracle(rng):
    grid = GridMap(np.zeros((40, 40), np.int8), 0.1)
    checked = 0
    for trial in range(300):
        a, b = rng.normal(size=(2, 2)) * 0.4
        kind = trial % 3
        if kind == 0:
            points = np.array([a, b])
        elif kind == 1:  # collinear up to rounding: a hull of 2 or 3 (sliver) points
            points = np.array([a, a + rng.uniform(0.2, 0.8) * (b - a), b])
        else:
            points = np.array([a])
        pose = np.array([rng.uniform(1.0, 3.0), rng.uniform(1.0, 3.0),
                         rng.choice([0.0, rng.uniform(-np.pi, np.pi)])])
        ours = {tuple(c) for c in footprint_cells(grid, points, pose).tolist()}
        sure, unsure = _shapely_thin_cells(grid, points, pose)
        assert sure <= ours <= sure | unsure, (points, pose)
        checked += len(sure)
    assert checked > 1000


@pytest.mark.parametrize("out_of_map", ["blocked", "free"])
def test_batch_matches_cells_and_blocked_lookup(rng, random_grid_data, out_of_map):
    data = random_grid_data(rng, 30, 40, p_occ=0.04, p_unknown=0.01)
    grid = GridMap(data, 0.05, origin=(0.3, -0.2, -0.8))
    shapes = [
        np.array([[-0.3, -0.2], [0.3, -0.2], [0.3, 0.2], [-0.3, 0.2]]),
        Shape([[0.0, 0.0]], 0.12),
        Shape([[-0.1, 0.0], [0.1, 0.0]], 0.05),
        Shape([[-0.1, -0.1], [0.15, -0.05], [0.0, 0.1]], 0.03),
    ]
    for shape in shapes:
        poses = np.column_stack([rng.uniform(0, 2.2, 300), rng.uniform(-1.5, 0.6, 300),
                                 rng.uniform(-np.pi, np.pi, 300)])
        got = footprint_collides(grid, shape, poses, out_of_map=out_of_map)
        want = [
            bool(grid.is_blocked(footprint_cells(grid, shape, p), out_of_map).any())
            for p in poses
        ]
        assert got.tolist() == want
        assert 0 < got.sum() < len(poses)


def test_batch_matches_shapely_on_a_random_map(rng, random_grid_data):
    data = random_grid_data(rng, 20, 20, p_occ=0.03, p_unknown=0.0)
    grid = GridMap(data, 0.1, origin=(0.0, 0.0, 0.25))
    shape = Shape([[-0.2, -0.1], [0.25, -0.1], [0.1, 0.15]], 0.04)
    poses = np.column_stack([rng.uniform(0.4, 1.4, 80), rng.uniform(0.6, 1.8, 80),
                             rng.uniform(-np.pi, np.pi, 80)])
    got = footprint_collides(grid, shape, poses, out_of_map="free")
    blocked = grid.blocked_mask()
    for k, pose in enumerate(poses):
        sure, unsure = _shapely_cells(grid, shape, pose)
        assert not unsure
        want = any(0 <= i < 20 and 0 <= j < 20 and blocked[j, i] for i, j in sure)
        assert got[k] == want


def test_invariant_under_moving_map_and_poses_together(rng, random_grid_data):
    data = random_grid_data(rng, 30, 30, p_occ=0.05, p_unknown=0.0)
    shape = Shape([[-0.2, -0.1], [0.2, -0.1], [0.2, 0.1], [-0.2, 0.1]], 0.02)
    grid0 = GridMap(data, 0.1)
    local = np.column_stack([rng.uniform(0, 3, 200), rng.uniform(0, 3, 200),
                             rng.uniform(-3, 3, 200)])
    ox, oy, yaw = 4.0, -7.0, 1.1
    c, s = math.cos(yaw), math.sin(yaw)
    world = np.column_stack([ox + c * local[:, 0] - s * local[:, 1],
                             oy + s * local[:, 0] + c * local[:, 1], local[:, 2] + yaw])
    grid1 = GridMap(data, 0.1, origin=(ox, oy, yaw))
    a = footprint_collides(grid0, shape, local)
    b = footprint_collides(grid1, shape, world)
    assert a.tolist() == b.tolist()
    assert 0 < a.sum() < 200


def test_vertex_order_does_not_matter_and_hull_is_used():
    grid = GridMap(np.zeros((10, 10), np.int8), 0.1)
    ccw = np.array([[0.0, 0.0], [0.3, 0.0], [0.3, 0.2], [0.0, 0.2]])
    pose = [0.33, 0.41, 0.7]
    base = footprint_cells(grid, ccw, pose)
    np.testing.assert_array_equal(footprint_cells(grid, ccw[::-1], pose), base)
    with_inner = np.vstack([ccw, [[0.1, 0.1]]])  # an inner point changes nothing
    np.testing.assert_array_equal(footprint_cells(grid, with_inner, pose), base)
    np.testing.assert_allclose(convex_hull_ccw(with_inner[::-1]), ccw[[0, 1, 2, 3]])


def test_out_of_map_policy_for_footprints():
    grid = GridMap(np.zeros((10, 10), np.int8), 0.1)
    box_fp = np.array([[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]])
    poses = np.array([[0.5, 0.5, 0.0], [0.05, 0.5, 0.0], [-5.0, -5.0, 0.0]])
    assert footprint_collides(grid, box_fp, poses).tolist() == [False, True, True]
    assert footprint_collides(grid, box_fp, poses, "free").tolist() == [False] * 3
    assert footprint_collides(grid, box_fp, poses[0]).shape == (1,)


@pytest.mark.parametrize(
    ("shape", "poses", "message"),
    [
        (np.array([[0.0, np.nan], [1, 0], [0, 1]]), [0, 0, 0], "NaN or inf"),
        (Shape([[0.0, 0.0]], -0.1), [0, 0, 0], "radius"),
        (Shape([[0.0, 0.0]], float("inf")), [0, 0, 0], "radius"),
        (np.zeros((0, 2)), [0, 0, 0], "K >= 1"),
        (np.zeros((3, 3)), [0, 0, 0], "shape"),
        (np.eye(2), [0, 0], "shape"),
        (np.eye(2), [[0, 0, np.inf]], "NaN or inf"),
        (np.eye(2), [1e12, 0, 0], "cells from the map origin"),
    ],
)
def test_bad_input_raises_value_error(shape, poses, message):
    grid = GridMap(np.zeros((4, 4), np.int8), 0.5)
    with pytest.raises(ValueError, match=message):
        footprint_collides(grid, shape, poses)
    with pytest.raises(ValueError, match="out_of_map"):
        footprint_collides(grid, np.eye(2), [0, 0, 0], out_of_map="nope")
    with pytest.raises(ValueError, match="GridMap"):
        footprint_collides(None, np.eye(2), [0, 0, 0])
