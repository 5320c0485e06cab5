"""A long passage's batch keeps its robots when it closes (issue #22, corridor_1.5d of 16).

The benchmark's corridor_1.5d (0.75 m x 6 m, its core ~7.75 m, some 15 s to drive) starts a
block of eight robots at each end. When a batch closed (after the time the core takes to
drive, ~14.3 s, since the other side began to wait), its admitted robots still more than a
diameter from the core were taken out of it: each then waited for its own side's robots to
clear the corridor, the other side's whole turn and that side's clearing, two clearing
times and more (seed 9 of 16: 100.8 s). Now, through a passage that takes longer to drive
than ``max_wait``, the robots admitted keep their places when the batch closes (it takes
nobody more); a door, which takes less, closes as before (fleet/passages.py).
"""

from __future__ import annotations

import numpy as np
from narrow_maps import corridor_passages, door_passages

SPEED = 0.5
MAX_WAIT = 6.0
DT = 0.1


def decide(passages, positions, goals, now, order=None):
    """The rule's decision for robots standing at ``positions`` (all want to move), listed
    in ``order`` (ids kept): who is told to wait, in the original order."""
    positions, goals = np.asarray(positions, float), np.asarray(goals, float)
    n = len(positions)
    order = np.arange(n) if order is None else np.asarray(order)
    velocities = np.zeros((n, 2))
    told = passages.coordinate(positions[order], goals[order], velocities[order],
                               np.ones(n, bool), ids=order, now=now, max_wait=MAX_WAIT,
                               speed=SPEED)
    waiting = np.zeros(n, bool)
    waiting[order] = told.waiting
    return waiting


def closing(passages, inside, out, other, goals, seconds):
    """A robot stays ``inside`` the core, one admitted behind it stands ``out`` (over a
    diameter from the core, within the zone), a robot of the other side at ``other`` waits:
    who is told to wait at each step (scripted positions)."""
    told = []
    for k in range(int(round(seconds / DT))):
        told.append(decide(passages, [inside, out, other], goals, k * DT))
    return np.array(told)


def test_a_long_passages_batch_keeps_its_robots_when_it_closes():
    """Through the corridor (a window of ~15 s) the admitted robot 1 m out goes on after the
    batch closes; before, it was told to wait from then on."""
    passages = corridor_passages()
    told = closing(passages, (-1.0, 0.0), (-4.9, 0.0), (5.0, 0.0),
                   [(5.5, 0.0), (5.5, 0.7), (-5.5, 0.0)], 20.0)
    assert passages.window(0, MAX_WAIT, SPEED) < 20.0
    assert told[:, 2].all()  # the other side waits all along
    assert not told[:, :2].any()  # both admitted robots go, before and after the close
    assert passages._closed[0]


def test_a_doors_batch_closes_as_before():
    """Through the door (its window ``max_wait``) the admitted robot over a diameter out is
    told to wait once the batch closed."""
    passages = door_passages(0.35)
    told = closing(passages, (0.0, 0.0), (-1.9, 0.0), (1.3, 0.0),
                   [(2.0, 0.0), (2.0, 1.0), (-2.0, 0.0)], 10.0)
    assert not told[: int(MAX_WAIT / DT) - 1, 1].any()
    assert told[int(MAX_WAIT / DT) + 1:, 1].all()
