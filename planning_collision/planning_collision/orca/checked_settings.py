"""compute_velocities for a caller that calls it every control period with the same settings.

:func:`~planning_collision.orca.velocities.compute_velocities` checks every argument at every
call: about forty numpy calls on arrays of a few rows, most of it for scalar settings that
have not changed since the last call (a per-robot orca_node's controller spent a fifth of its
step there). :class:`CheckedSettings` checks the scalar settings once, when it is made, and
each call then checks only what changes from call to call (the agents' arrays) in a handful of
numpy calls over all of them at once.

It answers exactly as ``compute_velocities`` does, for every input. The fast check passes only
arrays that ``compute_velocities``' own checks would accept, and it changes them as those
checks do (numbers of magnitude below ``TINY``, zeros of either sign included, become +0.0),
so the kernel gets the same numbers; anything else (a setting that was refused, a value out of
range or not finite, an array of another type or shape) is handed to ``compute_velocities``
itself, which answers or raises its own ValueError, naming the argument, as it always has.
"""

from __future__ import annotations

import numpy as np

from .agent_threads import resolve_threads
from .constants import DEFAULT_KEEP_APART_MARGIN
from .obstacles import ObstacleTree, empty_obstacles
from .validation import MAX_MAGNITUDE, TINY, as_agent_values
from .velocities import (
    AgentParameters,
    ConstraintLines,
    VelocityResult,
    check_constraint_lines,
    compute_velocities,
    no_constraint_lines,
    solve_velocities,
    step_options,
)


