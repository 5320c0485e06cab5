"""orca_node's step breakdown (its debug log, read by bench/bench_orca_node.py)."""

from __future__ import annotations

from planning_collision.ros import orca_status
from planning_collision.ros.orca_status import PhaseTimes


def test_phase_times_sum_each_phase_and_report_every_n_steps(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(orca_status.time, "perf_counter", lambda: clock[0])
    phases = PhaseTimes(steps_per_report=3)
    lines = []
    for _ in range(7):
        phases.start()
        clock[0] += 0.002
        phases.mark("inputs")
        phases.mark("controller")  # nothing between two marks
        clock[0] += 0.004
        phases.mark("commands")
        clock[0] += 0.010  # between steps: belongs to no phase
        lines.append(phases.end_step())
    assert [line is not None for line in lines] == [False, False, True] * 2 + [False]
    assert lines[2] == lines[5] == ("ms per step over 3 steps: inputs 2.00, controller 0.00, "
                                    "commands 4.00, status 0.00, markers 0.00")
