"""Static obstacles for ORCA from ROS messages: ObstacleArray polygons and shapes, and the
blocked regions of an OccupancyGrid.

ORCA (RVO2) takes polygons, counter-clockwise for a solid obstacle, concave ones included, so
a TYPE_POLYGON obstacle keeps its own vertices (checked simple by the same decomposition the
collision server uses, then turned counter-clockwise). A TYPE_SHAPE obstacle (disc, capsule,
rounded polygon) becomes a polygon drawn around its rounded outline, so the polygon contains
the shape: ORCA keeps the robots off the polygon, hence off the shape. Occupied map regions
come from :func:`planning_collision.grid.occupied_polygons` (outer boundaries
counter-clockwise, holes such as a room's free space clockwise: RVO2's enclosing
boundaries).

RVO2's obstacles must not overlap: two overlapping polygons form a concave wedge between
their edges, and an agent that slides into it gets no permitted velocity at all. A map
usually draws the obstacles an ObstacleArray also gives (a pillar in both), so
:func:`covered_polygons` finds the map polygons that an ObstacleArray polygon already covers,
and the node leaves those out, keeping the exact one.
"""

from __future__ import annotations

import math

import numpy as np

from planning_collision.geometry import ConvexShape, ObstacleSet, decompose
from planning_collision.geometry.outline import outline
from planning_collision.grid import occupied_polygons
from planning_collision_interfaces.msg import Obstacle, ObstacleArray

from .conversions import RequestError, grid_from_msg, obstacle_parts, polygon_vertices

ARC_SEGMENTS = 8
# outline() puts its chords' vertices on the rounded boundary; each chord spans at most
# pi / ARC_SEGMENTS of arc (a vertex arc is at most pi, a disc 2 pi over 4 * ARC_SEGMENTS), so
# growing the radius by 1 / cos(half that angle) puts the chords outside the shape.
CIRCUMSCRIBE = 1.0 / math.cos(math.pi / (2 * ARC_SEGMENTS))


def signed_area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def counter_clockwise(polygon: np.ndarray) -> np.ndarray:
    return polygon[::-1].copy() if signed_area(polygon) < 0.0 else polygon


def shape_polygon(shape: ConvexShape) -> np.ndarray:
    """A polygon (CCW) that contains ``shape``; two points for a segment."""
    if shape.radius == 0.0:
        if shape.points.shape[0] < 2:
            raise RequestError("a single point with radius 0 is not an obstacle")
        return shape.points.copy()
    grown = ConvexShape(shape.points, shape.radius * CIRCUMSCRIBE)
    return outline(grown, ARC_SEGMENTS)


def obstacle_polygon(msg: Obstacle, field: str) -> np.ndarray:
    """The ORCA polygon of one Obstacle message; raises RequestError naming the field."""
    parts = obstacle_parts(msg, field)  # validates (a polygon must be simple)
    if msg.type == Obstacle.TYPE_POLYGON:
        return counter_clockwise(polygon_vertices(msg.polygon, f"{field}.polygon"))
    return shape_polygon(parts[0])


def obstacle_array_polygons(msg: ObstacleArray) -> tuple[list[tuple[str, np.ndarray]],
                                                          list[str]]:
    """(obstacle id, polygon) for every usable obstacle, and a problem text per skipped one."""
    polygons: list[tuple[str, np.ndarray]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, obstacle in enumerate(msg.obstacles):
        field = f"obstacles[{i}]"
        if obstacle.id in seen:
            problems.append(f"{field}: duplicate id '{obstacle.id}'")
            continue
        try:
            polygons.append((obstacle.id, obstacle_polygon(obstacle, field)))
        except RequestError as exc:
            problems.append(f"obstacle '{obstacle.id}': {exc}")
            continue
        seen.add(obstacle.id)
    return polygons, problems


def map_polygons(msg, occupied_threshold: int, unknown_is_occupied: bool,
                 simplify_tolerance: float) -> list[np.ndarray]:
    """Blocked regions of a nav_msgs/OccupancyGrid as ORCA polygons (RequestError if the map
    cannot be read)."""
    grid = grid_from_msg(msg, occupied_threshold, unknown_is_occupied)
    return occupied_polygons(grid, simplify_tolerance)


def covered_polygons(polygons: list[np.ndarray], covering: list[np.ndarray],
                     tolerance: float) -> np.ndarray:
    """(len(polygons),) bool: whether every vertex of the polygon lies within ``tolerance``
    of one of the ``covering`` polygons (their area included)."""
    if not polygons or not covering:
        return np.zeros(len(polygons), dtype=bool)
    parts = []
    for polygon in covering:
        parts += decompose(polygon) if polygon.shape[0] >= 3 else [ConvexShape(polygon)]
    vertices = np.concatenate(polygons)
    nearest = ObstacleSet.from_shapes(parts).nearest(
        vertices[:, None, :], np.ones(len(vertices), np.int64), np.zeros(len(vertices)),
        max_distance=tolerance)
    starts = np.cumsum([0] + [len(polygon) for polygon in polygons[:-1]])
    return np.logical_and.reduceat(nearest.index >= 0, starts)
