"""A scan's points in the global frame, against the scene the test laser saw."""

import numpy as np
import pytest
from scan_world import cast

from planning_collision.tracking import StaticMask, drop_known, drop_near, scan_to_points


def distance_to_discs(points, discs):
    return np.min([np.abs(np.hypot(*(points - (x, y)).T) - r) for x, y, r in discs], axis=0)


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.5])
def test_points_lie_on_what_was_hit(yaw):
    discs = [(2.0, 1.0, 0.25), (-3.0, 0.5, 0.3), (0.5, -4.0, 0.2)]
    pose = (1.0, -0.5, yaw)
    ranges, a0, inc = cast(pose[:2], yaw, 360, 8.0, discs)
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, pose)
    assert scan.full_circle and scan.points.shape[0] > 20
    assert distance_to_discs(scan.points, discs).max() < 1e-9


def test_mounting_offset_moves_the_origin():
    discs = [(3.0, 0.0, 0.3)]
    pose, mount = (0.0, 0.0, np.pi / 2), (0.2, 0.0, -np.pi / 2)  # sensor at (0, 0.2), facing +x
    ranges, a0, inc = cast((0.0, 0.2), 0.0, 720, 8.0, discs)
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, pose, mount)
    np.testing.assert_allclose(scan.origin, (0.0, 0.2), atol=1e-12)
    assert distance_to_discs(scan.points, discs).max() < 1e-9


def test_invalid_ranges_are_dropped():
    ranges = np.array([1.0, np.nan, np.inf, 0.01, 8.0, 9.0, 2.0, -1.0])
    scan = scan_to_points(ranges, 0.0, 0.1, 0.05, 8.0, (0, 0, 0))
    assert scan.beams.tolist() == [0, 6]
    assert not scan.full_circle


def test_static_mask_drops_walls_not_people():
    # A 10 m x 10 m map at 5 cm with a wall along y = -4: the person stands in the open.
    res, grid = 0.05, np.zeros((200, 200), dtype=bool)
    grid[int((-4.0 + 5.0) / res), :] = True
    mask = StaticMask(grid, res, -5.0, -5.0, margin=0.1)
    person = (2.0, 1.0, 0.25)
    ranges, a0, inc = cast((0.0, 0.0), 0.0, 360, 8.0, [person], [(-5, -4, 5, -4)],
                           noise=0.01, rng=np.random.default_rng(3))
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (0, 0, 0))
    kept = mask.drop(scan)
    assert kept.points.shape[0] > 5
    assert distance_to_discs(kept.points, [person]).max() < 0.05  # only the person is left
    assert (np.abs(scan.points[:, 1] + 4.0) < 0.05).sum() > 50  # the wall was seen


def test_mask_outside_the_grid_is_free():
    mask = StaticMask(np.ones((4, 4), dtype=bool), 1.0, 0.0, 0.0, margin=0.0)
    assert mask.occupied([[0.5, 0.5], [-0.5, 0.5], [4.5, 1.0]]).tolist() == [True, False, False]


def test_drop_near_removes_known_agents():
    robot, other, person = (1.0, 0.0, 0.3), (-2.0, 1.0, 0.3), (0.0, 3.0, 0.25)
    ranges, a0, inc = cast((4.0, 0.0), 0.0, 360, 8.0, [robot, other, person])
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (4.0, 0.0, 0.0))
    kept = drop_near(scan, [robot[:2], other[:2]], [0.3, 0.3], margin=0.05)
    assert kept.points.shape[0] > 3
    assert distance_to_discs(kept.points, [person]).max() < 1e-9


def test_mask_checks_its_input():
    with pytest.raises(ValueError, match="resolution"):
        StaticMask(np.zeros((2, 2)), 0.0, 0, 0)
    with pytest.raises(ValueError, match="margin"):
        StaticMask(np.zeros((2, 2)), 0.1, 0, 0, margin=np.nan)


def test_mask_from_polygons_covers_their_edges_only():
    square = np.array([(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)])
    mask = StaticMask.from_polygons([square], resolution=0.05, margin=0.1)
    on_edges = np.array([(1.0, 0.0), (2.0, 1.3), (0.7, 2.0), (0.0, 0.4), (2.08, 1.0)])
    assert mask.occupied(on_edges).all()
    assert not mask.occupied([(1.0, 1.0), (2.3, 1.0), (-0.3, -0.3)]).any()
    assert StaticMask.from_polygons([]) is None


def test_someone_pressed_against_the_scanning_robot_stays_seen():
    # Robot 0 scans at the origin; robot 1 (known from odometry) stands at (0, 2); a person
    # touches robot 0 from behind (0.05 m apart). Seed 43 of the sensed crossings: the person
    # who overtook a robot vanished into its margin and was not braked for.
    rr, pr = 0.3, 0.25
    person = (-(rr + pr + 0.05), 0.0, pr)
    discs = [person, (0.0, 2.0, rr)]
    ranges, a0, inc = cast((0.0, 0.0), 0.0, 360, 8.0, discs)
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (0.0, 0.0, 0.0))
    on_person = distance_to_discs(scan.points, [person]) < 1e-9
    assert on_person.sum() > 20
    kept = drop_known(scan, 0, [(0.0, 0.0), (0.0, 2.0)], [rr, rr], margin=0.15)
    assert distance_to_discs(kept.points, [person]).max() < 1e-9  # the other robot is gone
    assert kept.points.shape[0] == on_person.sum()  # and every point of the person is kept
    # Robot 1's own scan: the person stays too; robot 0's body (with its margin) goes.
    ranges, a0, inc = cast((0.0, 2.0), 0.0, 360, 8.0, [person, (0.0, 0.0, rr)])
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (0.0, 2.0, 0.0))
    kept = drop_known(scan, 1, [(0.0, 0.0), (0.0, 2.0)], [rr, rr], margin=0.15)
    assert np.hypot(*kept.points.T).min() > rr + 0.15
    assert distance_to_discs(kept.points, [person]).max() < 1e-9 and kept.points.shape[0] > 5
    # The scanning robot dropped with the margin too (the old rule) loses the person's
    # nearest points, those the stop needs.
    ranges, a0, inc = cast((0.0, 0.0), 0.0, 360, 8.0, discs)
    scan = scan_to_points(ranges, a0, inc, 0.05, 8.0, (0.0, 0.0, 0.0))
    old = drop_near(scan, [(0.0, 0.0), (0.0, 2.0)], [rr, rr], margin=0.15)
    assert old.points.shape[0] < on_person.sum()
    assert np.hypot(*old.points.T).min() > rr + 0.15
