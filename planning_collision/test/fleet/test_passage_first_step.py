"""The step a free passage is taken, a robot of the other side in its mouth waits (issue #22).

The benchmark's corridor_1.5d (0.75 m x 6 m) starts the front robot of each block in the
corridor's mouth (within ``radius`` of the core, not in it). Both counted as inside, so
the step the free passage was taken (by one side: ties go to the lowest side label) the
other side's robot counted as inside too and kept going: a step later it was in the core,
where inside robots go on, and it met the served side's first robot head on halfway down
the corridor. One of them backed out metres at creeping speed while both blocks stood (seed
2 of 16: 44.8 s the longest wait). Now, when a free passage longer to drive than
``max_wait`` is taken, robots of another side merely in the mouth wait like the rest of
their side (and back straight out of the mouth), and the side goes to the robots in the
core itself when there are any. Doors decide as before (test_passage_turn_length.py).
"""

from __future__ import annotations

import numpy as np
from narrow_maps import corridor_passages, drive

from planning_collision.fleet.passages import PassageMap

DT = 0.1
SPEED = 0.5
MAX_WAIT = 6.0


def near(passages: PassageMap, point) -> float:
    """Metres from ``point`` to the (only) passage's core through free space."""
    r, c = np.floor(passages.routes.to_cells([point])).astype(int)[0]
    return float(passages.passages[0].distance[r, c])


def run(passages, starts, goals, seconds):
    """Who was told to wait and the x of each robot, per step (the rule alone)."""
    told, track = drive(passages, starts, goals, seconds, speed=SPEED, max_wait=MAX_WAIT,
                        pref_speed=SPEED, dt=DT)
    return told, track[:, :, 0]


# the front robots of seed 2 of 16: one in each mouth of the corridor, facing each other
WEST, EAST = (-3.97, -0.04), (3.99, -0.03)
GOALS = [(4.0, 0.0), (-4.0, 0.0)]


def test_both_front_robots_start_in_the_mouths():
    passages = corridor_passages()
    radius = passages.routes.radius
    assert 0.0 < near(passages, WEST) <= radius
    assert 0.0 < near(passages, EAST) <= radius


def test_one_side_takes_the_free_passage_and_the_other_waits():
    """Before, neither was told to wait at the first step, and the west robot was in the
    core a step later; now one of them waits from the first step until the other is
    through, and the two are never in the corridor together."""
    passages = corridor_passages()
    told, xs = run(passages, [WEST, EAST], GOALS, 40.0)
    assert told[0].sum() == 1
    waiter = int(np.flatnonzero(told[0])[0])
    goer = 1 - waiter
    assert not told[:, goer].any()
    in_corridor = np.abs(xs) < 3.0
    assert not (in_corridor[:, 0] & in_corridor[:, 1]).any()
    # the waiter stays out of the corridor until the other has left it
    left = int(np.flatnonzero(in_corridor[:, goer])[-1])
    assert not in_corridor[: left + 1, waiter].any()
    assert not told[-1].any()


def test_a_robot_in_the_core_takes_the_passage_from_one_in_the_mouth():
    """A robot already in the core (the east one, 0.3 m in) gets the free passage, even
    though the west robot's side has the lower label and would win a tie."""
    passages = corridor_passages()
    east = (3.6, 0.0)
    assert near(passages, east) <= 0.0
    told, _ = run(passages, [WEST, east], GOALS, 0.2)
    assert told[0].tolist() == [True, False]


def test_the_waiter_in_the_mouth_backs_straight_out_of_it():
    """Told to wait in the mouth, the robot backs straight away from the core before it heads
    for its holding place. Sent sideways to its place (north of the west mouth), a robot
    that drives like a car (the benchmark's differential drive) turned while creeping
    forward and was in the core three steps later, where inside robots go on (seed 2 of 16:
    it met the east side's first robot halfway down the corridor anyway)."""
    passages = corridor_passages()
    starts, goals = np.array([WEST, EAST]), np.array(GOALS)
    for now in (0.0, 0.1):  # the step that takes the passage and the next
        step = passages.coordinate(starts, goals, [(SPEED, 0.0), (-SPEED, 0.0)],
                                   np.ones(2, bool), now=now, max_wait=MAX_WAIT, speed=SPEED)
        assert step.waiting.sum() == 1
        waiter = int(np.flatnonzero(step.waiting)[0])
        outwards = np.sign(starts[waiter, 0])  # west of the west mouth, east of the east one
        v = step.velocities[waiter]
        assert v[0] * outwards >= 0.7 * passages.back_off_speed
        assert np.hypot(*v) <= passages.back_off_speed + 1e-9
