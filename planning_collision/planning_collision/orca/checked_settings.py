"""compute_velocities for a caller that calls it every control period with the same settings.

:func:`~planning_collision.orca.velocities.compute_velocities` checks every argument at every
call: about forty numpy calls on arrays of a few rows, most of it for scalar settings that
have not changed since the last call (a per-robot orca_node's controller spent a fifth of its
step there). :class:`CheckedSettings` checks the scalar settings once, when it is made, and
each call then checks only what changes from call to call (the agents' arrays) in a handful of
numpy calls over all of them at once.

It answers exactly as ``compute_velocities`` does, for every input, because its check of the
agents' arrays is the one ``compute_velocities`` makes itself
(:func:`~planning_collision.orca.validation.agent_arrays`: one pass over one buffer for
plain float64, int64 and bool arrays, numbers below ``TINY`` flushed to +0.0, as the
per-argument checks flush them); what that pass does not take (a setting that was refused, a
value out of range or not finite, an array of another type or shape, obstacles that are not
an ObstacleTree) is handed to ``compute_velocities`` itself, which answers or raises its own
ValueError, naming the argument, as it always has.
"""

from __future__ import annotations

import numpy as np

from .agent_threads import resolve_threads
from .constants import DEFAULT_KEEP_APART_MARGIN
from .obstacles import ObstacleTree, empty_obstacles
from .validation import agent_arrays, as_agent_values
from .velocities import (
    ConstraintLines,
    VelocityResult,
    check_constraint_lines,
    compute_velocities,
    no_constraint_lines,
    solve_velocities,
    step_options,
    with_horizons,
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
        path takes what ``agent_arrays`` takes (float64 (n, 2) and (n,) arrays, int64
        ``max_neighbors`` and bool ``reactive`` of shape (n,), C-contiguous; anything else
        goes through ``compute_velocities``' per-argument checks)."""
        plain = None if self._options is None else agent_arrays(
            positions, velocities, pref_velocities, radius, max_speed, responsibility,
            max_neighbors, reactive)
        if plain is None or type(seed) is not int or not (
                obstacles is None or isinstance(obstacles, ObstacleTree)):
            return compute_velocities(  # it answers, or raises naming the argument
                positions, velocities, pref_velocities, **self.settings, radius=radius,
                max_speed=max_speed, max_neighbors=max_neighbors,
                responsibility=responsibility, reactive=reactive, seed=seed,
                obstacles=obstacles, constraint_lines=constraint_lines,
                return_lines=return_lines, return_neighbors=return_neighbors, threads=threads)
        n = plain[0].shape[0]
        scalars = self._per_count.get(n)
        if scalars is None:
            scalars = self._per_count[n] = (*(np.full(n, v) for v in self._scalars),
                                            no_constraint_lines(n))
        *horizons, no_lines = scalars
        pos, vel, pref, params = with_horizons(plain, *horizons)
        if obstacles is None:
            if self._empty_obstacles is None:
                self._empty_obstacles = empty_obstacles()
            obstacles = self._empty_obstacles
        # What is left raises as compute_velocities does, everything before it accepted.
        extra = no_lines if constraint_lines is None else check_constraint_lines(
            constraint_lines, n)
        resolve_threads(threads, n)
        return solve_velocities(pos, vel, pref, params, obstacles, extra,
                                self._options._replace(seed=seed), return_lines=return_lines,
                                return_neighbors=return_neighbors, threads=threads)
