"""Differential-drive (unicycle) robots on top of holonomic ORCA, after NH-ORCA.

Alonso-Mora et al. ("Optimal reciprocal collision avoidance for multiple non-holonomic
robots") and collvoid's ``time_to_holo`` let ORCA choose a holonomic velocity ``u`` and
track it with a unicycle: turn at the constant rate ``omega = theta / T`` while driving at
the constant speed that keeps the robot closest to the straight holonomic path, then drive
straight along ``u``.  Here ``theta`` is the angle from the heading to ``u`` and ``T`` is
``time_to_holo``, stretched to ``|theta| / max_angular_speed`` when the turn is too fast.

The distance between the robot and the holonomic path grows during the turn and then stays
constant, and it is proportional to ``|u|``.  Only holonomic velocities whose tracking error
stays below ``tracking_error`` and whose linear speed stays below ``max_linear_speed`` are
allowed: :func:`trackable_polygon` is a convex polygon inside that set (in the robot frame),
given to the linear program as hard half-planes (:func:`diff_drive_constraints`).  ORCA runs
with the radius inflated by ``tracking_error``, so the real robots, never further than that
from their holonomic discs, stay apart.

With :func:`~planning_collision.orca.velocities.compute_velocities` (what the simulator
does for agents added with ``diff_drive=``): compute ``polygon = trackable_polygon(limits)``
once; per control step pass ``radius + limits.tracking_error`` as the robot's radius,
``constraint_lines=diff_drive_constraints(headings, [polygon, ...])`` and the previous
holonomic velocity as its current velocity, then send
``unicycle_commands(new_velocities, headings, limits)``.
"""

import math
from typing import NamedTuple

import numpy as np

from planning_collision.common.hull import convex_hull

from .validation import as_scalar
from .velocities import ConstraintLines


class UnicycleCommands(NamedTuple):
    """Commands of differential-drive robots: ``linear`` (m/s) and ``angular`` (rad/s),
    each (N,)."""

    linear: np.ndarray
    angular: np.ndarray


class UnicyclePoses(NamedTuple):
    """Poses of unicycles: ``positions`` (N, 2) and ``headings`` (N,) in [-pi, pi)."""

    positions: np.ndarray
    headings: np.ndarray


class DiffDriveLimits(NamedTuple):
    """Limits of a differential-drive robot.

    ``max_linear_speed`` (m/s) and ``max_angular_speed`` (rad/s) bound the commands,
    ``time_to_holo`` (s) is the time in which a heading change is completed, and
    ``tracking_error`` (m) bounds the distance to the holonomic trajectory (the radius
    inflation).
    """

    max_linear_speed: float
    max_angular_speed: float
    time_to_holo: float = 0.4
    tracking_error: float = 0.1


def check_limits(limits) -> DiffDriveLimits:
    """Validate a :class:`DiffDriveLimits` (all fields finite and > 0)."""
    if not isinstance(limits, DiffDriveLimits):
        raise ValueError("diff_drive must be a DiffDriveLimits")
    for name in DiffDriveLimits._fields:
        as_scalar(getattr(limits, name), f"diff_drive.{name}", strictly_positive=True)
    return DiffDriveLimits(*(float(x) for x in limits))


def _turn_time(theta, limits):
    return np.maximum(limits.time_to_holo, np.abs(theta) / limits.max_angular_speed)


def _speed_factor(theta):
    """Linear speed per unit holonomic speed: (theta/2) / tan(theta/2), 1 at theta = 0."""
    half = 0.5 * np.abs(np.asarray(theta, dtype=np.float64))
    out = np.ones_like(half)
    turning = half > 1e-9
    out[turning] = half[turning] / np.tan(half[turning])
    return np.maximum(out, 0.0)


def unit_tracking_error(theta, limits: DiffDriveLimits, samples: int = 257) -> np.ndarray:
    """Largest distance to the holonomic path per unit holonomic speed, for angles ``theta``.

    The robot turns at ``theta / T'`` for ``T'`` and drives straight afterwards (parallel
    to the path, so the error stays constant); the maximum over the turn is sampled.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    t_turn = _turn_time(theta, limits)
    omega = theta / t_turn
    v = _speed_factor(theta)
    t = np.linspace(0.0, 1.0, samples)[None, :] * t_turn[:, None]
    w = omega[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        straight = np.abs(w) < 1e-12
        safe_w = np.where(straight, 1.0, w)
        rx = np.where(straight, v[:, None] * t, v[:, None] * np.sin(safe_w * t) / safe_w)
        ry = np.where(straight, 0.0, v[:, None] * (1.0 - np.cos(safe_w * t)) / safe_w)
    hx = t * np.cos(theta)[:, None]
    hy = t * np.sin(theta)[:, None]
    return np.hypot(rx - hx, ry - hy).max(axis=1)


def max_holonomic_speed(theta, limits: DiffDriveLimits) -> np.ndarray:
    """Largest trackable holonomic speed in the direction ``theta`` (robot frame)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    factor = _speed_factor(theta)
    error = unit_tracking_error(theta, limits)
    with np.errstate(divide="ignore"):
        by_speed = np.where(factor > 0.0, limits.max_linear_speed / factor, np.inf)
        by_error = np.where(error > 0.0, limits.tracking_error / error, np.inf)
    return np.minimum(by_speed, by_error)


