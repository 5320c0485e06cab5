"""A real overlap under ``keep_apart``: the robot flees at full speed instead of freezing.

Issue #24.  When a person (who avoids nobody) has walked into a robot, or a delay let two
discs overlap, the separation half-plane asked the robot to part within one step:
``overlap / time_step``, far above its max speed.  The hard lines then had no common
velocity, the least-violation program kept a partial result, and the separation scaling
brought it to zero: the robot stood while the person kept walking into it.
"""

import math

import numpy as np
import pytest

from planning_collision.orca import build_obstacles, compute_velocities

ROBOT_SPEED = 0.6
PERSON_SPEED = 0.4
RADIUS = 0.3
STEP = 0.05


def _step(positions, velocities, prefs, obstacles=None, max_speed=None):
    """One control step: the robot (0) reacts with keep_apart, the person (1) walks on."""
    if max_speed is None:
        max_speed = np.array([ROBOT_SPEED, PERSON_SPEED])
    return compute_velocities(
        positions, velocities, prefs, time_step=STEP, radius=RADIUS, max_speed=max_speed,
        neighbor_dist=3.0, max_neighbors=10, time_horizon=2.0, time_horizon_obst=1.0,
        responsibility=np.array([0.5, 1.0]), reactive=np.array([True, False]),
        keep_apart=True, obstacles=obstacles)


@pytest.mark.parametrize("overlap", [0.04, 0.1, 0.3])
@pytest.mark.parametrize("robot_pref", [(0.0, 0.0), (0.5, 0.1)])
def test_an_overlapped_robot_flees_at_full_speed(overlap, robot_pref):
    """The person overlaps the robot by ``overlap`` and walks at it; the robot stands at its
    goal or wants to go past the person.  Its new velocity points away from the person at
    its max speed (parting at overlap / step would need 0.8-6 m/s)."""
    positions = np.array([[0.0, 0.0], [2 * RADIUS - overlap, 0.0]])
    velocities = np.array([[0.0, 0.0], [-PERSON_SPEED, 0.0]])
    prefs = np.array([robot_pref, [-PERSON_SPEED, 0.0]])
    result = _step(positions, velocities, prefs)
    v = result.velocities[0]
    speed = math.hypot(*v)
    assert speed == pytest.approx(ROBOT_SPEED, rel=1e-5)
    assert v[0] / speed < -0.999  # straight away from the person (at +x)
    assert np.allclose(result.velocities[1], [-PERSON_SPEED, 0.0])  # the person walks on


def test_the_overlap_shrinks_while_the_person_keeps_walking():
    """Over a few steps the robot gets out of the way: the gap grows every step until the
    discs are apart, and the robot never stands."""
    positions = np.array([[0.0, 0.0], [2 * RADIUS - 0.2, 0.05]])
    velocities = np.array([[0.0, 0.0], [-PERSON_SPEED, 0.0]])
    prefs = np.array([[0.0, 0.0], [-PERSON_SPEED, 0.0]])
    gaps = [np.linalg.norm(positions[1] - positions[0]) - 2 * RADIUS]
    for _ in range(40):
        result = _step(positions, velocities, prefs)
        velocities = result.velocities
        if gaps[-1] < 0.0:
            assert np.linalg.norm(velocities[0]) > 0.99 * ROBOT_SPEED
        positions = positions + STEP * velocities
        gaps.append(np.linalg.norm(positions[1] - positions[0]) - 2 * RADIUS)
    overlapping = [g for g in gaps if g < 0.0]
    assert np.all(np.diff(overlapping) > 0.0)  # every overlapped step parts the pair
    assert gaps[-1] > -1e-9  # apart (or touching) by the end


def test_two_overlaps_from_opposite_sides_keep_the_robot_between_them():
    """Pressed from both sides by two people, no velocity parts both pairs; the robot
    gets a finite velocity within its speed (the least-violation answer), not a crash."""
    positions = np.array([[0.0, 0.0], [0.5, 0.0], [-0.5, 0.0]])
    velocities = np.array([[0.0, 0.0], [-PERSON_SPEED, 0.0], [PERSON_SPEED, 0.0]])
    prefs = velocities.copy()
    result = compute_velocities(
        positions, velocities, prefs, time_step=STEP, radius=RADIUS,
        max_speed=np.array([ROBOT_SPEED, PERSON_SPEED, PERSON_SPEED]), neighbor_dist=3.0,
        max_neighbors=10, time_horizon=2.0, time_horizon_obst=1.0,
        responsibility=np.array([0.5, 1.0, 1.0]), reactive=np.array([True, False, False]),
        keep_apart=True)
    v = result.velocities[0]
    assert np.all(np.isfinite(v))
    assert math.hypot(*v) <= ROBOT_SPEED * (1 + 1e-12)


def test_an_overlapped_robot_against_a_wall_does_not_drive_into_it():
    """The obstacle half-planes stay hard: a robot overlapped by a person, with a wall
    right behind it, slides along the wall instead of fleeing through it."""
    wall = build_obstacles([np.array([[-0.4, -5.0], [-0.4, 5.0], [-0.6, 5.0], [-0.6, -5.0]])])
    positions = np.array([[0.0, 0.0], [0.5, 0.1]])
    velocities = np.array([[0.0, 0.0], [-PERSON_SPEED, 0.0]])
    prefs = velocities.copy()
    result = _step(positions, velocities, prefs, obstacles=wall)
    v = result.velocities[0]
    assert v[0] <= 1e-9  # not towards the person (at +x)
    # towards the wall (0.1 m behind) at most gap / time_horizon_obst, RVO2's obstacle rule
    assert v[0] >= -0.1 / 1.0 - 1e-9
