"""A robot keeps its seniority while it stands in a passage's mouth (issue #22, doorway 16).

A passage remembers since when each robot has been told to wait (seniority,
fleet/passages.py). It forgot that as soon as the robot counted as inside (within ``radius``
of the core): a robot admitted after a long wait that reached the mouth and was pushed back
out of it by the crowd, still admitted, had no seniority any more, so when the batch closed
it was taken out of it and a robot that had waited less kept its place; it then waited
through the next turns again from scratch (doorway of 16, seed 59: 43.2 s). Now the
passage keeps a robot's seniority until it has gone through (it is no longer a user). Since
2026-11-27 a closing batch keeps, of the robots it would take out, those a batch took out
before (test_passage_seniority_out.py), not the longest waiting: A and B, never taken out,
are both taken out, and both keep their places when their next batch closes; A's seniority
still orders the admissions and closes the other side's batch early.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_passages, scripted

DT = 0.1
MAX_WAIT = 6.0
# A and B go east through the door (a wall along x = 0, the door at y = 0); E1, E2 west
A, B, E1, E2 = range(4)
GOALS = np.array([(2.0, 1.0), (2.2, -1.5), (-2.0, -1.0), (-2.2, 1.4)])


def scene(t: float):
    """Scripted positions (the rule's velocities are not followed): E1 goes through the door
    first while A waits (from 0 s) and B waits (from 2 s); after the turn A reaches the
    mouth (5-6 s) and is pushed back out; E2 begins to wait at 4 s, so the west batch closes
    with A and B both admitted and both out of the mouth."""
    at = {A: (-1.9, 0.8), B: (-1.9, -0.8), E1: (1.2, 0.0), E2: (1.6, 0.9)}
    moving = {A: True, B: t >= 2.0, E1: True, E2: t >= 4.0}
    if 0.5 <= t < 3.0:
        at[E1] = (0.0, 0.0)
    if t >= 3.0:
        at[E1], moving[E1] = tuple(GOALS[E1]), False
    if 5.0 <= t < 6.0:
        at[A] = (-0.9, 0.0)  # in the mouth
    return np.array([at[k] for k in range(4)]), np.array([moving[k] for k in range(4)])


def run(until: float, order=(0, 1, 2, 3)) -> dict:
    return scripted(door_passages(0.35), scene, GOALS, until, dt=DT, max_wait=MAX_WAIT,
                    order=order, speed=0.0)


def test_the_robot_pushed_out_of_the_mouth_keeps_its_seniority():
    for order in ((0, 1, 2, 3), (3, 2, 1, 0)):
        told = run(14.0, order)
        assert told[1.0][A] and told[2.5][B]  # both wait while E1 goes
        assert not told[4.0][A] and not told[4.0][B]  # both admitted after the turn
        assert told[5.0][E2]
        # the west batch closes at 10 s (E2 has waited 6 s) with A and B far out: both are
        # taken out (never before) and the passage turns to E2
        assert told[10.1][A] and told[10.1][B] and not told[10.1][E2], order
        # A, told to wait since 0 s (kept through the mouth), closes E2's batch half the
        # bound after the turn (13 s, not 16 s); A and B, taken out before, are admitted
        assert not told[12.9][E2] and told[12.9][A], order
        assert told[13.1][E2] and not told[13.1][A] and not told[13.1][B], order
