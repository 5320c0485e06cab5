"""Waiting for a passage off the other side's goals (fleet/holding.py, fleet/passages.py;
issue #22): in the benchmark's doorway the robots told to wait stood on the goals of the
robots coming through (two groups swapping sides), so those could not arrive, the batch could
not finish and the waiters waited over 30 s (4 of 100 runs with 8 robots, 20 of 100 with 16).
Also here: a robot squeezed against the wall beside the door still counts as the passage's
user, and the robots of one batch go in one after another."""

from __future__ import annotations

import numpy as np
from narrow_maps import door_passages, shipped_settings

from planning_collision.fleet.holding import HoldingPlaces
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenes import make_scene

RADIUS = 0.35  # the benchmark robots' 0.25 m with the controller's margins
DT = 0.05


def drive(passages, positions, goals, pref_speed=0.5, seconds=8.0):
    """Move every robot along the preferred velocity the passage rule gives it (to its
    goal, straight, as the controller's goal mode does in open space): (steps, N, 2) the
    positions and the last coordination."""
    positions = np.array(positions, dtype=float)
    goals = np.array(goals, dtype=float)
    trace, told = [], None
    for _ in range(int(round(seconds / DT))):
        to_goal = goals - positions
        dist = np.hypot(to_goal[:, 0], to_goal[:, 1])
        moving = dist > 0.1
        pref = np.where(moving[:, None], to_goal / np.maximum(dist, 1e-9)[:, None] * pref_speed,
                        0.0)
        waypoints = passages.routes.waypoints(positions, goals)
        heading = waypoints.points - positions
        length = np.hypot(heading[:, 0], heading[:, 1])
        ok = waypoints.routed & (length > 1e-9) & moving
        pref[ok] = heading[ok] / length[ok, None] * pref_speed
        told = passages.coordinate(positions, goals, pref, moving, ids=np.arange(len(goals)))
        positions = positions + told.velocities * DT
        trace.append(positions.copy())
    return np.array(trace), told


def test_a_waiter_standing_on_an_arriving_robots_goal_moves_off_it():
    """Robot 0 (east to west) is in the door; robot 1 (west to east) waits 2.1 m west of the
    door (1.1 m from the passage's core), exactly on robot 0's goal. Before, a waiter that
    far from the core stood still (on that goal); now it goes to a holding place at least a
    diameter and a margin off every goal and the mouth, on its own side, and stands there."""
    goals = [(-2.1, 0.0), (2.0, 0.0)]
    start = [(0.2, 0.0), (-2.1, 0.0)]
    old = door_passages(RADIUS, holding=False)
    trace, _ = drive(old, start, goals, seconds=1.0)
    assert np.hypot(*(trace[-1, 1] - goals[0])) < 0.05  # it stood on robot 0's goal
    new = door_passages(RADIUS)
    trace, told = drive(new, start, goals, seconds=1.0)
    assert told.waiting[1]
    place = new._holds[0][1]
    assert np.hypot(*(place - np.array(goals[0]))) >= 2 * RADIUS + 0.1 - 1e-9
    assert place[0] < -0.1  # its own (west) side
    off_goal = np.hypot(*(trace[:, 1] - np.array(goals[0])).T)
    assert off_goal[-1] > off_goal[0] + 0.2  # on its way off the goal
    # robot 0 reaches its goal with robot 1 off it, then robot 1 goes through
    trace, _ = drive(new, trace[-1], goals, seconds=25.0)
    there = np.hypot(*(trace[:, 0] - np.array(goals[0])).T) < 0.15
    assert there.any()
    k = int(np.argmax(there))
    assert np.hypot(*(trace[k, 1] - np.array(goals[0]))) >= 2 * RADIUS
    assert np.hypot(*(trace[-1, 1] - np.array(goals[1]))) < 0.15


