"""What the sensors see now, as a grid: marking, clearing along each ray, and a decay.

A :class:`SensorLayer` covers a fixed window of the world (its own resolution and origin,
independent of the map) and keeps, per cell, the time it was last seen occupied. A scan (or
a point cloud) arrives as rays from the sensor's position in the world:

* **clearing**: every cell a ray passes from the sensor's cell up to (not including) the cell
  of its return is seen free, and forgets any mark made before the ray's time; a ray with no
  return (nothing within range) clears its whole length;
* **marking**: the cell of each return is marked with the ray's time (clearing first, then
  marking, so the beams of one scan never erase each other's returns);
* **decay**: a mark counts for ``decay`` seconds after the time it was made; a cell not seen
  again (an obstacle that left the sensors' view, or a sensor that stopped) is free after
  that.

The rays are walked with the grid's Bresenham traversal (:mod:`.traversal`, the cells
line of sight visits), in one compiled loop per batch. :meth:`SensorLayer.snapshot` gives the
marks alive at a time as an immutable :class:`~.gridmap.GridMap` (occupied 100, free 0), which
line of sight, footprint and path checks read like the map.

Times are seconds on any clock, the same for every call (ROS stamps, for collision_server).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from planning_collision.common.checks import finite_scalar, float_points

from .gridmap import GridMap
from .traversal import BRESENHAM, _cells_kernel

#: The largest window, in cells (a float64 per cell: 128 MB).
MAX_CELLS = 16_000_000


class SensorLayer:
    """A ``width`` x ``height`` metre window at ``origin`` (its lower-left corner, x, y),
    cells of ``resolution`` metres; marks last ``decay`` seconds."""

    def __init__(self, width: float, height: float, resolution: float, origin=(0.0, 0.0),
                 decay: float = 0.5):
        res = finite_scalar(resolution, "resolution", above=0.0)
        w = finite_scalar(width, "width", above=0.0)
        h = finite_scalar(height, "height", above=0.0)
        cols, rows = max(1, math.ceil(w / res - 1e-9)), max(1, math.ceil(h / res - 1e-9))
        if cols * rows > MAX_CELLS:
            raise ValueError(f"the sensor layer would have {cols} x {rows} cells, more than "
                             f"{MAX_CELLS}: a smaller window or a coarser resolution")
        ox = finite_scalar(origin[0], "origin x")
        oy = finite_scalar(origin[1], "origin y")
        self.decay = finite_scalar(decay, "decay", above=0.0)
        #: The window's geometry (its cells are all free: conversions only).
        self.frame = GridMap(np.zeros((rows, cols), np.int8), res, (ox, oy, 0.0))
        #: Per cell, the time of its latest mark (-inf: none since the last clearing).
        self.last_seen = np.full((rows, cols), -np.inf)

    @property
    def shape(self) -> tuple[int, int]:
        return self.last_seen.shape

    def add_rays(self, sensor_xy, ends, hit, stamp: float) -> None:
        """Rays from ``sensor_xy`` (the sensor's world position) to ``ends`` (N, 2) measured
        at ``stamp``: ``hit[k]`` says whether ray k ended on a return (marked) or is free to
        its end (cleared all along). Cells outside the window are skipped."""
        t = finite_scalar(stamp, "stamp")
        origin = float_points(np.reshape(np.asarray(sensor_xy, dtype=np.float64), (1, 2)),
                              "sensor_xy")
        points = float_points(ends, "ends")
        hit = np.asarray(hit, dtype=np.bool_)
        if hit.shape != (points.shape[0],):
            raise ValueError(f"hit must have shape ({points.shape[0]},), got {hit.shape}")
        starts, points, hit = self._clipped(origin[0], points, hit)
        if points.shape[0] == 0:
            return
        _clear_and_mark(self.last_seen, self.frame.world_to_cell(starts),
                        self.frame.world_to_cell(points), hit, t)

    def _clipped(self, origin, ends, hit):
        """The parts of the rays inside the window (grown by a cell), as starts, ends and
        hits (a ray whose end was cut off has no return in the window); rays that miss the
        window are dropped (Liang-Barsky)."""
        res = self.frame.resolution
        ox, oy, _ = self.frame.origin
        lo = np.array([ox - res, oy - res])
        hi = lo + res * (np.array(self.shape[::-1]) + 2.0)
        d = ends - origin
        t0 = np.zeros(len(ends))
        t1 = np.ones(len(ends))
        for axis in range(2):
            with np.errstate(divide="ignore", invalid="ignore"):
                ta = (lo[axis] - origin[axis]) / d[:, axis]
                tb = (hi[axis] - origin[axis]) / d[:, axis]
            still = d[:, axis] == 0.0
            inside = (lo[axis] <= origin[axis]) & (origin[axis] <= hi[axis])
            ta = np.where(still, np.where(inside, -np.inf, np.inf), ta)
            tb = np.where(still, np.where(inside, np.inf, -np.inf), tb)
            t0 = np.maximum(t0, np.minimum(ta, tb))
            t1 = np.minimum(t1, np.maximum(ta, tb))
        keep = t0 <= t1
        starts = origin + t0[keep, None] * d[keep]
        stops = origin + t1[keep, None] * d[keep]
        return starts, stops, hit[keep] & (t1[keep] >= 1.0)

    def add_points(self, points, stamp: float) -> None:
        """Mark returns (N, 2) seen at ``stamp`` with no clearing."""
        t = finite_scalar(stamp, "stamp")
        cells = self.frame.world_to_cell(float_points(points, "points"))
        _mark(self.last_seen, cells, np.ones(cells.shape[0], np.bool_), t)

    def occupied(self, now: float) -> np.ndarray:
        """(rows, cols) bool: the marks alive at ``now``."""
        return self.last_seen >= now - self.decay

    def snapshot(self, now: float) -> GridMap:
        """The marks alive at ``now`` as a GridMap (100 occupied, 0 free) in the window."""
        now = finite_scalar(now, "now")
        data = np.where(self.occupied(now), np.int8(100), np.int8(0)).astype(np.int8)
        return GridMap(data, self.frame.resolution, self.frame.origin)

    def clear(self) -> None:
        self.last_seen.fill(-np.inf)


@numba.njit(cache=True)
def _clear_and_mark(last_seen, starts, ends, hit, stamp):
    rows, cols = last_seen.shape
    longest = 0
    for k in range(ends.shape[0]):
        longest = max(longest, abs(ends[k, 0] - starts[k, 0]), abs(ends[k, 1] - starts[k, 1]))
    buf = np.empty((longest + 1, 2), np.int64)
    for k in range(ends.shape[0]):
        n = _cells_kernel(BRESENHAM, starts[k, 0], starts[k, 1], ends[k, 0], ends[k, 1], buf)
        if hit[k]:
            n -= 1  # the return's own cell is marked, not cleared
        for i in range(n):
            x = buf[i, 0]
            y = buf[i, 1]
            if 0 <= x < cols and 0 <= y < rows and last_seen[y, x] <= stamp:
                last_seen[y, x] = -np.inf
    _mark(last_seen, ends, hit, stamp)


@numba.njit(cache=True)
def _mark(last_seen, cells, hit, stamp):
    rows, cols = last_seen.shape
    for k in range(cells.shape[0]):
        x = cells[k, 0]
        y = cells[k, 1]
        if hit[k] and 0 <= x < cols and 0 <= y < rows and last_seen[y, x] < stamp:
            last_seen[y, x] = stamp


def scan_rays(pose, angle_min: float, angle_increment: float, ranges, range_min: float,
              range_max: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A planar scan (sensor_msgs/LaserScan's fields) taken at the sensor's world ``pose``
    (x, y, yaw) as rays for :meth:`SensorLayer.add_rays`: ``(sensor_xy (2,), ends (N, 2),
    hit (N,))``. A reading in [range_min, range_max) is a return; one at or beyond range_max
    (+inf: nothing within range, REP 117) clears the beam's whole range with no return; a
    reading below range_min, -inf or NaN (too close, invalid) is left out."""
    x, y, yaw = (finite_scalar(v, f"pose[{k}]") for k, v in enumerate(pose))
    r = np.asarray(ranges, dtype=np.float64).reshape(-1)
    angles = yaw + angle_min + angle_increment * np.arange(r.size)
    hit = (r >= range_min) & (r < range_max)
    free = ~hit & (r >= range_max)  # NaN compares false: left out
    keep = hit | free
    length = np.where(hit, r, range_max)[keep]
    ends = np.column_stack([x + length * np.cos(angles[keep]),
                            y + length * np.sin(angles[keep])])
    return np.array([x, y]), ends, hit[keep]
