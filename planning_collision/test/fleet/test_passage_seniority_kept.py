"""A robot keeps its seniority while it stands in a passage's mouth (issue #22, doorway 16).

A passage remembers since when each robot has been told to wait (seniority,
fleet/passages.py). It forgot that as soon as the robot counted as inside (within ``radius``
of the core): a robot admitted after a long wait that reached the mouth and was pushed back
out of it by the crowd, still admitted, had no seniority any more, so when the batch closed
it was taken out of it and a robot that had waited less kept its place; it then waited
through the next turns again from scratch (doorway of 16, seed 59: 43.2 s). Now the
passage keeps a robot's seniority until it has gone through (it is no longer a user).
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


def test_the_robot_pushed_out_of_the_mouth_keeps_its_place():
    for order in ((0, 1, 2, 3), (3, 2, 1, 0)):
        told = run(14.0, order)
        assert told[1.0][A] and told[2.5][B]  # both wait while E1 goes
        assert not told[4.0][A] and not told[4.0][B]  # both admitted after the turn
        assert told[5.0][E2]
        late = [t for t in told if t >= 11.0]
        assert not any(told[t][A] for t in late), order  # A, waiting since 0 s, keeps it
        assert all(told[t][B] for t in late), order  # B, since 2 s, is taken out
