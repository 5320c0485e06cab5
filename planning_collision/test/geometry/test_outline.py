"""outline(): the drawn boundary of a shape lies exactly on it and goes counter-clockwise."""

import numpy as np
import pytest

from planning_collision.geometry import ConvexShape, gjk_distance
from planning_collision.geometry.outline import outline


@pytest.mark.parametrize("shape", [
    ConvexShape.box((1, 2), 0.3, 2.0, 1.0),
    ConvexShape(ConvexShape.box((1, 2), 0.3, 2.0, 1.0).points, 0.25),
    ConvexShape.circle((3, -1), 0.7),
    ConvexShape.capsule((0, 0), (2, 1), 0.4),
    ConvexShape.segment((0, 0), (2, 1)),
    ConvexShape.point((4, 4)),
])
def test_outline_points_lie_on_the_boundary(shape):
    ring = outline(shape, arc_segments=6)
    for p in ring:
        # On the boundary: touching (distance 0) but a step outward is outside.
        assert gjk_distance(ConvexShape.point(p), shape).distance == 0.0
        centre = shape.points.mean(axis=0)
        out = p + 1e-6 * (p - centre) / max(np.linalg.norm(p - centre), 1e-12)
        if shape.radius > 0 or shape.points.shape[0] >= 3:
            assert gjk_distance(ConvexShape.point(out), shape).distance > 0.0
    if len(ring) >= 3:
        x, y = ring[:, 0], ring[:, 1]
        area = 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
        assert area > 0.0  # counter-clockwise
