"""ros/point_clouds.py without DDS: what xyz_cloud packs, cloud_points reads back."""

from __future__ import annotations

import numpy as np
import pytest

from planning_collision.ros.point_clouds import cloud_points, xyz_cloud


def test_an_organised_cloud_round_trips_with_its_nans():
    rng = np.random.default_rng(0)
    xyz = rng.uniform(-5, 5, (4, 7, 3)).astype(np.float32)
    xyz[1, 2] = np.nan
    msg = xyz_cloud(xyz, "r/base_link")
    assert (msg.height, msg.width, msg.row_step, msg.is_dense) == (4, 7, 84, False)
    assert msg.header.frame_id == "r/base_link"
    assert np.array_equal(cloud_points(msg), xyz.reshape(-1, 3).astype(np.float64),
                          equal_nan=True)


def test_a_flat_list_of_points_is_one_dense_row():
    msg = xyz_cloud(np.arange(12.0).reshape(4, 3), "f")
    assert (msg.height, msg.width, msg.is_dense) == (1, 4, True)
    assert np.array_equal(cloud_points(msg), np.arange(12.0).reshape(4, 3))


def test_other_shapes_are_refused():
    with pytest.raises(ValueError, match="points must be"):
        xyz_cloud(np.zeros((3, 2)), "f")
