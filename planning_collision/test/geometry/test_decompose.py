"""Convex decomposition of simple polygons: exact union, convex pieces, errors."""

import numpy as np
import pytest
import shapely

from planning_collision.common.hull import is_convex_ccw
from planning_collision.geometry import ConvexShape, decompose, gjk_distance


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


# ------------------------------------------------------------------ large and degenerate input
def reflex_count(vertices):
    """Reflex vertices of the polygon (either orientation), collinear ones dropped."""
    v = np.asarray(vertices, float)
    e_in = v - np.roll(v, 1, axis=0)
    e_out = np.roll(v, -1, axis=0) - v
    cross = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
    area = shapely.Polygon(v).exterior.is_ccw
    return int(np.sum(cross < 0) if area else np.sum(cross > 0))


def noisy_circle(rng, n):
    angle = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    radius = 1.0 + 0.05 * rng.standard_normal(n)
    return np.c_[radius * np.cos(angle), radius * np.sin(angle)]


def comb_polygon(teeth):
    pts = [(0.0, 0.0), (2.0 * teeth + 1, 0.0)]
    for t in range(teeth, 0, -1):
        x = 2.0 * t
        pts += [(x + 1, 3.0), (x, 3.0), (x, 1.0), (x - 1, 1.0)]
    return np.array(pts + [(1.0, 3.0), (0.0, 3.0)])


@pytest.mark.parametrize("kind", ["star", "noisy circle", "comb"])
def test_ten_thousand_vertices_tile_exactly(rng, kind):
    """10,000-vertex polygons (issue #11 item 5: the quadratic version took 13 s): exact
    union, convex pieces, disjoint interiors, and at most 2r + 1 pieces for r reflex
    vertices (every remaining diagonal is essential at a reflex end, at most two per
    reflex vertex), hence at most four times the optimum (which needs >= r / 2 + 1)."""
    verts = {"star": lambda: star_polygon(rng, 10_000),
             "noisy circle": lambda: noisy_circle(rng, 10_000),
             "comb": lambda: comb_polygon(2_500)}[kind]()
    assert shapely.Polygon(verts).is_valid and len(verts) >= 10_000
    pieces = decompose(verts)
    check_exact(verts, pieces)
    assert len(pieces) <= 2 * reflex_count(verts) + 1


def test_piece_count_is_within_the_hertel_mehlhorn_bound(rng):
    checked = 0
    for _ in range(200):
        verts = star_polygon(rng, int(rng.integers(4, 60)))
        if not shapely.Polygon(verts).is_valid:
            continue
        for v in (verts, verts[::-1]):
            assert len(decompose(v)) <= 2 * reflex_count(v) + 1
        checked += 1
    assert checked > 100


def grid_star(rng, n, k):
    """A star polygon with integer vertices: many collinear and equal-height vertices."""
    angle = np.sort(rng.uniform(0, 2 * np.pi, n))
    radius = rng.integers(1, k, n)
    jitter = rng.integers(-1, 2, (n, 2)) * (rng.random((n, 1)) < 0.3)
    return np.round(np.c_[radius * np.cos(angle), radius * np.sin(angle)]) + jitter


def test_degenerate_integer_and_rectilinear_polygons_tile_exactly(rng):
    """Equal heights, vertices collinear with far edges, axis-aligned map contours: the
    sweeps' ties and the flat triangles they make must still give an exact tiling."""
    done = 0
    for _ in range(1500):
        verts = grid_star(rng, int(rng.integers(3, 40)), int(rng.choice([3, 4, 6, 10])))
        poly = shapely.Polygon(verts)
        if not shapely.LinearRing(verts).is_simple or not poly.is_valid or poly.area == 0:
            continue
        for v in (verts, verts[::-1]):
            check_exact(v, decompose(v))
        done += 1
    for _ in range(300):  # unions of grid cells: what occupied_polygons hands over
        cells = rng.integers(0, int(rng.integers(3, 15)), (int(rng.integers(2, 40)), 2))
        union = shapely.unary_union([shapely.box(x, y, x + 1, y + 1) for x, y in cells])
        for part in getattr(union, "geoms", [union]):
            if part.interiors:
                continue
            verts = np.array(part.exterior.coords)[:-1] * 0.05 + [12.3, -4.5]
            pieces = decompose(verts)
            check_exact(verts, pieces)
            assert len(pieces) <= 2 * reflex_count(verts) + 1
            done += 1
    assert done > 1000


def meets(a, b, c, d):
    """Segments a-b and c-d share a point: exact, in integers (an independent oracle)."""
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    def within(p, q, r):
        return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and \
            min(p[1], q[1]) <= r[1] <= max(p[1], q[1])

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    if o1 * o2 < 0 and o3 * o4 < 0:
        return True
    return any(o == 0 and within(p, q, r) for o, p, q, r in
               ((o1, a, b, c), (o2, a, b, d), (o3, c, d, a), (o4, c, d, b)))


def brute_force_simple(v):
    """No two non-adjacent edges meet (O(n^2), exact integers)."""
    n = len(v)
    edges = [(v[i], v[(i + 1) % n]) for i in range(n)]
    return not any(meets(*edges[i], *edges[j]) for i in range(n) for j in range(i + 2, n)
                   if not (i == 0 and j == n - 1))


def test_the_sweep_finds_exactly_the_self_intersecting_polygons(rng):
    """Random integer polygons (crossings, touching vertices, pinches, collinear overlaps):
    decompose refuses exactly those an exhaustive exact check finds non-simple."""
    refused = accepted = 0
    for _ in range(3000):
        n = int(rng.integers(3, 12))
        if rng.random() < 0.5:
            verts = rng.integers(0, int(rng.choice([3, 4, 6])), (n, 2))
        else:
            verts = grid_star(rng, n, 5).astype(int)
        # the clean-up first: no repeated or collinear consecutive vertices
        keep = []
        for p in verts.tolist():
            if not keep or p != keep[-1]:
                keep.append(p)
        while len(keep) > 1 and keep[0] == keep[-1]:
            keep.pop()
        if len(keep) < 3 or len({tuple(p) for p in keep}) < 3:
            continue
        e_in = np.array(keep) - np.roll(keep, 1, axis=0)
        e_out = np.roll(keep, -1, axis=0) - np.array(keep)
        if np.any(e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0] == 0):
            continue
        if abs(shapely.Polygon(keep).area) == 0:
            continue
        try:
            decompose(np.array(keep, float))
        except ValueError as error:
            assert "self-intersecting" in str(error), str(error)
            assert not brute_force_simple(keep), keep
            refused += 1
        else:
            assert brute_force_simple(keep), keep
            accepted += 1
    assert refused > 500 and accepted > 300


def test_one_crossing_in_a_large_polygon_is_found(rng):
    verts = star_polygon(rng, 10_000)
    bad = verts.copy()
    bad[5000] = -bad[5000] * 0.5  # pulled through the centre: crosses the far side
    assert not shapely.LinearRing(bad).is_simple
    with pytest.raises(ValueError, match="self-intersecting"):
        decompose(bad)
    touching = verts.copy()
    touching[5000] = touching[5002]  # vertex 5001 becomes a loop hanging from one point
    assert not shapely.LinearRing(touching).is_simple
    with pytest.raises(ValueError, match="self-intersecting"):
        decompose(touching)
