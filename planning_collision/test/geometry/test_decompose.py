"""Convex decomposition of simple polygons: exact union, convex pieces, errors."""

import numpy as np
import pytest
import shapely

from planning_collision.geometry import ConvexShape, decompose, gjk_distance
from planning_collision.geometry.hull import is_convex_ccw


def check_exact(vertices, pieces):
    poly = shapely.Polygon(vertices)
    assert poly.is_valid
    for p in pieces:
        assert isinstance(p, ConvexShape) and p.radius == 0.0
        assert p.points.shape[0] >= 3
        assert is_convex_ccw(p.points, p.points.shape[0])
    shapes = [shapely.Polygon(p.points) for p in pieces]
    union = shapely.unary_union(shapes)
    tol = 1e-9 * poly.area
    assert union.symmetric_difference(poly).area <= tol
    assert abs(sum(s.area for s in shapes) - poly.area) <= tol  # interiors disjoint


def star_polygon(rng, n):
    ang = np.sort(rng.uniform(0, 2 * np.pi, n))
    rad = rng.uniform(0.2, 3.0, n)
    return np.c_[rad * np.cos(ang), rad * np.sin(ang)]


def test_l_shape_stays_an_l_in_two_pieces():
    wall = [(0, 0), (4, 0), (4, 1), (1, 1), (1, 3), (0, 3)]
    pieces = decompose(wall)
    check_exact(wall, pieces)
    assert len(pieces) == 2
    # a point in the hull's notch is not inside any piece
    notch = ConvexShape.point((2.5, 2.0))
    assert all(not gjk_distance(p, notch).intersecting for p in pieces)


def test_convex_input_gives_one_piece_either_winding(rng, geo):
    for _ in range(20):
        poly = geo.random_convex(rng, 3, 20).points
        for verts in (poly, poly[::-1]):
            pieces = decompose(verts)
            assert len(pieces) == 1
            check_exact(verts, pieces)


def test_random_star_polygons(rng):
    for _ in range(150):
        n = int(rng.integers(4, 40))
        verts = star_polygon(rng, n)
        if not shapely.Polygon(verts).is_valid:
            continue
        for v in (verts, verts[::-1]):
            pieces = decompose(v)
            check_exact(v, pieces)
            assert len(pieces) <= n - 2


def test_comb_and_spiral_like_shapes():
    comb = [
        (0, 0),
        (9, 0),
        (9, 3),
        (8, 3),
        (8, 1),
        (7, 1),
        (7, 3),
        (6, 3),
        (6, 1),
        (5, 1),
        (5, 3),
        (4, 3),
        (4, 1),
        (3, 1),
        (3, 3),
        (2, 3),
        (2, 1),
        (1, 1),
        (1, 3),
        (0, 3),
    ]
    pieces = decompose(comb)
    check_exact(comb, pieces)
    spiral = [
        (0, 0),
        (6, 0),
        (6, 6),
        (1, 6),
        (1, 2),
        (4, 2),
        (4, 4),
        (3, 4),
        (3, 3),
        (2, 3),
        (2, 5),
        (5, 5),
        (5, 1),
        (0, 1),
    ]
    pieces = decompose(spiral)
    check_exact(spiral, pieces)


def test_collinear_and_repeated_vertices_are_cleaned():
    verts = [
        (0, 0),
        (1, 0),
        (2, 0),
        (2, 0),
        (4, 0),
        (4, 1),
        (1, 1),
        (1, 2),
        (1, 3),
        (0, 3),
        (0, 1.5),
    ]
    pieces = decompose(verts)
    check_exact(verts, pieces)
    assert len(pieces) == 2


@pytest.mark.parametrize(
    "verts, message",
    [
        ([(0, 0), (2, 2), (2, 0), (0, 2)], "self-intersecting"),  # bow tie
        ([(0, 0), (4, 0), (4, 4), (2, 0.0), (0, 4)], "self-intersecting"),  # touches an edge
        ([(0, 0), (3, 0), (3, 3), (1, 1), (2, 1), (0, 3)], "self-intersecting"),
        ([(0, 0), (2, 0), (1, 0), (1, 1)], "self-intersecting|folds back"),
        ([(0, 0), (1, 1)], "at least 3"),
        ([(0, 0), (1, 1), (2, 2), (3, 3)], "zero area"),
        ([(0, 0), (1, np.nan), (2, 0)], "NaN or inf"),
        (np.zeros((0, 2)), "empty"),
    ],
)
def test_bad_polygons_raise(verts, message):
    with pytest.raises(ValueError, match=message):
        decompose(verts)


@pytest.mark.parametrize("offset", [1e3, 1e6, -1e6])
def test_decomposition_far_from_the_origin(rng, offset):
    """Polygons near (offset, -offset). The pieces use the input vertices only (compared
    exactly); their union is checked with shapely on the same floats shifted back by the
    offset (an exact subtraction), so the area tolerance stays 1e-9 of the polygon's area."""
    shift = np.array([offset, -offset])
    wall = np.array([(0, 0), (4, 0), (4, 1), (1, 1), (1, 3), (0, 3)], float) + shift
    pieces = decompose(wall)
    check_exact(wall - shift, [ConvexShape._trusted(p.points - shift, 0.0) for p in pieces])
    assert len(pieces) == 2
    notch = ConvexShape.point(np.array([2.5, 2.0]) + shift)
    assert all(not gjk_distance(p, notch).intersecting for p in pieces)
    done = 0
    for _ in range(60):
        n = int(rng.integers(4, 30))
        verts = star_polygon(rng, n) + shift
        local = verts - shift  # exact: the stored floats at unit scale
        if not shapely.Polygon(local).is_valid:
            continue
        for v in (verts, verts[::-1]):
            pieces = decompose(v)
            given = {tuple(p) for p in v.tolist()}
            for p in pieces:
                assert {tuple(q) for q in p.points.tolist()} <= given
                assert is_convex_ccw(p.points, p.points.shape[0])
            check_exact(v - shift, [ConvexShape._trusted(p.points - shift, 0.0) for p in pieces])
            assert len(pieces) <= n - 2
        done += 1
    assert done > 30
