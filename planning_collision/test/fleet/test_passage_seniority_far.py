"""When a batch closes, the longest waiting of the robots it would take out keeps its place
(issue #22, doorway 16).

A closing batch keeps its robots near the core and takes the others out; the longest waiting
admitted robot kept its place wherever it stood (fleet/passages.py, seniority). But it was
picked among all the admitted robots, also those near the core, which keep their places
anyway: when it stood near the core, every robot far from it was taken out, however long it
had waited. Robots taken out of a batch together begin to wait at the same step, so after
the next turn two of them are admitted with the same seniority; the filing-in rule holds the
second beside the first, the batch closes half the bound after the turn, and the first,
senior by its index and now near the core, was the one kept: the second waited through the
other side's turn again (doorway of 16, seed 48: robot 7 waited 6.6-41.8 s, taken out at
6 s and again at 28 s beside robot 5, both waiting since 6.0 s; seed 65: robot 4, 23.6-65.0
s, taken out at 23 s and at 40 s beside robot 2). Now the longest waiting of the robots the
closing batch would take out kept its place. Since 2026-11-27 a closing batch keeps, of the
robots it would take out, those a batch took out before (a robot is taken out once at most:
test_passage_seniority_out.py), whatever their seniority: here W2, never taken out, is, and
the passage remembers it.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_script

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
# E1, E2 go west through the door (a wall along x = 0, the door at y = 0); W1, W2 east
E1, W1, W2, E2 = range(4)
GOALS = np.array([(-2.0, -1.0), (2.0, 1.0), (2.2, -1.5), (-2.2, 1.4)])


def scene(t: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the four robots stand at time ``t`` and which want to move (scripted: the
    rule's velocities are not followed, so only its decisions are tested). E1 goes through
    first while W1 and W2 wait (both from 0 s: the same seniority); after the turn (2 s) W1
    reaches the door's mouth (4 s) and W2 still stands where it waited; E2 begins to wait
    at 2.5 s, so the west batch closes at 8.5 s with W1 near the core, W2 far."""
    at = {E1: (1.2, 0.0), W1: (-1.8, 1.0), W2: (-1.9, -1.0), E2: (1.9, 0.8)}
    moving = {E1: True, W1: True, W2: True, E2: t >= 2.5}
    if 1.0 <= t < 2.0:
        at[E1] = (0.0, 0.0)  # in the door
    if t >= 2.0:
        at[E1], moving[E1] = tuple(GOALS[E1]), False  # through, parked at its goal
    if t >= 4.0:
        at[W1] = (-0.6, 0.1)  # at the door's mouth
    return np.array([at[k] for k in range(4)]), np.array([moving[k] for k in range(4)])


def run(until: float, order=None) -> tuple[dict, object]:
    """Who was told to wait at every step up to ``until`` (time -> (4,) bool), and the
    passage map."""
    return door_script(scene, GOALS, until, radius=RADIUS, order=order)


def test_the_scene_is_as_described():
    told, passages = run(8.6)
    assert told[0.5][W1] and told[0.5][W2] and not told[0.5][E1]
    assert not told[2.5][W1] and not told[2.5][W2] and told[2.5][E2]  # the turn: both in
    assert passages._since[0][W1] == passages._since[0][W2] == 0.0  # the same seniority
    assert told[8.4][E2] and passages._closed[0]  # closed at 8.5 s
    w1, w2 = [np.array(p) for p in scene(8.6)[0][[W1, W2]]]
    door = passages.passages[0].distance
    cell = [np.floor(passages.routes.to_cells([p])[0]).astype(int) for p in (w1, w2)]
    assert door[cell[0][0], cell[0][1]] <= 2.0 * RADIUS < door[cell[1][0], cell[1][1]]


def test_only_the_robot_far_from_the_core_is_taken_out_and_it_is_remembered():
    told, passages = run(9.0)
    # W1, near the core, keeps its place; W2 waited as long and stands far out: the closing
    # batch takes it out (never taken out before), and remembers it for its next batch
    assert not told[8.4][W1] and not told[8.4][W2]
    assert not told[8.6][W1] and told[8.6][W2] and told[8.6][E2]
    assert told[9.0][W2] and passages._out[0] == {W2}


def test_the_same_decisions_in_any_listing_order():
    a, _ = run(9.0)
    b, _ = run(9.0, order=[3, 1, 0, 2])
    assert all((a[t] == b[t]).all() for t in a)
