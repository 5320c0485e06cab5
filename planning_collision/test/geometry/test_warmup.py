"""warmup() covers every kernel: after it, typical user calls never compile anything.

Checked in a fresh interpreter (see warmup_probe.py) with the inputs users actually pass:
lists, ints, float32, int32 counts, Fortran-ordered and reversed views, scalar radii,
degenerate and touching shapes, every batch and scalar path.
"""

from warmup_probe import check_warmup

USE_THE_API = r'''
def use_the_api():
    from planning_collision.geometry import (
        ConvexShape, ObstacleSet, boxes_overlap_batch, decompose, gjk_distance,
        gjk_distance_batch, pack_shapes, penetration, penetration_batch, sat_mtv,
        sat_overlap, signed_distance, signed_distance_batch,
    )
    from planning_collision.geometry.raycast import cast_segments, segment_cast

    rng = np.random.default_rng(0)
    shapes = [
        ConvexShape.polygon(np.array([(0, 0), (2, 0), (2, 1), (0, 1)], np.float32)),
        ConvexShape.polygon([[0, 0], [3, 0], [1, 2]], radius=0.1),
        ConvexShape.hull(rng.normal(size=(60, 2)).tolist(), 0.25),
        ConvexShape(np.asfortranarray(rng.normal(size=(7, 2)))[::-1]),
        ConvexShape.circle([0.5, 0.5], 1),
        ConvexShape.point((3, 3)),
        ConvexShape.segment((0, 0), (1, 1)),
        ConvexShape.capsule(np.array([0, 0], np.int32), (2, 0), np.float32(0.5)),
        ConvexShape.box((1, 1), 0, 2, 1),
        ConvexShape.box(np.array([1e6, 1e6], np.float32), 0.3, 2.0, 1.0),
        ConvexShape.box((0, 0), 1, 2, 0),  # zero width: a segment
        ConvexShape.box((2, 0.5), 0, 2, 1).transformed(1, 0, np.float32(0.2)),
    ]
    # end-to-end touching boxes: the close-call paths of the box and polygon tests
    touching = ConvexShape.box((1 + 2 * np.cos(0.3), 1 + 2 * np.sin(0.3)), 0.3, 2, 1)
    shapes.append(touching)
    shapes.append(ConvexShape.polygon(touching.points))
    for a in shapes:
        a.support([1, 0])
        a.aabb()
        for b in shapes:
            gjk_distance(a, b)
            penetration(a, b)
            signed_distance(a, b)
            sat_overlap(a, b)
            sat_mtv(a, b)
    decompose(np.array([(0, 0), (3, 0), (3, 1), (1, 1), (1, 3), (0, 3)], np.int32))
    decompose([(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (1.0, 0.5), (0.0, 2.0)])
    points, counts, radii = pack_shapes(shapes)
    p32 = np.asfortranarray(points.astype(np.float32))
    c32 = counts.astype(np.int32)
    gjk_distance_batch(p32, c32, radii.astype(np.float32), points, counts, 0)
    gjk_distance_batch(points.tolist(), counts.tolist(), radii.tolist(), points, counts, 1)
    signed_distance_batch(points[::-1], counts[::-1], radii[::-1], p32, c32, radii)
    penetration_batch(points, counts, radii, points, counts, 0.5)
    boxes = np.array([[0, 0, 0, 2, 1], [1, 0, 1, 2, 1], [2, 0, 0, 2, 1]], np.float32)
    boxes_overlap_batch(boxes, boxes[::-1])
    boxes_overlap_batch(boxes.tolist(), np.asfortranarray(boxes.astype(np.float64)))
    boxes_overlap_batch([[1e6, 1e6, 0.3, 2, 0]], [[1e6 + 1, 1e6, 0.3, 0, 1]])
    world = ObstacleSet(p32, c32, radii)
    world.index.query([0, 0, 1, 1])
    world.index.query_batch(np.array([[0, 0, 1, 1]], np.int64))
    world.index.query_pairs(np.array([[0, 0, 1, 1]], np.float32))
    world.nearest(p32, c32, radii, max_distance=2)
    world.nearest(points, counts, radii, signed=True)
    world.nearest_shape(shapes[0])
    world.colliding(points, counts, radii, margin=1)
    ObstacleSet.from_shapes(shapes[:3]).colliding(points, counts, 0)
    cast_segments(world, np.array([[0, 0], [5, 5]], np.float32), [[1, 1], [-5, 5]])
    segment_cast(shapes[2], [0, 0], [3, 1])
    segment_cast(shapes[4], np.array([-3, 0], np.int64), (3.0, 0.0))
'''

# Kernels that Python code calls directly (the others are compiled into these).
ENTRY_POINTS = {
    "batch.boxes_rows",
    "batch.check_rows",
    "batch.distance_rows",
    "batch.penetration_rows",
    "broadphase._build",
    "broadphase._query_batch",
    "decompose._first_crossing",
    "decompose._merge_convex",
    "decompose._triangulate",
    "decompose._uncertain_orientations",
    "distance.distance_pair",
    "distance.intersects_pair",
    "common.hull.convex_hull",
    "obstacles._nearest_rows",
    "obstacles.shape_aabbs",
    "penetration.penetration_pair",
    "raycast._cast_rows",
    "sat.box_shapes_overlap",
    "sat.polygons_overlap",
}


def test_warmup_compiles_everything_the_api_reaches_in_a_fresh_process():
    check_warmup("planning_collision.geometry", USE_THE_API, ENTRY_POINTS)
