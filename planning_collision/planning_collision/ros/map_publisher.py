"""map_publisher: a map_server map and a scenario's obstacles, latched, for every other node.

Publishes the map as a nav_msgs/OccupancyGrid and the scenario's static obstacles as a
planning_collision_interfaces/ObstacleArray, both reliable + transient_local with depth 1 (like
map_server's latched map), so a node that starts later still gets them. Polygon obstacles go
out as TYPE_POLYGON (concave ones too: receivers split them), circles and boxes as TYPE_SHAPE.

A file that cannot be used (missing, malformed, a bad field) is logged as an error naming the
problem; the node keeps running and publishes whatever else it has.

Run: ``ros2 run planning_collision map_publisher --ros-args --params-file
config/map_publisher.yaml -p scenario:=config/scenarios/swap_room.yaml`` or ``python -m
planning_collision.ros.map_publisher``.
"""

from __future__ import annotations

import sys
from array import array

from geometry_msgs.msg import Point
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node

from planning_collision.grid.map_file import MapFile, load_map_file
from planning_collision.sim.scenario import (
    BoxObstacle,
    CircleObstacle,
    PolygonObstacle,
    Scenario,
    load_scenario,
)
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape

from .conversions import quaternion_from_yaw
from .parameters import Param, ParameterError, declare
from .qos import LATCHED
from .run import run_node

PARAMETERS = (
    Param("map_yaml", "", "Nav2 map_server YAML of the map to publish; empty: the scenario's "
          "map, if any. When both are given this one wins."),
    Param("scenario", "", "Scenario YAML whose map and obstacles are published; empty: none."),
    Param("map_topic", "map", "Topic of the latched nav_msgs/OccupancyGrid."),
    Param("obstacles_topic", "obstacles",
          "Topic of the latched planning_collision_interfaces/ObstacleArray (only published "
          "when a scenario is given)."),
    Param("frame_id", "map", "header.frame_id of both messages (the scenario's global_frame "
          "should match; a mismatch is logged)."),
    Param("republish_period", 0.0, "Seconds between republications (new stamps, same "
          "content); 0 = publish once, latched.", at_least=0.0),
)


def occupancy_grid_msg(map_file: MapFile, frame_id: str, stamp) -> OccupancyGrid:
    """The map as an OccupancyGrid (row 0 at the origin, as MapFile stores it)."""
    msg = OccupancyGrid()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    msg.info.map_load_time = stamp
    msg.info.resolution = float(map_file.resolution)
    msg.info.height, msg.info.width = (int(v) for v in map_file.data.shape)
    msg.info.origin.position.x = float(map_file.origin[0])
    msg.info.origin.position.y = float(map_file.origin[1])
    msg.info.origin.orientation = quaternion_from_yaw(map_file.origin[2])
    msg.data = array("b", map_file.data.tobytes())
    return msg


def obstacle_msg(obstacle) -> Obstacle:
    """One scenario obstacle as an Obstacle message."""
    if isinstance(obstacle, PolygonObstacle):
        return Obstacle(id=obstacle.id, type=Obstacle.TYPE_POLYGON,
                        polygon=[Point(x=float(x), y=float(y)) for x, y in obstacle.vertices])
    if isinstance(obstacle, CircleObstacle):
        shape = Shape(type=Shape.TYPE_CIRCLE, radius=float(obstacle.radius))
        shape.pose.position.x, shape.pose.position.y = map(float, obstacle.center)
        shape.pose.orientation.w = 1.0
    elif isinstance(obstacle, BoxObstacle):
        shape = Shape(type=Shape.TYPE_BOX, length=float(obstacle.length),
                      width=float(obstacle.width))
        shape.pose.position.x, shape.pose.position.y = map(float, obstacle.center)
        shape.pose.orientation = quaternion_from_yaw(obstacle.heading)
    else:
        raise TypeError(f"not a scenario obstacle: {obstacle!r}")
    return Obstacle(id=obstacle.id, type=Obstacle.TYPE_SHAPE, shape=shape)


def obstacle_array_msg(scenario: Scenario, frame_id: str, stamp) -> ObstacleArray:
    msg = ObstacleArray(obstacles=[obstacle_msg(o) for o in scenario.obstacles])
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    return msg


class MapPublisher(Node):
    def __init__(self, **node_kwargs):
        super().__init__("map_publisher", **node_kwargs)
        self.params = p = declare(self, PARAMETERS)
        if not p.frame_id:
            raise ParameterError("frame_id must not be empty")
        log = self.get_logger()

        self.scenario: Scenario | None = None
        if p.scenario:
            try:
                self.scenario = load_scenario(p.scenario)
            except ValueError as exc:
                log.error(f"scenario not published: {exc}")
        if self.scenario is not None and self.scenario.global_frame != p.frame_id:
            log.warning(f"scenario global_frame '{self.scenario.global_frame}' differs from "
                        f"frame_id '{p.frame_id}'; publishing in '{p.frame_id}'")

        self.map_file: MapFile | None = None
        map_path = p.map_yaml or (str(self.scenario.map) if self.scenario is not None
                                  and self.scenario.map is not None else "")
        if map_path:
            try:
                self.map_file = load_map_file(map_path)
            except ValueError as exc:
                log.error(f"map not published: {exc}")

        self._map_pub = self.create_publisher(OccupancyGrid, p.map_topic, LATCHED)
        self._obstacles_pub = self.create_publisher(ObstacleArray, p.obstacles_topic, LATCHED)
        self._announced = False
        self._publish()
        if p.republish_period > 0.0:
            self.create_timer(p.republish_period, self._publish)
        if self.map_file is None and self.scenario is None:
            log.warning("nothing to publish: set map_yaml or scenario")

    def _publish(self) -> None:
        p = self.params
        stamp = self.get_clock().now().to_msg()
        if self.map_file is not None:
            self._map_pub.publish(occupancy_grid_msg(self.map_file, p.frame_id, stamp))
        if self.scenario is not None:
            self._obstacles_pub.publish(obstacle_array_msg(self.scenario, p.frame_id, stamp))
        if not self._announced:
            self._announced = True
            parts = []
            if self.map_file is not None:
                h, w = self.map_file.data.shape
                parts.append(f"map {w} x {h} at {self.map_file.resolution} m on "
                             f"{self._map_pub.topic_name}")
            if self.scenario is not None:
                parts.append(f"{len(self.scenario.obstacles)} obstacles on "
                             f"{self._obstacles_pub.topic_name}")
            if parts:
                self.get_logger().info("published " + " and ".join(parts))


def main(args=None) -> int:
    return run_node(MapPublisher, args)


if __name__ == "__main__":
    sys.exit(main())
