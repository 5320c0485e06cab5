"""A simulated 2D laser scanner: the ranges a planar lidar would measure (no ROS).

The world a beam can hit has two parts:

* :class:`StaticScene`, built once: the map's blocked cells (as the boundaries of the blocked
  regions, cell-exact: :func:`planning_collision.grid.occupied_polygons` with no
  simplification, cut into segments) and the scenario's obstacles (their convex parts), in
  one :class:`~planning_collision.geometry.ObstacleSet`. Beams are cast against it with the
  geometry core's batch segment cast (:func:`~planning_collision.geometry.raycast.cast_segments`,
  a BVH walk). A laser standing inside a blocked cell sees nothing but that cell: every beam
  reads 0 (below ``range_min``).
* Discs that move (robots, people): centres and radii given with each scan, cast with the
  same exact circle test as the geometry core's (``raycast._cast_circle``) in one numba loop.

Beam ``k`` leaves the sensor at angle ``angle_min + k * angle_increment`` in the sensor frame;
the sensor frame is the robot's pose composed with the mount ``offset`` (x, y, yaw in the
robot's frame). A beam reads the distance to the first surface it meets within
``range_max``, plus Gaussian noise of std ``noise`` metres. The values follow REP 117, as
sensor_msgs/LaserScan asks: ``+inf`` when nothing is within ``range_max`` (or the noisy
reading lies beyond it), ``-inf`` when the reading is below ``range_min`` (too close).

The scan is instantaneous: every beam sees the world of one moment (a real scanner sweeps
over ``1 / rate_hz``; at 10 Hz a person walking at 1.5 m/s moves 0.15 m in a sweep).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from planning_collision.common.checks import finite_scalar
from planning_collision.geometry import ConvexShape, ObstacleSet
from planning_collision.geometry.raycast import _cast_circle, cast_segments
from planning_collision.grid import GridMap, occupied_polygons

#: The beams of a full turn start here (the REP 103 back of the robot), as most lidars do.
FULL_TURN_START = -math.pi


def check_range_rate_noise(spec) -> None:
    """Check and store a sensor spec's ``range_min`` < ``range_max``, ``rate_hz`` and ``noise``
    (a frozen dataclass: the laser's and the depth camera's)."""
    s = object.__setattr__
    s(spec, "range_max", finite_scalar(spec.range_max, "range_max", above=0.0))
    s(spec, "range_min", finite_scalar(spec.range_min, "range_min", at_least=0.0))
    if spec.range_min >= spec.range_max:
        raise ValueError(f"range_min ({spec.range_min:g}) must be below range_max "
                         f"({spec.range_max:g})")
    s(spec, "rate_hz", finite_scalar(spec.rate_hz, "rate_hz", above=0.0))
    s(spec, "noise", finite_scalar(spec.noise, "noise", at_least=0.0))


@dataclass(frozen=True)
class LaserSpec:
    """What a simulated laser measures and how often (every field checked on construction).

    ``angle_min`` and ``angle_max`` are the first and last beam's angles (the
    sensor_msgs/LaserScan fields); left as None the beams cover a full turn, ``beams`` of them
    ``2 pi / beams`` apart from ``-pi``. ``offset`` is the mount (x, y, yaw) on the robot.
    """

    beams: int = 360
    range_max: float = 8.0
    range_min: float = 0.05
    rate_hz: float = 10.0
    noise: float = 0.0
    angle_min: float | None = None
    angle_max: float | None = None
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        s = object.__setattr__
        s(self, "beams", int(finite_scalar(self.beams, "beams", at_least=1, at_most=100_000,
                                           integer=True)))
        check_range_rate_noise(self)
        if (self.angle_min is None) != (self.angle_max is None):
            raise ValueError("give both angle_min and angle_max, or neither (a full turn)")
        if self.angle_min is None:
            s(self, "angle_min", FULL_TURN_START)
            s(self, "angle_max", FULL_TURN_START + 2.0 * math.pi * (self.beams - 1) / self.beams)
        else:
            lo = finite_scalar(self.angle_min, "angle_min", at_least=-2.0 * math.pi,
                               at_most=2.0 * math.pi)
            hi = finite_scalar(self.angle_max, "angle_max", at_least=-2.0 * math.pi,
                               at_most=2.0 * math.pi)
            if hi < lo or (hi == lo and self.beams > 1) or (hi > lo and self.beams == 1):
                raise ValueError(f"angle_max ({hi:g}) must be above angle_min ({lo:g}) with "
                                 f"more than one beam, equal to it with one")
            if hi - lo > 2.0 * math.pi:
                raise ValueError(f"angle_max - angle_min must be at most 2 pi, got {hi - lo:g}")
            s(self, "angle_min", lo)
            s(self, "angle_max", hi)
        try:
            offset = tuple(self.offset)
        except TypeError as exc:
            raise ValueError(f"offset must be [x, y, yaw], got {self.offset!r}") from exc
        if len(offset) != 3:
            raise ValueError(f"offset must be [x, y, yaw], got {self.offset!r}")
        s(self, "offset", tuple(finite_scalar(v, f"offset[{k}]") for k, v in enumerate(offset)))

    @property
    def angle_increment(self) -> float:
        if self.beams == 1:
            return 0.0
        return (self.angle_max - self.angle_min) / (self.beams - 1)

    def angles(self) -> np.ndarray:
        """Each beam's angle in the sensor frame (beams,)."""
        return self.angle_min + self.angle_increment * np.arange(self.beams)


