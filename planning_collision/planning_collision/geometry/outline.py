"""The boundary of a ConvexShape as a closed polyline, for drawing (markers, plots)."""

from __future__ import annotations

import math

import numpy as np

from .shapes import ConvexShape


def outline(shape: ConvexShape, arc_segments: int = 8) -> np.ndarray:
    """Boundary points (M, 2), counter-clockwise, first point not repeated.

    A polygon gives its vertices; a radius adds ``arc_segments`` chords per vertex arc (the
    chords' vertices lie exactly on the rounded boundary). A disc gives ``4 * arc_segments``
    points on its circle; a point gives itself.
    """
    p = shape.points
    r = shape.radius
    n = p.shape[0]
    if r == 0.0:
        return p.copy()
    if n == 1:
        angles = np.linspace(0.0, 2.0 * math.pi, 4 * arc_segments, endpoint=False)
        return p[0] + r * np.column_stack([np.cos(angles), np.sin(angles)])
    out = []
    for i in range(n):
        prev = p[i - 1]
        cur = p[i]
        nxt = p[(i + 1) % n]
        # Outward normals of the incoming and outgoing edges (CCW hull); a 2-point hull is
        # a segment whose two "edges" run there and back.
        a_in = _normal_angle(cur - prev)
        a_out = _normal_angle(nxt - cur)
        if a_out < a_in:
            a_out += 2.0 * math.pi
        for a in np.linspace(a_in, a_out, arc_segments + 1):
            out.append(cur + r * np.array([math.cos(a), math.sin(a)]))
    return np.array(out)


def _normal_angle(edge: np.ndarray) -> float:
    return math.atan2(-edge[0], edge[1])
