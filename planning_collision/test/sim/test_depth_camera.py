"""The simulated depth camera (sim/depth_camera.py) against the laser's truth, the floor's
geometry and shapely."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import LineString, Point

from planning_collision.geometry import ConvexShape
from planning_collision.sim.depth_camera import CameraSpec, simulate_cloud, true_cloud
from planning_collision.sim.laser import StaticScene, sensor_pose, true_ranges


def world_points(pose, cloud):
    """The cloud's (rows, beams, 3) points from the robot's frame to the world."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    out = np.array(cloud, dtype=np.float64)
    out[..., 0] = x + c * cloud[..., 0] - s * cloud[..., 1]
    out[..., 1] = y + s * cloud[..., 0] + c * cloud[..., 1]
    return out


def test_an_empty_floor_returns_the_floor_at_the_height_and_elevation_of_each_row():
    spec = CameraSpec(beams=21, rows=7, fov=1.2, elevation_min=-0.9, elevation_max=0.3,
                      height=0.5, range_min=0.1, range_max=4.0)
    cloud = simulate_cloud((1.0, -2.0, 0.7), spec)
    for e, row in zip(spec.elevations(), cloud, strict=True):
        if e < 0 and 0.5 / math.sin(-e) <= 4.0:
            assert np.allclose(row[:, 2], 0.0, atol=1e-6)  # on the floor
            assert np.allclose(np.hypot(row[:, 0], row[:, 1]), 0.5 / math.tan(-e), rtol=1e-6)
            bearings = np.arctan2(row[:, 1], row[:, 0])
            assert np.allclose(bearings, np.linspace(-0.6, 0.6, 21), atol=1e-6)
        else:
            assert np.isnan(row).all()  # looking up, or the floor beyond range_max


def test_wall_points_lie_where_the_laser_hits_and_floor_points_before_it():
    rng = np.random.default_rng(4)
    seen = {"wall": 0, "floor": 0}
    for trial in range(20):
        shapes = [ConvexShape.polygon(pentagon(rng)) for _ in range(4)]
        scene = StaticScene(None, shapes)
        centres = rng.uniform(-4, 4, (5, 2))
        radii = rng.uniform(0.1, 0.4, 5)
        pose = (*rng.uniform(-1, 1, 2), rng.uniform(-math.pi, math.pi))
        spec = CameraSpec(beams=40, rows=9, fov=2.0, elevation_min=-0.5, elevation_max=0.4,
                          height=rng.uniform(0.2, 0.8), range_min=0.05, range_max=6.0,
                          offset=(0.2, -0.05, rng.uniform(-0.3, 0.3)))
        cloud = simulate_cloud(pose, spec, scene, centres, radii)
        laser = true_ranges(pose, spec.columns(), scene, centres, radii)
        sx, sy, _ = sensor_pose(pose, spec.columns())
        world = world_points(pose, cloud)
        flat = np.hypot(world[..., 0] - sx, world[..., 1] - sy)
        floor = np.abs(world[..., 2]) < 1e-5
        wall = np.isfinite(world[..., 2]) & ~floor
        seen["wall"] += int(wall.sum())
        seen["floor"] += int(floor.sum())
        columns = np.broadcast_to(laser, flat.shape)
        assert np.allclose(flat[wall], columns[wall], atol=1e-5), trial
        assert (flat[floor] <= columns[floor] + 1e-5).all(), trial
        # the height of a wall point follows the ray's elevation
        e = np.broadcast_to(spec.elevations()[:, None], flat.shape)
        assert np.allclose(world[..., 2][wall], spec.height + flat[wall] * np.tan(e[wall]),
                           atol=1e-5)
        # every wall point lies on a disc's circle or an obstacle's edge (shapely)
        geometries = [Point(c).buffer(r, 256) for c, r in zip(centres, radii, strict=True)]
        geometries += [shape_polygon(s) for s in shapes]
        for p in world[wall][:, :2]:
            assert min(g.exterior.distance(Point(p)) for g in geometries) < 1e-3
    assert seen["wall"] > 500 and seen["floor"] > 500, seen


