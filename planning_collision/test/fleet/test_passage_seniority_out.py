"""A robot taken out of a closing batch keeps its place when it is taken out no more (issue
#22, doorway 16).

A closing batch takes out the admitted robots far from the core, but keeps the longest
waiting of them (fleet/passages.py, seniority). A waiter's seniority (since when it was told
to wait) was kept only while it was one of the passage's users; a robot admitted while it
stood at its holding place beyond the zone (holding places lie up to 4.5 m out, the zone
1.5 m) was none from the next step, until it came back into the zone, so it came in as a
robot that had never waited and the closing batch took it out again (doorway of 16, seed
43: robot 6, taken out at 6 s, admitted at 19 s at 1.8 m from the door, taken out again at
22.7 s, through at 58 s, 33.9 s waiting; seed 67: robot 6, taken out at 36 s and at 54.7 s,
33.2 s). Now a closing batch keeps every robot it admitted that a batch took out before.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_script

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
# W1, W2, W3 go east through the door (a wall along x = 0, the door at y = 0); E1, E2 west
W1, W2, E1, E2, W3 = range(5)
GOALS = np.array([(2.0, 1.0), (2.2, -1.5), (-2.0, -1.0), (-2.2, 1.4), (2.4, 0.2)])
FAR = (-1.9, -1.0)  # in the zone, farther than a diameter from the core
OUT = (-2.8, -1.5)  # beyond the zone (where W2 stands while it waits)


def scene(t: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the four robots stand at time ``t`` and which want to move (scripted: the
    rule's velocities are not followed, so only its decisions are tested). W1 and W2 are
    admitted at 0 s; W1 goes through, W2 stands far out, so when the batch closes at 6 s
    (E1 has waited 6 s) W2 is taken out; it waits beyond the zone, E1 goes through, the
    passage turns back to W2 and W3 (waiting in the zone since 7 s, and holding the
    passage for their side while W2 is no user) at 7.5 s, E2 begins to wait at 8 s and W2
    comes back into the zone at 9 s: the batch closes again at 14 s with W2 still far out."""
    at = {W1: (-1.2, 0.0), W2: FAR, E1: (2.0, -1.0), E2: (1.9, 0.8), W3: (-1.2, 0.8)}
    moving = {W1: True, W2: True, E1: True, E2: t >= 8.0, W3: t >= 7.0}
    if 1.0 <= t < 2.0:
        at[W1] = (0.0, 0.0)  # in the door
    if t >= 2.0:
        at[W1], moving[W1] = tuple(GOALS[W1]), False  # through, parked at its goal
    if 6.05 <= t < 9.0:
        at[W2] = OUT
    if 6.5 <= t < 7.5:
        at[E1] = (0.0, 0.0)
    if t >= 7.5:
        at[E1], moving[E1] = tuple(GOALS[E1]), False
    return np.array([at[k] for k in range(5)]), np.array([moving[k] for k in range(5)])


def run(until: float, order=None) -> tuple[dict, object]:
    """Who was told to wait at every step up to ``until`` (time -> (5,) bool), and the
    passage map."""
    return door_script(scene, GOALS, until, radius=RADIUS, order=order)


def test_the_scene_is_as_described():
    told, passages = run(14.2)
    door = passages.passages[0].distance

    def distance(point):
        r, c = np.floor(passages.routes.to_cells([point])[0]).astype(int)
        return door[r, c]

    assert 2.0 * RADIUS < distance(FAR) <= passages.zone < distance(OUT)
    assert not told[0.5][W2] and told[0.5][E1]  # W2 admitted with W1
    assert told[6.1][W2] and not told[6.1][E1]  # the batch closed, turned to E1
    assert told[7.2][W3]
    assert not told[7.6][W2] and not told[7.6][W3]  # E1 through: W2 admitted at its place
    assert told[8.5][E2] and not told[13.9][W2]
    assert passages._closed[0]


def test_a_robot_taken_out_before_keeps_its_place_when_the_batch_closes_again():
    told, _ = run(14.5)
    # before: W2, no user while it stood beyond the zone, came back as a robot that had
    # never waited and was taken out again at 14 s, to wait through E2's turn
    assert not told[14.1][W2] and not told[14.5][W2]
    assert told[14.5][E2]


def test_the_same_decisions_in_any_listing_order():
    a, _ = run(14.5)
    b, _ = run(14.5, order=[3, 1, 4, 0, 2])
    assert all((a[t] == b[t]).all() for t in a)
