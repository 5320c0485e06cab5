"""The simulated laser (sim/laser.py) against shapely's intersections, and its properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon, box

from planning_collision.geometry import ConvexShape
from planning_collision.grid import GridMap
from planning_collision.sim.laser import (
    LaserSpec,
    StaticScene,
    map_segments,
    sensor_pose,
    simulate_scan,
    true_ranges,
)
from planning_collision.sim.scenario import parse_scenario


def oracle_ranges(pose, spec, geometries):
    """Distance along each beam to the first point of the union of ``geometries``
    (shapely), inf when the beam misses them."""
    sx, sy, syaw = sensor_pose(pose, spec)
    world = shapely.union_all(geometries) if geometries else None
    out = np.full(spec.beams, np.inf)
    origin = Point(sx, sy)
    for k, angle in enumerate(syaw + spec.angles()):
        end = (sx + spec.range_max * math.cos(angle), sy + spec.range_max * math.sin(angle))
        if world is None:
            continue
        hit = LineString([(sx, sy), end]).intersection(world)
        if not hit.is_empty:
            out[k] = origin.distance(hit)
    return out


def blocked_cells_as_boxes(grid):
    res = grid.resolution
    ox, oy, _ = grid.origin
    ys, xs = np.nonzero(grid.blocked_mask())
    return [box(ox + x * res, oy + y * res, ox + (x + 1) * res, oy + (y + 1) * res)
            for x, y in zip(xs, ys, strict=True)]


def random_grid(rng, width=40, height=30, resolution=0.1, origin=(-2.0, -1.5, 0.0)):
    data = np.zeros((height, width), np.int8)
    data[0, :] = data[-1, :] = 100
    data[:, 0] = data[:, -1] = 100
    for _ in range(6):
        x, y = rng.integers(2, width - 6), rng.integers(2, height - 6)
        w, h = rng.integers(1, 4), rng.integers(1, 4)
        data[y:y + h, x:x + w] = 100
    return GridMap(data, resolution, origin)


@pytest.mark.parametrize("seed", range(6))
def test_ranges_match_shapely_on_map_obstacles_and_discs(seed):
    rng = np.random.default_rng(seed)
    grid = random_grid(rng)
    shapes, geometries = [], blocked_cells_as_boxes(grid)
    for _ in range(3):
        c = rng.uniform([-1.5, -1.0], [1.5, 1.0])
        pts = c + rng.uniform(-0.3, 0.3, (5, 2))
        shape = ConvexShape(pts)
        shapes.append(shape)
        geometries.append(Polygon(shape.points))
    circle = ConvexShape.circle(rng.uniform([-1.5, -1.0], [1.5, 1.0]), 0.2)
    shapes.append(circle)
    geometries.append(Point(circle.points[0]).buffer(0.2, quad_segs=256))
    centres = rng.uniform([-1.5, -1.0], [1.5, 1.0], (4, 2))
    radii = rng.uniform(0.1, 0.3, 4)
    scene = StaticScene(grid, shapes)
    spec = LaserSpec(beams=180, range_max=6.0)
    world = shapely.union_all(geometries)
    while True:  # the laser stands in free space
        pose = (*rng.uniform([-1.7, -1.2], [1.7, 1.2]), rng.uniform(-math.pi, math.pi))
        if world.distance(Point(pose[:2])) > 0.05:
            break
    # the laser's own robot (disc 0) stands at the pose; it is not seen
    centres[0] = pose[:2]
    discs = [Point(c).buffer(r, quad_segs=256) for c, r in zip(centres[1:], radii[1:],
                                                                 strict=True)]
    got = true_ranges(pose, spec, scene, centres, radii, exclude=0)
    want = oracle_ranges(pose, spec, geometries + discs)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    hit = np.isfinite(want)
    assert hit.all()  # the map is walled in
    # shapely's circles are 1024-gons: within 1e-5 m of the true circle at r = 0.3
    np.testing.assert_allclose(got[hit], want[hit], atol=2e-5)


def test_map_segments_outline_exactly_the_blocked_cells():
    rng = np.random.default_rng(11)
    grid = random_grid(rng)
    segments = map_segments(grid)
    cells = shapely.union_all(blocked_cells_as_boxes(grid))
    outline = shapely.MultiLineString([list(map(tuple, s)) for s in segments])
    # the boundary of the blocked cells, up to the contour tracer's 1/64-cell corner cuts
    assert outline.hausdorff_distance(cells.boundary) <= grid.resolution / 64 * math.sqrt(2)


def test_rotated_map_origin_matches_shapely():
    data = np.zeros((20, 20), np.int8)
    data[5:8, 12:15] = 100
    grid = GridMap(data, 0.1, (0.3, -0.2, 0.4))
    c, s = math.cos(0.4), math.sin(0.4)
    ys, xs = np.nonzero(data)
    cells = [Polygon([(0.3 + c * u - s * v, -0.2 + s * u + c * v)
                      for u, v in ((x * 0.1, y * 0.1), ((x + 1) * 0.1, y * 0.1),
                                   ((x + 1) * 0.1, (y + 1) * 0.1), (x * 0.1, (y + 1) * 0.1))])
             for x, y in zip(xs, ys, strict=True)]
    spec = LaserSpec(beams=720, range_max=4.0)
    pose = (0.5, 0.5, 0.0)
    got = true_ranges(pose, spec, StaticScene(grid))
    want = oracle_ranges(pose, spec, cells)
    assert np.isfinite(want).sum() > 10
    np.testing.assert_allclose(got, want, atol=1e-9)


def test_offset_and_angles_place_the_beams():
    spec = LaserSpec(beams=3, range_max=5.0, angle_min=-0.5, angle_max=0.5,
                     offset=(0.2, 0.1, 0.3))
    assert spec.angle_increment == pytest.approx(0.5)
    wall = ConvexShape(np.array([[3.0, -10.0], [4.0, -10.0], [4.0, 10.0], [3.0, 10.0]]))
    pose = (1.0, 0.0, math.pi / 2 - math.pi / 2)
    got = true_ranges(pose, spec, StaticScene(None, [wall]))
    sx, sy, syaw = sensor_pose(pose, spec)
    assert (sx, sy, syaw) == pytest.approx((1.2, 0.1, 0.3))
    want = (3.0 - sx) / np.cos(syaw + np.array([-0.5, 0.0, 0.5]))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_full_turn_defaults_follow_laser_scan_conventions():
    spec = LaserSpec(beams=360)
    assert spec.angle_min == -math.pi
    assert spec.angle_increment == pytest.approx(2 * math.pi / 360)
    assert spec.angle_max == pytest.approx(math.pi - 2 * math.pi / 360)


def test_rep117_values_out_of_range_and_too_close():
    spec = LaserSpec(beams=4, range_max=2.0, range_min=0.3)
    # a disc just in front (0.1 m away) and nothing elsewhere
    got = simulate_scan((0.0, 0.0, 0.0), spec, None, [[0.3, 0.0]], [0.2])
    angles = spec.angles()
    front = np.argmin(np.abs(angles))
    assert got[front] == -np.inf
    assert np.all(got[np.arange(4) != front] == np.inf)


def test_laser_inside_a_blocked_cell_reads_zero():
    data = np.zeros((10, 10), np.int8)
    data[4:6, 4:6] = 100
    scene = StaticScene(GridMap(data, 0.1))
    spec = LaserSpec(beams=8, range_max=2.0, range_min=0.0)
    assert np.all(true_ranges((0.5, 0.5, 0.0), spec, scene) == 0.0)


def test_own_disc_is_not_seen_but_others_are():
    spec = LaserSpec(beams=4, range_max=5.0)
    centres = [[0.0, 0.0], [2.0, 0.0]]
    radii = [0.3, 0.5]
    seen = true_ranges((0.0, 0.0, 0.0), spec, None, centres, radii, exclude=0)
    front = np.argmin(np.abs(spec.angles()))
    assert seen[front] == pytest.approx(1.5)
    blinded = true_ranges((0.0, 0.0, 0.0), spec, None, centres, radii)
    assert np.all(blinded == 0.0)


def test_noise_has_the_asked_spread_and_no_bias():
    wall = ConvexShape(np.array([[-20.0, 5.0], [20.0, 5.0], [20.0, 6.0], [-20.0, 6.0]]))
    scene = StaticScene(None, [wall])
    spec = LaserSpec(beams=2000, range_max=10.0, noise=0.02, angle_min=1.2,
                     angle_max=math.pi - 1.2)
    truth = true_ranges((0.0, 0.0, 0.0), spec, scene)
    got = simulate_scan((0.0, 0.0, 0.0), spec, scene, rng=np.random.default_rng(4))
    error = got - truth
    assert abs(error.mean()) < 3 * 0.02 / math.sqrt(2000)
    assert error.std() == pytest.approx(0.02, rel=0.1)
    again = simulate_scan((0.0, 0.0, 0.0), spec, scene, rng=np.random.default_rng(4))
    assert np.array_equal(got, again)  # seeded: the same draw


@pytest.mark.parametrize("fields, message", [
    ({"beams": 0}, "beams"),
    ({"beams": 2.5}, "beams"),
    ({"range_max": -1.0}, "range_max"),
    ({"range_min": 9.0}, "range_min"),
    ({"rate_hz": 0.0}, "rate_hz"),
    ({"noise": float("nan")}, "noise"),
    ({"angle_min": 0.0}, "angle_min"),
    ({"angle_min": 1.0, "angle_max": 0.0}, "angle_max"),
    ({"offset": (0.0, 1.0)}, "offset"),
])
def test_bad_specs_are_refused_by_name(fields, message):
    with pytest.raises(ValueError, match=message):
        LaserSpec(**fields)


def test_bad_discs_are_refused():
    spec = LaserSpec(beams=4)
    with pytest.raises(ValueError, match="radii"):
        true_ranges((0, 0, 0), spec, None, [[1.0, 0.0]], [0.1, 0.2])
    with pytest.raises(ValueError, match="pose"):
        true_ranges((0, float("nan"), 0), spec)


def test_scenario_obstacles_are_seen_through_a_scene():
    from planning_collision.sim.simulation import obstacle_shapes

    scenario = parse_scenario({
        "obstacles": [{"id": "l", "polygon": [[1, -1], [3, -1], [3, 1], [2, 1], [2, 0],
                                               [1, 0]]}],
        "robots": [{"name": "r", "start": [0, 0, 0], "goal": [0, 1], "radius": 0.2,
                    "max_speed": 1.0}]})
    shapes, _ = obstacle_shapes(scenario.obstacles)
    spec = LaserSpec(beams=90, range_max=6.0)
    got = true_ranges((0.0, 0.5, 0.0), spec, StaticScene(None, shapes))
    want = oracle_ranges((0.0, 0.5, 0.0), spec, [Polygon(scenario.obstacles[0].vertices)])
    np.testing.assert_allclose(got, want, atol=1e-9)


def test_scans_mark_the_sensor_layer_on_the_surfaces_and_a_walker_leaves_no_ghost():
    """Simulated scans into collision_server's sensor layer: every mark lies on the wall or
    on the person where it stands now (a cell within a cell's diagonal of its surface, or in
    the person's own shadow: the beams that would clear the marks of its last step end on its
    front now, so those wait for the decay), and the person's trail is cleared."""
    from planning_collision.grid.sensor_layer import SensorLayer, scan_rays

    wall = ConvexShape(np.array([[4.0, -3.0], [4.5, -3.0], [4.5, 3.0], [4.0, 3.0]]))
    scene = StaticScene(None, [wall])
    spec = LaserSpec(beams=720, range_max=6.0)
    layer = SensorLayer(10.0, 10.0, 0.05, (-5.0, -5.0), decay=100.0)  # only clearing forgets
    robot = (0.0, 0.0, 0.0)
    for k in range(30):  # a person (r = 0.25) walks across at x = 2, from y = -1.5 up
        person = (2.0, -1.5 + 0.1 * k)
        ranges = simulate_scan(robot, spec, scene, [robot[:2], person], [0.3, 0.25],
                               exclude=0)
        origin, ends, hit = scan_rays(robot, spec.angle_min, spec.angle_increment, ranges,
                                      spec.range_min, spec.range_max)
        layer.add_rays(origin, ends, hit, 0.1 * k)
    rows, cols = np.nonzero(layer.occupied(2.9))
    centres = np.column_stack([-5.0 + 0.05 * (cols + 0.5), -5.0 + 0.05 * (rows + 0.5)])
    to_person = np.hypot(centres[:, 0] - person[0], centres[:, 1] - person[1]) - 0.25
    to_wall = np.array([Polygon(wall.points).exterior.distance(Point(c)) for c in centres])
    half_diagonal = 0.05 / math.sqrt(2) + 1e-9
    on_wall = to_wall <= half_diagonal
    on_person = np.abs(to_person) <= half_diagonal
    shadowed = to_person <= 0.1  # behind its front: last step's marks, not seen since
    assert np.all(on_wall | on_person | shadowed), centres[~(on_wall | on_person | shadowed)]
    assert on_person.sum() >= 5 and on_wall.sum() >= 50
    # the trail: nothing of the person's earlier places (y up to 1.1) is left
    assert not np.any(~on_wall & (centres[:, 1] < person[1] - 0.35))
