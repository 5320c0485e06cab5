"""A person walking steadily at 0.4 m/s (the demo's person1) is avoided as walking, not as a
standing disc (issue #25, the demo seen only by scans).

ORCA gets a track's velocity only while its speed exceeds twice the velocity's standard
deviation (tracker.py: discs_of). With the default accel_noise (0.5), the constant-velocity
filter's velocity deviation settles at about 0.23-0.29 m/s however long the track is seen
(its process noise sets a floor: 0.29 m/s at one 10 Hz laser), so anyone slower than about
0.6 m/s is avoided standing: here a 0.4 or 0.5 m/s walker in every scan after the first 1.5 s,
a 0.6 m/s one in half of them (with accel_noise 0.2: 0.4 m/s in 92 %; with 0.1: none). In
the demo's room the robots then cross in front of the person (to ORCA they stand still), the
brake stops them in the person's path, and the person walks into them: part of the scanned
demo's contacts (doc/sensors.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scan_world import cast

from planning_collision.tracking import Tracker, TrackerSettings, cluster_scan, scan_to_points


def walked_velocities(settings: TrackerSettings, speed: float = 0.4, seconds: float = 4.0,
                      rate_hz: float = 10.0) -> np.ndarray:
    """The velocity ORCA's disc carries at each scan (after the first 1.5 s) of a person
    (radius 0.3) walking at ``speed`` along +x, 2 m beside a standing 360-beam laser with 1 cm
    of range noise."""
    tracker = Tracker(settings)
    rng = np.random.default_rng(4)
    out = []
    for k in range(int(seconds * rate_hz)):
        t = k / rate_hz
        person = (-1.0 + speed * t, 2.0, 0.3)
        ranges, angle_min, inc = cast((0.0, 0.0), 0.0, 360, 8.0, [person], noise=0.01,
                                      rng=rng)
        scan = scan_to_points(ranges, angle_min, inc, 0.05, 8.0, (0.0, 0.0, 0.0))
        tracker.update(t, cluster_scan(scan, inc))
        discs = tracker.discs(t)
        if t >= 1.5:
            assert discs.count == 1
            out.append(discs.velocities[0])
    return np.array(out)


def test_a_brisk_walker_is_avoided_walking():
    v = walked_velocities(TrackerSettings(), speed=1.0)
    assert np.all(np.abs(v[:, 0] - 1.0) < 0.3) and np.all(np.abs(v[:, 1]) < 0.3)


@pytest.mark.xfail(strict=True, reason="issue #25, open: with the default accel_noise the "
                   "velocity's deviation never falls below ~0.25 m/s, so discs_of's 2-sigma "
                   "rule stands a steady 0.4 m/s walker still in every scan")
def test_a_slow_steady_walker_is_avoided_walking():
    v = walked_velocities(TrackerSettings(), speed=0.4)
    walking = np.hypot(v[:, 0] - 0.4, v[:, 1]) < 0.15
    assert walking.mean() >= 0.9, f"walking in {walking.mean():.0%} of the scans"


def test_with_less_process_noise_a_slow_walker_is_avoided_walking():
    """What the scanned demo's orca parameters would set (track_accel_noise 0.1)."""
    v = walked_velocities(TrackerSettings(accel_noise=0.1), speed=0.4)
    walking = np.hypot(v[:, 0] - 0.4, v[:, 1]) < 0.15
    assert walking.mean() >= 0.9, f"walking in {walking.mean():.0%} of the scans"
