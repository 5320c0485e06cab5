"""orca_node's routes for a map (``_on_grid``, issue #22): the same radius rule as the pure
loop's world_routes, so the bench's one-lane corridor (corridor_1.5d, 0.75 m) stays open on
its centre line and is a passage. No DDS: the parameter table's defaults stand in for the
node's values and a stand-in fleet takes what the node would give the controller."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from planning_collision.ros.orca_node import OrcaNode
from planning_collision.ros.orca_parameters import PARAMETERS
from planning_collision.sim.scenes import make_scene


def test_the_node_routes_through_the_one_lane_corridor():
    scene = make_scene("corridor_1.5d", 2, 0)
    given = {}
    fleet = SimpleNamespace(radius=np.array([0.25, 0.25]), controlled=2,
                            set_world=lambda routes, passages: given.update(
                                routes=routes, passages=passages))
    params = SimpleNamespace(**{spec.name: spec.default for spec in PARAMETERS})
    logged = []
    node = SimpleNamespace(params=params, fleet=fleet,
                           get_logger=lambda: SimpleNamespace(info=logged.append))
    OrcaNode._on_grid(node, scene.grid())
    routes, passages = given["routes"], given["passages"]
    assert math.isclose(routes.min_radius, 0.25 + params.safety_margin)
    assert math.isclose(routes.radius, routes.min_radius + 0.05)
    robot = scene.scenario.robots[0]
    assert routes.route_length(robot.start[:2], robot.goal) < 10.0  # 20 m round the blocks
    assert len(passages.passages) == 1 and "1 passages" in logged[0]
