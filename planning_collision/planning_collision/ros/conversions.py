"""Converting between ROS messages and the pure cores' data (arrays, ConvexShape, GridMap).

Every function that reads a message validates it and raises :class:`RequestError` naming the
offending field, so a service can answer ``success: false`` with that message.
"""

from __future__ import annotations

import array
import math

import numpy as np
from geometry_msgs.msg import Point, Pose, Quaternion

from planning_collision.collision_world import (
    MAX_QUERY_COORD,
    Footprint,
    ObstacleSnapshot,
    QueryError,
)
from planning_collision.common.checks import finite_scalar
from planning_collision.common.se2 import quaternion_from_yaw as _quaternion_from_yaw
from planning_collision.common.se2 import quaternion_yaw
from planning_collision.geometry import ConvexShape, ObstacleSet
from planning_collision.geometry.outline import outline
from planning_collision.grid import GridMap
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape

from .collision_server_parameters import parse_footprint
from .parameters import ParameterError

# Coordinates a message may carry (metres): see collision_world.MAX_QUERY_COORD.
MAX_MESSAGE_COORD = MAX_QUERY_COORD


class RequestError(QueryError):
    """A message field the node cannot use; the text names the field, ``reason`` the
    services' error code (BAD_REQUEST unless told)."""


def yaw_of(q: Quaternion, field: str = "orientation") -> float:
    """Yaw (rotation about z) of a quaternion of any non-zero norm (see
    :func:`planning_collision.common.se2.quaternion_yaw`); RequestError for a zero or
    non-finite one."""
    yaw = quaternion_yaw(q.x, q.y, q.z, q.w)
    if math.isnan(yaw):
        raise RequestError(_no_rotation(field, (q.x, q.y, q.z, q.w)))
    return yaw


def _no_rotation(field: str, q) -> str:
    if all(math.isfinite(v) for v in q):
        return f"{field} is a zero quaternion"
    return f"{field} contains NaN or inf"


def quaternion_from_yaw(yaw: float) -> Quaternion:
    x, y, z, w = _quaternion_from_yaw(yaw)
    return Quaternion(x=x, y=y, z=z, w=w)


def pose_xyyaw(pose: Pose, field: str) -> tuple[float, float, float]:
    """(x, y, yaw) of a Pose, checked finite with a non-zero orientation of any norm."""
    p = pose.position
    if not (math.isfinite(p.x) and math.isfinite(p.y)):
        raise RequestError(f"{field}.position contains NaN or inf")
    return p.x, p.y, yaw_of(pose.orientation, f"{field}.orientation")


def poses_array(poses, field: str) -> np.ndarray:
    """(N, 3) float64 array of x, y, yaw from a sequence of Pose (one pass, then numpy);
    orientations of any non-zero norm."""
    raw = np.array([(p.position.x, p.position.y, p.orientation.x, p.orientation.y,
                     p.orientation.z, p.orientation.w) for p in poses], dtype=np.float64)
    raw = raw.reshape(-1, 6)
    bad = ~np.isfinite(raw[:, :2]).all(axis=1)
    if bad.any():
        raise RequestError(f"{field}[{int(np.flatnonzero(bad)[0])}].position contains NaN "
                           f"or inf")
    yaw = quaternion_yaw(raw[:, 2], raw[:, 3], raw[:, 4], raw[:, 5])
    bad = np.isnan(yaw)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise RequestError(_no_rotation(f"{field}[{i}].orientation", raw[i, 2:]))
    return np.column_stack([raw[:, 0], raw[:, 1], yaw])


def points_msgs(xy: np.ndarray) -> list[Point]:
    """geometry_msgs/Point list from an (N, 2) array (z = 0)."""
    return [Point(x=x, y=y) for x, y in xy.tolist()]


def point_xy(point: Point, field: str) -> tuple[float, float]:
    if not (math.isfinite(point.x) and math.isfinite(point.y)):
        raise RequestError(f"{field} contains NaN or inf")
    return point.x, point.y


