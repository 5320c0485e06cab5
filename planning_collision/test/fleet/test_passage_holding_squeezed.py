"""A waiting robot squeezed against a wall gets a holding place too (issue #22, doorway 16).

ORCA lets a robot come nearer a wall than the route map's margins (pushed by the robots
passing it); the passage rule takes such a robot to be where it would fit (``snap``), but
its holding place was picked from where it stood, on no side of the passage (the disc does
not fit there): it got no place, so it stood, against the wall beside the way its side's
robots take to the door (doorway of 16, seed 96: robot 0 stood there at 0.3 m from the wall
from 6 s on; admitted at 30 s, it could not get off the wall past its neighbour and stood
until the progress monitor moved that one, at 41 s: 34.1 s waiting). Now the place is
picked from its snapped cell.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import door_passages

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
# E goes west through the door (a wall along x = -0.1..0.1, the door at y = 0); W east,
# squeezed against the wall's west face: 0.3 m from it, nearer than RADIUS
E, W = range(2)
GOALS = np.array([(-2.0, 1.0), (2.0, -1.0)])
POSITIONS = np.array([(1.2, 0.0), (-0.4, -1.4)])


def test_the_squeezed_robot_stands_where_the_disc_does_not_fit():
    passages = door_passages(RADIUS)
    cell = np.floor(passages.routes.to_cells([POSITIONS[W]])[0]).astype(int)
    assert not passages.routes.fits[cell[0], cell[1]]


def test_a_waiter_squeezed_against_the_wall_gets_a_holding_place():
    passages = door_passages(RADIUS)
    result = passages.coordinate(POSITIONS, GOALS, np.full((2, 2), 0.3),
                                 np.ones(2, dtype=bool), now=0.0, max_wait=6.0)
    assert not result.waiting[E] and result.waiting[W]  # E nearest: the passage is its
    place = passages._holds[0].get(W)
    assert place is not None
    assert place[0] <= -0.5  # off the wall, on W's side
    assert np.hypot(*result.velocities[W]) > 0.1  # on its way there
