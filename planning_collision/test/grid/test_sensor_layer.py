"""The sensor layer (grid/sensor_layer.py): marking, clearing along each ray (against
scikit-image's Bresenham line), decay, the window's edges, and its snapshot as a GridMap."""

from __future__ import annotations

import numpy as np
import pytest
from skimage.draw import line as sk_line

from planning_collision.geometry import ConvexShape
from planning_collision.grid import GridMap, footprint_collides, line_of_sight_batch
from planning_collision.grid.sensor_layer import SensorLayer, scan_rays


def layer(decay=0.5):
    # 10 m x 8 m at 0.1 m, lower-left corner at (-5, -4): cell (i, j) covers
    # [-5 + 0.1 i, -5 + 0.1 (i + 1)) x [-4 + 0.1 j, ...)
    return SensorLayer(10.0, 8.0, 0.1, (-5.0, -4.0), decay)


def cell_centre(i, j):
    return -5.0 + 0.1 * i + 0.05, -4.0 + 0.1 * j + 0.05


def test_a_return_is_marked_and_decays():
    s = layer(decay=0.5)
    assert s.shape == (80, 100)
    s.add_rays(cell_centre(50, 40), [cell_centre(70, 40)], [True], stamp=10.0)
    occupied = s.occupied(10.0)
    assert np.argwhere(occupied).tolist() == [[40, 70]]  # (row, column)
    assert s.occupied(10.5)[40, 70]
    assert not s.occupied(10.51).any()


def test_clearing_follows_bresenham_and_spares_the_return():
    rng = np.random.default_rng(5)
    for _ in range(200):
        s = layer()
        s.last_seen[:] = 0.0  # everything marked at t = 0
        a = rng.integers(0, [100, 80])
        b = rng.integers(0, [100, 80])
        hit = bool(rng.integers(2))
        s.add_rays(cell_centre(*a), [cell_centre(*b)], [hit], stamp=1.0)
        rr, cc = sk_line(int(a[1]), int(a[0]), int(b[1]), int(b[0]))
        expected = np.zeros(s.shape, bool)
        expected[rr, cc] = True
        cleared = np.isneginf(s.last_seen)
        if hit:
            expected[b[1], b[0]] = False
            assert s.last_seen[b[1], b[0]] == 1.0
        assert np.array_equal(cleared, expected)


def test_a_newer_mark_is_not_cleared_by_an_older_ray():
    s = layer()
    s.add_rays(cell_centre(60, 30), [cell_centre(60, 40)], [True], stamp=5.0)
    s.add_rays(cell_centre(40, 40), [cell_centre(80, 40)], [False], stamp=4.0)
    assert s.occupied(5.0)[40, 60]
    s.add_rays(cell_centre(40, 40), [cell_centre(80, 40)], [False], stamp=5.1)
    assert not s.occupied(5.1).any()


def test_the_beams_of_one_scan_do_not_erase_each_others_returns():
    s = layer()
    # beam 0 returns at (60, 40); beam 1 passes through that cell to (80, 40)
    s.add_rays(cell_centre(40, 40), [cell_centre(60, 40), cell_centre(80, 40)], [True, False],
               stamp=1.0)
    assert s.occupied(1.0)[40, 60]
    assert s.occupied(1.0).sum() == 1


def test_a_person_walking_away_leaves_no_ghost():
    s = layer(decay=10.0)  # a long decay: only clearing can remove the old marks
    sensor = cell_centre(10, 40)
    for k in range(20):
        person = cell_centre(30 + k, 40)
        s.add_rays(sensor, [person], [True], stamp=0.1 * k)
    assert np.argwhere(s.occupied(1.9)).tolist() == [[40, 49]]


def test_rays_are_clipped_to_the_window():
    s = layer()
    s.last_seen[:] = 0.0
    # from far left of the window to far right, along row 40: the whole row is cleared, and
    # the return beyond the window marks nothing
    s.add_rays((-50.0, cell_centre(0, 40)[1]), [(50.0, cell_centre(0, 40)[1])], [True],
               stamp=1.0)
    cleared = np.isneginf(s.last_seen)
    assert cleared[40].all() and cleared.sum() == 100
    # a ray that misses the window changes nothing
    s.add_rays((-50.0, 50.0), [(50.0, 50.0)], [True], stamp=2.0)
    assert np.isneginf(s.last_seen).sum() == 100


def test_points_are_marked_without_clearing():
    s = layer()
    s.add_points([cell_centre(3, 4), cell_centre(5, 6), (100.0, 100.0)], stamp=2.0)
    assert sorted(map(tuple, np.argwhere(s.occupied(2.0)).tolist())) == [(4, 3), (6, 5)]


def test_the_snapshot_is_a_map_the_queries_read():
    s = layer()
    s.add_rays(cell_centre(50, 40), [cell_centre(70, 40)], [True], stamp=1.0)
    snap = s.snapshot(1.2)
    assert isinstance(snap, GridMap)
    assert snap.origin == (-5.0, -4.0, 0.0) and snap.resolution == 0.1
    assert snap.is_blocked([[70, 40]])[0] and not snap.is_blocked([[69, 40]])[0]
    clear, _ = line_of_sight_batch(snap, [[50, 40], [50, 42]], [[90, 40], [90, 42]])
    assert clear.tolist() == [False, True]
    disc = ConvexShape.circle((0.0, 0.0), 0.2)
    poses = np.array([[cell_centre(70, 40)[0] - 0.2, cell_centre(70, 40)[1], 0.0],
                      [0.0, 3.0, 0.0]])
    assert footprint_collides(snap, disc, poses, out_of_map="free").tolist() == [True, False]
    assert not s.snapshot(2.0).blocked_mask().any()  # decayed


@pytest.mark.parametrize("kwargs, message", [
    ({"resolution": 0.0}, "resolution"),
    ({"width": -1.0}, "width"),
    ({"decay": 0.0}, "decay"),
    ({"width": 1e6, "height": 1e6}, "cells"),
])
def test_bad_windows_are_refused_by_name(kwargs, message):
    args = {"width": 10.0, "height": 8.0, "resolution": 0.1, "decay": 0.5, **kwargs}
    with pytest.raises(ValueError, match=message):
        SensorLayer(**args)


def test_bad_rays_are_refused_by_name():
    s = layer()
    with pytest.raises(ValueError, match="hit"):
        s.add_rays((0, 0), [(1, 1), (2, 2)], [True], 0.0)
    with pytest.raises(ValueError, match="ends"):
        s.add_rays((0, 0), [(1, float("nan"))], [True], 0.0)
    with pytest.raises(ValueError, match="stamp"):
        s.add_rays((0, 0), [(1, 1)], [True], float("inf"))


def test_scan_rays_follow_rep117():
    ranges = [1.0, np.inf, 5.0, 0.01, -np.inf, np.nan, 2.0]
    origin, ends, hit = scan_rays((1.0, 2.0, np.pi / 2), -np.pi / 2, np.pi / 6, ranges,
                                  0.05, 5.0)
    assert origin.tolist() == [1.0, 2.0]
    # kept: beams 0 (return), 1 (+inf: clear to 5 m), 2 (at range_max: clear), 6 (return)
    assert hit.tolist() == [True, False, False, True]
    angles = np.pi / 2 - np.pi / 2 + np.pi / 6 * np.array([0, 1, 2, 6])
    lengths = np.array([1.0, 5.0, 5.0, 2.0])
    want = np.column_stack([1.0 + lengths * np.cos(angles), 2.0 + lengths * np.sin(angles)])
    np.testing.assert_allclose(ends, want, atol=1e-12)
