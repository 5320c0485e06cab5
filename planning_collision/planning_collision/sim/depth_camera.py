"""A simulated depth camera: the 3D points a forward-looking depth sensor would return (no
ROS).

The world is the 2D world of :mod:`planning_collision.sim.laser` standing on a floor: the map's
blocked cells, the obstacles, the robots and the people are vertical walls and cylinders
taller than anything the camera sees, and the floor is the plane z = 0. The camera stands at
``height`` metres above the floor on the robot's mount ``offset`` (x, y, yaw). It has
``rows`` rows of ``beams`` rays: the columns spread over the horizontal ``fov`` (centred on the
camera's heading), the rows over the elevations ``elevation_min`` .. ``elevation_max``
(radians, negative looks down). A ray of elevation ``e`` whose column meets a wall or a disc
at horizontal distance ``d`` (the laser's exact distance along that bearing) returns

* the floor, at horizontal distance ``height / tan(-e)``, when ``e < 0`` and the floor comes
  first (z = 0: a height band is what keeps the floor out of the obstacles);
* else the wall, at horizontal distance ``d`` and height ``height + d tan(e)``;

measured along the ray (range ``horizontal / cos(e)``) with Gaussian range noise of std
``noise``; a return beyond ``range_max`` or closer than ``range_min`` is no return (NaN, as an
organised point cloud marks it). The points are given in the robot's frame (base_link: x
forward, z up from the floor), row by row, like a depth camera's organised cloud.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planning_collision.common.checks import finite_scalar

from .laser import LaserSpec, StaticScene, check_range_rate_noise, true_ranges


@dataclass(frozen=True)
class CameraSpec:
    """What a simulated depth camera measures and how often (checked on construction)."""

    beams: int = 160
    rows: int = 12
    fov: float = 1.5
    elevation_min: float = -0.6
    elevation_max: float = 0.2
    height: float = 0.4
    range_min: float = 0.2
    range_max: float = 6.0
    rate_hz: float = 10.0
    noise: float = 0.0
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        s = object.__setattr__
        for name in ("beams", "rows"):
            s(self, name, int(finite_scalar(getattr(self, name), name, at_least=1,
                                            at_most=10_000, integer=True)))
        s(self, "fov", finite_scalar(self.fov, "fov", above=0.0, at_most=2.0 * math.pi))
        half = 0.5 * math.pi - 1e-3
        lo = finite_scalar(self.elevation_min, "elevation_min", at_least=-half, at_most=half)
        hi = finite_scalar(self.elevation_max, "elevation_max", at_least=-half, at_most=half)
        if hi < lo or (hi == lo and self.rows > 1) or (hi > lo and self.rows == 1):
            raise ValueError(f"elevation_max ({hi:g}) must be above elevation_min ({lo:g}) "
                             f"with more than one row, equal to it with one")
        s(self, "elevation_min", lo)
        s(self, "elevation_max", hi)
        s(self, "height", finite_scalar(self.height, "height", at_least=0.0))
        check_range_rate_noise(self)
        # the columns' laser checks the offset (and names its fields)
        s(self, "offset", self.columns().offset)

    def columns(self) -> LaserSpec:
        """The horizontal laser whose beams are the camera's columns (no noise)."""
        if self.beams == 1:
            return LaserSpec(beams=1, range_max=self.range_max, range_min=0.0,
                             angle_min=0.0, angle_max=0.0, offset=self.offset)
        return LaserSpec(beams=self.beams, range_max=self.range_max, range_min=0.0,
                         angle_min=-0.5 * self.fov, angle_max=0.5 * self.fov,
                         offset=self.offset)

    def elevations(self) -> np.ndarray:
        """Each row's elevation (rows,), lowest first."""
        if self.rows == 1:
            return np.array([self.elevation_min])
        return np.linspace(self.elevation_min, self.elevation_max, self.rows)

    @property
    def points(self) -> int:
        return self.rows * self.beams


def true_cloud(pose, spec: CameraSpec, scene: StaticScene | None = None, centres=(),
               radii=(), exclude: int = -1) -> np.ndarray:
    """The exact ranges (rows, beams) along each ray to the floor or the first wall or disc
    (inf: nothing within ``range_max``), with no noise: the simulator's truth. See
    :func:`planning_collision.sim.laser.true_ranges` for the discs."""
    horizontal = true_ranges(pose, spec.columns(), scene, centres, radii, exclude)
    tan_e = np.tan(spec.elevations())[:, None]
    with np.errstate(divide="ignore"):
        floor = np.where(tan_e < 0.0, spec.height / -np.minimum(tan_e, -1e-300), np.inf)
    reach = np.minimum(horizontal[None, :], floor)
    ranges = reach / np.cos(spec.elevations())[:, None]
    ranges[ranges > spec.range_max] = np.inf
    return ranges


def simulate_cloud(pose, spec: CameraSpec, scene: StaticScene | None = None, centres=(),
                   radii=(), exclude: int = -1, rng: np.random.Generator | None = None,
                   ) -> np.ndarray:
    """The points (rows, beams, 3) float32 in the robot's frame (x forward, z up from the
    floor) a depth camera on a robot at ``pose`` (x, y, yaw) returns; NaN where a ray returns
    nothing (beyond ``range_max``, closer than ``range_min``). Noise (``spec.noise``, along
    each ray) is drawn from ``rng`` (None: no noise)."""
    ranges = true_cloud(pose, spec, scene, centres, radii, exclude)
    hit = np.isfinite(ranges)
    if rng is not None and spec.noise > 0.0:
        ranges[hit] += rng.normal(0.0, spec.noise, int(hit.sum()))
    ranges[~hit | (ranges > spec.range_max) | (ranges < spec.range_min)] = np.nan
    return points_of(ranges, spec)


def points_of(ranges: np.ndarray, spec: CameraSpec) -> np.ndarray:
    """The rays' points (rows, beams, 3) float32 in the robot's frame for ``ranges`` (rows,
    beams) measured along them (NaN stays NaN)."""
    e = spec.elevations()[:, None]
    a = spec.columns().angles()[None, :] + spec.offset[2]
    flat = ranges * np.cos(e)
    ox, oy, _ = spec.offset
    out = np.empty(ranges.shape + (3,), dtype=np.float32)
    out[..., 0] = ox + flat * np.cos(a)
    out[..., 1] = oy + flat * np.sin(a)
    out[..., 2] = spec.height + ranges * np.sin(e)
    return out