def float_array(values, field: str) -> np.ndarray:
    """A float64[] message field as a numpy array (no copy), checked finite."""
    arr = np.frombuffer(values, dtype=np.float64) if len(values) else np.empty(0)
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise RequestError(f"{field}[{bad}] is NaN or inf")
    return arr


def _scalar(value: float, field: str, **bounds) -> float:
    """:func:`~planning_collision.common.checks.finite_scalar` as a RequestError."""
    try:
        return finite_scalar(value, field, **bounds)
    except ValueError as exc:
        raise RequestError(str(exc)) from None


def shape_from_msg(msg: Shape, field: str) -> ConvexShape:
    """The ConvexShape a Shape message describes, placed by its pose."""
    try:
        _scalar(msg.radius, f"{field}.radius", at_least=0.0)
        if msg.type == Shape.TYPE_POINTS:
            if len(msg.points) == 0:
                raise RequestError(f"{field}.points is empty (TYPE_POINTS needs at least one)")
            pts = np.array([point_xy(p, f"{field}.points[{i}]")
                            for i, p in enumerate(msg.points)])
            far = np.flatnonzero(~(np.abs(pts) <= MAX_MESSAGE_COORD).all(axis=1))
            if far.size:
                raise RequestError(f"{field}.points[{int(far[0])}] has a coordinate beyond "
                                   f"+-{MAX_MESSAGE_COORD:g} m", "OUT_OF_RANGE")
            local = ConvexShape(pts, msg.radius)
        elif msg.type == Shape.TYPE_CIRCLE:
            if msg.radius <= 0.0:
                raise RequestError(f"{field}.radius must be > 0 for TYPE_CIRCLE")
            local = ConvexShape.circle((0.0, 0.0), msg.radius)
        elif msg.type == Shape.TYPE_BOX:
            for name in ("length", "width"):
                _scalar(getattr(msg, name), f"{field}.{name}", above=0.0)
            box = ConvexShape.box((0.0, 0.0), 0.0, msg.length, msg.width)
            local = box if msg.radius == 0.0 else ConvexShape(box.points, msg.radius)
        else:
            raise RequestError(f"{field}.type {msg.type} is not TYPE_POINTS (0), TYPE_CIRCLE (1) "
                               f"or TYPE_BOX (2)")
    except RequestError:
        raise
    except ValueError as exc:  # from ConvexShape's own checks
        raise RequestError(f"{field}: {exc}") from exc
    x, y, yaw = pose_xyyaw(msg.pose, f"{field}.pose")
    if x == 0.0 and y == 0.0 and yaw == 0.0:
        return local
    try:
        return local.transformed(x, y, yaw)
    except ValueError as exc:  # e.g. a pose beyond the geometry's coordinate range
        raise RequestError(f"{field}.pose: {exc}", "OUT_OF_RANGE") from exc


def shape_is_empty(msg: Shape) -> bool:
    """True for the default Shape (TYPE_POINTS with no points): 'use the configured one'."""
    return msg.type == Shape.TYPE_POINTS and len(msg.points) == 0


def footprint_from_string(text: str, field: str) -> Footprint:
    """The footprint of Nav2's footprint string '[[x, y], ...]' (robot frame; a concave
    polygon becomes its convex parts)."""
    try:
        points = parse_footprint(text, field)
    except ParameterError as exc:
        raise RequestError(str(exc)) from None
    if points is None:
        raise RequestError(f"{field} is '{text}': give at least one [x, y] point")
    return _footprint(points, 0.0, field)


def footprint_from_polygon(points, padding: float, field: str) -> Footprint:
    """The footprint of a geometry_msgs/Polygon's points (robot frame), grown by
    ``padding``."""
    if len(points) == 0:
        raise RequestError(f"{field} has no points")
    xy = np.array([point_xy(p, f"{field}[{i}]") for i, p in enumerate(points)],
                  dtype=np.float64)
    return _footprint(xy, padding, field)


def _footprint(points: np.ndarray, padding: float, field: str) -> Footprint:
    if not (np.abs(points) <= MAX_MESSAGE_COORD).all():
        raise RequestError(f"{field} has a coordinate beyond +-{MAX_MESSAGE_COORD:g} m",
                           "OUT_OF_RANGE")
    try:
        return Footprint.from_points(points, padding)
    except ValueError as exc:
        raise RequestError(f"{field}: {exc}") from None