class StaticScene:
    """What does not move: the map's blocked cells and the static obstacles, one BVH.

    ``grid``: a :class:`~planning_collision.grid.GridMap` or None; outside the map is free (a
    beam leaving the map meets nothing more of it). ``shapes``: convex obstacle parts
    (:class:`~planning_collision.geometry.ConvexShape`).
    """

    def __init__(self, grid: GridMap | None = None, shapes=()):
        if grid is not None and not isinstance(grid, GridMap):
            raise ValueError(f"grid must be a GridMap or None, got {type(grid).__name__}")
        parts = list(shapes)
        for i, shape in enumerate(parts):
            if not isinstance(shape, ConvexShape):
                raise ValueError(f"shapes[{i}] must be a ConvexShape, got "
                                 f"{type(shape).__name__}")
        self.grid = grid
        segments = map_segments(grid) if grid is not None else np.zeros((0, 2, 2))
        #: How many of the set's first entries are map boundary segments.
        self.map_segments = len(segments)
        n = len(segments) + len(parts)
        kmax = max([2] + [p.points.shape[0] for p in parts])
        points = np.zeros((n, kmax, 2))
        counts = np.full(n, 2, np.int64)
        radii = np.zeros(n)
        points[:len(segments), :2] = segments
        points[:len(segments), 2:] = segments[:, :1]  # padding repeats the first point
        for i, part in enumerate(parts, start=len(segments)):
            k = part.points.shape[0]
            points[i, :k] = part.points
            points[i, k:] = part.points[0]
            counts[i] = k
            radii[i] = part.radius
        self.obstacles = ObstacleSet(points, counts, radii) if n else None

    def blocked_at(self, x: float, y: float) -> bool:
        """Whether the point lies in a blocked cell of the map (a laser there is blind)."""
        if self.grid is None:
            return False
        cell = self.grid.world_to_cell(np.array([[x, y]]))
        return bool(self.grid.is_blocked(cell, out_of_map="free")[0])


def map_segments(grid: GridMap) -> np.ndarray:
    """The boundary of the map's blocked regions as segments (N, 2, 2), cell-exact (the
    region's collinear cell edges merged into one segment)."""
    rings = occupied_polygons(grid, 0.0)
    if not rings:
        return np.zeros((0, 2, 2))
    return np.concatenate([np.stack([ring, np.roll(ring, -1, axis=0)], axis=1)
                           for ring in rings])