def trackable_polygon(limits: DiffDriveLimits, vertices: int = 48) -> np.ndarray:
    """Convex CCW polygon (K, 2), robot frame (x forward), of trackable holonomic velocities.

    The convex hull of points on the boundary of the trackable set is scaled about the
    origin until it lies inside the set (checked on a fine grid of directions, with a 1 %
    margin), so every velocity in it satisfies both limits.
    """
    limits = check_limits(limits)
    theta = np.linspace(-math.pi, math.pi, vertices, endpoint=False)
    radius = max_holonomic_speed(theta, limits)
    pts = np.column_stack([radius * np.cos(theta), radius * np.sin(theta)])
    hull = convex_hull(np.ascontiguousarray(pts, dtype=np.float64))
    fine = np.linspace(-math.pi, math.pi, 4096, endpoint=False)
    allowed = max_holonomic_speed(fine, limits)
    reach = _radial_extent(hull, fine)
    scale = min(1.0, float(np.min(allowed / reach))) * 0.99
    return hull * scale


def _radial_extent(polygon, theta):
    """Distance from the origin (inside) to the boundary of a convex CCW polygon."""
    edge = np.roll(polygon, -1, axis=0) - polygon
    normal = np.column_stack([edge[:, 1], -edge[:, 0]])  # outward for CCW
    offset = np.einsum("ij,ij->i", normal, polygon)
    u = np.column_stack([np.cos(theta), np.sin(theta)])
    reach = normal @ u.T
    with np.errstate(divide="ignore"):
        dist = np.where(reach > 0.0, offset[:, None] / reach, np.inf)
    return dist.min(axis=0)


def diff_drive_constraints(headings, polygons, n_agents: int | None = None) -> ConstraintLines:
    """Hard half-planes keeping each robot's holonomic velocity in its trackable polygon.

    ``headings`` (N,) and ``polygons`` a sequence of N robot-frame polygons (or None for a
    holonomic agent without constraints).
    """
    headings = np.asarray(headings, dtype=np.float64)
    n = headings.shape[0] if n_agents is None else n_agents
    counts = np.array([0 if p is None else len(p) for p in polygons], np.int64)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    points = np.empty((offsets[-1], 2))
    directions = np.empty((offsets[-1], 2))
    for i, poly in enumerate(polygons):
        if poly is None:
            continue
        c, s = math.cos(headings[i]), math.sin(headings[i])
        world = np.asarray(poly) @ np.array([[c, s], [-s, c]])
        edge = np.roll(world, -1, axis=0) - world
        a, b = offsets[i], offsets[i + 1]
        points[a:b] = world
        directions[a:b] = edge / np.hypot(edge[:, 0], edge[:, 1])[:, None]
    return ConstraintLines(offsets, points, directions)


def unicycle_commands(velocities, headings, limits: DiffDriveLimits) -> UnicycleCommands:
    """Commands (linear ``v``, angular ``omega``) tracking holonomic ``velocities`` (N, 2)."""
    vel = np.asarray(velocities, dtype=np.float64).reshape(-1, 2)
    heading = np.asarray(headings, dtype=np.float64).reshape(-1)
    speed = np.hypot(vel[:, 0], vel[:, 1])
    theta = np.arctan2(vel[:, 1], vel[:, 0]) - heading
    theta = (theta + math.pi) % (2.0 * math.pi) - math.pi
    theta = np.where(speed > 0.0, theta, 0.0)
    omega = theta / _turn_time(theta, limits)
    v = np.minimum(speed * _speed_factor(theta), limits.max_linear_speed)
    return UnicycleCommands(v, omega)


def integrate_unicycle(positions, headings, v, omega, dt) -> UnicyclePoses:
    """Exact constant-command motion of unicycles for ``dt`` (a scalar or one per unicycle).

    ``positions`` (N, 2), ``headings``, ``v`` and ``omega`` (N,); returns the new poses,
    headings wrapped to [-pi, pi).
    """
    pos = np.asarray(positions, dtype=np.float64)
    heading = np.asarray(headings, dtype=np.float64)
    turned = heading + omega * dt
    straight = np.abs(omega) < 1e-12
    safe = np.where(straight, 1.0, omega)
    dx = np.where(straight, v * dt * np.cos(heading),
                  v / safe * (np.sin(turned) - np.sin(heading)))
    dy = np.where(straight, v * dt * np.sin(heading),
                  v / safe * (np.cos(heading) - np.cos(turned)))
    out = pos.copy()
    out[:, 0] += dx
    out[:, 1] += dy
    return UnicyclePoses(out, (turned + math.pi) % (2.0 * math.pi) - math.pi)