def polygon_vertices(points, field: str) -> np.ndarray:
    if len(points) < 3:
        raise RequestError(f"{field} needs at least 3 vertices, got {len(points)}")
    return np.array([point_xy(p, f"{field}[{i}]") for i, p in enumerate(points)])


def obstacle_parts(msg: Obstacle, field: str) -> list[ConvexShape]:
    """The convex parts of one obstacle: a decomposed polygon, or its single Shape."""
    from planning_collision.geometry import decompose

    if msg.type == Obstacle.TYPE_POLYGON:
        vertices = polygon_vertices(msg.polygon, f"{field}.polygon")
        try:
            return decompose(vertices)
        except ValueError as exc:
            raise RequestError(f"{field}.polygon: {exc}") from exc
    if msg.type == Obstacle.TYPE_SHAPE:
        return [shape_from_msg(msg.shape, f"{field}.shape")]
    raise RequestError(f"{field}.type {msg.type} is not TYPE_POLYGON (0) or TYPE_SHAPE (1)")


def grid_from_msg(msg, occupied_threshold: int, unknown_is_occupied: bool) -> GridMap:
    """GridMap over a nav_msgs/OccupancyGrid's data buffer, without copying it."""
    info = msg.info
    width, height = int(info.width), int(info.height)
    if width == 0 or height == 0:
        raise RequestError(f"map is empty ({width} x {height} cells)")
    if len(msg.data) != width * height:
        raise RequestError(f"map data has {len(msg.data)} cells, width * height is "
                           f"{width} * {height} = {width * height}")
    data = np.frombuffer(msg.data, dtype=np.int8).reshape(height, width)
    x, y, yaw = pose_xyyaw(info.origin, "map.info.origin")
    if not (abs(x) <= MAX_MESSAGE_COORD and abs(y) <= MAX_MESSAGE_COORD):
        raise RequestError(f"map.info.origin.position ({x:g}, {y:g}) is beyond "
                           f"+-{MAX_MESSAGE_COORD:g} m")
    try:
        return GridMap(data, float(info.resolution), (x, y, yaw),
                       occupied_threshold=occupied_threshold,
                       unknown_is_occupied=unknown_is_occupied)
    except ValueError as exc:
        raise RequestError(f"map: {exc}") from exc


def float64_field(values: np.ndarray) -> array.array:
    """A numpy array as the array.array('d') a float64[] field stores: assigning that is a
    plain copy, where a numpy array makes the generated setter check every element."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def int32_field(values: np.ndarray) -> array.array:
    """A numpy array as the array.array('i') an int32[] field stores (see float64_field)."""
    out = array.array("i")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int32).tobytes())
    return out


def point_msg(x: float, y: float) -> Point:
    return Point(x=float(x), y=float(y))


def obstacle_snapshot(msg: ObstacleArray, warn) -> ObstacleSnapshot:
    """The convex parts of every usable obstacle of ``msg``; each bad one is skipped and named
    (``warn``), the others kept."""
    parts: list[ConvexShape] = []
    part_ids: list[str] = []
    outlines: list[tuple[str, np.ndarray]] = []
    seen: set[str] = set()
    for i, obstacle in enumerate(msg.obstacles):
        field = f"obstacles[{i}]"
        if obstacle.id in seen:
            warn(f"{field}: duplicate id '{obstacle.id}' ignored")
            continue
        try:
            shapes = obstacle_parts(obstacle, field)
            ring = (np.array([point_xy(q, field) for q in obstacle.polygon])
                    if obstacle.type == obstacle.TYPE_POLYGON else outline(shapes[0]))
        except ValueError as exc:
            warn(f"obstacle '{obstacle.id}' ignored: {exc}")
            continue
        seen.add(obstacle.id)
        parts.extend(shapes)
        part_ids.extend([obstacle.id] * len(shapes))
        outlines.append((obstacle.id, ring))
    return ObstacleSnapshot(ObstacleSet.from_shapes(parts), tuple(part_ids), tuple(outlines))