def sensor_pose(pose, spec: LaserSpec) -> tuple[float, float, float]:
    """The sensor's pose (x, y, yaw) in the world for the robot's ``pose``."""
    x, y, yaw = (float(v) for v in pose)
    ox, oy, oyaw = spec.offset
    c, s = math.cos(yaw), math.sin(yaw)
    return x + c * ox - s * oy, y + s * ox + c * oy, yaw + oyaw


def true_ranges(pose, spec: LaserSpec, scene: StaticScene | None = None, centres=(),
                radii=(), exclude: int = -1) -> np.ndarray:
    """The exact distance along each beam to the first surface within ``range_max`` (inf:
    none), with no noise: the simulator's truth.

    ``centres`` (M, 2) and ``radii`` (M,): the discs (robots, people); disc ``exclude`` (the
    robot carrying the laser) is not seen.
    """
    sx, sy, syaw = sensor_pose(pose, spec)
    if not (math.isfinite(sx) and math.isfinite(sy) and math.isfinite(syaw)):
        raise ValueError("pose contains NaN or inf")
    if scene is not None and scene.blocked_at(sx, sy):
        return np.zeros(spec.beams)
    angles = syaw + spec.angles()
    starts = np.empty((spec.beams, 2))
    starts[:, 0] = sx
    starts[:, 1] = sy
    goals = np.column_stack([sx + spec.range_max * np.cos(angles),
                             sy + spec.range_max * np.sin(angles)])
    t = np.full(spec.beams, np.inf)
    if scene is not None and scene.obstacles is not None:
        t = cast_segments(scene.obstacles, starts, goals, threads=1).t
    c = np.ascontiguousarray(np.asarray(centres, dtype=np.float64).reshape(-1, 2))
    r = np.ascontiguousarray(np.asarray(radii, dtype=np.float64).reshape(-1))
    if c.shape[0] != r.shape[0]:
        raise ValueError(f"centres ({c.shape[0]}) and radii ({r.shape[0]}) must match")
    if c.shape[0]:
        if not (np.isfinite(c).all() and np.isfinite(r).all()) or (r < 0.0).any():
            raise ValueError("centres and radii must be finite, radii >= 0")
        _cast_discs(sx, sy, goals, c, r, int(exclude), t)
    return t * spec.range_max


def simulate_scan(pose, spec: LaserSpec, scene: StaticScene | None = None, centres=(),
                  radii=(), exclude: int = -1, rng: np.random.Generator | None = None,
                  ) -> np.ndarray:
    """The ranges (beams,) a laser on a robot at ``pose`` (x, y, yaw) measures, as
    sensor_msgs/LaserScan carries them (REP 117: +inf nothing within range_max, -inf
    closer than range_min). Noise (``spec.noise``) is drawn from ``rng`` (None: no noise).
    See :func:`true_ranges` for the discs."""
    ranges = true_ranges(pose, spec, scene, centres, radii, exclude)
    if rng is not None and spec.noise > 0.0:
        hit = np.isfinite(ranges)
        ranges[hit] += rng.normal(0.0, spec.noise, int(hit.sum()))
    return reported(ranges, spec)


def reported(ranges: np.ndarray, spec: LaserSpec) -> np.ndarray:
    """Measured ranges as REP 117 reports them (in place): beyond range_max +inf, below
    range_min -inf."""
    ranges[ranges > spec.range_max] = np.inf
    ranges[ranges < spec.range_min] = -np.inf
    return ranges


@numba.njit(cache=True)
def _cast_discs(sx, sy, goals, centres, radii, exclude, t):
    """Lower ``t`` (per beam, the fraction of the beam) to the first disc each beam enters."""
    for k in range(goals.shape[0]):
        dx = goals[k, 0] - sx
        dy = goals[k, 1] - sy
        best = t[k]
        for j in range(centres.shape[0]):
            if j == exclude:
                continue
            hit = _cast_circle(sx, sy, dx, dy, centres[j, 0], centres[j, 1], radii[j])
            if hit < best:
                best = hit
        t[k] = best
