"""The interface package imports, constructs, and round-trips through CDR serialization."""

from __future__ import annotations

import math

from geometry_msgs.msg import Point, Pose, PoseStamped
from rclpy.serialization import deserialize_message, serialize_message

from planning_collision_interfaces.msg import (
    Obstacle,
    ObstacleArray,
    OrcaAgentStatus,
    OrcaStatus,
    Shape,
)
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)


def roundtrip(msg):
    data = serialize_message(msg)
    assert isinstance(data, bytes) and len(data) > 0
    return deserialize_message(data, type(msg))


def test_the_default_shape_and_pose_mean_what_the_services_say():
    """An empty Shape asks for the configured footprint; the default pose is the identity, so
    points are used as given; each type constant builds the shape the README describes."""
    import numpy as np

    from planning_collision.ros.conversions import shape_from_msg, shape_is_empty

    assert shape_is_empty(Shape())
    assert not shape_is_empty(Shape(type=Shape.TYPE_CIRCLE, radius=0.2))
    triangle = Shape(points=[Point(x=0.3, y=0.2), Point(x=-0.3, y=0.2), Point(x=0.0, y=-0.4)])
    converted = shape_from_msg(triangle, "shape")
    assert sorted(map(tuple, converted.points.tolist())) == [(-0.3, 0.2), (0.0, -0.4),
                                                             (0.3, 0.2)]
    disc = shape_from_msg(Shape(type=Shape.TYPE_CIRCLE, radius=0.5), "shape")
    assert disc.points.tolist() == [[0.0, 0.0]] and disc.radius == 0.5
    box = shape_from_msg(Shape(type=Shape.TYPE_BOX, length=2.0, width=1.0), "shape")
    assert np.ptp(box.points, axis=0).tolist() == [2.0, 1.0]  # length along x


def test_shape_roundtrip():
    shape = Shape(
        type=Shape.TYPE_POINTS,
        points=[Point(x=0.3, y=0.2), Point(x=-0.3, y=0.2), Point(x=-0.3, y=-0.2)],
        radius=0.05,
    )
    shape.pose.position.x = 1.5
    back = roundtrip(shape)
    assert [(p.x, p.y) for p in back.points] == [(0.3, 0.2), (-0.3, 0.2), (-0.3, -0.2)]
    assert back.radius == 0.05 and back.pose.position.x == 1.5


def test_obstacle_array_roundtrip():
    wall = Obstacle(
        id="l_wall",
        type=Obstacle.TYPE_POLYGON,
        polygon=[Point(x=0.0, y=0.0), Point(x=2.0, y=0.0), Point(x=2.0, y=1.0),
                 Point(x=1.0, y=1.0), Point(x=1.0, y=2.0), Point(x=0.0, y=2.0)],
    )
    pillar = Obstacle(id="pillar", type=Obstacle.TYPE_SHAPE,
                      shape=Shape(type=Shape.TYPE_CIRCLE, radius=0.25))
    array = ObstacleArray(obstacles=[wall, pillar])
    array.header.frame_id = "map"
    back = roundtrip(array)
    assert back.header.frame_id == "map"
    assert [o.id for o in back.obstacles] == ["l_wall", "pillar"]
    assert len(back.obstacles[0].polygon) == 6
    assert back.obstacles[1].shape.type == Shape.TYPE_CIRCLE


def test_line_of_sight_services_roundtrip():
    assert CheckLineOfSight.Request.MODE_SUPERCOVER == "supercover"
    request = CheckLineOfSight.Request(mode=CheckLineOfSight.Request.MODE_CONSERVATIVE,
                                       layers=CheckLineOfSight.Request.LAYERS_ALL)
    request.goal.x = 3.0
    assert roundtrip(request).goal.x == 3.0
    response = CheckLineOfSight.Response(success=True, clear=False, first_blocked_cell_x=4,
                                         first_blocked_cell_y=7, blocked_by="grid",
                                         cells_checked=12)
    back = roundtrip(response)
    assert (back.first_blocked_cell_x, back.first_blocked_cell_y, back.cells_checked) == (4, 7, 12)

    batch = CheckLinesOfSight.Request(start_x=[0.0, 1.0], start_y=[0.0, 1.0],
                                      goal_x=[2.0, 3.0], goal_y=[2.0, 3.0])
    back = roundtrip(batch)
    assert list(back.goal_x) == [2.0, 3.0]
    reply = CheckLinesOfSight.Response(clear=[True, False], first_blocked_x=[math.nan, 1.5],
                                       blocked_by=["", "pillar"], cells_checked=[9, 4])
    back = roundtrip(reply)
    assert list(back.clear) == [True, False]
    assert list(back.blocked_by) == ["", "pillar"] and list(back.cells_checked) == [9, 4]
    assert math.isnan(back.first_blocked_x[0]) and back.first_blocked_x[1] == 1.5


def test_collision_path_distance_services_roundtrip():
    request = CheckCollision.Request(footprint=Shape(type=Shape.TYPE_BOX, length=0.6, width=0.4),
                                     poses=[Pose(), Pose()], max_distance=2.0)
    back = roundtrip(request)
    assert len(back.poses) == 2 and back.footprint.length == 0.6
    reply = CheckCollision.Response(in_collision=[False], distance=[math.inf],
                                    nearest_obstacle_id=[""])
    assert math.isinf(roundtrip(reply).distance[0])

    path = CheckPath.Request(max_lookahead_distance=5.0, stop_at_first_collision=False,
                             footprint_string="[[0.3, 0.2], [-0.3, 0.2], [0.0, -0.2]]")
    path.path.poses = [PoseStamped(), PoseStamped()]
    back = roundtrip(path)
    assert len(back.path.poses) == 2 and back.max_lookahead_distance == 5.0
    assert back.footprint_string == path.footprint_string and not back.stop_at_first_collision
    back = roundtrip(CheckPath.Response(is_valid=False, first_invalid_index=3,
                                        invalid_pose_indices=[3, 4],
                                        error_code=CheckPath.Response.NO_FOOTPRINT))
    assert back.invalid_pose_indices.tolist() == [3, 4]
    assert back.error_code == CheckPath.Response.NO_FOOTPRINT

    dist = ComputeDistance.Request(shape_a=Shape(type=Shape.TYPE_CIRCLE, radius=1.0))
    assert roundtrip(dist).shape_a.radius == 1.0
    reply = ComputeDistance.Response(intersecting=True, distance=-0.25)
    reply.normal.x = 1.0
    assert roundtrip(reply).distance == -0.25


def test_orca_status_roundtrip():
    status = OrcaStatus(achieved_rate=20.0,
                        agents=[OrcaAgentStatus(name="robot1", agent_neighbors=3, infeasible=True,
                                                distance_to_goal=math.nan)])
    back = roundtrip(status)
    assert back.agents[0].name == "robot1" and back.agents[0].infeasible
    assert math.isnan(back.agents[0].distance_to_goal)
