"""A robot that waits for a passage keeps its seniority across turns (issue #22).

What the bounded wait (``max_wait``) did not bound in the benchmark's 16-robot doorway: a
robot taken out of its batch when the batch closed (admitted, but still far from the core)
waited while its own side's last robots cleared the door, then through the other side's
whole turn (``max_wait`` from the turn, and that side's last robots clearing the door), and
when its side's turn came, the robots nearer the core went first and it could be taken out
again (seed 53, robot11: admitted at 28 s, standing by the filing-in rule beside a nearer
one, taken out at 31 s, through at 56 s, 42.6 s waiting). Now (fleet/passages.py) each
passage remembers since when each robot has been told to wait, kept while it is admitted
and until it goes in, and which robots a closing batch took out:

- the longest waiting robots are admitted first (then the nearest), and when a batch closes,
  the admitted robots it would take out that a batch took out before keep their places
  wherever they stand (a robot is taken out once at most; until 2026-11-27 the longest
  waiting of them, which a robot admitted beyond the zone was not: test_passage_seniority_out);
- after a turn, the batch closes ``max_wait`` after the other side's longest waiting robot
  began to wait, but not before half of ``max_wait`` after the turn.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_passages, scripted

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
DT = 0.1
MAX_WAIT = 6.0
# W1, W2, W3 go east through the door (a wall along x = 0, the door at y = 0); E1, E2 west
GOALS = np.array([(2.0, 1.0), (2.2, -1.5), (2.4, 0.2), (-2.0, -1.0), (-2.2, 1.4)])
W1, W2, W3, E1, E2 = range(5)


def scene(t: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the five robots stand at time ``t`` and which want to move (scripted: the
    rule's velocities are not followed, so only its decisions are tested)."""
    at = {W1: (-1.2, 0.0), W2: (-2.0, 1.2), W3: (-1.9, -1.0), E1: (2.0, -1.0),
          E2: (1.9, 0.8)}
    moving = {W1: True, W2: t >= 3.0, W3: t >= 3.0, E1: True, E2: t >= 1.0}
    if 1.0 <= t < 2.0:
        at[W1] = (0.0, 0.0)  # in the door
    if t >= 2.0:
        at[W1], moving[W1] = tuple(GOALS[W1]), False  # through, parked at its goal
    return np.array([at[k] for k in range(5)]), np.array([moving[k] for k in range(5)])


def run(until: float, order=None, closed=None) -> dict:
    """Who was told to wait at every step up to ``until`` (time -> (5,) bool); ``closed``, a
    dict, gets whether the door's batch was closed at every step (time -> bool)."""
    passages = door_passages(RADIUS)

    def after(t):
        if closed is not None:
            closed[t] = passages._closed[0]

    return scripted(passages, scene, GOALS, until, dt=DT, max_wait=MAX_WAIT, order=order,
                    after=after)


def test_a_closing_batch_takes_its_far_robots_out_once():
    told = run(12.0)
    assert not told[0.0][W1] and told[0.0][E1]  # W1 nearest: the passage serves it
    assert not told[2.5][E1] and not told[2.5][E2]  # W1 through: both admitted
    assert told[4.0][W2] and told[4.0][W3]
    # at 9 s the batch closes (W2 and W3 have waited 6 s); E1 and E2, far out and never
    # taken out before, are taken out, however long they waited (E1 since 0 s), and the
    # passage turns to W2 and W3
    assert not told[8.9][E1] and not told[8.9][E2]
    assert told[9.1][E1] and told[9.1][E2]
    assert not told[9.1][W2] and not told[9.1][W3]
    # that batch closes at 12 s (below), W2 and W3 are taken out and E1 and E2 admitted
    # again; when theirs closes (15 s: half the bound after the turn, W2 and W3 told to
    # wait since 3 s), they stand as far out, but keep their places: a robot is taken out
    # of a batch once at most
    closed = {}
    told = run(16.0, closed=closed)
    assert told[12.5][W2] and not told[12.5][E1] and not told[12.5][E2]
    assert not closed[14.9] and closed[15.1]
    assert not told[15.5][E1] and not told[15.5][E2] and told[15.5][W2] and told[15.5][W3]


def test_after_the_turn_the_batch_closes_by_the_other_sides_seniority():
    told = run(12.5)
    # the passage turned to W2 and W3 at 9 s; E1 has been told to wait since 0 s (kept while
    # it was admitted), so W's batch closes half the bound after the turn, 12 s, not 15 s:
    # W2 and W3, far out, are taken out and the passage turns to E1 and E2 at once
    assert not told[10.5][W2] and not told[10.5][W3] and told[10.5][E1]
    assert not told[11.9][W2] and not told[11.9][W3] and told[11.9][E1]
    assert told[12.1][W2] and told[12.1][W3] and not told[12.1][E1]


def test_the_same_decisions_in_any_listing_order():
    a = run(19.0)
    b = run(19.0, order=[4, 2, 0, 3, 1])
    assert all((a[t] == b[t]).all() for t in a)
