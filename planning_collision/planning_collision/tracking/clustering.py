"""Consecutive-beam gap clustering of one scan's points into discs.

A laser's returns come in beam order, so an object is a run of consecutive points: a new
cluster starts where two neighbouring points lie further apart than ``gap`` plus what the
beams' spread at that range allows. On a full circle the last run joins the first when they
touch. Each cluster becomes a disc that covers every point of it: its centre lies behind the
visible surface (a person is seen from one side: the centre is pushed away from the sensor,
to the nearest point's range plus half the cluster's width), its radius reaches the
furthest point and half the width and is at least ``min_radius``. Runs with fewer than
``min_points`` points are noise; discs wider than ``max_radius`` are walls or furniture
missing from the map, not something that walks (left to the static world's sources).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .scan_points import ScanPoints


class Clusters(NamedTuple):
    """One scan's clusters as discs (global frame)."""

    centres: np.ndarray  # (c, 2)
    radii: np.ndarray  # (c,)
    sizes: np.ndarray  # (c,) points in each cluster

    @property
    def count(self) -> int:
        return self.radii.shape[0]


def empty_clusters() -> Clusters:
    return Clusters(np.zeros((0, 2)), np.zeros(0), np.zeros(0, np.int64))


def cluster_scan(scan: ScanPoints, angle_increment: float, gap: float = 0.15,
                 min_points: int = 2, min_radius: float = 0.1,
                 max_radius: float = 1.5) -> Clusters:
    """The clusters of ``scan`` (see the module docstring)."""
    p = scan.points
    m = p.shape[0]
    if m == 0:
        return empty_clusters()
    rng = np.hypot(p[:, 0] - scan.origin[0], p[:, 1] - scan.origin[1])
    step = np.diff(p, axis=0)
    apart = np.hypot(step[:, 0], step[:, 1])
    spread = 2.5 * np.maximum(rng[1:], rng[:-1]) * abs(angle_increment)
    breaks = np.flatnonzero(apart > gap + spread) + 1  # index of each cluster's first point
    starts = np.concatenate(([0], breaks))
    if scan.full_circle and breaks.size and m > 2:
        wrap = np.hypot(*(p[0] - p[-1]))
        if wrap <= gap + 2.5 * max(rng[0], rng[-1]) * abs(angle_increment):
            shift = breaks[-1]  # the last run moves in front of the first
            p, rng = np.roll(p, -shift, axis=0), np.roll(rng, -shift)
            starts = np.concatenate(([0], breaks[:-1] + (m - shift)))
    ends = np.concatenate((starts[1:], [m]))
    sizes = ends - starts
    first, last = p[starts], p[ends - 1]
    nearest = np.minimum.reduceat(rng, starts)
    # The true edges lie up to a beam's spacing beyond the extreme points: half of it is the
    # expected width missed on each side.
    half_width = 0.5 * np.hypot(*(last - first).T) + 0.5 * nearest * abs(angle_increment)
    mid = 0.5 * (first + last)
    towards = mid - scan.origin
    norm = np.hypot(towards[:, 0], towards[:, 1])
    unit = towards / np.where(norm > 0.0, norm, 1.0)[:, None]
    centres = scan.origin + unit * (np.maximum(nearest + half_width, norm))[:, None]
    owner = np.repeat(np.arange(starts.size), sizes)
    reach = np.hypot(*(p - centres[owner]).T)
    radii = np.maximum(np.maximum(np.maximum.reduceat(reach, starts), half_width), min_radius)
    ok = (sizes >= min_points) & (radii <= max_radius)
    return Clusters(centres[ok], radii[ok], sizes[ok].astype(np.int64))
