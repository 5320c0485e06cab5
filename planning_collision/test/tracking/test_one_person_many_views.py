"""One person seen by several robots' lasers is one track (issue #25: the demo's GIF showed
one person as two or three tracks at once).

Three robots scan a person walking past a fourth robot that stands beside the person's line
and is known from odometry, at interleaved stamps, into one tracker, as orca_node does: each
scan is placed, stripped of the known robots' points (``drop_known``, as orca_node's margin)
and clustered. Near the standing robot one laser sees only part of the person (the rest is
hidden behind the robot or dropped with its points): that partial arc's centre, placed behind
it by its own width, lies up to a radius nearer the viewer, outside the track's tight gate, and
started a second track, which the other robots' clusters then kept alive (in 30-63 % of the
scans at 0.8-1.2 m/s before the fix). Two people side by side or passing each other stay two
tracks."""

from __future__ import annotations

import numpy as np
import pytest
from scan_world import cast

from planning_collision.tracking import (
    Tracker,
    TrackerSettings,
    cluster_scan,
    drop_known,
    scan_to_points,
)

SCANNERS = [(0.0, -2.5), (0.5, 2.5), (-2.0, 2.0)]
ROBOTS = np.array(SCANNERS + [(0.2, 0.55)])  # the fourth stands beside the person's line
ROBOT_RADIUS = 0.25


def confirmed_counts(people, seconds: float = 5.0, seed: int = 1) -> np.ndarray:
    """The number of confirmed tracks after each scan (after the first 0.5 s) of ``people``,
    a list of functions of time giving (x, y, radius), seen by the three scanning robots."""
    tracker = Tracker(TrackerSettings())
    rng = np.random.default_rng(seed)
    counts = []
    for k in range(int(seconds * 10)):
        for j, (sx, sy) in enumerate(SCANNERS):
            t = k / 10 + j * 0.1 / len(SCANNERS)
            discs = [p(t) for p in people] + [(x, y, ROBOT_RADIUS)
                                              for i, (x, y) in enumerate(ROBOTS) if i != j]
            ranges, a0, inc = cast((sx, sy), 0.0, 360, 8.0, discs, noise=0.015, rng=rng)
            scan = scan_to_points(ranges, a0, inc, 0.05, 7.99, (sx, sy, 0.0))
            scan = drop_known(scan, j, ROBOTS, np.full(len(ROBOTS), ROBOT_RADIUS), 0.1)
            tracker.update(t, cluster_scan(scan, inc))
            if t > 0.5:
                counts.append(tracker.tracks(t).count)
    return np.array(counts)


@pytest.mark.parametrize("speed", [0.0, 0.4, 0.8, 1.2])
@pytest.mark.parametrize("radius", [0.25, 0.3])
def test_one_person_seen_by_three_robots_is_one_track(speed, radius):
    for seed in (1, 2):
        counts = confirmed_counts([lambda t: (-2.0 + speed * t, 0.0, radius)], seed=seed)
        assert np.all(counts == 1), (f"seed {seed}: {np.mean(counts != 1):.0%} of the scans "
                                     f"with {sorted(set(counts.tolist()))} tracks")


def test_two_people_side_by_side_stay_two_tracks():
    """Walking together 0.9 m apart (centres), 0.3 m between their bodies. (Closer than
    about cluster_gap plus the beams' spread, some lasers see the two as one cluster, which
    still starts a third track: a limit of the clustering, doc/sensors.md.)"""
    counts = confirmed_counts([lambda t: (-2.0 + 0.8 * t, -0.6, 0.3),
                               lambda t: (-2.0 + 0.8 * t, -1.5, 0.3)])
    assert np.mean(counts == 2) >= 0.95, np.bincount(counts)


def test_two_people_passing_each_other_stay_two_tracks():
    """Head-on along two lines 0.65 m apart (0.05 m between their bodies as they pass), at
    1.6 m/s of closing speed."""
    counts = confirmed_counts([lambda t: (-2.0 + 0.8 * t, -0.6, 0.3),
                               lambda t: (2.0 - 0.8 * t, -1.25, 0.3)])
    assert np.mean(counts == 2) >= 0.95, np.bincount(counts)
