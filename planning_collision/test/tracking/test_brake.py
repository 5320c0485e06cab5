"""The passive-safety stop against tracked discs (tracking/brake.py)."""

import numpy as np

from planning_collision.tracking import Discs
from planning_collision.tracking.brake import contact_times, must_stop, touched


def disc(x, y, vx=0.0, vy=0.0, r=0.3):
    return Discs(np.array([[x, y]], float), np.array([[vx, vy]], float), np.array([r]))


def test_contact_times_agree_with_stepping_the_motion():
    rng = np.random.default_rng(0)
    for _ in range(200):
        p, v, c, w = (rng.uniform(-3, 3, 2) for _ in range(4))
        r1, r2 = rng.uniform(0.1, 0.5, 2)
        t = contact_times(p[None], v[None], [r1], c[None], w[None], [r2])[0, 0]
        times = np.arange(0.0, 20.0, 1e-3)
        gaps = np.hypot(*((c - p)[None] + (w - v)[None] * times[:, None]).T) - r1 - r2
        hit = np.flatnonzero(gaps <= 0.0)
        if gaps[0] <= 0.0:  # touching already: 0 while closing in, inf while parting
            assert t == (0.0 if np.dot(c - p, w - v) < 0.0 else np.inf)
        elif hit.size:
            assert abs(t - times[hit[0]]) < 2e-3
        else:
            assert t == np.inf or t > 19.9


def test_a_robot_about_to_drive_into_someone_stops():
    assert must_stop([[0.0, 0.0]], [[1.0, 0.0]], [0.3], disc(0.8, 0.0), 0.3).tolist() == [True]
    # Far enough ahead, or not on the way: ORCA's business, not the stop's.
    assert not must_stop([[0.0, 0.0]], [[1.0, 0.0]], [0.3], disc(2.0, 0.0), 0.3)[0]
    assert not must_stop([[0.0, 0.0]], [[1.0, 0.0]], [0.3], disc(0.8, 1.0), 0.3)[0]
    assert not must_stop([[0.0, 0.0]], [[1.0, 0.0]], [0.3], disc(0.8, 0.0), 0.0)[0]


def test_a_robot_being_caught_up_stands_for_the_contact():
    # Someone faster comes from behind: standing would be hit sooner than moving on, but a
    # contact must find the robot at rest (passive safety; seed 43 of the sensed crossings).
    assert must_stop([[0.0, 0.0]], [[0.8, 0.0]], [0.3], disc(-0.7, 0.0, vx=1.5), 0.3)[0]
    # Stepping out of their way in time is still allowed (standing: touched in 0.27 s).
    assert not must_stop([[0.0, 0.0]], [[0.0, 1.0]], [0.3], disc(-1.0, 0.0, vx=1.5), 0.3)[0]


def test_a_robot_touching_someone_may_leave_but_not_push_on():
    assert must_stop([[0.0, 0.0]], [[0.5, 0.0]], [0.3], disc(0.5, 0.0), 0.3)[0]
    assert not must_stop([[0.0, 0.0]], [[-0.5, 0.0]], [0.3], disc(0.5, 0.0), 0.3)[0]


def test_no_discs_no_stop():
    assert must_stop([[0.0, 0.0], [1.0, 1.0]], np.zeros((2, 2)), [0.3, 0.3], Discs.empty(),
                     0.3).tolist() == [False, False]


def test_someone_on_or_in_the_robot_is_told_from_its_scan():
    ranges = np.full(8, 3.0)
    far = np.array([[3.0, 0.0], [0.0, 3.0]])
    assert not touched(ranges, far, (0.0, 0.0, 0.0), 0.3)
    assert touched(ranges, np.vstack((far, [[0.2, -0.1]])), (0.0, 0.0, 0.0), 0.3)
    ranges[3] = -np.inf  # REP 117: something closer than range_min
    assert touched(ranges, far, (0.0, 0.0, 0.0), 0.3)
    assert not touched(np.full(8, np.inf), np.zeros((0, 2)), (1.0, 1.0, 0.0), 0.3)
