"""A stalled robot does not yield to a robot behind it going its way (fleet/progress.py,
issue #22): backing straight away from a robot of higher priority behind it drove it on,
into the knot it was stalled in. In the two-lane corridor (corridor_3d of 16, seed 38) that
held a robot 49 s."""

from __future__ import annotations

import numpy as np

from planning_collision.fleet.progress import ProgressMonitor


def stall(monitor: ProgressMonitor, positions, pref, until: float = 3.0):
    wants = np.abs(pref).max(axis=1) > 0.0
    told = yielding = None
    for step in range(int(round(until / 0.05))):
        told, yielding = monitor.resolve(step * 0.05, positions, pref,
                                         np.full(len(pref), 5.0), wants)
    return told, yielding


def test_it_backs_away_from_the_robot_ahead_not_towards_it():
    """Robot 2 goes +x with robot 0 (higher priority, its way) 0.6 m behind it and robot 1
    (higher priority) coming the other way 1 m ahead; all are stalled. Robot 2 backs away
    from robot 1, not from the nearer robot 0 behind it, which sent it at robot 1."""
    monitor = ProgressMonitor(3, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    positions = np.array([[-0.6, 0.0], [1.0, 0.0], [0.0, 0.0]])
    pref = np.array([[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0]])
    told, yielding = stall(monitor, positions, pref)
    assert yielding.tolist() == [False, False, True]  # robot 1: robot 0 is beyond near
    assert np.array_equal(told[:2], pref[:2])
    assert np.allclose(told[2], [-0.3, 0.0])


def test_a_robot_behind_is_not_yielded_to():
    """A robot of higher priority behind the stalled one (not in front of its way) wanting
    to move the same way: the stalled one has nobody to yield to (backing away from it was
    driving on)."""
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0)
    positions = np.array([[0.0, 0.0], [0.6, 0.0]])
    pref = np.array([[0.5, 0.0], [0.5, 0.0]])
    told, yielding = stall(monitor, positions, pref, until=2.0)
    assert not yielding.any()
    assert np.array_equal(told, pref)


def test_head_on_the_lower_priority_backs_off():
    """Nose to nose, the robot of lower priority still backs straight away from the other,
    whatever the order of the rows."""
    for order in ([0, 1], [1, 0]):
        monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
        positions = np.array([[0.0, 0.0], [0.7, 0.0]])[order]
        pref = np.array([[0.5, 0.0], [-0.5, 0.0]])[order]
        told, yielding = stall(monitor, positions, pref, until=1.5)
        assert yielding.tolist() == [False, True]
        away = positions[1] - positions[0]
        assert np.allclose(told[1], 0.3 * away / np.hypot(*away))
        assert np.array_equal(told[0], pref[0])


def test_a_robot_behind_going_another_way_still_counts():
    """Behind it but going another way (a knot at a crossing), the robot of higher priority
    is still yielded to, as before: leaving those out made the 16-robot intersection's seed
    0 take 256 s instead of 93 s."""
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
    positions = np.array([[0.0, 0.0], [0.0, 0.6]])
    pref = np.array([[-0.5, -0.1], [0.5, 0.0]])
    told, yielding = stall(monitor, positions, pref, until=1.5)
    assert yielding.tolist() == [False, True]
    assert np.allclose(told[1], [0.0, 0.3])
