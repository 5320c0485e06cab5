"""The scenario's ``cloud`` block (a depth camera, issue #25), beside ``scan``."""

from __future__ import annotations

import pytest

from planning_collision.sim.depth_camera import CameraSpec
from planning_collision.sim.scenario import parse_scenario


def scenario(robots, defaults=None):
    data = {"robots": robots}
    if defaults is not None:
        data["robot_defaults"] = defaults
    return parse_scenario(data)


def robot(name, **fields):
    return {"name": name, "start": [0, 0, 0], "goal": [1, 1], "radius": 0.2, "max_speed": 1.0,
            **fields}


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