def pentagon(rng):
    turn = rng.uniform(0, 2 * math.pi) + 2 * math.pi * np.arange(5) / 5
    return rng.uniform(-4, 4, 2) + rng.uniform(0.2, 0.6) * np.column_stack(
        (np.cos(turn), np.sin(turn)))


def shape_polygon(shape):
    from shapely.geometry import Polygon

    return Polygon(shape.points)


def test_a_person_in_front_gives_points_above_the_floor_and_the_floor_in_front_of_them():
    spec = CameraSpec(beams=61, rows=16, fov=1.0, elevation_min=-0.6, elevation_max=0.3,
                      height=0.4, range_max=8.0)
    cloud = simulate_cloud((0.0, 0.0, 0.0), spec, None, [(3.0, 0.0)], [0.25])
    person = cloud[..., 2] > 0.01
    assert person.any()
    xy = cloud[person][:, :2]
    assert np.allclose(np.hypot(xy[:, 0] - 3.0, xy[:, 1]), 0.25, atol=1e-5)
    # the segment from the camera to each point enters no disc before it
    for p in xy:
        assert not LineString([(0, 0), p * (1 - 1e-4)]).intersects(Point(3, 0).buffer(0.249))
    assert (np.abs(cloud[~person & np.isfinite(cloud[..., 2])][:, 2]) < 1e-5).all()


def test_noise_is_along_the_ray_unbiased_and_drops_returns_outside_the_ranges():
    spec = CameraSpec(beams=200, rows=4, fov=1.0, elevation_min=-0.2, elevation_max=0.1,
                      height=0.3, range_min=0.1, range_max=6.0, noise=0.02)
    truth = true_cloud((0, 0, 0), spec, None, [(3.0, 0.0)], [1.0])
    rng = np.random.default_rng(1)
    errors = []
    for _ in range(20):
        cloud = simulate_cloud((0, 0, 0), spec, None, [(3.0, 0.0)], [1.0], rng=rng)
        measured = np.linalg.norm(cloud - (0, 0, spec.height), axis=2)
        ok = np.isfinite(truth) & np.isfinite(measured)
        errors.append((measured - truth)[ok])
    errors = np.concatenate(errors)
    assert abs(errors.mean()) < 0.002 and 0.018 < errors.std() < 0.022
    assert np.isnan(simulate_cloud((0, 0, 0), spec, None, [(0.12, 0.0)], [0.05])).any()
    far = CameraSpec(rows=1, elevation_min=0.0, elevation_max=0.0, range_max=2.0)
    assert np.isnan(simulate_cloud((0, 0, 0), far, None, [(3.0, 0.0)], [0.5])).all()
    assert np.array_equal(simulate_cloud((0, 0, 0), spec, rng=None),
                          simulate_cloud((0, 0, 0), spec, rng=None), equal_nan=True)


@pytest.mark.parametrize(("field", "value"), [
    ("beams", 0), ("rows", 0), ("fov", 0.0), ("fov", 7.0), ("elevation_min", -2.0),
    ("height", -0.1), ("range_max", 0.0), ("rate_hz", 0.0), ("noise", -1.0),
    ("elevation_max", math.nan)])
def test_bad_specs_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        CameraSpec(**{field: value})


def test_rows_and_elevations_must_agree():
    with pytest.raises(ValueError, match="elevation_max"):
        CameraSpec(rows=1, elevation_min=-0.2, elevation_max=0.1)
    with pytest.raises(ValueError, match="elevation_max"):
        CameraSpec(rows=4, elevation_min=0.1, elevation_max=-0.2)
    with pytest.raises(ValueError, match="range_min"):
        CameraSpec(range_min=3.0, range_max=2.0)
    with pytest.raises(ValueError, match="offset"):
        CameraSpec(offset=(0.0, 0.0))
    assert CameraSpec(rows=1, elevation_min=-0.2, elevation_max=-0.2).points == 160
