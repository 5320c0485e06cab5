"""A LaserScan's ranges (or a point cloud's points in a height band) as points in the global
frame, without what is already known.

A scan is placed with the pose the sensor had at the scan's stamp (the caller looks it up:
orca_node from the fleet controller's odometry and localization at that time). Points of the
known static map (a grid of occupied cells, grown by a margin) and points on agents known from
odometry are dropped: only what nobody else reports is left to track. The scanning robot's own
body is dropped without a margin (:func:`drop_known`): a laser does not see into its own
robot, so a return just outside it is someone pressed against the robot, who must stay
tracked (the passive-safety stop needs them most then).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class ScanPoints(NamedTuple):
    """Points of one scan, in beam order (``beams[i]`` is the beam index of ``points[i]``)."""

    points: np.ndarray  # (m, 2) global frame
    beams: np.ndarray  # (m,) int64, increasing
    origin: np.ndarray  # (2,) the sensor's position in the global frame
    count: int  # beams in the scan (for wrap-around of a full circle)
    full_circle: bool  # the last beam neighbours the first


def scan_to_points(ranges, angle_min: float, angle_increment: float, range_min: float,
                   range_max: float, pose, mount=(0.0, 0.0, 0.0)) -> ScanPoints:
    """The valid returns of a scan (finite, within [range_min, range_max), where range_max
    itself means no return) in the global frame. ``pose`` is the robot's (x, y, yaw) in the
    global frame at the scan's stamp, ``mount`` the sensor's (x, y, yaw) on the robot."""
    r = np.asarray(ranges, dtype=np.float64).ravel()
    x, y, yaw = (float(v) for v in pose)
    mx, my, myaw = (float(v) for v in mount)
    c, s = np.cos(yaw), np.sin(yaw)
    ox, oy = x + c * mx - s * my, y + s * mx + c * my
    n = r.size
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(r) & (r >= range_min) & (r < range_max)
    beams = np.flatnonzero(valid)
    angles = yaw + myaw + angle_min + angle_increment * beams
    rv = r[beams]
    points = np.column_stack((ox + rv * np.cos(angles), oy + rv * np.sin(angles)))
    full = n > 1 and abs(angle_increment) * n >= 2.0 * np.pi - 1.5 * abs(angle_increment)
    return ScanPoints(points, beams.astype(np.int64), np.array([ox, oy]), n, bool(full))


#: A point cloud is cut into this many bearings (0.5 degree each) around the robot.
CLOUD_BINS = 720


def cloud_to_points(xyz, pose, min_z: float, max_z: float,
                    bins: int = CLOUD_BINS) -> tuple[ScanPoints, float]:
    """A point cloud as a scan: its points ``xyz`` (n, 3), in the robot's frame (x forward, z
    up from the floor), within the height band ``min_z <= z <= max_z`` and finite, seen from
    the robot's centre; per bearing bin (``bins`` over a full turn) the nearest one, placed in
    the global frame with the robot's ``pose`` (x, y, yaw) at the cloud's stamp. A depth
    camera's floor (z = 0) and what hangs above the band are left out; what the band keeps
    is what a laser at those heights would see. Returns the scan (beam order: bins from
    -pi) and its angle increment, for :func:`~.clustering.cluster_scan`."""
    p = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(p).all(axis=1) & (p[:, 2] >= min_z) & (p[:, 2] <= max_z)
    p = p[ok]
    increment = 2.0 * np.pi / bins
    x, y, yaw = (float(v) for v in pose)
    origin = np.array([x, y])
    if not p.shape[0]:
        return ScanPoints(np.zeros((0, 2)), np.zeros(0, np.int64), origin, bins, True), increment
    r = np.hypot(p[:, 0], p[:, 1])
    b = np.floor((np.arctan2(p[:, 1], p[:, 0]) + np.pi) / increment).astype(np.int64) % bins
    nearest = np.full(bins, np.inf)
    np.minimum.at(nearest, b, r)
    hit = np.flatnonzero(r == nearest[b])
    beams, first = np.unique(b[hit], return_index=True)  # one point per bin (ties: any)
    chosen = p[hit[first]]
    c, s = np.cos(yaw), np.sin(yaw)
    points = np.column_stack((x + c * chosen[:, 0] - s * chosen[:, 1],
                              y + s * chosen[:, 0] + c * chosen[:, 1]))
    return ScanPoints(points, beams, origin, bins, True), increment


def keep(scan: ScanPoints, mask: np.ndarray) -> ScanPoints:
    """The points of ``scan`` where ``mask`` is True."""
    return scan._replace(points=scan.points[mask], beams=scan.beams[mask])


def drop_near(scan: ScanPoints, centres, radii, margin: float = 0.0) -> ScanPoints:
    """Without the points within ``radii + margin`` of any of ``centres`` ((k, 2), (k,)):
    the scanning robot and the agents placed from odometry."""
    centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    if not centres.shape[0] or not scan.points.shape[0]:
        return scan
    reach = np.asarray(radii, dtype=np.float64).reshape(-1) + margin
    dx = scan.points[:, 0:1] - centres[:, 0]
    dy = scan.points[:, 1:2] - centres[:, 1]
    return keep(scan, ~(dx * dx + dy * dy <= reach * reach).any(axis=1))


def drop_known(scan: ScanPoints, index: int, centres, radii, margin: float) -> ScanPoints:
    """Without the points of the agents known from odometry (``centres`` (k, 2), ``radii``
    (k,)): within ``radii + margin`` of every agent but the scanning one (``index``; the
    margin absorbs their pose's error at the scan's stamp), within its bare radius of the
    scanning robot itself (its own body)."""
    centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(radii, dtype=np.float64).reshape(-1)
    others = np.arange(centres.shape[0]) != index
    scan = drop_near(scan, centres[~others], radii[~others])
    return drop_near(scan, centres[others], radii[others], margin)


class StaticMask:
    """The known static world as a boolean grid: occupied cells (``blocked``, row y, column x)
    grown by ``margin`` metres, so that a return off a wall's edge, with the range noise and
    the pose's error, still falls on it. Cells outside the grid are free (a person may walk
    beyond the map's edge)."""

    def __init__(self, blocked, resolution: float, origin_x: float, origin_y: float,
                 margin: float = 0.1):
        grid = np.asarray(blocked, dtype=bool)
        if grid.ndim != 2:
            raise ValueError("blocked must be a 2-D grid")
        if not (resolution > 0.0 and np.isfinite(resolution)):
            raise ValueError("resolution must be a finite number above 0")
        if not (margin >= 0.0 and np.isfinite(margin)):
            raise ValueError("margin must be a finite number at least 0")
        self.resolution = float(resolution)
        self.origin = (float(origin_x), float(origin_y))
        self.margin = float(margin)
        self.grown = grow(grid, int(np.ceil(margin / resolution)))

    @classmethod
    def from_polygons(cls, polygons, resolution: float = 0.05,
                      margin: float = 0.1) -> StaticMask | None:
        """The mask of the polygons' edges (rings of (k, 2) vertices: a laser sees a
        polygon's boundary, never its inside), grown by ``margin``; None without any edge."""
        rings = [np.asarray(p, dtype=np.float64).reshape(-1, 2) for p in polygons]
        rings = [r for r in rings if r.shape[0] >= 2]
        if not rings:
            return None
        a = np.concatenate(rings)
        b = np.concatenate([np.roll(r, -1, axis=0) for r in rings])
        lo, hi = a.min(axis=0) - margin - resolution, a.max(axis=0) + margin + resolution
        shape = (int(np.ceil((hi[1] - lo[1]) / resolution)) + 1,
                 int(np.ceil((hi[0] - lo[0]) / resolution)) + 1)
        grid = np.zeros(shape, dtype=bool)
        length = np.hypot(*(b - a).T)
        samples = np.maximum(np.ceil(length / (0.5 * resolution)).astype(np.int64), 1) + 1
        owner = np.repeat(np.arange(a.shape[0]), samples)
        start = np.concatenate(([0], np.cumsum(samples)[:-1]))
        f = (np.arange(owner.size) - start[owner]) / (samples[owner] - 1)
        points = a[owner] + (b - a)[owner] * f[:, None]
        cells = np.floor((points - lo) / resolution).astype(np.int64)
        grid[cells[:, 1], cells[:, 0]] = True
        return cls(grid, resolution, lo[0], lo[1], margin)

    def occupied(self, points) -> np.ndarray:
        """(m,) whether each point lies on a grown occupied cell."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        cx = np.floor((p[:, 0] - self.origin[0]) / self.resolution).astype(np.int64)
        cy = np.floor((p[:, 1] - self.origin[1]) / self.resolution).astype(np.int64)
        h, w = self.grown.shape
        inside = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
        out = np.zeros(p.shape[0], dtype=bool)
        out[inside] = self.grown[cy[inside], cx[inside]]
        return out

    def drop(self, scan: ScanPoints) -> ScanPoints:
        """``scan`` without the points on the static world."""
        return keep(scan, ~self.occupied(scan.points)) if scan.points.shape[0] else scan


def grow(grid: np.ndarray, cells: int) -> np.ndarray:
    """``grid`` dilated by a disc of ``cells`` cells (one shifted OR per offset in the disc)."""
    if cells <= 0 or not grid.any():
        return grid.copy()
    h, w = grid.shape
    out = grid.copy()
    for dy in range(-cells, cells + 1):
        for dx in range(-cells, cells + 1):
            if (dx or dy) and dx * dx + dy * dy <= cells * cells:
                ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (
                    slice(-dy, h), slice(0, h + dy))
                xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (
                    slice(-dx, w), slice(0, w + dx))
                out[yd, xd] |= grid[ys, xs]
    return out
