"""The scenario keys of issue #25: a robot's ``scan`` block (a laser), its ``cloud`` block (a
depth camera) and ``odometry: false``."""

from __future__ import annotations

import math

import pytest

from planning_collision.sim.depth_camera import CameraSpec
from planning_collision.sim.laser import LaserSpec
from planning_collision.sim.scenario import parse_scenario


def scenario(robots, defaults=None):
    data = {"robots": robots}
    if defaults is not None:
        data["robot_defaults"] = defaults
    return parse_scenario(data)


def robot(name, **fields):
    return {"name": name, "start": [0, 0, 0], "goal": [1, 1], "radius": 0.2, "max_speed": 1.0,
            **fields}


def test_the_issues_scan_block_gives_a_laser():
    s = scenario([robot("r1", scan={"beams": 360, "range_max": 8.0, "rate_hz": 10.0,
                                    "noise": 0.01})])
    spec = s.robots[0].scan
    assert spec == LaserSpec(beams=360, range_max=8.0, rate_hz=10.0, noise=0.01)
    assert spec.angle_min == -math.pi


def test_no_scan_block_no_laser_and_odometry_by_default():
    r = scenario([robot("r1")]).robots[0]
    assert r.scan is None
    assert r.odometry is True


def test_defaults_merge_key_by_key_and_false_opts_out():
    s = scenario([robot("r1", scan={"rate_hz": 5.0}), robot("r2"), robot("r3", scan=False),
                  robot("p", orca=False, odometry=False, scan=None)],
                 defaults={"scan": {"beams": 90, "range_max": 4.0, "offset": [0.1, 0, 0]}})
    r1, r2, r3, p = s.robots
    assert r1.scan == LaserSpec(beams=90, range_max=4.0, rate_hz=5.0, offset=(0.1, 0.0, 0.0))
    assert r2.scan == LaserSpec(beams=90, range_max=4.0, offset=(0.1, 0.0, 0.0))
    assert r3.scan is None and p.scan is None
    assert p.odometry is False and p.orca is False


def test_scan_true_is_the_default_laser():
    assert scenario([robot("r1", scan=True)]).robots[0].scan == LaserSpec()


def test_odometry_false_from_the_defaults():
    s = scenario([robot("p1"), robot("p2")], defaults={"orca": False, "odometry": False})
    assert [r.odometry for r in s.robots] == [False, False]


@pytest.mark.parametrize("robots, defaults, message", [
    ([robot("r", scan={"beams": 0})], None, r"robots\[0\].scan.beams"),
    ([robot("r", scan={"beam": 10})], None, r"robots\[0\].scan.beam: unknown key"),
    ([robot("r", scan={"range_max": "far"})], None, r"robots\[0\].scan.range_max"),
    ([robot("r", scan={"range_min": 9.0})], None, r"robots\[0\].scan: range_min"),
    ([robot("r", scan={"offset": [0, 0]})], None, r"robots\[0\].scan.offset"),
    ([robot("r", scan={"angle_min": 0.5})], None, r"robots\[0\].scan: give both"),
    ([robot("r", scan=[1, 2])], None, r"robots\[0\].scan must be a mapping"),
    ([robot("r")], {"scan": {"noise": -1}}, r"robot_defaults.scan: noise must be finite and >= 0"),
    ([robot("r", odometry="no")], None, r"robots\[0\].odometry must be true or false"),
    ([robot("r", odometry=False)], None, r"robots\[0\]: an ORCA robot needs its odometry"),
])
def test_bad_sensor_fields_are_named(robots, defaults, message):
    with pytest.raises(ValueError, match=message):
        scenario(robots, defaults)


def test_a_cloud_block_gives_a_camera_and_none_by_default():
    s = scenario([robot("r1", cloud={"beams": 80, "rows": 4, "elevation_min": -0.4,
                                     "elevation_max": 0.0, "offset": [0.1, 0, 0]}),
                  robot("r2")])
    assert s.robots[0].cloud == CameraSpec(beams=80, rows=4, elevation_min=-0.4,
                                           elevation_max=0.0, offset=(0.1, 0.0, 0.0))
    assert s.robots[0].scan is None
    assert s.robots[1].cloud is None


def test_defaults_merge_key_by_key_and_false_or_true():
    s = scenario([robot("r1", cloud={"rate_hz": 5.0}), robot("r2"), robot("r3", cloud=False)],
                 defaults={"cloud": {"rows": 3, "elevation_min": -0.3, "elevation_max": 0.1},
                           "scan": True})
    assert s.robots[0].cloud == CameraSpec(rows=3, elevation_min=-0.3, elevation_max=0.1,
                                           rate_hz=5.0)
    assert s.robots[1].cloud.rate_hz == 10.0 and s.robots[1].cloud.rows == 3
    assert s.robots[2].cloud is None
    assert all(r.scan is not None for r in s.robots)
    assert scenario([robot("r1", cloud=True)]).robots[0].cloud == CameraSpec()


@pytest.mark.parametrize(("block", "message"), [
    ({"beam": 3}, r"robots\[0\].cloud.*beam"),
    ({"rows": 0}, r"robots\[0\].cloud.rows"),
    ({"fov": "wide"}, r"robots\[0\].cloud.fov"),
    ({"height": -1.0}, r"robots\[0\].cloud.*height"),
    ({"offset": [1, 2]}, r"robots\[0\].cloud.offset"),
    ("yes", r"robots\[0\].cloud must be a mapping"),
])
def test_bad_cloud_blocks_are_refused_by_name(block, message):
    with pytest.raises(ValueError, match=message):
        scenario([robot("r1", cloud=block)])


def test_a_bad_default_cloud_is_refused_by_name():
    with pytest.raises(ValueError, match=r"robot_defaults.cloud.*range_min"):
        scenario([robot("r1")], defaults={"cloud": {"range_min": 9.0, "range_max": 2.0}})
