"""The pacing clock on a hand-driven clock: punctual ticks run one step, a late tick catches
up, a stall beyond the catch-up limit is dropped, a restart re-anchors simulated time, and the
report measures rate, real-time factor and load."""

from __future__ import annotations

import pytest

from planning_collision.sim.pacing import PacingClock


class FakeClock:
    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


class Sim:
    """What the clock is told about the simulation: its step count and time."""

    def __init__(self, dt: float):
        self.dt, self.steps = dt, 0

    @property
    def time(self) -> float:
        return self.steps * self.dt


def tick(pacing: PacingClock, clock: FakeClock, sim: Sim, at: float, busy: float = 0.0) -> int:
    """One tick at wall time ``at`` that takes ``busy`` seconds; returns the steps run."""
    clock.now = at
    pacing.tick()
    due = pacing.due(sim.time, sim.steps)
    sim.steps += due
    clock.now += busy
    pacing.tick_done()
    return due


def test_punctual_ticks_run_one_step_each():
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, clock=clock)
    assert tick(pacing, clock, sim, 100.0) == 0  # the first tick anchors simulated time
    assert [tick(pacing, clock, sim, 100.0 + 0.02 * k) for k in range(1, 51)] == [1] * 50
    assert sim.time == pytest.approx(1.0)
    assert (pacing.late_ticks, pacing.dropped_seconds) == (0, 0.0)


def test_a_tick_a_little_early_or_late_runs_the_step_that_is_due():
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, clock=clock)
    tick(pacing, clock, sim, 100.0)
    assert tick(pacing, clock, sim, 100.015) == 1  # jitter: 5 ms early
    assert tick(pacing, clock, sim, 100.041) == 1  # 1 ms late
    assert tick(pacing, clock, sim, 100.049) == 0  # a second tick within the same step
    assert pacing.late_ticks == 0


def test_a_late_tick_catches_up_and_is_counted():
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, clock=clock)
    tick(pacing, clock, sim, 100.0)
    assert tick(pacing, clock, sim, 100.06) == 3  # three steps were due
    assert sim.time == pytest.approx(0.06)
    assert (pacing.late_ticks, pacing.dropped_seconds) == (1, 0.0)
    assert tick(pacing, clock, sim, 100.08) == 1  # and then in step again


def test_a_stall_beyond_the_catch_up_limit_is_dropped_not_replayed():
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, max_catch_up=5, clock=clock)
    tick(pacing, clock, sim, 100.0)
    assert tick(pacing, clock, sim, 101.0) == 5  # 50 steps due after a 1 s stall
    assert pacing.dropped_seconds == pytest.approx(45 * 0.02)
    assert pacing.late_ticks == 1
    # Simulated time now trails the wall clock by the dropped 0.9 s, and paces from there.
    assert tick(pacing, clock, sim, 101.02) == 1
    assert sim.time == pytest.approx(101.02 - 100.0 - 0.9)


def test_restart_anchors_simulated_time_at_the_next_tick():
    """A clock that stood still (fleet_sim before ``start``) does not catch up the wait."""
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, clock=clock)
    tick(pacing, clock, sim, 100.0)
    tick(pacing, clock, sim, 100.02)
    pacing.restart()
    assert tick(pacing, clock, sim, 130.0) == 0
    assert tick(pacing, clock, sim, 130.02) == 1
    assert sim.steps == 2 and pacing.dropped_seconds == 0.0


def test_report_measures_rate_real_time_factor_and_load_between_reports():
    clock, sim = FakeClock(), Sim(0.02)
    pacing = PacingClock(0.02, clock=clock)
    first = pacing.report(sim.steps)
    assert (first.achieved_rate, first.real_time_factor, first.load) == (0.0, 0.0, 0.0)
    tick(pacing, clock, sim, 100.0, busy=0.005)
    for k in range(1, 26):  # 25 steps over 0.5 s, each tick 5 ms long
        tick(pacing, clock, sim, 100.0 + 0.02 * k, busy=0.005)
    clock.now = 100.5
    report = pacing.report(sim.steps)
    assert report.achieved_rate == pytest.approx(50.0)
    assert report.real_time_factor == pytest.approx(1.0)
    assert report.load == pytest.approx(26 * 0.005 / 0.5)
    # A one-second stall: 5 steps run, the rest dropped; the report covers only the time
    # since the previous one.
    tick(pacing, clock, sim, 101.5)
    slow = pacing.report(sim.steps)
    assert slow.achieved_rate == pytest.approx(5.0) and slow.load == 0.0
    assert slow.real_time_factor == pytest.approx(0.1)
    assert slow.dropped_seconds == pytest.approx(0.9) and slow.late_ticks == 1
    assert pacing.report(sim.steps) == slow  # no wall time since: the same rates


@pytest.mark.parametrize("dt, catch_up", [(0.0, 5), (-0.02, 5), (0.02, 0)])
def test_bad_settings_are_refused(dt, catch_up):
    with pytest.raises(ValueError, match="dt|max_catch_up"):
        PacingClock(dt, max_catch_up=catch_up, clock=FakeClock())
