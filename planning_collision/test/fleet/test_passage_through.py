"""A robot already through a passage, pushed back into its core, does not take it (issue #22).

The doorway's core (fleet/passages.py) reaches about 1 m out from its wall on each side: out
there the ridge of the clearance still runs closer than a diameter to the door's jambs. In
seed 60 of the benchmark's 16-robot doorway, robot11 had gone west through the door and stood
1 m west of the wall when a robot making room pushed it back into the core's edge. Its route
to its goal, 0.8 m away, started in the core, so it counted as a robot inside going west, and
as nobody of the side the passage served (the west robots, waiting 19 s already) was in the
core yet, it took the passage 1.5 s after the passage had turned to them: they waited 25 s
more (robot2: 44.4 s in all). Now the passage map remembers who went through (used it, then
stands on the side it was going to): such a robot in the core goes on, but neither takes the
passage nor keeps it from turning.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_passages

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
BACK = (-1.0, 0.03)  # where robot11 stood pushed back, in the core's west edge
GOALS = np.array([(-1.3, 0.75), (1.6, -1.0)])  # A goes west, B east
B_WAITS = (-1.6, -1.0)  # B on the west side, its way through the door


def step(passages, a, t, ids=(0, 1)):
    """One decision with robot A at ``a`` and robot B waiting west of the door; ``ids``
    lists the agents in the order given (the same robots, any listing)."""
    order = np.asarray(ids)
    positions = np.array([a, B_WAITS])[order]
    told = passages.coordinate(positions, GOALS[order], np.full((2, 2), 0.3),
                               np.ones(2, dtype=bool), ids=order, now=t, max_wait=6.0)
    waiting = np.empty(2, dtype=bool)
    waiting[order] = told.waiting
    return waiting, told.passage[np.argsort(order)]


def test_the_core_reaches_out_to_where_the_robot_was_pushed_back():
    passages = door_passages(RADIUS)
    assert len(passages.passages) == 1
    r, c = np.floor(passages.routes.to_cells([BACK])[0]).astype(int)
    assert passages.passages[0].core[r, c]


def test_a_robot_pushed_back_after_going_through_does_not_take_the_passage():
    for ids in ((0, 1), (1, 0)):
        passages = door_passages(RADIUS)
        waiting, used = step(passages, (0.6, 0.0), 0.0, ids)  # A in the door, going west
        assert list(used) == [0, 0]
        assert not waiting[0] and waiting[1]  # B waits for A
        waiting, used = step(passages, (-1.3, 0.3), 0.1, ids)  # A through, off the core
        assert used[0] == -1 and not waiting[1]  # B's turn
        for k in range(20):  # A pushed back into the core's edge, for 2 s
            waiting, used = step(passages, BACK, 0.2 + 0.1 * k, ids)
            assert list(used) == [0, 0]
            assert not waiting[1], f"B told to wait again at step {k} (ids {ids})"
            assert not waiting[0]  # A goes on, out of the core


def test_a_robot_that_never_went_through_still_takes_the_passage_from_inside():
    # the same place without the memory: a robot in the core (pushed in from its side, or
    # admitted before) takes a passage nobody of the served side is in, as before
    passages = door_passages(RADIUS)
    waiting, used = step(passages, BACK, 0.0)
    assert list(used) == [0, 0]
    assert not waiting[0] and waiting[1]


def test_going_through_is_forgotten_when_it_uses_the_passage_the_other_way():
    passages = door_passages(RADIUS)
    step(passages, (0.6, 0.0), 0.0)
    step(passages, (-1.3, 0.3), 0.1)
    assert list(passages._through[0]) == [0]  # A went through
    goals = np.array([(1.6, 1.0), GOALS[1]])  # A now heads back east through the door
    passages.coordinate(np.array([(-1.3, 0.3), B_WAITS]), goals, np.full((2, 2), 0.3),
                        np.ones(2, dtype=bool), now=0.2, max_wait=6.0)
    assert passages._through[0] == {}
    passages.forget()
    assert passages._through[0] == {}