def test_holding_places_keep_clear_of_goals_the_mouth_and_each_other():
    """Random goals around the door: every place picked is on the robot's side (not across
    the wall), at least ``clear`` from every goal and every place taken before it, at least
    ``mouth`` from the core through free space, where the disc fits; the same data give the
    same place."""
    passages = door_passages(RADIUS, holding=False)
    routes, core = passages.routes, passages.passages[0].core
    places = HoldingPlaces(routes, core, mouth=1.0, clear=0.8)
    rng = np.random.default_rng(4)
    for _ in range(20):
        goals = rng.uniform([-3.0, -2.0], [3.0, 2.0], size=(8, 2))
        taken = []
        for _ in range(4):
            robot = np.array([-rng.uniform(0.8, 2.5), rng.uniform(-1.5, 1.5)])
            place = places.pick(robot, np.concatenate([goals, np.reshape(taken, (-1, 2))]))
            assert place is not None
            assert place[0] < -0.1
            others = np.concatenate([goals, np.reshape(taken, (-1, 2))])
            assert np.hypot(*(others - place).T).min() >= 0.8 - 1e-9
            r, c = np.floor(routes.to_cells([place])[0]).astype(int)
            assert places.distance[r, c] >= 1.0 and routes.fits[r, c]
            again = places.pick(robot, others)
            assert np.array_equal(place, again)
            taken.append(place)


def test_waiters_get_the_same_places_in_any_listing_order():
    """Places go by robot id, so nodes that list the fleet differently agree."""
    goals = np.array([(-1.3, 0.4), (-1.3, -0.4), (2.0, 0.4), (2.0, -0.4)])
    positions = np.array([(0.1, 0.0), (1.2, 0.5), (-1.3, 0.4), (-1.3, -0.4)])
    pref = np.array([(-0.5, 0.0), (-0.5, 0.0), (0.5, 0.0), (0.5, 0.0)])
    a, b = door_passages(RADIUS), door_passages(RADIUS)
    a.coordinate(positions, goals, pref, np.ones(4, bool), ids=np.arange(4))
    flip = np.array([3, 2, 1, 0])
    b.coordinate(positions[flip], goals[flip], pref[flip], np.ones(4, bool), ids=flip)
    assert a._holds[0].keys() == b._holds[0].keys() == {2, 3}
    for k in (2, 3):
        assert np.array_equal(a._holds[0][k], b._holds[0][k])


def test_a_robot_squeezed_against_the_wall_beside_the_door_still_uses_it():
    """Robot 0, admitted (west to east), pushed 0.3 m off the wall beside the door, where
    the route map's disc (0.35 m) does not fit; robot 1 waits in the east room. Before, robot
    0 was nobody's user (its cell is off the zone and the routes), so the passage turned to
    the east while it was not through."""
    passages = door_passages(RADIUS)
    goals = np.array([(2.0, -0.4), (-2.0, 0.0)])
    pref = np.array([(0.5, 0.0), (-0.5, 0.0)])
    first = passages.coordinate(np.array([(-0.6, -0.1), (1.3, 0.0)]), goals, pref,
                                np.ones(2, bool))
    assert first.waiting.tolist() == [False, True]
    squeezed = np.array([(-0.4, -0.75), (1.3, 0.0)])
    r, c = np.floor(passages.routes.to_cells([squeezed[0]])[0]).astype(int)
    assert not passages.routes.fits[r, c]
    told = passages.coordinate(squeezed, goals, pref, np.ones(2, bool))
    assert told.passage[0] == 0
    assert told.waiting.tolist() == [False, True]


def test_a_robot_squeezed_against_the_wall_beside_the_door_has_a_route():
    """From where the route map's disc does not fit (0.3 m off the wall beside the door) a
    robot is routed from the nearest cell where it fits: into the door, not straight at
    its goal across the wall (doorway of 8, seed 24: a robot stood there 20 s). Before, it
    had no route and no route length."""
    routes = door_passages(RADIUS).routes
    squeezed, goal = (-0.4, -0.42), (2.05, -0.38)
    r, c = np.floor(routes.to_cells([squeezed])[0]).astype(int)
    assert not routes.fits[r, c]
    ahead = routes.waypoints([squeezed], [goal])
    assert ahead.routed[0]
    heading = ahead.points[0] - np.array(squeezed)
    assert heading[1] > abs(heading[0])  # along the wall towards the door's opening
    assert np.isfinite(routes.route_length(squeezed, goal))


