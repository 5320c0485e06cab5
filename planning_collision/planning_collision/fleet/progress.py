"""Deadlock detection and resolution by priority (issue #22 item 3).

A robot is *stalled* when it wants to move (its preferred velocity is not zero) and for
``stall_time`` seconds got no closer to its goal by ``min_progress`` metres (the distance is
the route's when a route map is given, else the straight one). ORCA's symmetric stand-offs
(two robots nose to nose, a knot at a crossing) look exactly like this.

Resolution by priority: the agent index is the priority (lower first: the same order on
every node, as the agents are listed the same). A stalled robot with a robot of higher
priority within ``near`` metres that also wants to move backs away from the nearest such
robot at ``back_off_speed`` for ``yield_time`` seconds; the robot of highest priority in a
knot keeps its preferred velocity and goes through the room the others leave. After yielding
a robot's progress clock starts again.

:class:`ProgressMonitor` keeps, per controlled agent, its best distance so far, when it last
improved and until when it yields: a few arrays, updated once per control step.
"""

from __future__ import annotations

import numpy as np


class ProgressMonitor:
    """Progress and yielding of ``k`` controlled agents (see the module docstring)."""

    def __init__(self, k: int, *, stall_time: float = 8.0, min_progress: float = 0.2,
                 yield_time: float = 3.0, near: float = 1.5, back_off_speed: float = 0.3):
        self.stall_time, self.min_progress = stall_time, min_progress
        self.yield_time, self.near, self.back_off_speed = yield_time, near, back_off_speed
        self.best = np.full(k, np.inf)  # the smallest distance to the goal so far
        self.since = np.full(k, np.nan)  # when it last improved by min_progress (NaN: idle)
        self.yield_until = np.full(k, -np.inf)
        self.yield_direction = np.zeros((k, 2))

    def stalled(self, now: float, distance: np.ndarray, wants: np.ndarray) -> np.ndarray:
        """Update with each agent's ``distance`` to its goal (k,) and whether it ``wants``
        to move (k,); return who is stalled."""
        improved = wants & (distance < self.best - self.min_progress)
        restart = wants & (np.isnan(self.since) | improved)
        self.since[restart] = now
        self.best[restart] = distance[restart]
        self.since[~wants] = np.nan
        self.best[~wants] = np.inf
        return wants & (now - self.since >= self.stall_time)

    def resolve(self, now: float, positions: np.ndarray, velocities: np.ndarray,
                distance: np.ndarray, wants: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The preferred ``velocities`` (k, 2) with the yielding robots backing off, and
        who yields (k,). ``positions`` (k, 2), ``distance`` and ``wants`` as in
        :meth:`stalled`."""
        stalled = self.stalled(now, distance, wants)
        velocities = np.array(velocities, dtype=np.float64, copy=True)
        for i in np.flatnonzero(stalled & (self.yield_until <= now)):
            ahead = np.flatnonzero(wants[:i])  # higher priority, wanting to move
            if not ahead.size:
                continue
            gaps = positions[ahead] - positions[i]
            dist = np.hypot(gaps[:, 0], gaps[:, 1])
            j = int(np.argmin(dist))
            if dist[j] > self.near:
                continue
            away = -gaps[j] / max(dist[j], 1e-9)
            self.yield_until[i] = now + self.yield_time
            self.yield_direction[i] = away
            self.best[i] = np.inf  # its progress is measured afresh from here
        yielding = wants & (self.yield_until > now)
        velocities[yielding] = self.yield_direction[yielding] * self.back_off_speed
        return velocities, yielding
