"""Tracks against the truth of people walking past scanning robots (the issue's targets:
speed error <= 0.15 m/s RMS 0.5 s after first seen; a track whose person is gone disappears
within 0.3 s)."""

import numpy as np
import pytest
from scan_world import cast

from planning_collision.tracking import (
    Tracker,
    TrackerSettings,
    cluster_scan,
    drop_near,
    scan_to_points,
)
from planning_collision.tracking.tracker import discs_of

RATE = 10.0


def scan_once(tracker, t, sensor, people, radius=0.25, noise=0.015, rng=None, beams=360):
    discs = [(x, y, radius) for x, y in people]
    ranges, a0, inc = cast(sensor, 0.0, beams, 8.0, discs, noise=noise, rng=rng)
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (*sensor, 0.0))
    tracker.update(t, cluster_scan(scan, inc))


def walk(seed):
    rng = np.random.default_rng(seed)
    speed = rng.uniform(0.5, 1.5)
    heading = rng.uniform(-np.pi, np.pi)
    start = rng.uniform(-3, 3, 2) + 1.5 * np.array([np.cos(heading + 1.5), 0.0])
    if np.hypot(*start) < 1.2:
        start = start / np.hypot(*start) * 1.2
    return rng, start, speed * np.array([np.cos(heading), np.sin(heading)])


def test_speed_error_half_a_second_after_first_seen():
    errors = []
    for seed in range(40):
        rng, start, velocity = walk(seed)
        tracker = Tracker()
        t0 = 0.0
        for k in range(6):  # seen at 0.0 .. 0.5 s
            t = t0 + k / RATE
            scan_once(tracker, t, (0.0, 0.0), [start + velocity * t],
                      noise=rng.uniform(0.01, 0.02), rng=rng)
        tracks = tracker.tracks(0.5)
        assert tracks.count == 1
        errors.append(np.hypot(*(tracks.velocities[0] - velocity)))
        assert np.hypot(*(tracks.positions[0] - (start + velocity * 0.5))) < 0.1
    rms = float(np.sqrt(np.mean(np.square(errors))))
    print(f"speed error 0.5 s after first seen: {rms:.3f} m/s RMS over {len(errors)} walks")
    assert rms <= 0.15


def test_a_person_who_is_gone_disappears_within_0_3_s():
    tracker = Tracker()
    rng = np.random.default_rng(1)
    for k in range(20):
        scan_once(tracker, k / RATE, (0.0, 0.0), [(2.0 + 0.1 * k, 1.0)], rng=rng)
    left = 19 / RATE
    assert tracker.tracks(left).count == 1
    t = left
    while tracker.tracks(t).count:
        t += 1 / RATE
        scan_once(tracker, t, (0.0, 0.0), [], rng=rng)  # the person walked out of sight
    assert t - left <= 0.3 + 1e-9
    assert len(tracker) == 0  # forgotten, not only hidden


def test_tracks_are_shared_between_robots_and_keep_their_identity():
    tracker = Tracker()
    rng = np.random.default_rng(2)
    people = [np.array([-2.0, 0.5]), np.array([2.0, -0.5])]
    velocities = [np.array([0.8, 0.0]), np.array([-0.8, 0.0])]
    robots = [(0.0, -3.0), (0.0, 3.0)]
    ids = None
    for k in range(30):
        for j, robot in enumerate(robots):  # the two robots scan half a period apart
            t = k / RATE + j * 0.05
            at = [p + v * t for p, v in zip(people, velocities, strict=True)]
            scan_once(tracker, t, robot, at, rng=rng)
        tracks = tracker.tracks(t)
        if k >= 2:
            # Each person has a track where they are (while one hides the other from a
            # robot, a sliver of the hidden one may start a short-lived extra track).
            now = []
            for person in at:
                error = np.hypot(*(tracks.positions - person).T)
                assert error.min() < 0.2
                now.append(int(tracks.ids[np.argmin(error)]))
            assert ids is None or tuple(now) == ids  # they pass each other, identities stay
            ids = tuple(now)
    assert len(set(ids)) == 2


def test_robots_known_from_odometry_are_not_tracked():
    tracker = Tracker()
    robot, other = (0.0, 0.0), (2.0, 0.0)
    for k in range(5):
        ranges, a0, inc = cast(robot, 0.0, 360, 8.0, [(*other, 0.3), (-2.0, 1.0, 0.25)])
        scan = drop_near(scan_to_points(ranges, a0, inc, 0.05, 8.0, (*robot, 0.0)),
                         [robot, other], [0.3, 0.3], margin=0.1)
        tracker.update(k / RATE, cluster_scan(scan, inc))
    tracks = tracker.tracks(0.4)
    assert tracks.count == 1 and np.hypot(*(tracks.positions[0] - (-2.0, 1.0))) < 0.1


def test_discs_move_with_a_walking_person_and_stand_for_a_still_one():
    tracker = Tracker()
    rng = np.random.default_rng(4)
    for k in range(15):
        t = k / RATE
        scan_once(tracker, t, (0.0, 0.0), [(2.0, -2.0 + t), (-2.0, 2.0)], rng=rng)
    discs = tracker.discs(1.4)
    moving = np.argmin(discs.positions[:, 0] > 0)
    walking = 1 - moving
    assert np.hypot(*(discs.velocities[walking] - (0.0, 1.0))) < 0.2
    assert np.all(discs.velocities[moving] == 0.0)
    assert np.all(discs.radii >= 0.25)  # grown by the uncertainty, never shrunk


def test_a_new_track_is_grown_by_its_velocity_uncertainty():
    tracker = Tracker()
    scan_once(tracker, 0.0, (0.0, 0.0), [(2.0, 0.0)])
    scan_once(tracker, 0.1, (0.0, 0.0), [(2.0, 0.0)])
    young = discs_of(tracker.tracks(0.1), tracker.settings).radii[0]
    for k in range(2, 30):
        scan_once(tracker, k / RATE, (0.0, 0.0), [(2.0, 0.0)])
    old = discs_of(tracker.tracks(2.9), tracker.settings).radii[0]
    assert young > old + 0.05


def test_settings_are_checked_by_name():
    with pytest.raises(ValueError, match="lost_after"):
        Tracker(TrackerSettings(lost_after=0.0))
    with pytest.raises(ValueError, match="confirm_hits"):
        Tracker(TrackerSettings(confirm_hits=1.5))


def test_a_track_seen_once_is_avoided_standing_but_not_published():
    tracker = Tracker()
    scan_once(tracker, 0.0, (0.0, 0.0), [(2.0, 0.0)])
    assert tracker.tracks(0.05).count == 0  # not confirmed yet
    discs = tracker.discs(0.05)
    assert discs.count == 1 and np.all(discs.velocities == 0.0)
    assert discs.radii[0] > 0.25 + 0.3  # its unknown velocity keeps the robots further off
