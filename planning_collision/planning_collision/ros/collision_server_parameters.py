"""collision_server's parameters, declared in one place, and the default footprint they give.

All of them are read-only (changing one means restarting the node, as with Nav2's
collision_monitor); ``ros2 param describe /collision_server <name>`` shows each description
and a number's bounds (declared on its :class:`~.parameters.Param`, checked when declared).
:func:`check_footprint` adds the rules no bound states.
"""

from __future__ import annotations

import numpy as np
import yaml
from rclpy.parameter import Parameter

from planning_collision import grid
from planning_collision.collision_world import Footprint
from planning_collision.geometry import ConvexShape
from planning_collision.geometry.shapes import as_points, check_convex_polygon

from .lifecycle import AUTOSTART
from .parameters import Param, ParameterError

STRINGS = Parameter.Type.STRING_ARRAY

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
          "Default robot footprint (Nav2 format: a string '[[x, y], ...]' of a simple polygon "
          "in the robot frame; a concave one, such as a forklift with its forks, is split into "
          "convex parts), used when a request gives no footprint and footprint_topic is empty. "
          "'[]' uses robot_radius instead."),
    Param("robot_radius", 0.25, "Disc footprint radius in metres when footprint is '[]'."),
    Param("footprint_padding", 0.0, "Metres added around the default footprint (parameter or "
          "topic), exactly (the polygon is rounded by this radius, not scaled).", at_least=0.0),
    Param("footprint_topic", "", "geometry_msgs/PolygonStamped of the robot's footprint in its "
          "own frame (footprint_frame), at run time: once one arrives it is the default "
          "footprint, each message replacing the last (concave polygons are split into convex "
          "parts). Until the first one, requests that rely on the default are answered "
          "NO_FOOTPRINT. Empty: off (the footprint and robot_radius parameters)."),
    Param("footprint_frame", "base_link", "The robot's own frame: footprint_topic's polygons "
          "in it (or with an empty frame_id) are taken as they are. A polygon in another frame "
          "is ignored with a warning (no tf2 here) unless footprint_pose_topic places it."),
    Param("footprint_pose_topic", "", "nav_msgs/Odometry of the robot, to accept a footprint in "
          "a global frame (Nav2's published_footprint: the footprint placed at the robot's "
          "pose in the costmap's frame): a polygon whose frame_id is the odometry's "
          "header.frame_id is moved into the robot's frame by the inverse of the robot's pose "
          "at the polygon's stamp (refused with a warning when no pose lies within 0.2 s of "
          "it). Empty: only robot-frame footprints are accepted."),
    Param("footprint_subscribe_transient_local", False,
          "Subscribe to footprint_topic reliable + transient_local (a latched footprint), "
          "else reliable + volatile."),
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
    # The sensor layer (#25): ros/collision_server_sensors.py
    Param("scan_topics", [], "sensor_msgs/LaserScan topics marked into the sensor layer "
          "(queries include it with the LAYER_SENSORS bit); empty: none.",
          type_hint=STRINGS),
    Param("scan_pose_topics", [], "For each of scan_topics, the nav_msgs/Odometry topic of "
          "its scans' frame in global_frame (header.frame_id global_frame, child_frame_id the "
          "scans' frame): no tf2 here.", type_hint=STRINGS),
    Param("cloud_topics", [], "sensor_msgs/PointCloud2 topics (x, y, z float32 fields) marked "
          "into the sensor layer; empty: none.",
          type_hint=STRINGS),
    Param("cloud_pose_topics", [], "For each of cloud_topics, the Odometry topic of its "
          "clouds' frame in global_frame.", type_hint=STRINGS),
    Param("cloud_min_z", 0.05, "Points of a cloud below this height (m, in the cloud's "
          "frame) are ignored (the floor)."),
    Param("cloud_max_z", 2.0, "Points of a cloud above this height (m, in the cloud's frame) "
          "are ignored."),
    Param("sensor_decay", 0.5, "Seconds a sensor mark lasts unless seen again or cleared by "
          "a later ray.", above=0.0),
    Param("sensor_layer_resolution", 0.05, "Cell size (m) of the sensor layer.", above=0.0),
    Param("sensor_layer_origin_x", -20.0, "x (m, global_frame) of the sensor layer's "
          "lower-left corner."),
    Param("sensor_layer_origin_y", -20.0, "y (m, global_frame) of the sensor layer's "
          "lower-left corner."),
    Param("sensor_layer_width", 40.0, "Width (m) of the sensor layer's window along x; "
          "returns outside it are not marked.", above=0.0),
    Param("sensor_layer_height", 40.0, "Height (m) of the sensor layer's window along y.",
          above=0.0),
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
            check_simple_polygon(points)
        else:
            as_points(points, "points")
    except ValueError as exc:
        raise ParameterError(f"footprint: {exc}") from exc


def check_simple_polygon(points: np.ndarray) -> None:
    """ValueError unless ``points`` are a convex polygon or a simple (not self-intersecting,
    non-zero area) concave one. Plain numpy, like :func:`check_convex_polygon`."""
    try:
        check_convex_polygon(points, "points")
        return
    except ValueError as exc:
        convex_problem = exc
    pts = as_points(points, "points")
    a, b = pts, np.roll(pts, -1, axis=0)
    rel = pts - pts[0]
    if np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]) == 0.0:
        raise convex_problem  # zero area
    n = len(pts)
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # neighbours through the closing edge
            if _segments_meet(a[i], b[i], a[j], b[j]):
                raise ValueError(f"polygon is self-intersecting: edges {i} and {j} meet")


def _segments_meet(p, q, r, s) -> bool:
    def orient(u, v, w):
        return np.sign((v[0] - u[0]) * (w[1] - u[1]) - (v[1] - u[1]) * (w[0] - u[0]))

    def within(u, v, w):  # w on the line uv: within its bounding box
        return (min(u[0], v[0]) <= w[0] <= max(u[0], v[0])
                and min(u[1], v[1]) <= w[1] <= max(u[1], v[1]))

    o1, o2, o3, o4 = orient(p, q, r), orient(p, q, s), orient(r, s, p), orient(r, s, q)
    if o1 != o2 and o3 != o4 and 0 not in (o1, o2, o3, o4):
        return True
    return ((o1 == 0 and within(p, q, r)) or (o2 == 0 and within(p, q, s))
            or (o3 == 0 and within(r, s, p)) or (o4 == 0 and within(r, s, q)))


def default_footprint(p) -> Footprint:
    """The footprint of the parameters (``footprint``, ``robot_radius``, padding), checked by
    :func:`check_footprint` first; a concave polygon as its convex parts."""
    check_footprint(p)
    points = parse_footprint(p.footprint)
    if points is None:
        return Footprint.of(ConvexShape.circle((0.0, 0.0),
                                               p.robot_radius + p.footprint_padding))
    return Footprint.from_points(points, p.footprint_padding)