class CheckedSettings:
    """The scalar settings of :func:`compute_velocities` (``time_step``, ``neighbor_dist``,
    ``time_horizon``, ``time_horizon_obst``, ``symmetry_breaking``, ``side_preference``,
    ``keep_apart``, ``keep_apart_margin``, ``overlap_time``), checked once;
    :meth:`velocities` is ``compute_velocities`` with them.

    Settings ``compute_velocities`` refuses are kept as given (no error here): each call then
    raises the error ``compute_velocities`` raises for them, as a caller passing them at every
    call would see it."""

    def __init__(self, *, time_step, neighbor_dist, time_horizon, time_horizon_obst,
                 symmetry_breaking=0.0, side_preference=0.0, keep_apart=False,
                 keep_apart_margin=DEFAULT_KEEP_APART_MARGIN, overlap_time=None):
        self.settings = dict(
            time_step=time_step, neighbor_dist=neighbor_dist, time_horizon=time_horizon,
            time_horizon_obst=time_horizon_obst, symmetry_breaking=symmetry_breaking,
            side_preference=side_preference, keep_apart=keep_apart,
            keep_apart_margin=keep_apart_margin, overlap_time=overlap_time)
        try:
            self._options = step_options(
                time_step=time_step, overlap_time=overlap_time,
                symmetry_breaking=symmetry_breaking, side_preference=side_preference,
                keep_apart=keep_apart, keep_apart_margin=keep_apart_margin)
            # As compute_velocities broadcasts them: checked, then flushed below TINY.
            self._scalars = (
                float(as_agent_values(neighbor_dist, 1, "neighbor_dist")[0]),
                float(as_agent_values(time_horizon, 1, "time_horizon", time=True)[0]),
                float(as_agent_values(time_horizon_obst, 1, "time_horizon_obst",
                                      time=True)[0]))
        except ValueError:
            self._options = None  # every call goes through compute_velocities' checks
        self._empty_obstacles: ObstacleTree | None = None  # made by the first call without any
        self._per_count: dict[int, tuple] = {}  # n -> the scalars as (n,) arrays, no lines

    @property
    def accepted(self) -> bool:
        """Whether ``compute_velocities`` accepts the settings (else every call raises)."""
        return self._options is not None

    def velocities(self, positions, velocities, pref_velocities, *, radius, max_speed,
                   max_neighbors, responsibility, reactive, seed=0,
                   obstacles: ObstacleTree | None = None,
                   constraint_lines: ConstraintLines | None = None, return_lines=False,
                   return_neighbors=False, threads=None) -> VelocityResult:
        """``compute_velocities(positions, velocities, pref_velocities, ..., **settings)``:
        the same result, or the same ValueError. Per-agent arguments as there; the fast
        check takes float64 (n, 2) and (n,) arrays, int64 ``max_neighbors`` and bool
        ``reactive`` of shape (n,), C-contiguous (anything else is checked by
        ``compute_velocities``)."""
        per_agent = dict(radius=radius, max_speed=max_speed, max_neighbors=max_neighbors,
                         responsibility=responsibility, reactive=reactive, seed=seed,
                         obstacles=obstacles, constraint_lines=constraint_lines,
                         return_lines=return_lines, return_neighbors=return_neighbors,
                         threads=threads)
        checked = None
        if self._options is not None:
            try:
                checked = self._fast_checks(positions, velocities, pref_velocities,
                                            per_agent)
            except ValueError:  # compute_velocities raises it, or the one before it
                checked = None
        if checked is None:
            return compute_velocities(positions, velocities, pref_velocities,
                                      **self.settings, **per_agent)
        pos, vel, pref, params, obstacles, extra, options = checked
        return solve_velocities(pos, vel, pref, params, obstacles, extra, options,
                                return_lines=return_lines, return_neighbors=return_neighbors,
                                threads=threads)

    def _fast_checks(self, positions, velocities, pref_velocities, per_agent):
        """The validated inputs of ``solve_velocities``, as ``compute_velocities`` makes
        them, or None when these arrays need its own checks (or raise there)."""
        n = _rows(positions)
        if n == 0 or _rows(velocities) != n or _rows(pref_velocities) != n:
            return None
        radius, max_speed = per_agent["radius"], per_agent["max_speed"]
        responsibility = per_agent["responsibility"]
        max_neighbors, reactive = per_agent["max_neighbors"], per_agent["reactive"]
        seed = per_agent["seed"]
        if not (_plain(positions, np.float64, (n, 2)) and _plain(velocities, np.float64, (n, 2))
                and _plain(pref_velocities, np.float64, (n, 2))
                and _plain(radius, np.float64, (n,)) and _plain(max_speed, np.float64, (n,))
                and _plain(responsibility, np.float64, (n,))
                and _plain(max_neighbors, np.int64, (n,)) and _plain(reactive, np.bool_, (n,))
                and type(seed) is int):
            return None
        # One fresh buffer of every float, as the checks copy each: the same numbers, and
        # views of it are C-contiguous float64 arrays as theirs are.
        values = np.concatenate((positions.ravel(), velocities.ravel(),
                                 pref_velocities.ravel(), radius, max_speed, responsibility))
        magnitude = np.abs(values)
        if not magnitude.max() <= MAX_MAGNITUDE:  # NaN and inf fail too
            return None
        own = values[6 * n:]  # radius, max_speed, responsibility: >= 0, responsibility <= 1
        if not (own.min() >= 0.0 and responsibility.max() <= 1.0
                and max_neighbors.min() >= 0):
            return None
        values[magnitude < TINY] = 0.0  # as the checks flush (-0.0 becomes +0.0 too)
        obstacles = per_agent["obstacles"]
        if obstacles is None:
            if self._empty_obstacles is None:
                self._empty_obstacles = empty_obstacles()
            obstacles = self._empty_obstacles
        elif not isinstance(obstacles, ObstacleTree):
            return None
        scalars = self._per_count.get(n)
        if scalars is None:
            scalars = self._per_count[n] = (*(np.full(n, v) for v in self._scalars),
                                            no_constraint_lines(n))
        neighbor_dist, time_horizon, time_horizon_obst, no_lines = scalars
        lines = per_agent["constraint_lines"]
        extra = no_lines if lines is None else check_constraint_lines(lines, n)
        resolve_threads(per_agent["threads"], n)
        params = AgentParameters(
            radius=values[6 * n:7 * n], max_speed=values[7 * n:8 * n],
            neighbor_dist=neighbor_dist, max_neighbors=max_neighbors,
            time_horizon=time_horizon, time_horizon_obst=time_horizon_obst,
            responsibility=values[8 * n:], reactive=reactive)
        return (values[:2 * n].reshape(n, 2), values[2 * n:4 * n].reshape(n, 2),
                values[4 * n:6 * n].reshape(n, 2), params, obstacles, extra,
                self._options._replace(seed=seed))


def _rows(value) -> int:
    """The number of rows of a (n, 2) float64 ndarray, else -1."""
    return value.shape[0] if type(value) is np.ndarray and value.ndim == 2 else -1


def _plain(value, dtype, shape) -> bool:
    """``value`` is a C-contiguous ndarray of this dtype and shape."""
    return (type(value) is np.ndarray and value.dtype == dtype and value.shape == shape
            and value.flags.c_contiguous)
