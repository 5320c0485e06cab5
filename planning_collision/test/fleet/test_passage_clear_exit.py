"""Out of a long passage, its mouth kept clear (issue #22, corridor_1.5d of 16).

The benchmark's corridor swaps two blocks of robots, so the goals of the robots coming out
lie in the mouth they come out of. The first robots out parked there and the ones close
behind had to push past them: in seed 94 of 16 the last robot stood 5 s in the corridor with
its way out blocked, and the other side, waiting since 2.4 s, could go at 33.1 s. While an
admitted robot follows within ``follow`` metres of the end of a long passage's core, a robot
out on that side with its goal in the mouth now heads for a holding place instead
(fleet/passages.py, "Out of a long passage, clear of its mouth").
"""

from __future__ import annotations

import numpy as np
from narrow_maps import (
    MAX_WAIT,
    SPEED,
    core_span,
    corridor_passages,
    corridor_positions,
    door_passages,
    told_at_once,
)

WEST = (-0.5, 0.0)  # what the rule is given for every robot: it shows who it changed


def west_mouth_goal(passages, depth=0.4):
    """A goal in the corridor's west mouth: on its axis, ``depth`` metres out of the core."""
    line = [line for line in passages.lines[0] if line.start[0] < 0][0]
    return line.point(depth - (passages.routes.radius + 0.05))


def decide(passages, positions, goals, given=WEST):
    """The rule's velocities for robots at ``positions`` going to ``goals`` (NaN: cmd_vel
    mode), all given ``given`` (the control time 0, the bench's speed and max_wait)."""
    return told_at_once(passages, positions, goals, given).velocities


def test_out_with_its_goal_in_the_mouth_it_holds_aside_while_another_follows():
    """Robot 0 comes west down the corridor 1 m from the core's west end; robot 1, just out
    of it with its goal in the mouth, heads for a holding place off the mouth and off the
    goals, not for its goal, and keeps that place from step to step."""
    passages = corridor_passages()
    end = core_span(passages)[0]
    goal = west_mouth_goal(passages)
    positions = [(end + 1.0, 0.0), (end - 0.5, 0.0)]
    goals = [(-5.5, 0.0), goal]
    velocities = decide(passages, positions, goals)
    assert np.allclose(velocities[0], WEST)  # in the core: goes on
    place = passages._aside[0][1]
    routes = passages.routes
    on, r, c = routes.grid_cells([place])
    assert on.all() and routes.fits[r, c].all()
    assert passages.places[0].distance[r[0], c[0]] >= passages.hold  # off the mouth
    assert np.hypot(*(place - goal)) >= passages.places[0].clear  # off the goal
    heading = (place - np.asarray(positions[1])) / np.hypot(*(place - positions[1]))
    v = velocities[1]
    assert np.hypot(*v) > 0.4 and float(v @ heading) > 0.99 * np.hypot(*v)
    decide(passages, [(end + 0.8, 0.0), (end - 0.6, 0.1)], goals)
    assert np.array_equal(passages._aside[0][1], place)  # the same place next step


def test_nobody_close_behind_it_goes_to_its_goal():
    """The robot in the corridor is 4 m from its west end (beyond ``follow``): the one out
    of it goes to its goal as given."""
    passages = corridor_passages()
    end = core_span(passages)[0]
    velocities = decide(passages, [(end + 4.0, 0.0), (end - 0.5, 0.0)],
                        [(-5.5, 0.0), west_mouth_goal(passages)])
    assert np.allclose(velocities, np.tile(WEST, (2, 1)))
    assert passages._aside[0] == {}


def test_a_goal_beyond_the_mouth_is_not_held():
    """Robot 1's goal lies 2 m out of the core, beyond the mouth (``hold``, 1 m): it goes
    on to it while robot 0 follows close."""
    passages = corridor_passages()
    end = core_span(passages)[0]
    velocities = decide(passages, [(end + 1.0, 0.0), (end - 0.5, 0.0)],
                        [(-5.5, 0.0), west_mouth_goal(passages, depth=2.0)])
    assert np.allclose(velocities, np.tile(WEST, (2, 1)))


def test_a_robot_still_on_the_other_side_is_not_held():
    """Robot 1's goal lies in the west mouth, but it stands east of the corridor (it has not
    come through): the rule leaves it to the batches."""
    passages = corridor_passages()
    end = core_span(passages)[0]
    positions = [(end + 1.0, 0.0), (3.0 + 2.5, 1.5)]
    decide(passages, positions, [(-5.5, 0.0), west_mouth_goal(passages)])
    assert 1 not in passages._aside[0]


def test_a_door_and_cmd_vel_mode_are_left_as_they_were():
    """A doorway takes less than max_wait to drive: a robot just through it with its goal in
    the mouth goes on to it. Without goals (cmd_vel mode) the corridor's robots keep their
    commands."""
    door = door_passages(0.35)
    assert door.window(0, MAX_WAIT, SPEED) == MAX_WAIT
    through = decide(door, [(-0.1, 0.0), (-0.9, 0.0)], [(-3.0, 0.0), (-1.2, 0.0)])
    assert np.allclose(through, np.tile(WEST, (2, 1)))
    assert door._aside[0] == {}
    passages = corridor_passages()
    end = core_span(passages)[0]
    told = decide(passages, [(end + 1.0, 0.0), (end - 0.5, 0.0)], np.full((2, 2), np.nan))
    assert np.allclose(told, np.tile(WEST, (2, 1)))


def test_the_benchmarks_east_block_is_out_of_the_corridor_by_28_s():
    """corridor_1.5d of 16, seed 94, in the pure loop as the benchmark runs it: 28 s after
    the start the eight robots of the east block are out of the corridor (west of x = -3)
    and the west block has not gone in, with no contact. Before, the last of them stood in
    the corridor from 26 to 31 s behind robots parking in its mouth (out at 30.9 s)."""
    contacts, east, x = corridor_positions(16, 94, 28.0)
    assert contacts == []
    assert (x[east] < -3.0).all(), x[east]
    assert (x[~east] < -3.0).all(), x[~east]
