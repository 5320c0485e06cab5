"""Small builders for visualization_msgs markers shared by the nodes."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker

GREEN = ColorRGBA(r=0.1, g=0.8, b=0.2, a=0.9)
RED = ColorRGBA(r=0.9, g=0.1, b=0.1, a=0.9)
GREY = ColorRGBA(r=0.5, g=0.5, b=0.5, a=0.9)
BLUE = ColorRGBA(r=0.2, g=0.4, b=1.0, a=0.9)
ORANGE = ColorRGBA(r=1.0, g=0.6, b=0.0, a=0.9)
PURPLE = ColorRGBA(r=0.6, g=0.2, b=0.8, a=0.9)


def duration(seconds: float) -> Duration:
    sec = int(seconds)
    return Duration(sec=sec, nanosec=int(round((seconds - sec) * 1e9)))


def marker(kind: int, ns: str, marker_id: int, frame_id: str, stamp, color: ColorRGBA,
           scale: float, lifetime: float = 0.0) -> Marker:
    """An ADD marker with identity pose; ``scale`` is the line width (or the x/y/z scale)."""
    m = Marker(type=kind, ns=ns, id=marker_id, action=Marker.ADD, color=color,
               lifetime=duration(lifetime), frame_locked=False)
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = scale
    return m


def polyline(ns: str, marker_id: int, frame_id: str, stamp, xy, color: ColorRGBA,
             width: float, lifetime: float = 0.0, closed: bool = False, z: float = 0.0) -> Marker:
    """A LINE_STRIP through the (K, 2) points ``xy`` (closed: back to the first point)."""
    m = marker(Marker.LINE_STRIP, ns, marker_id, frame_id, stamp, color, width, lifetime)
    m.points = [Point(x=float(x), y=float(y), z=z) for x, y in xy]
    if closed and len(m.points) > 1:
        m.points.append(m.points[0])
    return m


def delete(ns: str, marker_id: int, frame_id: str, stamp) -> Marker:
    """A DELETE for one marker (namespace and id)."""
    m = Marker(ns=ns, id=marker_id, action=Marker.DELETE)
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    return m


def rgba(color: ColorRGBA) -> tuple[float, float, float, float]:
    return (color.r, color.g, color.b, color.a)


class MarkerData(NamedTuple):
    """The fields of a Marker that vary, as plain values: cheap to build in bulk, and either
    turned into a message (:func:`marker_from_data`) or serialized directly
    (:func:`planning_collision.ros.cdr.encode_marker_array`). Other fields keep their
    defaults; the frame and stamp are the array's."""

    ns: str
    id: int
    type: int
    action: int = Marker.ADD
    pose: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)  # x, y, z, qx, qy, qz, qw
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    color: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    lifetime: float = 0.0
    points: np.ndarray | None = None  # (K, 3)


def marker_from_data(frame_id: str, stamp, data: MarkerData) -> Marker:
    m = Marker(ns=data.ns, id=data.id, type=data.type, action=data.action,
               lifetime=duration(data.lifetime))
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    p = m.pose
    (p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
     p.orientation.z, p.orientation.w) = data.pose
    m.scale.x, m.scale.y, m.scale.z = data.scale
    m.color = ColorRGBA(r=data.color[0], g=data.color[1], b=data.color[2], a=data.color[3])
    if data.points is not None:
        m.points = [Point(x=x, y=y, z=z) for x, y, z in data.points.tolist()]
    return m
