"""orca_node's robot radii from footprint topics.

ORCA plans for discs centred on each robot's odometry position. With ``footprint_topic`` set,
orca_node subscribes to ``<name>/<footprint_topic>`` (geometry_msgs/PolygonStamped, the
footprint in the robot's own frame, as Nav2's costmaps are given it) for every agent, and each
polygon sets that agent's ``<name>.radius`` parameter to the footprint's circumscribed radius:
the distance from the robot's origin to its farthest vertex, so the disc covers the whole
footprint. The parameter is set through the node's own parameter path (checked as a
``ros2 param set`` would be, visible to ``ros2 param get``), on the step's thread.

A polygon in the global frame or the agent's odometry frame (Nav2's ``published_footprint``,
the footprint placed at the robot's pose) is not in the robot's frame and is ignored with a
warning: its radius about the robot's origin would be meaningless.
"""

from __future__ import annotations

import math
from functools import partial

from geometry_msgs.msg import PolygonStamped
from rclpy.parameter import Parameter

from .qos import RELIABLE

#: Radius changes smaller than this (metres) are not applied.
RADIUS_TOLERANCE = 1e-6


def circumscribed_radius(points) -> float:
    """Distance from the origin to the farthest of ``points`` (objects with x and y);
    ValueError for no points, a non-finite one, or a radius of 0."""
    if len(points) == 0:
        raise ValueError("the polygon has no points")
    radius = 0.0
    for i, point in enumerate(points):
        if not (math.isfinite(point.x) and math.isfinite(point.y)):
            raise ValueError(f"point {i} contains NaN or inf")
        radius = max(radius, math.hypot(point.x, point.y))
    if not radius > 0.0:
        raise ValueError("every point is at the robot's origin: no radius")
    return radius


def subscribe_footprints(node, names, p) -> None:
    """With ``p.footprint_topic`` set, subscribe ``node`` (orca_node) to every agent's
    footprint; each one sets the agent's radius parameter."""
    if not p.footprint_topic:
        return
    for name in names:
        node.create_subscription(PolygonStamped, f"{name}/{p.footprint_topic}",
                                 partial(_on_footprint, node, name), RELIABLE)


def _on_footprint(node, name: str, msg: PolygonStamped) -> None:
    p, fleet = node.params, node.fleet
    if fleet is None:
        return
    frame = msg.header.frame_id
    if frame and frame in (p.global_frame, p.odom_frame.replace("{name}", name)):
        node._warn(f"footprint-frame/{name}", f"{name}: footprint in frame '{frame}' ignored: "
                   f"it must be in the robot's own frame")
        return
    try:
        radius = circumscribed_radius(msg.polygon.points)
    except ValueError as exc:
        node._warn(f"footprint/{name}", f"{name}: footprint ignored: {exc}")
        return
    if abs(radius - float(fleet.specs[fleet.index[name]].radius)) > RADIUS_TOLERANCE:
        node._following.append(Parameter(f"{name}.radius", value=radius))
