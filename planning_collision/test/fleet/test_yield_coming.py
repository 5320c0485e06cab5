"""Which robot a stalled one yields to, and which way (fleet/progress.py, issue #22): it backs
straight away from the nearest robot of higher priority coming at it (nearly head on), not
from a nearer robot of its own stream; with nobody coming at it, from the nearest robot of
higher priority as before, except that a robot of its own stream beside it makes it drop back
(single file); a robot well behind it going its way never counts. In the two-lane corridor of
16 (corridor_3d) backing away from the nearest robot of higher priority drove a robot on into
the knot (seed 38, a robot waited 49 s); leaving out only the robots behind going its way
(474a844) let robots back diagonally into the walls away from nearer robots of their own
stream (seed 91, jammed for good); leaving out the robots beside it going its way too made
the two-lane corridor of 4 slower (seeds 0-29: median makespan 40.8 -> 54.3 s)."""

from __future__ import annotations

import numpy as np
from narrow_maps import stall

from planning_collision.fleet.progress import ProgressMonitor


def unit(v):
    v = np.asarray(v, float)
    return v / np.hypot(*v)


def test_it_backs_away_from_the_robot_coming_at_it_not_from_its_stream_behind():
    """Robot 2 goes +x with robot 0 (higher priority, its way) 0.6 m behind it and robot 1
    (higher priority) coming the other way 1 m ahead; all are stalled. Robot 2 backs away
    from robot 1, not from the nearer robot 0 behind it, which drove it on at robot 1."""
    monitor = ProgressMonitor(3, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    told, yielding = stall(monitor, [[-0.6, 0.0], [1.0, 0.0], [0.0, 0.0]],
                           [[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0]])
    assert yielding.tolist() == [False, False, True]  # robot 1: robot 0 is beyond near
    assert np.allclose(told[2], [-0.3, 0.0])


def test_the_robot_coming_at_it_before_a_nearer_one_of_its_stream():
    """The knot of corridor_3d 16, seed 91, as it stood (with 474a844) from 67 s on: robots
    2, 9, 10 and 11 of the run as rows 0-3 (the same order of priority). Robots 9, 10 and 11,
    westbound, back straight away from robot 2 coming east, not from a nearer robot of their
    own stream: robot 11, on the south side, 0.89 m from robot 2, not diagonally into the
    wall away from robot 9 0.74 m away; robot 10 not from robot 9 just ahead of it (474a844:
    into the north wall)."""
    positions = [[-0.31, -0.45], [0.05, 0.08], [0.63, 0.45], [0.58, -0.43]]
    pref = [[0.49, 0.11], [-0.50, -0.01], [-0.50, -0.04], [-0.50, 0.03]]
    monitor = ProgressMonitor(4, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    told, yielding = stall(monitor, positions, pref)
    assert yielding.tolist() == [False, True, True, True]
    assert np.array_equal(told[0], pref[0])  # robot 2 goes on
    for row in (1, 2, 3):
        assert np.allclose(told[row], 0.3 * unit(np.subtract(positions[row], positions[0])))


def test_the_nearest_of_those_coming_at_it():
    """The knot of corridor_3d 16, seed 54, at 31 s: robots 0, 1 and 9 as rows 0-2. Robot 9,
    westbound against the south wall, has robot 1 (0.69 m, in the corridor's middle) and
    robot 0 (0.74 m, along the wall) coming at it: it backs straight away from robot 1, the
    nearer, (0.40, -0.92); against the wall, ORCA slides it along it (the wall rule of
    fleet/progress.py turns only a yield nearly straight into the wall)."""
    positions = [[-1.65, -0.45], [-1.18, 0.21], [-0.91, -0.42]]
    pref = [[0.50, 0.04], [0.50, -0.02], [-0.50, 0.07]]
    monitor = ProgressMonitor(3, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    told, yielding = stall(monitor, positions, pref)
    assert yielding[2]
    assert np.allclose(told[2], 0.3 * unit(np.subtract(positions[2], positions[1])))


def test_head_on_the_lower_priority_backs_off():
    """Nose to nose, the robot of lower priority backs straight away from the other,
    whatever the order of the rows."""
    for order in ([0, 1], [1, 0]):
        monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
        positions = np.array([[0.0, 0.0], [0.7, 0.0]])[order]
        pref = np.array([[0.5, 0.0], [-0.5, 0.0]])[order]
        told, yielding = stall(monitor, positions, pref, until=1.5)
        assert yielding.tolist() == [False, True]
        assert np.allclose(told[1], 0.3 * unit(positions[1] - positions[0]))
        assert np.array_equal(told[0], pref[0])


def test_a_robot_behind_going_its_way_is_not_yielded_to():
    """A robot of higher priority behind the stalled one going its way: nobody to yield
    to (backing away from it would be driving on)."""
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0)
    pref = np.array([[0.5, 0.0], [0.5, 0.0]])
    told, yielding = stall(monitor, [[0.0, 0.0], [0.6, 0.0]], pref, until=2.0)
    assert not yielding.any()
    assert np.array_equal(told, pref)


def test_without_one_coming_at_it_the_nearest_other_as_before():
    """Nobody coming at it: the stalled robot backs away from the nearest robot of higher
    priority that is not behind it going its way, as before: its stream's robot ahead of it
    (the tail of a stream backs off and leaves room), or one behind it going another way (a
    knot at a crossing; leaving those out made the 16-robot intersection's seed 0 take 256 s
    instead of 93 s)."""
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
    told, yielding = stall(monitor, [[0.6, 0.0], [0.0, 0.0]], [[0.5, 0.0], [0.5, 0.0]],
                           until=1.5)
    assert yielding.tolist() == [False, True]
    assert np.allclose(told[1], [-0.3, 0.0])
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
    told, yielding = stall(monitor, [[0.0, 0.0], [0.0, 0.6]], [[-0.5, -0.1], [0.5, 0.0]],
                           until=1.5)
    assert yielding.tolist() == [False, True]
    assert np.allclose(told[1], [0.0, 0.3])


def test_only_nearly_head_on_counts_as_coming_at_it():
    """A robot of higher priority going against the stalled one's way but at 110 degrees
    (a crossing, not a corridor) is not coming at it: the stalled robot backs straight away
    from it, as before, not along its way (with every robot up to 90 degrees from head on
    counted, the 16-robot intersection's seed 17 failed)."""
    monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
    positions = [[0.5, -0.5], [0.0, 0.0]]
    pref = [[-0.17, 0.47], [0.5, 0.0]]
    told, yielding = stall(monitor, positions, pref, until=1.5)
    assert yielding.tolist() == [False, True]
    assert np.allclose(told[1], 0.3 * unit([-0.5, 0.5]))


def test_head_on_or_passing_beside_it_backs_straight_away():
    """A robot coming at it 0.3 m or 0.6 m off its line: the stalled robot backs straight
    away from it (sideways, mostly), not back along the other's way (which sent robots back
    and forth along a corridor: fleet/progress.py)."""
    for offset in (0.3, 0.6):
        monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
        told, yielding = stall(monitor, [[0.0, offset], [0.2, 0.0]], [[0.5, 0.0], [-0.5, 0.0]],
                               until=1.5)
        assert yielding.tolist() == [False, True]
        assert np.allclose(told[1], 0.3 * unit([0.2, -offset]))


def test_beside_it_going_its_way_it_drops_back():
    """The two-lane corridor of 4: robots 0 and 1 side by side going east, stalled by the
    pair coming the other way, of lower priority. Robot 1, 0.1 m ahead of robot 0 (robot 0
    beside it, not ahead of it), drops back, straight against its way, so that the two go
    on in single file; 0.1 m behind robot 0 (robot 0 beside it and ahead) it backs straight
    away from robot 0, as before."""
    pref = [[0.5, 0.0], [0.5, 0.0]]
    for x, expected in ((0.1, [-0.3, 0.0]), (-0.1, 0.3 * unit([-0.1, 0.7]))):
        monitor = ProgressMonitor(2, stall_time=1.0, yield_time=1.0, back_off_speed=0.3)
        told, yielding = stall(monitor, [[0.0, -0.4], [x, 0.3]], pref, until=1.5)
        assert yielding.tolist() == [False, True]
        assert np.allclose(told[1], expected)


def test_the_crossing_of_the_shipped_intersection():
    """The shipped intersection (pure loop) at 16.5 s: rows 0, 3, 4, 5, 6 of the run (the same
    order of priority). Row 6, westbound at the east arm's mouth, has row 0 coming east
    0.62 m away but 0.58 m off its line: passing beside it. It backs straight away from row
    0, (0.35, -0.94), as before, and they pass each other in the crossing's room; backing off
    along row 0's way sent it (and row 5) east down the arm and row 6 arrived at 58.2 s
    instead of 29.2 s."""
    positions = [[0.62, 0.19], [0.14, -0.36], [-0.62, -0.19], [1.22, 0.40], [0.84, -0.39]]
    pref = [[0.50, 0.02], [0.02, 0.50], [-0.50, -0.02], [-0.50, 0.0], [-0.50, 0.02]]
    monitor = ProgressMonitor(5, stall_time=2.0, yield_time=1.0, near=1.5, back_off_speed=0.3)
    wants = np.ones(5, dtype=bool)
    for step in range(int(round(3.0 / 0.05))):
        # only row 6 (the last) stalls: the others count as moving
        distance = np.array([5.0 - step * 0.05] * 4 + [5.0])
        told, yielding = monitor.resolve(step * 0.05, np.asarray(positions, float),
                                         np.asarray(pref, float), distance, wants)
    assert yielding.tolist() == [False, False, False, False, True]
    assert np.allclose(told[4], 0.3 * unit(np.subtract(positions[4], positions[0])))


def test_a_passage_user_backs_straight_away_from_the_nearest_as_before():
    """The robots of a passage (``plain``) yield as before the rule above: robot 2 backs
    straight away from robot 0 behind it going its way (the nearest robot of higher
    priority), not from robot 1 coming at it; without ``plain`` it backs away from robot 1
    (the doorway of 16, seed 35, waited 71.1 s instead of 23.9 s with the rule at the door)."""
    positions = [[-0.6, 0.0], [1.0, 0.0], [0.0, 0.0]]
    pref = [[0.5, 0.0], [-0.5, 0.0], [0.5, 0.0]]
    for plain, expected in ((None, [-0.3, 0.0]), (np.array([False, False, True]), [0.3, 0.0])):
        monitor = ProgressMonitor(3, stall_time=2.0, yield_time=1.0, near=1.5,
                                  back_off_speed=0.3)
        told, yielding = stall(monitor, positions, pref, plain=plain)
        assert yielding[2] and not yielding[0]
        assert np.allclose(told[2], expected)
        # backing off towards robot 1 for robot 0, robot 2 passes the yield on to robot 1,
        # coming the other way (fleet/progress.py); for robot 1 itself it does not
        assert yielding[1] == (plain is not None)
