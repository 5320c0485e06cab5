"""ObstacleSet: nearest obstacle and colliding pairs against brute-force GJK."""

import math

import numpy as np
import pytest
import shapely

from planning_collision.geometry import (
    ConvexShape,
    ObstacleSet,
    gjk_distance_batch,
    pack_shapes,
    signed_distance_batch,
)


def make_world(rng, geo, n=1500):
    shapes = []
    for k in range(n):
        c = rng.uniform(0, 80, 2)
        kind = k % 4
        if kind == 0:
            shapes.append(geo.random_convex(rng, 3, 10, spread=0.0).transformed(*c, 0.0))
        elif kind == 1:
            shapes.append(ConvexShape.circle(c, rng.uniform(0.1, 1.0)))
        elif kind == 2:
            shapes.append(ConvexShape.box(c, rng.uniform(-3, 3), rng.uniform(1, 20), 0.2))
        else:
            shapes.append(ConvexShape.capsule(c, c + rng.uniform(-2, 2, 2), 0.3))
    return shapes


def brute_nearest(packed, query, signed=False):
    """Distances from one query shape to every obstacle (batch kernel, no broadphase)."""
    op, oc, orad = packed
    n = len(oc)
    qp, qc, qr = pack_shapes([query])
    q = (np.repeat(qp, n, axis=0), np.repeat(qc, n), np.repeat(qr, n))
    if signed:
        return signed_distance_batch(*q, op, oc, orad)
    return gjk_distance_batch(*q, op, oc, orad).distance


def test_nearest_matches_brute_force(rng, geo):
    obstacles = make_world(rng, geo)
    world = ObstacleSet.from_shapes(obstacles)
    packed = pack_shapes(obstacles)
    queries = [
        ConvexShape.box(rng.uniform(-10, 90, 2), rng.uniform(-3, 3), 2.0, 1.0) for _ in range(80)
    ]
    queries += [ConvexShape.segment(*rng.uniform(0, 80, (2, 2))) for _ in range(30)]
    queries += [ConvexShape.circle(rng.uniform(-50, 130, 2), 0.5) for _ in range(30)]
    res = world.nearest(*pack_shapes(queries))
    res_signed = world.nearest(*pack_shapes(queries), signed=True)
    for k, q in enumerate(queries):
        d = brute_nearest(packed, q)
        best = int(np.flatnonzero(d == d.min())[0])
        assert res.index[k] == best
        assert res.distance[k] == d[best]
        if d[best] > 0:
            assert abs(np.hypot(*(res.point_query[k] - res.point_obstacle[k])) - d[best]) < 1e-9
        sd = brute_nearest(packed, q, signed=True)
        best_s = int(np.flatnonzero(sd == sd.min())[0])
        assert res_signed.index[k] == best_s
        assert res_signed.distance[k] == pytest.approx(sd[best_s], abs=1e-12)


def test_nearest_max_distance(rng, geo):
    obstacles = make_world(rng, geo, 400)
    world = ObstacleSet.from_shapes(obstacles)
    packed = pack_shapes(obstacles)
    queries = [ConvexShape.circle(rng.uniform(-20, 100, 2), 0.2) for _ in range(100)]
    limit = 1.5
    res = world.nearest(*pack_shapes(queries), max_distance=limit)
    for k, q in enumerate(queries):
        d = brute_nearest(packed, q)
        if d.min() <= limit:
            assert res.index[k] == int(np.argmin(d)) and res.distance[k] == d.min()
        else:
            assert res.index[k] == -1 and res.distance[k] == math.inf
            assert res.point_query[k].tolist() == [0.0, 0.0]
    index, dist, pq, po = world.nearest_shape(queries[0], max_distance=limit)
    assert index == res.index[0] and dist == res.distance[0]


def test_colliding_matches_brute_force(rng, geo):
    obstacles = make_world(rng, geo, 800)
    world = ObstacleSet.from_shapes(obstacles)
    packed = pack_shapes(obstacles)
    queries = [
        ConvexShape.box(rng.uniform(0, 80, 2), rng.uniform(-3, 3), 4.0, 2.0) for _ in range(150)
    ]
    for margin in (0.0, 0.75):
        pairs = world.colliding(*pack_shapes(queries), margin=margin)
        expected_q, expected_o, expected_d = [], [], []
        for k, q in enumerate(queries):
            d = brute_nearest(packed, q)
            hit = np.flatnonzero(d <= margin)
            expected_q += [k] * len(hit)
            expected_o += hit.tolist()
            expected_d += d[hit].tolist()
        assert pairs.query_index.tolist() == expected_q
        assert pairs.obstacle_index.tolist() == expected_o
        np.testing.assert_array_equal(pairs.distance, expected_d)
        assert len(expected_q) > 20


def test_line_of_sight_against_shapely(rng, geo):
    obstacles = make_world(rng, geo, 300)
    polys_only = [s for s in obstacles if s.radius == 0 and len(s.points) > 2]
    geoms = shapely.unary_union([shapely.Polygon(s.points) for s in polys_only])
    world = ObstacleSet.from_shapes(polys_only)
    segs = [ConvexShape.segment(*rng.uniform(0, 80, (2, 2))) for _ in range(200)]
    pairs = world.colliding(*pack_shapes(segs))
    blocked = np.zeros(len(segs), bool)
    blocked[pairs.query_index] = True
    ref = [shapely.LineString(s.points).intersects(geoms) for s in segs]
    np.testing.assert_array_equal(blocked, ref)


def test_empty_world_and_bad_arguments():
    world = ObstacleSet.from_shapes([])
    q = pack_shapes([ConvexShape.point((0, 0))])
    res = world.nearest(*q)
    assert res.index.tolist() == [-1] and res.distance.tolist() == [math.inf]
    assert world.colliding(*q).query_index.size == 0
    world = ObstacleSet.from_shapes([ConvexShape.point((1, 0))])
    with pytest.raises(ValueError, match="max_distance"):
        world.nearest(*q, max_distance=-1.0)
    with pytest.raises(ValueError, match="margin"):
        world.colliding(*q, margin=np.nan)
    with pytest.raises(ValueError, match="queries row 0"):
        world.nearest(np.zeros((1, 1, 2)), [0], [0.0])
