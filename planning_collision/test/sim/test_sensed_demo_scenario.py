"""The sensed demo's scenario (swap_room_sensed.yaml, ``demo --sensed``) is swap_room.yaml with
a laser on every robot and a person who publishes nothing (issue #25): same map, obstacles and
robots, so that the two demos stay one room."""

from __future__ import annotations

from dataclasses import replace

import yaml

from planning_collision.resources import config_file
from planning_collision.sim.laser import LaserSpec
from planning_collision.sim.scenario import load_scenario


def test_the_sensed_demo_is_swap_room_with_lasers_and_a_person_seen_only_by_them():
    plain = load_scenario(config_file("scenarios/swap_room.yaml"))
    sensed = load_scenario(config_file("scenarios/swap_room_sensed.yaml"))
    assert sensed.map == plain.map and sensed.obstacles == plain.obstacles
    assert sensed.names == plain.names and sensed.timeout == plain.timeout
    laser = LaserSpec(beams=360, range_max=8.0, rate_hz=10.0, noise=0.01)
    for a, b in zip(plain.robots, sensed.robots, strict=True):
        if a.orca:
            assert b.scan == laser and b.odometry, b.name
            assert replace(b, scan=None) == a, b.name
        else:  # the person: no odometry, no laser, and a brisker walk (test_slow_walker)
            assert (b.odometry, b.scan, b.max_speed) == (False, None, 0.8)
            assert replace(b, odometry=True, max_speed=a.max_speed) == a


def test_the_sensed_demos_orca_parameters_are_swap_rooms_reading_the_scans():
    """demo_sensed_orca.yaml: demo_orca.yaml (checked against swap_room by test_orca_node)
    without the person, whom nothing observes, and with the robots' scans read."""
    def section(name):
        (node,) = yaml.safe_load(config_file(name).read_text()).values()
        return node["ros__parameters"]

    plain, sensed = section("demo_orca.yaml"), section("demo_sensed_orca.yaml")
    assert sensed["scan_topic"] == "scan" and "observed" not in sensed
    people = plain.pop("observed")
    for person in people:
        plain.pop(person)
    assert {k: v for k, v in sensed.items() if k != "scan_topic"} == plain
