"""Clusters of one scan against the discs the test laser saw."""

import numpy as np
import pytest
from scan_world import cast

from planning_collision.tracking import cluster_scan, scan_to_points


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("beams", [360, 1080])
def test_each_disc_is_one_cluster_near_the_truth(seed, beams):
    rng = np.random.default_rng(seed)
    # Discs on a ring around the sensor, 1.2 m to 6 m away, far enough apart to be told apart.
    count = int(rng.integers(1, 7))
    bearings = np.linspace(0, 2 * np.pi, count, endpoint=False) + rng.uniform(0, 1)
    dist = rng.uniform(1.2, 6.0, count)
    radii = rng.uniform(0.15, 0.35, count)
    discs = [(d * np.cos(b), d * np.sin(b), r)
             for b, d, r in zip(bearings, dist, radii, strict=True)]
    ranges, a0, inc = cast((0, 0), 0.0, beams, 8.0, discs, noise=0.015, rng=rng)
    clusters = cluster_scan(scan_to_points(ranges, a0, inc, 0.05, 8.0, (0, 0, 0)), inc)
    assert clusters.count == count
    for x, y, r in discs:
        error = np.hypot(*(clusters.centres - (x, y)).T)
        j = int(np.argmin(error))
        assert error[j] < 0.08
        assert abs(clusters.radii[j] - r) < 0.08


def test_a_disc_across_the_first_and_last_beam_is_one_cluster():
    # angle_min = -pi: the disc straddles the seam at angle pi.
    ranges, a0, inc = cast((0, 0), 0.0, 360, 8.0, [(-3.0, 0.0, 0.3)])
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (0, 0, 0))
    assert scan.beams[0] == 0 and scan.beams[-1] == 359
    clusters = cluster_scan(scan, inc)
    assert clusters.count == 1
    assert np.hypot(*(clusters.centres[0] - (-3.0, 0.0))) < 0.05


def test_single_returns_and_walls_are_not_clusters():
    ranges = np.full(360, 8.0)
    ranges[10] = 2.0  # one stray return
    inc = 2 * np.pi / 360
    scan = scan_to_points(ranges, -np.pi, inc, 0.05, 8.0, (0, 0, 0))
    assert cluster_scan(scan, inc).count == 0
    wall, a0, inc = cast((0, 0), 0.0, 360, 8.0, segments=[(-4, 2, 4, 2)])
    assert cluster_scan(scan_to_points(wall, a0, inc, 0.05, 8.0, (0, 0, 0)), inc).count == 0


def test_empty_scan():
    scan = scan_to_points(np.full(360, np.inf), -np.pi, np.pi / 180, 0.05, 8.0, (0, 0, 0))
    assert cluster_scan(scan, np.pi / 180).count == 0
