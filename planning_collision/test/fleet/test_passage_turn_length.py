"""A passage's turns last as long as driving through it takes (issue #22, corridor_1.5d).

The benchmark's one-lane corridor (0.75 m x 6 m) has a core about 7.2 m long, some 14 s to
drive at the preferred 0.5 m/s. A batch closed ``passage_max_wait`` (6 s) after the other
side began to wait, so each turn let one or two robots in and then cost the whole time the
last of them took to get through: 16 robots, 96 of 100 runs with a robot waiting over 30 s.
Now, given the preferred speed, a batch stays open at least as long as one robot takes to
drive through the core; a doorway (core ~1.4 m, under 3 s) keeps ``max_wait`` and decides
exactly as before.
"""

from __future__ import annotations

import math

import numpy as np
from narrow_maps import corridor_passages, door_passages, drive

from planning_collision.fleet.passages import PassageMap

DT = 0.1
SPEED = 0.5
MAX_WAIT = 6.0


def stream(passages, starts, goals, seconds: float, speed=None):
    """Who was told to wait, per step, with the rule alone (narrow_maps.drive)."""
    return drive(passages, starts, goals, seconds, speed=speed, max_wait=MAX_WAIT,
                 pref_speed=SPEED, dt=DT)[0]


def first_go(waits: np.ndarray, robot: int) -> float:
    """When ``robot``, told to wait at first, was first let go (inf: never)."""
    assert waits[0, robot]
    going = np.flatnonzero(~waits[:, robot])
    return going[0] * DT if going.size else math.inf


# six robots 0.8 m apart west of the corridor going east, one east of it going west
WEST = [(-4.1 - 0.8 * k, 0.0) for k in range(6)]
CORRIDOR_STARTS = WEST + [(4.6, 0.0)]
CORRIDOR_GOALS = [(5.5, -0.9 + 0.6 * (k % 4)) for k in range(6)] + [(-5.5, 1.2)]


def core_extent(passages: PassageMap) -> float:
    """How far the (only) passage's core reaches along x, from its cells' centres."""
    x = passages.routes.to_world(np.argwhere(passages.passages[0].core) + 0.5)[:, 0]
    return float(x.max() - x.min())


def test_a_passage_is_as_long_as_its_core():
    """The length driven through a core from one side to the other: at least the corridor
    (6 m) or the wall (0.2 m), at most how far the core's cells reach along it (its mouths,
    where the disc still touches the ridge, reach out beyond the walls, and the sides begin
    beside them)."""
    corridor, door = corridor_passages(), door_passages(0.3)
    assert len(corridor.passages) == 1 and len(door.passages) == 1
    assert 6.0 <= corridor.lengths[0] <= core_extent(corridor), corridor.lengths
    assert 0.2 <= door.lengths[0] <= core_extent(door), door.lengths


def test_the_window_is_the_clearing_time_where_that_is_longer_than_max_wait():
    corridor, door = corridor_passages(), door_passages(0.3)
    assert corridor.window(0, MAX_WAIT, SPEED) == corridor.lengths[0] / SPEED
    assert corridor.window(0, MAX_WAIT, SPEED) > MAX_WAIT
    assert corridor.window(0, MAX_WAIT) == MAX_WAIT  # without a speed: as before
    assert corridor.window(0, 30.0, SPEED) == 30.0
    assert door.window(0, MAX_WAIT, SPEED) is MAX_WAIT  # max_wait itself: the same float


def test_a_turn_through_the_long_corridor_takes_the_queue():
    """Before, the east robot had waited 6 s when the batch closed, with the queue's last
    robot still out: it waited while the east robot drove through, 33.7 s in all. Now the
    batch stays open for the clearing time (~14 s): the whole queue of six goes in one turn,
    and the east robot goes hardly later than before (it waited for the queue's robots
    already in the corridor anyway); nobody waits 30 s."""
    passages = corridor_passages()
    before = stream(passages, CORRIDOR_STARTS, CORRIDOR_GOALS, 60.0)
    passages.forget()
    after = stream(passages, CORRIDOR_STARTS, CORRIDOR_GOALS, 60.0, speed=SPEED)
    assert before.sum(axis=0).max() * DT > 30.0
    assert after[:, :6].sum() == 0  # the queue never waits
    assert after.sum(axis=0).max() * DT < 30.0
    assert first_go(after, 6) <= first_go(before, 6) + 3.0
    assert not after[-1].any()


def test_a_doorway_decides_to_the_step_as_without_the_speed():
    """The bounded-wait stream through the doorway (its core under ``max_wait`` to drive):
    every step's decision is the same with the speed given as without it."""
    starts = [(-1.2 - 1.0 * k, 0.0) for k in range(8)] + [(1.6, 0.0)]
    goals = [(3.0, -1.4 + 0.4 * k) for k in range(8)] + [(-3.0, 1.5)]
    passages = door_passages(0.3)
    without = stream(passages, starts, goals, 40.0)
    passages.forget()
    given = stream(passages, starts, goals, 40.0, speed=SPEED)
    assert without[0, 8] and not without.all(axis=0).any()
    assert np.array_equal(without, given)
