"""orca_node's robot radii from footprint topics.

ORCA plans for discs centred on each robot's odometry position. With ``footprint_topic`` set,
orca_node subscribes to ``<name>/<footprint_topic>`` (geometry_msgs/PolygonStamped, the
footprint in the robot's own frame, as Nav2's costmaps are given it) for every agent, and each
polygon sets that agent's ``<name>.radius`` parameter to the footprint's circumscribed radius:
the distance from the robot's origin to its farthest vertex, so the disc covers the whole
footprint. The parameter is set through the node's own parameter path (checked as a
``ros2 param set`` would be, visible to ``ros2 param get``), on the step's thread.

A polygon in the global frame or the agent's odometry frame (``odom_frame``, ``{name}``
replaced by the agent's name) is Nav2's ``published_footprint``: the footprint placed at the
robot's pose. The circumscribed radius needs no rotation, only the robot's centre, so it is
taken about the agent's position in that frame at the polygon's stamp (its odometry moved by
its twist to the stamp, now for a zero stamp; placed by its localization for the global
frame). A polygon stamped more than ``odom_timeout`` from the agent's latest odometry, or in
the global frame before the agent is placed there, is ignored with a warning.
"""

from __future__ import annotations

import math
from functools import partial

from geometry_msgs.msg import PolygonStamped
from rclpy.parameter import Parameter

from planning_collision.fleet.controller import sample_time

from .pose_sources import seconds
from .qos import RELIABLE

#: Radius changes smaller than this (metres) are not applied.
RADIUS_TOLERANCE = 1e-6


def circumscribed_radius(points, centre=(0.0, 0.0)) -> float:
    """Distance from ``centre`` (the robot's origin) to the farthest of ``points`` (objects
    with x and y); ValueError for no points, a non-finite one, or a radius of 0."""
    if len(points) == 0:
        raise ValueError("the polygon has no points")
    radius, (cx, cy) = 0.0, centre
    for i, point in enumerate(points):
        if not (math.isfinite(point.x) and math.isfinite(point.y)):
            raise ValueError(f"point {i} contains NaN or inf")
        radius = max(radius, math.hypot(point.x - cx, point.y - cy))
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
    frame, i, centre = msg.header.frame_id.lstrip("/"), fleet.index[name], (0.0, 0.0)
    if frame and frame in (p.global_frame, p.odom_frame.replace("{name}", name)):
        pose_at = fleet.pose_at if frame == p.global_frame else fleet.odom_pose_at
        pose = pose_at(i, sample_time(seconds(msg.header.stamp), node._now()))
        if pose is None:
            node._warn(f"footprint-frame/{name}", f"{name}: footprint in frame '{frame}' "
                       f"ignored: the robot's pose there at its stamp is unknown")
            return
        centre = pose[:2]
    try:
        radius = circumscribed_radius(msg.polygon.points, centre)
    except ValueError as exc:
        node._warn(f"footprint/{name}", f"{name}: footprint ignored: {exc}")
        return
    if abs(radius - float(fleet.specs[i].radius)) > RADIUS_TOLERANCE:
        node._following.append(Parameter(f"{name}.radius", value=radius))
