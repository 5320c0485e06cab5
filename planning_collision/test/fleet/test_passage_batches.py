"""A passage serves one direction in bounded batches (fleet/passages.py, issue #22).

Root cause of the doorway's long waits (doc/narrow_spaces_bench.md): the rule decided the
served direction afresh each step, from positions alone, and an empty core went to the user
nearest it. Between two robots of the served direction the core is empty for a moment, and
a robot of the other side standing at the mouth is then often the nearest: the passage
flipped, the robot on its way in was told to back off, and the next step it flipped back.
Both rooms' queues churned at the mouths and a 16-robot swap took twice as long. Now a
passage keeps the direction it serves until the robots it admitted are through, and admits
at most ``batch`` robots (nearest first) while another direction waits.
"""

from __future__ import annotations

import numpy as np
import pytest
from narrow_maps import door_passages

from planning_collision.fleet.passages import PassageMap

# The benchmark's doorway: a wall along x = 0 with a door 0.8 m wide at y = 0 (its core, for
# robots of radius 0.3, spans x from about -0.8 to 0.75). Robots a0-a2 go right, b0 left.
RIGHT, LEFT = (2.5, 0.0), (-2.5, 0.0)
GOALS = np.array([RIGHT, RIGHT, RIGHT, LEFT])
PREF = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [-0.5, 0.0]])


def door(batch: int = 2) -> PassageMap:  # the default is 8; 2 shows the bound
    return door_passages(0.3, batch=batch)


def step(passages, positions, moving=(True, True, True, True)):
    told = passages.coordinate(np.array(positions, dtype=float), GOALS, PREF,
                               np.array(moving), ids=np.arange(4))
    return told.waiting.tolist()


def test_the_served_direction_holds_while_the_core_is_empty_between_two_robots():
    passages = door()
    # a0 nearest the core: the right-going direction is served; a0 and a1 are admitted (the
    # batch of 2), a2 and b0 wait.
    assert step(passages, [(-1.3, 0.0), (-1.8, 0.0), (-2.1, 0.6), (1.6, 0.0)]) == \
        [False, False, True, True]
    assert step(passages, [(0.0, 0.0), (-1.3, 0.0), (-1.8, 0.4), (1.6, 0.0)]) == \
        [False, False, True, True]
    # a0 is through, the core is empty, and b0 (0.55 m from it) is now nearer than a1
    # (0.8 m): before, the passage went to b0 and a1, on its way in, was told to back off.
    # a1 was admitted, so it goes and b0 keeps waiting.
    assert step(passages, [(1.6, -1.0), (-1.6, 0.0), (-2.0, 0.6), (1.3, 0.0)]) == \
        [False, False, True, True]


def test_a_batch_is_bounded_so_the_other_side_does_not_wait_for_the_whole_queue():
    passages = door()
    step(passages, [(-1.3, 0.0), (-1.8, 0.0), (-2.1, 0.6), (1.6, 0.0)])
    step(passages, [(0.0, 0.0), (-1.3, 0.0), (-1.8, 0.4), (1.6, 0.0)])
    step(passages, [(2.5, -0.5), (0.0, 0.0), (-1.8, 0.4), (1.6, 0.0)])
    # a0 and a1 (the batch) are through; a2 is nearer the core than b0, yet b0's direction
    # is served next (before: a2's, and the left-going robots waited for every right-going
    # one); a2 waits for the next batch of its direction.
    assert step(passages, [(2.5, -0.5), (1.6, 0.9), (-1.3, 0.0), (1.3, 0.0)]) == \
        [False, False, True, False]
    # while nobody else waits a batch has no bound: a2 goes once b0 is through
    assert step(passages, [(2.5, -0.5), (1.6, 0.9), (-1.3, 0.0), (-2.0, 0.0)],
                moving=(True, True, True, False)) == [False, False, False, False]


def test_forget_frees_every_passage_and_batch_is_checked():
    passages = door()
    step(passages, [(-1.3, 0.0), (-1.8, 0.0), (-2.1, 0.6), (1.6, 0.0)])
    passages.forget()
    # afresh, b0 nearest: its direction is served
    assert step(passages, [(-1.6, 0.0), (-1.8, 0.4), (-2.0, 0.0), (1.3, 0.0)]) == \
        [True, True, True, False]
    with pytest.raises(ValueError, match="batch"):
        door(batch=0)
