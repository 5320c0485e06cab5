"""A depth camera's cloud as scan points (tracking/scan_points.py: cloud_to_points): the height
band, one nearest point per bearing, the global frame, and on to clusters and tracks, against
the simulated camera's truth (sim/depth_camera.py)."""

import math

import numpy as np
import pytest

from planning_collision.sim.depth_camera import CameraSpec, simulate_cloud
from planning_collision.tracking import Tracker, cluster_scan
from planning_collision.tracking.scan_points import CLOUD_BINS, cloud_to_points

CAMERA = CameraSpec(beams=160, rows=12, fov=1.5, elevation_min=-0.6, elevation_max=0.2,
                    height=0.4, range_max=6.0, offset=(0.15, 0.0, 0.0))


def to_world(pose, xyz):
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    return np.column_stack((x + c * xyz[:, 0] - s * xyz[:, 1], y + s * xyz[:, 0] + c * xyz[:, 1]))


@pytest.mark.parametrize("yaw", [0.0, 1.1, -2.6])
def test_the_band_keeps_the_people_not_the_floor_and_each_point_lies_on_one(yaw):
    pose = (1.0, -0.5, yaw)
    people = np.array([[2.5, 0.3], [3.5, -1.0]])
    c, s = math.cos(yaw), math.sin(yaw)
    centres = pose[:2] + people @ np.array([[c, s], [-s, c]])  # placed in front of the robot
    xyz = simulate_cloud(pose, CAMERA, None, centres, [0.25, 0.3]).reshape(-1, 3)
    assert (np.abs(xyz[:, 2]) < 1e-5).sum() > 500  # the floor is in the cloud
    scan, increment = cloud_to_points(xyz, pose, 0.05, 2.0)
    assert increment == pytest.approx(2 * math.pi / CLOUD_BINS)
    assert scan.points.shape[0] > 20 and np.all(np.diff(scan.beams) > 0)
    on = np.min([np.abs(np.hypot(*(scan.points - c_).T) - r)
                 for c_, r in zip(centres, [0.25, 0.3], strict=True)], axis=0)
    assert on.max() < 1e-5  # no floor point passed the band
    np.testing.assert_allclose(scan.origin, pose[:2])
    # each bin's point is the nearest of the band's points in that bin (brute force)
    band = xyz[np.isfinite(xyz).all(axis=1) & (xyz[:, 2] >= 0.05) & (xyz[:, 2] <= 2.0)]
    bins = np.floor((np.arctan2(band[:, 1], band[:, 0]) + math.pi) / increment).astype(int)
    for b, p in zip(scan.beams, scan.points, strict=True):
        r = np.hypot(band[bins == b, 0], band[bins == b, 1])
        assert np.hypot(*(p - pose[:2])) == pytest.approx(r.min(), abs=1e-6)  # float32


def test_clusters_of_a_cloud_are_the_people():
    pose = (0.0, 0.0, 0.0)
    centres = np.array([[2.0, 0.5], [3.0, -0.8], [4.5, 2.4]])
    xyz = simulate_cloud(pose, CAMERA, None, centres, [0.25] * 3,
                         rng=np.random.default_rng(2)).reshape(-1, 3)
    scan, increment = cloud_to_points(xyz, pose, 0.05, 2.0)
    clusters = cluster_scan(scan, increment)
    assert clusters.count == 3
    found = clusters.centres[np.argsort(clusters.centres[:, 0])]
    assert np.hypot(*(found - centres).T).max() < 0.1


def test_a_walking_person_seen_by_clouds_gets_a_track_with_its_velocity():
    tracker, rng = Tracker(), np.random.default_rng(5)
    velocity = np.array([0.0, 1.0])
    for k in range(8):
        t = 0.1 * k
        person = np.array([3.0, -1.0]) + velocity * t
        xyz = simulate_cloud((0, 0, 0), CameraSpec(noise=0.015), None, [person], [0.25],
                             rng=rng)
        scan, increment = cloud_to_points(xyz.reshape(-1, 3), (0, 0, 0), 0.05, 2.0)
        tracker.update(t, cluster_scan(scan, increment))
    tracks = tracker.tracks(0.7)
    assert tracks.count == 1
    assert np.hypot(*(tracks.velocities[0] - velocity)) < 0.2


def test_nothing_in_the_band_nans_and_an_empty_cloud_give_no_points():
    floor_and_nan = np.array([[1.0, 0.0, 0.0], [np.nan, 1.0, 0.5], [2.0, 0.0, 3.0]])
    for xyz in (floor_and_nan, np.zeros((0, 3))):
        scan, _ = cloud_to_points(xyz, (0, 0, 0), 0.05, 2.0)
        assert scan.points.shape == (0, 2) and scan.beams.size == 0
    scan, _ = cloud_to_points(floor_and_nan, (0, 0, 0), -0.1, 2.0)
    assert scan.points.tolist() == [[1.0, 0.0]]
