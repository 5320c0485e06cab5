"""The fleet simulator's core without ROS: exact kinematics, command limits and timeouts,
people walking to their goals, contacts counted once (robots, concave obstacles, map cells),
separation, arrival and the recorded trajectory."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Point, Polygon

from planning_collision.common import se2
from planning_collision.grid import GridMap
from planning_collision.sim.scenario import Noise, parse_scenario
from planning_collision.sim.simulation import (
    ContactMonitor,
    FleetSimulation,
    SimulatedLocalizer,
    add_noise,
    clamp_twist,
    integrate_twist,
    limit_rate,
    obstacle_shapes,
    relative_poses,
)

L_WALL = [[0.0, 0.0], [2.0, 0.0], [2.0, 0.5], [0.5, 0.5], [0.5, 2.0], [0.0, 2.0]]


def robot(name, start, goal=(50.0, 50.0), **extra):
    return {"name": name, "start": list(start), "goal": list(goal), "radius": 0.25,
            "max_speed": 1.0, **extra}


def scenario(*robots, obstacles=()):
    return parse_scenario({"robots": list(robots), "obstacles": list(obstacles)})


# ---------------------------------------------------------------------- kinematics
def test_straight_motion_is_the_velocity_rotated_into_the_global_frame():
    poses = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, -2.0]])
    twists = np.array([[0.4, 0.0, 0.0], [0.3, -0.2, 0.0]])
    out = integrate_twist(poses, twists, 0.5)
    for (x, y, yaw), (vx, vy, _), new in zip(poses, twists, out, strict=True):
        c, s = math.cos(yaw), math.sin(yaw)
        assert new == pytest.approx([x + 0.5 * (c * vx - s * vy),
                                     y + 0.5 * (s * vx + c * vy), yaw], abs=1e-15)


def test_unicycle_follows_the_exact_arc():
    v, w = 0.5, 0.8
    radius = v / w
    pose = np.array([[0.0, 0.0, 0.0]])
    twist = np.array([[v, 0.0, w]])
    for _ in range(50):
        pose = integrate_twist(pose, twist, 0.02)
    theta = w * 1.0
    # Centre of the circle at (0, radius): after turning theta the robot is on it.
    assert pose[0] == pytest.approx([radius * math.sin(theta), radius * (1 - math.cos(theta)),
                                     theta], abs=1e-12)
    # One big step lands exactly where many small steps do (constant twist, exact map).
    once = integrate_twist(np.array([[0.0, 0.0, 0.0]]), twist, 1.0)
    assert once[0] == pytest.approx(pose[0], abs=1e-12)


def test_turning_holonomic_motion_matches_a_fine_numerical_integration():
    pose0 = np.array([[0.3, -0.2, 1.0]])
    twist = np.array([[0.4, 0.25, -1.3]])
    exact = integrate_twist(pose0, twist, 0.7)
    # Euler with a million sub-steps as the oracle.
    n = 1_000_000
    t = (np.arange(n) + 0.5) * (0.7 / n)
    yaw = 1.0 - 1.3 * t
    dx = np.sum(np.cos(yaw) * 0.4 - np.sin(yaw) * 0.25) * 0.7 / n
    dy = np.sum(np.sin(yaw) * 0.4 + np.cos(yaw) * 0.25) * 0.7 / n
    assert exact[0, :2] == pytest.approx([0.3 + dx, -0.2 + dy], abs=1e-9)


@pytest.mark.parametrize("w", [1e-7, -3e-7, 2e-6])
def test_tiny_turn_rates_are_continuous(w):
    twist = np.array([[0.6, 0.1, w]])
    got = integrate_twist(np.zeros((1, 3)), twist, 0.5)
    # Closed forms in long double-free form: sin(wt)/w and (1 - cos wt)/w by series to 5th
    # order are exact to rounding here.
    t = 0.5
    th = w * t
    along = t * (1 - th ** 2 / 6 + th ** 4 / 120)
    across = t * (th / 2 - th ** 3 / 24)
    assert got[0, :2] == pytest.approx([0.6 * along - 0.1 * across,
                                        0.6 * across + 0.1 * along], abs=1e-15)


def test_relative_poses_undo_the_start_pose():
    origins = np.array([[1.0, 2.0, 0.7], [-3.0, 0.5, -2.5]])
    local = np.array([[0.5, -0.2, 0.3], [0.0, 1.0, 3.0]])
    c, s = np.cos(origins[:, 2]), np.sin(origins[:, 2])
    world = np.column_stack([origins[:, 0] + c * local[:, 0] - s * local[:, 1],
                             origins[:, 1] + s * local[:, 0] + c * local[:, 1],
                             origins[:, 2] + local[:, 2]])
    back = relative_poses(origins, world)
    assert back[:, :2] == pytest.approx(local[:, :2], abs=1e-12)
    assert np.cos(back[:, 2] - local[:, 2]) == pytest.approx(1.0)
    assert np.all((back[:, 2] >= -math.pi) & (back[:, 2] < math.pi))


def test_odometry_noise_has_the_scenario_size():
    poses = np.tile([1.0, -2.0, 3.1], (20000, 1))
    rng = np.random.default_rng(7)
    assert np.array_equal(add_noise(poses, Noise(0.0, 0.0), rng), poses)
    noisy = add_noise(poses, Noise(position=0.05, yaw=0.2), rng)
    assert np.array_equal(poses[0], [1.0, -2.0, 3.1])  # the input is left alone
    error = noisy - poses
    error[:, 2] = (error[:, 2] + math.pi) % (2 * math.pi) - math.pi
    assert error.std(axis=0) == pytest.approx([0.05, 0.05, 0.2], rel=0.03)
    assert np.abs(error.mean(axis=0)) == pytest.approx([0, 0, 0], abs=0.005)
    assert np.all(np.abs(noisy[:, 2]) <= math.pi)  # yaw stays wrapped
    assert abs(np.corrcoef(error[:, 0], error[:, 1])[0, 1]) < 0.03


def test_clamp_twist():
    assert clamp_twist((0.3, 0.4, 2.0), True, 1.0) == (0.3, 0.4, 2.0)
    vx, vy, wz = clamp_twist((3.0, 4.0, -1.0), True, 0.5)
    assert (vx, vy, wz) == pytest.approx((0.3, 0.4, -1.0))
    assert clamp_twist((-2.0, 5.0, 0.1), False, 0.6) == (-0.6, 0.0, 0.1)
    vx, vy, _ = clamp_twist((1e308, 1e308, 0.0), True, 0.6)
    assert math.hypot(vx, vy) == pytest.approx(0.6) and vx == pytest.approx(vy)
    for bad in ((math.nan, 0, 0), (0, math.inf, 0), (0, 0, -math.inf)):
        with pytest.raises(ValueError, match="NaN or inf"):
            clamp_twist(bad, True, 1.0)


def test_limit_rate():
    current = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    target = np.array([[3.0, 4.0, 2.0], [1.0, 0.05, -1.0]])
    out = limit_rate(current, target, 1.0, 10.0, 0.1)
    assert out[0] == pytest.approx([0.06, 0.08, 1.0])  # 0.1 m/s along the change
    assert out[1] == pytest.approx([1.0, 0.05, 0.0])  # within the limit: reached
    assert np.array_equal(limit_rate(current, target, 0.0, 0.0, 0.1), target)


# ---------------------------------------------------------------------- commands and people
def test_commands_move_robots_and_go_stale():
    sim = FleetSimulation(scenario(robot("h", (0, 0, math.pi / 2)),
                                   robot("u", (5, 0, 0), drive="unicycle")),
                          dt=0.02, cmd_vel_timeout=0.5)
    assert sim.command("h", (0.5, 0.0, 0.0)) == (0.5, 0.0, 0.0)
    assert sim.command("u", (0.5, 0.7, 0.0)) == (0.5, 0.0, 0.0)  # no sideways for a unicycle
    for _ in range(20):
        sim.step()
    assert sim.poses[0] == pytest.approx([0.0, 0.2, math.pi / 2], abs=1e-12)
    assert sim.poses[1] == pytest.approx([5.2, 0.0, 0.0], abs=1e-12)
    assert sim.velocities[0] == pytest.approx([0.5, 0.0, 0.0])
    # No new command: it keeps moving until the command is 0.5 s old, then stops.
    for _ in range(40):
        sim.step()
    assert sim.poses[0, 1] == pytest.approx(0.5 * 0.5, abs=1e-9)
    assert not sim.command_fresh()[0]
    assert sim.velocities[0] == pytest.approx([0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        sim.command("h", (math.nan, 0.0, 0.0))
    with pytest.raises(KeyError):
        sim.command("nobody", (0.1, 0.0, 0.0))


def test_acceleration_limits_ramp_the_speed():
    sim = FleetSimulation(scenario(robot("h", (0, 0, 0))), dt=0.1, max_linear_accel=1.0,
                          max_angular_accel=2.0)
    speeds = []
    for _ in range(7):
        sim.command("h", (0.5, 0.0, 1.0))
        sim.step()
        speeds.append((sim.velocities[0, 0], sim.velocities[0, 2]))
    assert [s for s, _ in speeds] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.5])
    assert [w for _, w in speeds] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0])


def test_people_walk_straight_to_their_goals_and_ignore_commands():
    sim = FleetSimulation(scenario(robot("p", (0, 0, 0), goal=(3.0, 4.0), orca=False)),
                          dt=0.1, goal_tolerance=0.15)
    with pytest.raises(ValueError, match="not ORCA-driven"):
        sim.command("p", (1.0, 0.0, 0.0))
    for _ in range(20):
        sim.step()
    assert sim.poses[0] == pytest.approx([1.2, 1.6, math.atan2(4, 3)])
    assert sim.velocities[0] == pytest.approx([1.0, 0.0, 0.0])
    assert not sim.arrived[0]
    for _ in range(40):
        sim.step()
    assert sim.poses[0, :2] == pytest.approx([3.0, 4.0], abs=1e-12)  # stops exactly there
    assert sim.velocities[0] == pytest.approx([0.0, 0.0, 0.0])
    assert sim.arrived[0]
    # Within 0.15 m of the goal after 4.85 m: at step 49 (4.9 m walked).
    assert sim.arrival_times[0] == pytest.approx(4.9)


# ---------------------------------------------------------------------- contacts
def test_robots_driven_into_each_other_make_one_contact():
    sim = FleetSimulation(scenario(robot("a", (0, 0, 0)), robot("b", (1.0, 0, math.pi)),
                                   robot("far", (10, 10, 0))), dt=0.02)
    separations = []
    for _ in range(75):  # 1.5 s at 0.5 m/s each: they meet, overlap, pass and separate
        sim.command("a", (0.5, 0, 0))
        sim.command("b", (0.5, 0, 0))
        sim.step()
        separations.append(sim.monitor.separations(sim.poses[:, :2])[0])
    assert [(e.robot, e.other) for e in sim.events] == [("a", "b")]
    # Contact begins once the centres are closer than 0.5 m: after 0.5 s (step 26, as
    # touching exactly at step 25 is not a contact).
    assert sim.events[0].time == pytest.approx(0.52)
    assert separations[24] == pytest.approx(0.0, abs=1e-12)
    assert sim.min_separation == pytest.approx(-0.5, abs=1e-12)  # centres coincided
    assert sim.min_separation_pair == ("a", "b")
    assert sim.contact_counts() == {"a": 1, "b": 1, "far": 0}
    assert sim.current_contacts == set()  # apart again at the end
    # Driven back into each other: a second contact.
    for _ in range(75):
        sim.command("a", (-0.5, 0, 0))
        sim.command("b", (-0.5, 0, 0))
        sim.step()
    assert len(sim.events) == 2


def test_obstacle_contacts_are_exact_for_concave_polygons():
    wall = {"id": "l_wall", "polygon": L_WALL}
    drum = {"id": "drum", "circle": {"center": [5.0, 0.0], "radius": 0.5}}
    crate = {"id": "crate", "box": {"center": [8.0, 0.0], "heading": math.pi / 4,
                                    "length": 1.0, "width": 1.0}}
    robots = [
        robot("notch", (1.0, 1.0, 0)),  # in the L's notch (inside its hull), 0.5 m from it
        robot("near", (1.6, 0.7, 0)),  # 0.2 m above the L's bottom arm: overlaps by 0.05
        robot("drum_hit", (5.7, 0.0, 0)),  # 0.7 from the drum's centre: overlaps by 0.05
        robot("crate_ok", (8.0 + 0.5 * math.sqrt(2) + 0.26, 0.0, 0)),
    ]
    s = scenario(*robots, obstacles=[wall, drum, crate])
    parts, ids = obstacle_shapes(s.obstacles)
    assert ids.count("l_wall") >= 2 and ids[-2:] == ["drum", "crate"]
    monitor = ContactMonitor(s.names, [0.25] * 4, parts, ids)
    poses = np.array([r.start for r in s.robots])
    # Oracle: shapely, on the true (concave) polygon.
    shapes = {"l_wall": Polygon(L_WALL), "drum": Point(5.0, 0.0).buffer(0.5, 2048),
              "crate": Polygon([(8.0 + 0.5 * math.sqrt(2) * math.cos(a),
                                 0.5 * math.sqrt(2) * math.sin(a))
                                for a in np.arange(4) * math.pi / 2])}
    expected = set()
    for r in s.robots:
        for name, shape in shapes.items():
            if shape.distance(Point(r.start[:2])) < 0.25 - 1e-6:
                expected.add((r.name, name))
    assert monitor.contacts(poses) == expected == {("near", "l_wall"), ("drum_hit", "drum")}
    clearance = monitor.obstacle_clearance(poses)
    assert clearance[0] == pytest.approx(0.25, abs=1e-12)  # notch: 0.5 - 0.25
    assert clearance[1] == pytest.approx(-0.05, abs=1e-12)
    assert clearance[2] == pytest.approx(-0.05, abs=1e-12)
    assert clearance[3] == pytest.approx(0.01, abs=1e-12)


def test_map_contacts_use_the_blocked_cells():
    data = np.zeros((80, 40), dtype=np.int8)  # 2 m x 4 m
    data[:, 20] = 100  # a wall one cell wide at x in [1.0, 1.05)
    data[50, 5] = -1  # one unknown cell at x in [0.25, 0.3), y in [2.5, 2.55)
    grid = GridMap(data, 0.05, (0.0, 0.0, 0.0))
    s = scenario(robot("clear", (0.74, 0.5, 0)), robot("touching", (0.75, 1.1, 0)),
                 robot("into", (0.76, 1.7, 0)), robot("unknown", (0.5, 2.525, 0)),
                 robot("off_map", (1.8, 3.9, 0)))
    monitor = ContactMonitor(s.names, [0.25] * 5, grid=grid)
    poses = np.array([r.start for r in s.robots])
    # Touching the wall's face exactly (x + r = 1.0) is not an overlap with positive area.
    assert monitor.contacts(poses) == {("into", "map"), ("unknown", "map"), ("off_map", "map")}


def test_trajectory_is_recorded_and_saved(tmp_path):
    sim = FleetSimulation(scenario(robot("h", (0, 0, 0)), robot("p", (0, 3, 0), goal=(1, 3),
                                                                 orca=False)), dt=0.1)
    for _ in range(10):
        sim.command("h", (1.0, 0.0, 0.5))
        sim.step()
    path = sim.save_trajectory(tmp_path / "runs" / "trajectory.npz")
    with np.load(path, allow_pickle=False) as saved:
        assert saved["names"].tolist() == ["h", "p"]
        assert saved["times"] == pytest.approx(np.arange(11) * 0.1)
        assert saved["x"].shape == saved["y"].shape == saved["yaw"].shape == (11, 2)
        assert saved["x"][-1] == pytest.approx(sim.poses[:, 0])
        assert saved["yaw"][-1, 0] == pytest.approx(0.5)
        assert saved["y"][:, 1] == pytest.approx(np.full(11, 3.0))
        assert saved["orca"].tolist() == [True, False]
        assert saved["contact_time"].shape == (0,)
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["trajectory.npz"]


def test_bad_settings_are_rejected():
    s = scenario(robot("h", (0, 0, 0)))
    for kwargs in ({"dt": 0.0}, {"dt": math.nan}, {"cmd_vel_timeout": -1.0},
                   {"goal_tolerance": 0.0}, {"max_linear_accel": -0.1}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            FleetSimulation(s, **{"dt": 0.02, **kwargs})


def drifting(scale: float, heading: float, seed: int = 0) -> FleetSimulation:
    scenario = parse_scenario({
        "noise": {"drift_scale": scale, "drift_heading": heading},
        "robots": [{"name": "a", "start": [1.0, 2.0, 0.5], "goal": [9.0, 9.0], "radius": 0.25,
                    "max_speed": 0.6},
                   {"name": "p", "start": [0.0, -3.0, 0.0], "goal": [5.0, -3.0],
                    "radius": 0.3, "max_speed": 0.5, "orca": False}]})
    return FleetSimulation(scenario, 0.02, drift_seed=seed)


def test_without_drift_odometry_is_exact_and_its_frame_the_start():
    sim = drifting(0.0, 0.0)
    for _ in range(200):
        sim.command("a", (0.5, 0.1, 0.3))
        sim.step()
    np.testing.assert_array_equal(sim.odometry_poses(), relative_poses(sim.starts, sim.poses))
    np.testing.assert_allclose(sim.odometry_frames(), sim.starts, atol=1e-12)


def test_drifting_odometry_misreads_distance_and_turns_and_its_frame_moves():
    sim = drifting(0.05, 0.04, seed=3)
    scale, heading = sim.drift[0]
    assert abs(scale) == 0.05 and abs(heading) == 0.04
    assert (sim.drift[1] == 0.0).all()  # people's odometry does not drift
    for _ in range(250):  # 5 s straight ahead at 0.5 m/s: 2.5 m
        sim.command("a", (0.5, 0.0, 0.0))
        sim.step()
    odom = sim.odometry_poses()[0]
    assert math.hypot(odom[0], odom[1]) == pytest.approx(2.5 * (1 + scale), rel=0.02)
    assert odom[2] == pytest.approx(2.5 * heading)  # it believes it turned
    # map -> odom composed with the odometry pose is the true pose, always.
    frame = sim.odometry_frames()
    for i in range(2):
        x, y, yaw = se2.compose(tuple(frame[i]), tuple(sim.odometry_poses()[i]))
        assert (x, y) == pytest.approx(tuple(sim.poses[i, :2]), abs=1e-12)
        assert abs(se2.wrap_angle(yaw - sim.poses[i, 2])) < 1e-12
    assert math.hypot(*(frame[0, :2] - sim.starts[0, :2])) > 0.05  # the frame has drifted
    np.testing.assert_allclose(frame[1], sim.starts[1], atol=1e-12)


def test_drift_sizes_are_checked():
    for noise, field in (({"drift_scale": 1.0}, "noise.drift_scale"),
                         ({"drift_heading": -0.1}, "noise.drift_heading")):
        with pytest.raises(ValueError, match=field):
            parse_scenario({"noise": noise, "robots": [
                {"name": "a", "start": [0, 0, 0], "goal": [1, 1], "radius": 0.2,
                 "max_speed": 0.5}]})


def test_the_simulated_localizer_measures_at_its_rate_and_delivers_late():
    sim = drifting(0.05, 0.04, seed=1)
    localizer = SimulatedLocalizer(rate_hz=5.0, latency=0.3)
    delivered = []
    truth = {}
    for _ in range(100):  # 2 s at 50 Hz
        sim.command("a", (0.5, 0.0, 0.2))
        sim.step()
        truth[round(sim.time, 6)] = (sim.poses.copy(), sim.odometry_poses())
        for sample in localizer.step(sim):
            delivered.append((sim.time, sample))
    stamps = [sample.stamp for _, sample in delivered]
    assert np.allclose(np.diff(stamps), 0.2)  # 5 Hz
    for arrived, sample in delivered:
        assert arrived - sample.stamp == pytest.approx(0.3, abs=0.021)  # one step of slack
        poses, odom = truth[round(sample.stamp, 6)]
        np.testing.assert_allclose(sample.poses, poses)  # no noise asked for
        for i in range(2):  # map -> odom composed with the odometry is the true pose
            x, y, yaw = se2.compose(tuple(sample.frames[i]), tuple(odom[i]))
            assert (x, y) == pytest.approx(tuple(poses[i, :2]), abs=1e-12)
    with pytest.raises(ValueError, match="rate_hz"):
        SimulatedLocalizer(0.0)
