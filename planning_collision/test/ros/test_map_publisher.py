"""map_publisher as a real process over DDS on loopback: a latched map and obstacle set reach a
subscriber that starts after them, equal to the files they came from; circles and boxes go out
as shapes, periodic republication, and bad files logged without a crash."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from nav_msgs.msg import OccupancyGrid
from ros_clients import stopping

from planning_collision.grid.map_file import load_map_file
from planning_collision.resources import config_file
from planning_collision.ros.conversions import obstacle_parts, yaw_of
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.scenario import load_scenario
from planning_collision.sim.simulation import obstacle_shapes
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape

MODULE = "planning_collision.ros.map_publisher"


class Inbox:
    """Latched subscriptions on a test client: every message kept, per topic."""

    def __init__(self, client, latched_qos, topics):
        self.client = client
        self.messages = {name: [] for name in topics}
        for name, msg_type in topics.items():
            client.node.create_subscription(msg_type, name, self.messages[name].append,
                                            latched_qos)

    def wait(self, name, count=1, timeout=30.0):
        assert self.client.spin_until(lambda: len(self.messages[name]) >= count, timeout), \
            f"fewer than {count} messages on {name}"
        return self.messages[name][-1]


@pytest.fixture(scope="module")
def publishers(tmp_path_factory, domain_id):
    """Three map_publishers started together: the shipped scenario; shapes with a broken map
    and republication; a broken scenario."""
    tmp = tmp_path_factory.mktemp("map_publisher")
    shapes = tmp / "shapes.yaml"
    shapes.write_text(yaml.safe_dump({
        "global_frame": "world",
        "obstacles": [
            {"id": "drum", "circle": {"center": [1.0, -2.0], "radius": 0.4}},
            {"id": "crate", "box": {"center": [3.0, 1.0], "heading": 0.5, "length": 1.2,
                                    "width": 0.6}},
            {"id": "tri", "polygon": [[0, 0], [1, 0], [0, 1]]},
        ],
        "robots": [{"name": "r", "start": [0, 0, 0], "goal": [1, 1], "radius": 0.2,
                    "max_speed": 1.0}],
    }))
    (tmp / "broken_map.yaml").write_text("image: nowhere.pgm\nresolution: 0.05\n"
                                         "origin: [0, 0, 0]\n")
    broken = tmp / "broken_scenario.yaml"
    broken.write_text("robots:\n  - {name: r, start: [0, 0, 0], goal: [1], radius: 0.2, "
                      "max_speed: 1.0}\n")
    params = [config_file("map_publisher.yaml")]
    swap_room = str(config_file("scenarios/swap_room.yaml"))
    procs = {
        "room": RosProcess("map_publisher_room", node_command(
            MODULE, params, {"scenario": swap_room}, namespace="mp_room"), domain_id),
        "shapes": RosProcess("map_publisher_shapes", node_command(
            MODULE, params, {"scenario": str(shapes), "map_yaml": str(tmp / "broken_map.yaml"),
                             "frame_id": "world", "republish_period": 0.3},
            namespace="mp_shapes"), domain_id),
        "broken": RosProcess("map_publisher_broken", node_command(
            MODULE, params, {"scenario": str(broken),
                             "map_yaml": str(config_file("maps/swap_room.yaml"))},
            namespace="mp_broken"), domain_id),
    }
    with stopping([], procs.values()):
        for proc in procs.values():
            assert proc.wait_for_line("published", 120.0), proc.lines[-20:]
        yield procs, swap_room


def test_a_late_subscriber_gets_the_latched_map_and_obstacles(publishers, client, latched_qos):
    procs, swap_room = publishers
    inbox = Inbox(client, latched_qos, {"/mp_room/map": OccupancyGrid,
                                        "/mp_room/obstacles": ObstacleArray})
    grid = inbox.wait("/mp_room/map")
    scenario = load_scenario(swap_room)
    expected = load_map_file(scenario.map)
    assert grid.header.frame_id == "map"
    assert (grid.info.height, grid.info.width) == expected.data.shape
    assert grid.info.resolution == pytest.approx(expected.resolution)
    assert (grid.info.origin.position.x, grid.info.origin.position.y,
            yaw_of(grid.info.origin.orientation)) == pytest.approx(expected.origin)
    data = np.frombuffer(grid.data, dtype=np.int8).reshape(expected.data.shape)
    assert np.array_equal(data, expected.data)

    msg = inbox.wait("/mp_room/obstacles")
    assert msg.header.frame_id == "map"
    assert [o.id for o in msg.obstacles] == [o.id for o in scenario.obstacles]
    assert all(o.type == Obstacle.TYPE_POLYGON for o in msg.obstacles)
    for sent, original in zip(msg.obstacles, scenario.obstacles, strict=True):
        assert [(p.x, p.y) for p in sent.polygon] == list(original.vertices)
    # What a receiver builds from the message is what fleet_sim referees with.
    received = [part for i, o in enumerate(msg.obstacles)
                for part in obstacle_parts(o, f"obstacles[{i}]")]
    parts, _ = obstacle_shapes(scenario.obstacles)
    assert len(received) == len(parts)
    for a, b in zip(received, parts, strict=True):
        assert np.allclose(a.points, b.points) and a.radius == b.radius
    assert procs["room"].running()


def test_circles_and_boxes_are_shapes_and_a_bad_map_is_skipped(publishers, client,
                                                                latched_qos):
    procs, _ = publishers
    proc = procs["shapes"]
    inbox = Inbox(client, latched_qos, {"/mp_shapes/obstacles": ObstacleArray,
                                        "/mp_shapes/map": OccupancyGrid})
    msg = inbox.wait("/mp_shapes/obstacles")
    assert msg.header.frame_id == "world"
    drum, crate, tri = msg.obstacles
    assert (drum.id, drum.type, drum.shape.type, drum.shape.radius) == \
        ("drum", Obstacle.TYPE_SHAPE, Shape.TYPE_CIRCLE, 0.4)
    assert (drum.shape.pose.position.x, drum.shape.pose.position.y) == (1.0, -2.0)
    assert (crate.type, crate.shape.type, crate.shape.length, crate.shape.width) == \
        (Obstacle.TYPE_SHAPE, Shape.TYPE_BOX, 1.2, 0.6)
    assert yaw_of(crate.shape.pose.orientation) == pytest.approx(0.5)
    assert tri.type == Obstacle.TYPE_POLYGON and len(tri.polygon) == 3
    box = obstacle_parts(crate, "crate")[0]
    corner = (3.0 + 0.6 * math.cos(0.5) - 0.3 * math.sin(0.5),
              1.0 + 0.6 * math.sin(0.5) + 0.3 * math.cos(0.5))
    assert min(math.dist(corner, p) for p in box.points) < 1e-12
    # republish_period 0.3: more messages follow, with newer stamps.
    later = inbox.wait("/mp_shapes/obstacles", count=3, timeout=10.0)
    assert (later.header.stamp.sec, later.header.stamp.nanosec) > \
        (msg.header.stamp.sec, msg.header.stamp.nanosec)
    assert any("map not published" in line and "nowhere.pgm" in line for line in proc.lines)
    assert inbox.messages["/mp_shapes/map"] == []
    assert proc.running()


def test_a_bad_scenario_is_logged_and_the_map_still_published(publishers, client,
                                                              latched_qos):
    procs, _ = publishers
    proc = procs["broken"]
    inbox = Inbox(client, latched_qos, {"/mp_broken/map": OccupancyGrid,
                                        "/mp_broken/obstacles": ObstacleArray})
    grid = inbox.wait("/mp_broken/map")
    assert (grid.info.width, grid.info.height) == (340, 260)
    errors = [line for line in proc.lines if "scenario not published" in line]
    assert errors and "robots[0].goal" in errors[0]
    client.spin_for(0.5)
    assert inbox.messages["/mp_broken/obstacles"] == []
    assert proc.running()
