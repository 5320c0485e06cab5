"""collision_world without ROS: one ordering rule for what blocks a segment first, range and
grid checks that name the field, the path rule; checked against the cores directly."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from planning_collision import grid
from planning_collision.collision_world import (
    GRID_BLOCKER,
    LAYER_GRID,
    LAYER_OBSTACLES,
    LAYERS_ALL,
    MAX_QUERY_COORD,
    Footprint,
    ObstacleSnapshot,
    QueryError,
    World,
    entry,
    shape_distance,
)
from planning_collision.geometry import ConvexShape, ObstacleSet, gjk_distance

RES = 0.1


PARTS = [ConvexShape.box((3.0, 2.5), 0.0, 0.4, 0.4), ConvexShape.circle((8.0, 2.5), 0.3)]


def world() -> World:
    data = np.zeros((50, 100), dtype=np.int8)
    data[:, 60] = 100  # a wall of cells at x in [6.0, 6.1)
    parts = PARTS
    return World(grid.GridMap(data, RES, (0.0, 0.0, 0.0)),
                 ObstacleSnapshot(ObstacleSet.from_shapes(parts), ("box", "disc"), ()))


def test_what_blocks_first_along_a_segment_is_reported_for_one_ray_or_many():
    w = world()
    starts = np.array([[0.5, 2.5], [4.0, 2.5], [9.5, 2.5], [0.5, 0.5], [6.5, 0.5]])
    goals = np.array([[9.0, 2.5], [9.0, 2.5], [0.5, 2.5], [5.5, 0.5], [9.5, 0.5]])
    result = w.segments(starts, goals, "bresenham", "rays")
    # The box comes before the wall; after the box, the wall comes before the disc;
    # backwards, the disc comes first; below everything, clear; beyond the wall, clear.
    assert result.blocker.tolist() == [0, GRID_BLOCKER, 1, -1, -1]
    assert result.point[0] == pytest.approx([2.8, 2.5])
    assert result.point[1] == pytest.approx([6.05, 2.55])  # the wall cell's centre
    assert result.point[2] == pytest.approx([8.3, 2.5])
    assert result.clear.tolist() == [False, False, False, True, True]
    assert np.isnan(result.point[3:]).all()
    for i in range(len(starts)):  # one ray at a time: the same answers
        one = w.segments(starts[i:i + 1], goals[i:i + 1], "bresenham", "ray")
        assert one.blocker[0] == result.blocker[i]
        np.testing.assert_array_equal(one.point[0], result.point[i])
        assert one.checked[0] == result.checked[i]


def test_layers_select_what_is_checked_and_a_missing_map_is_named():
    w = world()
    assert w.view(LAYER_OBSTACLES, LAYER_GRID, "no map").grid is None
    assert w.view(0, LAYER_GRID, "no map").obstacles is None
    both = w.view(LAYERS_ALL, LAYER_GRID, "no map")
    assert both.grid is w.grid and both.obstacles is w.obstacles
    with pytest.raises(QueryError, match="no map received"):
        World(None, w.obstacles).view(LAYER_GRID, LAYER_GRID, "no map received on /map")
    with pytest.raises(QueryError, match="layers is 8"):  # 4 is LAYER_SENSORS (#25)
        w.view(8, LAYER_GRID, "")


def test_points_out_of_range_or_off_the_grid_name_their_field():
    w = world()
    with pytest.raises(QueryError, match=r"goals\[1\] has a coordinate beyond"):
        w.check_points(np.array([[0.0, 0.0], [2 * MAX_QUERY_COORD, 0.0]]), entry("goals"))
    with pytest.raises(QueryError, match=r"starts\[0\] lies 1e\+09 m from the map's origin"):
        w.check_points(np.array([[1e9, 0.0]]), entry("starts"))
    with pytest.raises(QueryError, match="footprint reaches"):
        w.footprint_reach(ConvexShape.circle((0, 0), 2000.0), "footprint")
    # Without the grid layer only the coordinate range is checked.
    World(None, w.obstacles).check_points(np.array([[1e9, 0.0]]), entry("starts"))


def test_footprints_agree_with_the_cores():
    w = world()
    footprint = ConvexShape.box((0.0, 0.0), 0.0, 0.6, 0.4)
    poses = np.array([[3.0, 2.0, 0.0], [1.0, 1.0, 0.3], [6.0, 1.0, 0.0], [8.0, 2.9, 1.0]])
    result = w.footprints(footprint, poses, "poses")
    assert result.grid_hit.tolist() == grid.footprint_collides(w.grid, footprint, poses).tolist()
    for i, (x, y, yaw) in enumerate(poses):
        placed = footprint.transformed(x, y, yaw)
        nearest = min(range(2), key=lambda k: gjk_distance(placed, PARTS[k]).distance)
        core = gjk_distance(placed, PARTS[nearest])
        assert result.index[i] == nearest
        if not core.intersecting:
            assert result.distance[i] == pytest.approx(core.distance, abs=1e-12)
        assert result.obstacle_hit[i] == core.intersecting
    limited = w.footprints(footprint, poses, "poses", max_distance=0.05)
    assert (limited.index[~result.obstacle_hit] == -1).all()


def test_the_path_rule_lookahead_and_stop_at_first_collision():
    w = World(world().grid, None)
    footprint = ConvexShape.circle((0.0, 0.0), 0.1)
    poses = np.array([[1.0, 1.0, 0.0], [3.0, 1.0, 0.0], [5.0, 1.0, 0.0], [7.0, 1.0, 0.0],
                      [8.0, 1.0, 0.0], [8.0, 3.0, 0.0]])
    full = w.path(footprint, poses, "bresenham", -1.0, False, "path.poses")
    # The segment 5 -> 7 crosses the wall: pose 3 is invalid (not seen from pose 2).
    assert full.checked == 6 and np.flatnonzero(full.invalid).tolist() == [3]
    assert full.visible.tolist() == [True, True, False, True, True]
    short = w.path(footprint, poses, "bresenham", 4.5, False, "path.poses")
    assert short.checked == 3 and not short.invalid.any()  # 0, 2 and 4 m along
    first = w.path(footprint, poses, "bresenham", -1.0, True, "path.poses")
    assert first.checked == 4 and first.invalid.tolist() == [False, False, False, True]
    # A look-ahead of 0 checks the first pose only (negative: the whole path).
    assert w.path(footprint, poses, "bresenham", 0.0, False, "path.poses").checked == 1
    with pytest.raises(QueryError, match="max_lookahead_distance is NaN"):
        w.path(footprint, poses, "bresenham", math.nan, False, "path.poses")


def test_a_core_refusing_input_becomes_a_query_error_naming_the_field():
    w = world()
    with pytest.raises(QueryError, match="^rays: "):
        w.segments(np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]]), "diagonal", "rays")


def test_shape_distance_agrees_with_shapely_and_its_normal_is_a_unit_vector():
    """Random separated and overlapping pairs: the distance is shapely's when apart, the
    normal is a unit vector with point_b - point_a = distance * normal, and swapping the
    shapes flips the normal and keeps the rest."""
    shapely = pytest.importorskip("shapely")
    rng = np.random.default_rng(7)
    separated = 0
    for _ in range(300):
        a = ConvexShape.box(tuple(rng.uniform(-3, 3, 2)), rng.uniform(-3, 3),
                            *rng.uniform(0.1, 2.0, 2))
        b = ConvexShape.box(tuple(rng.uniform(-3, 3, 2)), rng.uniform(-3, 3),
                            *rng.uniform(0.1, 2.0, 2))
        result = shape_distance(a, b)
        swapped = shape_distance(b, a)
        assert result.intersecting == swapped.intersecting
        assert result.distance == pytest.approx(swapped.distance, abs=1e-12)
        assert np.hypot(*result.normal) == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(swapped.normal, -result.normal, atol=1e-9)
        peer = shapely.Polygon(a.points).distance(shapely.Polygon(b.points))
        if not result.intersecting:
            separated += 1
            assert result.distance == pytest.approx(peer, abs=1e-12)
            assert np.allclose(result.point_b - result.point_a,
                               result.distance * result.normal, atol=1e-12)
        else:
            assert peer == 0.0 and result.distance <= 0.0
    assert 50 < separated < 295  # both kinds of pair were drawn


def test_shape_distance_of_overlapping_shapes_is_minus_the_depth_and_separates_them():
    a = ConvexShape.box((0.0, 0.0), 0.0, 2.0, 0.2)
    b = ConvexShape.box((0.0, 0.15), 0.0, 0.2, 0.2)  # overlaps a by 0.05 in y
    result = shape_distance(a, b)
    assert result.intersecting and result.distance == pytest.approx(-0.05)
    assert np.allclose(result.normal, (0.0, 1.0))
    moved = ConvexShape.box((0.0, 0.15 + 0.05 + 1e-9), 0.0, 0.2, 0.2)
    assert not gjk_distance(a, moved).intersecting
    # swapping the shapes flips the normal and keeps the distance
    swapped = shape_distance(b, a)
    assert swapped.distance == pytest.approx(result.distance)
    assert np.allclose(swapped.normal, -result.normal)


def test_shape_distance_names_the_field_beyond_range():
    a = ConvexShape.box((MAX_QUERY_COORD * 1.5, 0.0), 0.0, 1.0, 1.0)
    with pytest.raises(QueryError, match=r"shape_a.points\[0\]"):
        shape_distance(a, ConvexShape.circle((0.0, 0.0), 1.0))


def test_a_world_gives_the_same_answers_on_any_number_of_kernel_threads():
    """collision_server's kernel_threads only changes how a large request's rows are shared
    among cores: segments, footprints and the path rule answer bit for bit the same."""
    rng = np.random.default_rng(3)
    n = 20_000  # far above the size below which a batch stays on one thread
    starts = rng.uniform((0.0, 0.0), (10.0, 5.0), (n, 2))
    goals = rng.uniform((0.0, 0.0), (10.0, 5.0), (n, 2))
    poses = np.column_stack([rng.uniform(0.0, 10.0, n), rng.uniform(0.0, 5.0, n),
                             rng.uniform(-math.pi, math.pi, n)])
    footprint = ConvexShape.box((0.0, 0.0), 0.0, 0.6, 0.4)
    answers = []
    for threads in (1, 2, None):
        w = dataclasses.replace(world(), threads=threads)
        seg = w.segments(starts, goals, "supercover", "starts")
        fp = w.footprints(footprint, poses, "poses")
        path = w.path(footprint, poses[:2000], "bresenham", 0.0, False, "path")
        answers.append((seg, fp, path))
    for other in answers[1:]:
        for got, want in zip(other, answers[0], strict=True):
            for a, b in zip(got, want, strict=True):
                np.testing.assert_array_equal(a, b)
    seg = answers[0][0]
    assert 0 < seg.clear.sum() < n and (seg.blocker == GRID_BLOCKER).any()
    assert (seg.blocker >= 0).any()  # both layers block some segments


# A forklift: a 1.0 x 0.6 body with two forks 0.7 m long reaching forward (concave).
FORKLIFT = np.array([[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], [0.5, -0.3], [0.5, -0.25],
                     [1.2, -0.25], [1.2, -0.15], [0.5, -0.15], [0.5, 0.15], [1.2, 0.15],
                     [1.2, 0.25], [0.5, 0.25]])


def test_a_concave_footprint_is_its_convex_parts_and_padding_grows_it_exactly():
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    from planning_collision.geometry.outline import outline

    footprint = Footprint.from_points(FORKLIFT)
    assert len(footprint.parts) >= 3
    union = unary_union([Polygon(p.points) for p in footprint.parts])
    assert union.symmetric_difference(Polygon(FORKLIFT)).area < 1e-12
    np.testing.assert_array_equal(footprint.ring, FORKLIFT)
    padded = Footprint.from_points(FORKLIFT, 0.05)
    assert all(p.radius == 0.05 for p in padded.parts)
    grown = unary_union([Polygon(outline(p, 64)) for p in padded.parts])
    assert abs(grown.area - Polygon(FORKLIFT).buffer(0.05, 64).area) < 1e-3
    # A convex list stays one part; a self-intersecting one is refused.
    assert len(Footprint.from_points(FORKLIFT[:4]).parts) == 1
    with pytest.raises(ValueError, match="self-intersecting"):
        Footprint.from_points(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))


def test_a_concave_footprint_is_answered_exactly_against_shapely():
    """Grid and obstacle collision of the forklift at random poses: exactly shapely's
    answer (a pallet between the forks is free; the convex hull would collide); the
    distance when apart is shapely's distance."""
    import shapely
    from shapely import affinity
    from shapely.geometry import Polygon

    data = np.zeros((60, 60), dtype=np.int8)  # 6 m: the forklift stays inside
    data[18:22, 18:22] = 100  # a 0.4 m block at (1.8..2.2, 1.8..2.2)
    gmap = grid.GridMap(data, RES, (0.0, 0.0, 0.0))
    posts = [ConvexShape.box((2.0, 2.0), 0.0, 0.1, 0.1), ConvexShape.circle((3.0, 1.0), 0.05)]
    w = World(gmap, ObstacleSnapshot(ObstacleSet.from_shapes(posts), ("post", "pole"), ()))
    footprint = Footprint.from_points(FORKLIFT)
    rng = np.random.default_rng(26)
    poses = np.column_stack([rng.uniform(1.5, 3.5, 400), rng.uniform(1.5, 3.5, 400),
                             rng.uniform(-math.pi, math.pi, 400)])
    # Between the forks: the post at (2, 2) sits in the gap, the body behind it.
    poses[0] = (1.3, 2.0, 0.0)
    result = w.footprints(footprint, poses, "poses")
    hull = w.footprints(ConvexShape(FORKLIFT), poses[:1], "poses")
    assert hull.obstacle_hit[0] and not result.obstacle_hit[0]
    obstacles = [shapely.box(1.95, 1.95, 2.05, 2.05), shapely.Point(3.0, 1.0).buffer(0.05, 256)]
    cells = [shapely.box(x0 * RES, y0 * RES, (x0 + 1) * RES, (y0 + 1) * RES)
             for y0, x0 in np.argwhere(gmap.blocked_mask())]
    grid_hits = obstacle_hits = 0
    for i, (x, y, yaw) in enumerate(poses):
        placed = affinity.translate(affinity.rotate(Polygon(FORKLIFT), yaw, (0, 0),
                                                    use_radians=True), x, y)
        overlap = max(placed.intersection(c).area for c in cells)
        if overlap > 1e-9 or all(placed.distance(c) > 1e-9 for c in cells):
            assert result.grid_hit[i] == (overlap > 1e-9), (i, poses[i])
            grid_hits += overlap > 1e-9
        gap = min(placed.distance(o) for o in obstacles)
        if gap > 1e-6:
            assert not result.obstacle_hit[i]
            assert result.distance[i] == pytest.approx(gap, abs=1e-5)  # shapely: a 1024-gon
        elif any(placed.intersection(o).area > 1e-9 for o in obstacles):
            assert result.obstacle_hit[i] and result.distance[i] < 0.0
            obstacle_hits += 1
    assert 20 < grid_hits < 380 and 20 < obstacle_hits < 380