def test_a_robot_at_the_other_mouth_does_not_take_the_passage_from_an_admitted_one():
    """Robot 0 (west to east) is admitted first; robot 1 (east to west) then steps to
    within ``radius`` of the core's east end (not into it). Before, that counted as inside
    and took the passage for the east while robot 0 was on its way in: they met head on in
    the door (doorway of 8, seed 59: 71 s waiting). Now robot 1 waits, backing out of the
    mouth, and robot 0 goes; in the core itself robot 1 would keep going."""
    passages = door_passages(RADIUS)
    goals = np.array([(2.0, -0.4), (-2.0, 0.4)])
    pref = np.array([(0.5, 0.0), (-0.5, 0.0)])
    first = passages.coordinate(np.array([(-1.3, -0.3), (1.45, 0.3)]), goals, pref,
                                np.ones(2, bool))
    assert first.waiting.tolist() == [False, True]
    mouth = np.array([(-1.4, -0.3), (1.2, 0.3)])
    r, c = np.floor(passages.routes.to_cells([mouth[1]])[0]).astype(int)
    d = passages.passages[0].distance[r, c]
    assert 0.0 < d <= RADIUS
    told = passages.coordinate(mouth, goals, pref, np.ones(2, bool))
    assert told.waiting.tolist() == [False, True]
    assert told.velocities[1, 0] > 0.0 and told.velocities[0, 0] > 0.0


def test_a_batch_goes_in_one_after_another():
    """Robots 0 and 1 (both admitted, west to east) reach the mouth together, one on each
    side of the door: before, both drove in and met head on; now robot 1 (the farther, or
    by id when as near) stands until robot 0 is in, while robot 2, a diameter behind,
    keeps coming."""
    passages = door_passages(RADIUS)
    goals = np.array([(2.0, -0.4), (2.0, 0.4), (2.8, 0.0)])
    positions = np.array([(-0.45, -0.7), (-0.45, 0.7), (-2.4, 0.0)])
    pref = np.array([(0.5, 0.0), (0.5, 0.0), (0.5, 0.0)])
    told = passages.coordinate(positions, goals, pref, np.ones(3, bool))
    assert not told.waiting.any()
    assert told.velocities[0].any() and not told.velocities[1].any()
    assert told.velocities[2].any()
    positions[0] = (-0.05, 0.0)  # robot 0 is in the door
    told = passages.coordinate(positions, goals, pref, np.ones(3, bool))
    assert told.velocities[1].any()


def test_without_goals_waiters_are_told_as_before():
    """cmd_vel mode (no goals): no holding places (where the others go is unknown); a
    waiter within ``hold`` of the core backs away from the mouth, as before."""
    passages = door_passages(RADIUS)
    goals = np.full((2, 2), np.nan)
    positions = np.array([(0.1, 0.0), (-1.6, 0.0)])
    pref = np.array([(-0.5, 0.0), (0.5, 0.0)])
    told = passages.coordinate(positions, goals, pref, np.ones(2, bool))
    assert told.waiting.tolist() == [False, True]
    assert np.allclose(told.velocities[1], (-0.3, 0.0)) and not passages._holds[0]


def test_the_doorway_seed_that_waited_39_s_has_no_long_wait():
    """Seed 9 of the benchmark's doorway with 8 robots, the 100-seed run's longest wait
    (39.4 s; doc/narrow_spaces_bench.md): now all arrive without a contact and no robot
    stands 30 s."""
    scene = make_scene("doorway", 8, 9)
    settings = shipped_settings(scene.time_step)
    result = run_scenario(scene.scenario, settings, control_period=scene.time_step,
                          grid=scene.grid(), timeout=90.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    assert result.longest_wait < 30.0
