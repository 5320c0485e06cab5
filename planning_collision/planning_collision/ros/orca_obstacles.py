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
import threading
import time

import numpy as np

from planning_collision import orca
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
    """(obstacle id, polygon) for every usable obstacle, and a problem text per skipped one:
    a bad obstacle is skipped and named, the others are kept."""
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
        except Exception as exc:  # one obstacle must never cost the others
            problems.append(f"obstacle '{obstacle.id}': {field}: {type(exc).__name__}: {exc}")
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


class ObstacleWorker:
    """ORCA's static obstacles, built from the latest ObstacleArray and map on a thread of its
    own, so that no obstacle set, however large, holds up the control step.

    The subscriptions :meth:`submit` messages (cheap: the latest of each kind is kept, older
    pending ones are dropped); the worker converts them (polygon checks, map tracing), leaves
    out map polygons an ObstacleArray polygon covers, builds the ORCA obstacle tree and swaps
    it in with one assignment to :attr:`current`. Until a build is done, the control step
    keeps using the previous set. A bad obstacle is skipped and named; the others are kept.
    """

    def __init__(self, global_frame: str, obstacles_topic: str, occupied_threshold: int,
                 unknown_is_occupied: bool, simplify_tolerance: float, logger,
                 kernels_ready: threading.Event | None = None, on_grid=None):
        self.global_frame = global_frame
        self.on_grid = on_grid  # called on this thread with each new map's GridMap (#22)
        self._new_map = None  # a map whose routes are still to build
        self.obstacles_topic = obstacles_topic
        self.occupied_threshold = occupied_threshold
        self.unknown_is_occupied = unknown_is_occupied
        self.simplify_tolerance = simplify_tolerance
        self.log = logger
        self.kernels_ready = kernels_ready  # building waits for the kernels to be loaded
        self.current = None  # the ORCA obstacle set in use (None: no obstacles)
        self.builds = 0  # obstacle sets swapped in so far
        self._array_polygons: list[np.ndarray] = []
        self._map_polygons: list[np.ndarray] = []
        self._map_slack = 0.0
        self._map_key: tuple | None = None
        self._pending: dict[str, object] = {}
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="orca-obstacles", daemon=True)
        self._thread.start()

    def submit(self, kind: str, msg) -> None:
        """Queue an ObstacleArray (``kind`` "obstacles") or an OccupancyGrid ("map")."""
        with self._wake:
            self._pending[kind] = msg
            self._wake.notify()

    def close(self, timeout: float = 1.0) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                pending, self._pending = self._pending, {}
            if self.kernels_ready is not None:
                self.kernels_ready.wait()
            try:
                changed = []
                if "obstacles" in pending and self._take_obstacles(pending["obstacles"]):
                    changed.append("obstacles")
                if "map" in pending and self._take_map(pending["map"]):
                    changed.append("map")
                if changed:
                    self._rebuild(" and ".join(changed))
                if self._new_map is not None and self.on_grid is not None:
                    # After the obstacles are in use: routes are an aid, built after them.
                    msg, self._new_map = self._new_map, None
                    try:
                        self.on_grid(grid_from_msg(msg, self.occupied_threshold,
                                                   self.unknown_is_occupied))
                    except Exception as exc:  # the obstacles are in use all the same
                        self.log.error(f"routes not updated: {type(exc).__name__}: {exc}")
            except Exception as exc:  # never let the worker die: keep the previous set
                self.log.error(f"obstacles not updated: {type(exc).__name__}: {exc}")

    def _take_obstacles(self, msg: ObstacleArray) -> bool:
        if msg.header.frame_id != self.global_frame:
            self.log.warning(f"obstacles in frame '{msg.header.frame_id}' ignored: "
                             f"global_frame is '{self.global_frame}'")
            return False
        polygons, problems = obstacle_array_polygons(msg)
        for problem in problems:
            self.log.warning(f"{problem}; skipped")
        self._array_polygons = [polygon for _, polygon in polygons]
        return True

    def _take_map(self, msg) -> bool:
        if msg.header.frame_id != self.global_frame:
            self.log.warning(f"map in frame '{msg.header.frame_id}' ignored: global_frame is "
                             f"'{self.global_frame}'")
            return False
        info = msg.info
        key = (info.width, info.height, info.resolution, info.origin.position.x,
               info.origin.position.y, info.origin.orientation.x, info.origin.orientation.y,
               info.origin.orientation.z, info.origin.orientation.w, bytes(msg.data))
        if key == self._map_key:
            return False  # the same map again (republished): traced already
        started = time.perf_counter()
        try:
            polygons = map_polygons(msg, self.occupied_threshold, self.unknown_is_occupied,
                                    self.simplify_tolerance)
        except RequestError as exc:
            self.log.warning(f"map ignored: {exc}")
            return False
        self._map_key = key
        self._map_polygons = polygons
        # How far the traced outline of an obstacle can lie outside it: a cell's diagonal
        # plus the simplification.
        self._map_slack = math.sqrt(2.0) * info.resolution + self.simplify_tolerance
        self.log.info(f"map {info.width} x {info.height}: {len(polygons)} polygons, "
                      f"{sum(len(q) for q in polygons)} vertices, traced in "
                      f"{(time.perf_counter() - started) * 1e3:.1f} ms")
        self._new_map = msg
        return True

    def _rebuild(self, source: str) -> None:
        # A map region an ObstacleArray polygon already covers is left out: overlapping
        # obstacles trap agents (see the module's docstring).
        started = time.perf_counter()
        covered = covered_polygons(self._map_polygons, self._array_polygons, self._map_slack)
        if covered.any():
            self.log.info(f"{int(covered.sum())} map polygons left out: obstacles on "
                          f"{self.obstacles_topic} cover them")
        polygons = self._array_polygons + [q for q, c in zip(self._map_polygons, covered,
                                                               strict=True) if not c]
        build = orca.build_obstacles
        try:
            obstacles = build(polygons) if polygons else None
        except Exception:  # e.g. a polygon repeating a vertex: keep the ones that build alone
            usable = []
            for polygon in polygons:
                try:
                    build([polygon])
                    usable.append(polygon)
                except Exception as exc:
                    self.log.warning(f"{source}: a polygon skipped: {exc}")
            polygons = usable
            obstacles = build(polygons) if polygons else None
        self.current = obstacles
        self.builds += 1
        self.log.info(f"{source} updated: {len(polygons)} obstacle polygons in use, built in "
                      f"{(time.perf_counter() - started) * 1e3:.1f} ms")
