"""fleet_sim's simulated lasers over DDS (issue #25): LaserScan on <name>/scan with the
scenario's beams, range, rate and noise, what it measures against the simulator's truth, a
mounted laser's static transform, and an ``odometry: false`` person who publishes nothing but
is seen in the scans; a depth camera's PointCloud2 on <name>/points against the simulator's
truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from ros_clients import LATCHED, stopping
from sensor_msgs.msg import LaserScan, PointCloud2, PointField
from tf2_msgs.msg import TFMessage

from planning_collision.resources import config_file
from planning_collision.ros.point_clouds import cloud_points
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.depth_camera import true_cloud
from planning_collision.sim.laser import StaticScene, true_ranges
from planning_collision.sim.scenario import parse_scenario
from planning_collision.sim.simulation import obstacle_shapes

MODULE = "planning_collision.ros.fleet_sim"
NOISE = 0.005
SCENARIO = {
    "obstacles": [{"id": "wall", "box": {"center": [3.5, 0.0], "length": 1.0, "width": 6.0}}],
    "robot_defaults": {"radius": 0.25, "max_speed": 1.0,
                       "scan": {"beams": 180, "range_max": 5.0, "rate_hz": 10.0,
                                "noise": NOISE}},
    "robots": [
        {"name": "seer", "start": [0.0, 0.0, 0.3], "goal": [0.0, -5.0],
         "cloud": {"beams": 64, "rows": 8, "fov": 1.5, "elevation_min": -0.5,
                   "elevation_max": 0.2, "height": 0.4, "range_max": 5.0, "noise": NOISE,
                   "offset": [0.1, 0.0, 1.0]}},
        {"name": "mounted", "start": [-3.0, -3.0, 0.0], "goal": [-3.0, -8.0],
         "scan": {"offset": [0.2, 0.0, math.pi], "rate_hz": 5.0}},
        # standing at its goal: a person only the lasers see
        {"name": "ghost", "start": [0.0, 2.0, 0.0], "goal": [0.0, 2.0], "radius": 0.3,
         "orca": False, "odometry": False},
    ],
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, domain_id, client_factory):
    path = tmp_path_factory.mktemp("fleet_sim_scans") / "scenario.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    proc = RosProcess("fleet_sim_scans", node_command(
        MODULE, [config_file("fleet_sim.yaml")], {"scenario": str(path), "noise_seed": 3},
        namespace="fss"), domain_id)
    clients: list = []
    with stopping(clients, [proc]):
        client = client_factory("fleet_sim_scan_tests")
        clients.append(client)
        scans = {"seer": [], "mounted": [], "clouds": []}
        for name in ("seer", "mounted"):
            client.node.create_subscription(LaserScan, f"/fss/{name}/scan", scans[name].append, 50)
        client.node.create_subscription(PointCloud2, "/fss/seer/points", scans["clouds"].append, 50)
        statics = []
        client.node.create_subscription(TFMessage, "/tf_static", statics.append, LATCHED)
        ready = client.spin_until(lambda: len(scans["seer"]) >= 12 and scans["mounted"]
                                  and len(scans["clouds"]) >= 6 and statics
                                  or not proc.running(), 60.0)
        assert ready and proc.running(), proc.lines[-30:]
        yield client, scans, statics, path


def test_scans_carry_the_scenarios_laser(fleet):
    _, scans, _, _ = fleet
    msg = scans["seer"][-1]
    assert msg.header.frame_id == "seer/base_link"
    assert len(msg.ranges) == 180
    assert msg.angle_min == pytest.approx(-math.pi)
    assert msg.angle_increment == pytest.approx(2 * math.pi / 180)
    assert msg.angle_max == pytest.approx(math.pi - 2 * math.pi / 180)
    assert (msg.range_min, msg.range_max) == pytest.approx((0.05, 5.0))
    assert msg.scan_time == pytest.approx(0.1)
    stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
                       for m in scans["seer"]])
    period = np.diff(stamps)
    assert np.all(period > 0.0)
    # 10 Hz stamped with the measurement time (fleet_sim steps at 50 Hz: +-1 tick)
    assert np.median(period) == pytest.approx(0.1, abs=0.021)


def test_ranges_are_the_simulators_truth_with_the_noise(fleet):
    _, scans, _, path = fleet
    scenario = parse_scenario(yaml.safe_load(path.read_text()))
    seer = scenario.robot("seer")
    scene = StaticScene(None, obstacle_shapes(scenario.obstacles)[0])
    centres = [r.start[:2] for r in scenario.robots]
    radii = [r.radius for r in scenario.robots]
    truth = true_ranges(seer.start, seer.scan, scene, centres, radii, exclude=0)
    # the truth seen through REP 117: nothing within range_max is +inf
    assert np.isinf(truth).any() and np.isfinite(truth).sum() > 20
    errors = []
    for msg in scans["seer"][-10:]:
        got = np.array(msg.ranges, dtype=np.float64)
        far = truth > 5.0 - 6 * NOISE
        assert np.all(np.isposinf(got[np.isinf(truth)]))
        near = np.isfinite(truth) & ~far
        errors.append(got[near] - truth[near])
    errors = np.concatenate(errors)
    assert np.abs(errors).max() < 6 * NOISE
    assert errors.std() == pytest.approx(NOISE, rel=0.25)
    # the person (no odometry) is in the scan: the beams towards (0, 2) end on its disc
    towards = math.atan2(2.0, 0.0) - seer.start[2]
    beam = round((towards - seer.scan.angle_min) / seer.scan.angle_increment)
    assert float(scans["seer"][-1].ranges[beam]) == pytest.approx(1.7, abs=6 * NOISE)


def test_a_mounted_laser_has_its_frame_and_static_transform(fleet):
    _, scans, statics, _ = fleet
    assert scans["mounted"][-1].header.frame_id == "mounted/laser"
    mounts = {t.child_frame_id: t for msg in statics for t in msg.transforms}
    t = mounts["mounted/laser"]
    assert t.header.frame_id == "mounted/base_link"
    assert t.transform.translation.x == pytest.approx(0.2)
    assert abs(t.transform.rotation.z) == pytest.approx(1.0)


def test_an_agent_without_odometry_publishes_nothing(fleet):
    client, _, _, _ = fleet
    node = client.node
    assert node.count_publishers("/fss/seer/odom") == 1
    assert node.count_publishers("/fss/ghost/odom") == 0
    assert node.count_publishers("/fss/ghost/scan") == 0
    names = {name for name, _ in node.get_topic_names_and_types()}
    assert not any(name.startswith("/fss/ghost/") for name in names), names


def test_a_depth_camera_publishes_its_cloud_in_base_link_against_the_truth(fleet):
    client, scans, _, path = fleet
    assert client.node.count_publishers("/fss/mounted/points") == 0  # no cloud block
    msg = scans["clouds"][-1]
    assert msg.header.frame_id == "seer/base_link"
    assert (msg.height, msg.width, msg.point_step, msg.is_dense) == (8, 64, 12, False)
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        (name, 4 * k, PointField.FLOAT32, 1) for k, name in enumerate("xyz")]
    stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
                       for m in scans["clouds"]])
    assert np.median(np.diff(stamps)) == pytest.approx(0.1, abs=0.021)
    scenario = parse_scenario(yaml.safe_load(path.read_text()))
    seer = scenario.robot("seer")
    scene = StaticScene(None, obstacle_shapes(scenario.obstacles)[0])
    truth = true_cloud(seer.start, seer.cloud, scene, [r.start[:2] for r in scenario.robots],
                       [r.radius for r in scenario.robots], exclude=0).ravel()
    sensor = np.array([0.1, 0.0, 0.4])  # the mount, in base_link
    for msg in scans["clouds"][-3:]:
        xyz = cloud_points(msg)
        got = np.linalg.norm(xyz - sensor, axis=1)
        sure = np.isfinite(truth) & (truth < 5.0 - 6 * NOISE) & (truth > 0.2 + 6 * NOISE)
        assert np.isfinite(got[sure]).all() and np.isnan(got[np.isinf(truth)]).all()
        assert np.abs(got[sure] - truth[sure]).max() < 6 * NOISE
    # the floor (z = 0) and the person (no odometry, at (0, 2): above the floor) are in it
    assert (np.abs(xyz[:, 2]) < 6 * NOISE).sum() > 50
    c, s = math.cos(seer.start[2]), math.sin(seer.start[2])
    world = np.column_stack((c * xyz[:, 0] - s * xyz[:, 1], s * xyz[:, 0] + c * xyz[:, 1]))
    on_person = np.abs(np.hypot(world[:, 0], world[:, 1] - 2.0) - 0.3) < 6 * NOISE
    assert (on_person & (xyz[:, 2] > 0.1)).sum() > 5
