"""collision_server's parameters, declared in one place, and the default footprint they give.

All of them are read-only (changing one means restarting the node, as with Nav2's
collision_monitor); ``ros2 param describe /collision_server <name>`` shows each description
and a number's bounds (declared on its :class:`~.parameters.Param`, checked when declared).
:func:`check_footprint` adds the rules no bound states.
"""

from __future__ import annotations

import numpy as np
import yaml

from planning_collision import grid
from planning_collision.geometry import ConvexShape
from planning_collision.geometry.shapes import as_points, check_convex_polygon

from .lifecycle import AUTOSTART
from .parameters import Param, ParameterError

PARAMETERS = (
    AUTOSTART,
    Param("global_frame", "map",
          "Frame of the map, the obstacles and every request. Maps and obstacle sets in another "
          "frame are rejected with a warning; requests in another frame get success: false (no "
          "tf2 here: transform before calling). An empty request frame means this frame."),
    Param("map_topic", "map", "nav_msgs/OccupancyGrid to check against (relative names follow "
          "the node's namespace)."),
    Param("map_subscribe_transient_local", True,
          "Subscribe to the map reliable + transient_local, depth 1 (map_server's latched map). "
          "False: reliable + volatile, for costmap-style topics republished continuously."),
    Param("obstacles_topic", "obstacles", "planning_collision_interfaces/ObstacleArray; each "
          "message replaces the obstacle set. Concave polygons are split into convex parts once, "
          "on reception."),
    Param("obstacles_subscribe_transient_local", True,
          "Subscribe to the obstacles reliable + transient_local (latched), else volatile."),
    Param("occupied_threshold", 65, "Cells with occupancy >= this (1..100) are blocked.",
          at_least=1, at_most=100),
    Param("unknown_is_occupied", True, "Unknown cells (-1) are blocked."),
    Param("out_of_map", "blocked", "How cells outside the map count for line of sight and "
          "footprints.", choices=grid.OUT_OF_MAP_CHOICES),
    Param("los_mode", "bresenham", "Line-of-sight mode used when a request leaves mode empty.",
          choices=grid.MODES),
    Param("footprint", "[[0.3, 0.2], [-0.3, 0.2], [-0.3, -0.2], [0.3, -0.2]]",
          "Default robot footprint (Nav2 format: a string '[[x, y], ...]' of a convex polygon "
          "in the robot frame), used when a request's footprint is an empty Shape. '[]' uses "
          "robot_radius instead."),
    Param("robot_radius", 0.25, "Disc footprint radius in metres when footprint is '[]'."),
    Param("footprint_padding", 0.0, "Metres added around the default footprint, exactly (the "
          "polygon is rounded by this radius, not scaled).", at_least=0.0),
    Param("publish_markers", True, "Publish RViz markers on ~/markers: obstacle outlines, "
          "recent line-of-sight queries and footprints checked."),
    Param("marker_lifetime", 5.0, "Seconds a query's markers stay in RViz."),
    Param("max_markers_per_query", 50, "At most this many rays or footprints of one request "
          "are drawn."),
    Param("max_obstacle_markers", 500, "At most this many obstacle outlines per marker "
          "message (10 messages a second): a large obstacle set is drawn over several "
          "messages, never built in one go while queries wait.", at_least=1),
    Param("max_request_size", 100_000, "Requests with more rays or poses than this are "
          "refused (success: false). It bounds how long a small query can wait behind a "
          "large one: moving a request and its answer through rclpy holds the node's "
          "interpreter lock (see Performance for the measured waits).", at_least=1),
    Param("query_threads", 0, "Threads that answer service requests at the same time, so a "
          "small request is never held behind a large one (0: the number of cores plus two).",
          at_least=0),
    Param("kernel_threads", 0, "Cores the kernels of one large request share its rays or "
          "poses over (0: every core this process may use; 1: one core per request). Requests "
          "below about 100 microseconds of work always stay on their own thread. Lower it to "
          "leave cores to the rest of the robot's software.", at_least=0),
)
BY_NAME = {p.name: p for p in PARAMETERS}


def parse_footprint(text: str, field: str = "footprint") -> np.ndarray | None:
    """Nav2's footprint string '[[x, y], ...]' as an (K, 2) array; None for '[]'."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ParameterError(f"{field} is not a list of [x, y] points: {exc}") from exc
    if value in (None, []):
        return None
    try:
        points = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{field} is not a list of [x, y] points: {text!r}") from exc
    if points.ndim != 2 or points.shape[1] != 2 or not np.isfinite(points).all():
        raise ParameterError(f"{field} must be a list of finite [x, y] points, got {text!r}")
    return points


def check_footprint(p) -> None:
    """ParameterError unless the parameters give a footprint (``footprint``, ``robot_radius``,
    padding). Plain numpy: configure calls it while the kernels may still be compiling;
    :func:`default_footprint` builds the shape once they are ready."""
    BY_NAME["footprint_padding"].check(p.footprint_padding)
    points = parse_footprint(p.footprint)
    if points is None:
        if not p.robot_radius > 0.0:
            raise ParameterError(f"footprint is '[]' and robot_radius is "
                                 f"{p.robot_radius}; one of them must give a shape")
        return
    try:
        if len(points) >= 3:
            check_convex_polygon(points, "points")
        else:
            as_points(points, "points")
    except ValueError as exc:
        raise ParameterError(f"footprint: {exc}") from exc


def default_footprint(p) -> ConvexShape:
    """The footprint of the parameters (``footprint``, ``robot_radius``, padding), checked by
    :func:`check_footprint` first."""
    check_footprint(p)
    points = parse_footprint(p.footprint)
    if points is None:
        return ConvexShape.circle((0.0, 0.0), p.robot_radius + p.footprint_padding)
    polygon = ConvexShape.polygon(points) if len(points) >= 3 else ConvexShape(points)
    return ConvexShape(polygon.points, polygon.radius + p.footprint_padding)
