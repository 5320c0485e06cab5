"""A small 2-D laser for the tracking tests: rays against discs and segments, in numpy (an
oracle independent of the code under test), with Gaussian range noise."""

from __future__ import annotations

import numpy as np


def cast(origin, yaw, beams, range_max, discs=(), segments=(), noise=0.0, rng=None,
         angle_min=-np.pi):
    """Ranges of ``beams`` rays from ``origin`` (angles ``angle_min + i * 2 pi / beams`` from
    ``yaw``) against discs ``(x, y, r)`` and segments ``(x0, y0, x1, y1)``; ``range_max``
    where nothing is hit. Returns (ranges, angle_min, angle_increment)."""
    inc = 2.0 * np.pi / beams
    ang = yaw + angle_min + inc * np.arange(beams)
    d = np.column_stack((np.cos(ang), np.sin(ang)))
    o = np.asarray(origin, dtype=np.float64)
    best = np.full(beams, np.inf)
    for cx, cy, r in discs:
        f = o - (cx, cy)
        b = d @ f
        c = f @ f - r * r
        disc = b * b - c
        with np.errstate(invalid="ignore"):
            t = -b - np.sqrt(disc)
        hit = (disc >= 0) & (t > 0)
        best = np.where(hit, np.minimum(best, t), best)
    for x0, y0, x1, y1 in segments:
        e = np.array([x1 - x0, y1 - y0])
        w = np.array([x0, y0]) - o
        den = d[:, 0] * e[1] - d[:, 1] * e[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[0] * e[1] - w[1] * e[0]) / den
            u = (w[0] * d[:, 1] - w[1] * d[:, 0]) / den
        hit = (np.abs(den) > 1e-12) & (t > 0) & (u >= 0) & (u <= 1)
        best = np.where(hit, np.minimum(best, t), best)
    if noise:
        best = best + (rng or np.random.default_rng(0)).normal(0.0, noise, beams)
    best = np.where(np.isfinite(best) & (best < range_max), best, range_max)
    return best, angle_min, inc
