"""Simulated time paced by the wall clock, in fixed steps (no ROS).

A simulator's timer ticks at its step rate, but a loaded machine delivers ticks late. Each tick
:meth:`PacingClock.due` says how many fixed steps bring simulated time back to the wall clock
(counted from the tick at which simulated time started): one for a punctual tick, several for
a late one (a *late tick*), at most ``max_catch_up``. A longer stall is not replayed: the
steps beyond ``max_catch_up`` are dropped (simulated time falls behind the wall clock by
them, reported as ``dropped_seconds``), so a stalled simulator never races to catch up.

:meth:`PacingClock.report` measures, between two calls, the step rate achieved, the real-time
factor (simulated seconds per wall second) and the load (the share of wall time spent in
ticks, from :meth:`PacingClock.tick_done`).

The clock is any function returning seconds (``time.monotonic`` by default), so a test can
drive it by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from planning_collision.common.checks import finite_scalar

MAX_CATCH_UP = 5


class PacingReport(NamedTuple):
    """What the clock measured since the previous report (and in total, for the counts)."""

    achieved_rate: float  # steps per wall second
    real_time_factor: float  # simulated seconds per wall second
    load: float  # share of wall time spent in ticks
    dropped_seconds: float  # simulated time not replayed after stalls, in total
    late_ticks: int  # ticks that ran more than one step, in total


class PacingClock:
    """Steps of ``dt`` simulated seconds due at each tick of a wall ``clock``."""

    def __init__(self, dt: float, *, max_catch_up: int = MAX_CATCH_UP,
                 clock: Callable[[], float] = time.monotonic):
        self.dt = finite_scalar(dt, "dt", above=0.0)
        self.max_catch_up = finite_scalar(max_catch_up, "max_catch_up", at_least=1,
                                          integer=True)
        self.clock = clock
        self.dropped_seconds = 0.0
        self.late_ticks = 0
        self._origin: float | None = None  # wall time at which simulated time was zero
        self._tick = clock()
        self._busy = 0.0
        self._rates = (0.0, 0.0)  # (steps per second, load) of the last report
        self._last_report = (self._tick, 0, 0.0)  # (wall time, steps, busy seconds)

    def restart(self) -> None:
        """Simulated time follows the wall clock again from the next tick, as it stands then
        (call it when simulated time starts, or resumes after a pause)."""
        self._origin = None

    def tick(self) -> float:
        """Start a tick: the wall time now (the time :meth:`due` and :meth:`tick_done` use)."""
        self._tick = self.clock()
        return self._tick

    def due(self, sim_time: float, steps: int) -> int:
        """Steps to run in this tick (0 or more) to bring simulated time, now ``sim_time``
        after ``steps`` steps, to the wall time of :meth:`tick`."""
        if self._origin is None:
            self._origin = self._tick - sim_time
        due = round((self._tick - self._origin) / self.dt) - steps
        if due > self.max_catch_up:
            skipped = due - self.max_catch_up
            self._origin += skipped * self.dt
            self.dropped_seconds += skipped * self.dt
            due = self.max_catch_up
        if due > 1:
            self.late_ticks += 1
        return max(due, 0)

    def tick_done(self) -> None:
        """End the tick begun by :meth:`tick`: its duration counts as load."""
        self._busy += self.clock() - self._tick

    def report(self, steps: int) -> PacingReport:
        """Rates since the previous report (``steps``: the simulation's step count now); the
        rates of the previous report again when no wall time has passed."""
        now = self.clock()
        then, steps_then, busy_then = self._last_report
        if now > then:
            self._rates = ((steps - steps_then) / (now - then),
                           (self._busy - busy_then) / (now - then))
            self._last_report = (now, steps, self._busy)
        rate, load = self._rates
        return PacingReport(achieved_rate=rate, real_time_factor=rate * self.dt, load=load,
                            dropped_seconds=self.dropped_seconds, late_ticks=self.late_ticks)
