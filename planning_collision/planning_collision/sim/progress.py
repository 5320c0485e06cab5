"""How long robots wait: the time since each robot last made progress (pure numpy).

A robot that has not arrived wants to move (in goal mode its preferred velocity is not zero),
so standing still is waiting, whether it yields, is blocked or is deadlocked. Progress is
travel: a robot makes progress when it gets ``travel`` metres from the place where its
current wait began (its *anchor*); then the anchor moves to where it is. A robot that drives
at ``travel / t`` m/s or faster therefore never waits longer than ``t``; one that creeps or
shuffles back and forth within ``travel`` waits. Arrived robots do not wait.
"""

from __future__ import annotations

import numpy as np

from planning_collision.common.checks import finite_scalar

TRAVEL = 0.1  # metres: what counts as progress


class ProgressWatch:
    """Feed :meth:`update` every step; :attr:`longest` is each robot's longest wait so far."""

    def __init__(self, positions: np.ndarray, now: float = 0.0, travel: float = TRAVEL):
        finite_scalar(travel, "travel", above=0.0)
        finite_scalar(now, "now")
        self.travel = float(travel)
        self.anchor = np.array(positions, dtype=np.float64).reshape(-1, 2).copy()
        self.since = np.full(len(self.anchor), float(now))
        self.longest = np.zeros(len(self.anchor))
        self.now = float(now)

    def update(self, now: float, positions: np.ndarray, done: np.ndarray | None = None) -> None:
        """The robots at ``positions`` (N, 2) at time ``now``; ``done`` (N,) marks the robots
        that have arrived (they stop waiting for good)."""
        finite_scalar(now, "now", at_least=self.now)
        xy = np.asarray(positions, dtype=np.float64).reshape(self.anchor.shape)
        moved = np.hypot(*(xy - self.anchor).T) >= self.travel
        finished = np.zeros(len(xy), bool) if done is None else np.asarray(done, bool)
        reset = moved | finished
        self.anchor[reset] = xy[reset]
        self.since[reset] = now
        self.now = float(now)
        waiting = self.waiting()
        self.longest = np.maximum(self.longest, waiting)

    def waiting(self) -> np.ndarray:
        """(N,) how long each robot has been waiting now (0 when it just moved or arrived)."""
        return self.now - self.since
