"""collision_server: the latest map and obstacles in; line-of-sight, collision, path and distance
services out.

A thin adapter: it converts messages (:mod:`.conversions`), keeps the current map and obstacle
set, and calls the pure cores (:mod:`planning_collision.grid`, :mod:`planning_collision.geometry`).

State is one immutable snapshot, ``_world`` (the map and the obstacle set), replaced by one
attribute assignment when a new map or obstacle message has been converted. Every request reads
``_world`` exactly once, at its start, and passes that snapshot down to every check it makes, so
one answer sees the old or the new map (and obstacles), never a mix. A map update holds queries
back only for as long as the interpreter lock is held by the conversion (a zero-copy view of the
message buffer, so milliseconds even for large maps; the time is logged with each map).

Requests are validated at the boundary: anything a core function would refuse (NaN, points more
than 2**29 cells from the map's origin, coordinates beyond the geometry's range, footprints too
large to rasterise) is answered ``success: false`` with a message naming the request field.
Topic callbacks never raise: a map or obstacle message that cannot be used is logged and
dropped, and the node keeps its previous state.

Run: ``ros2 run planning_collision collision_server --ros-args --params-file
config/collision_server.yaml`` or ``python -m planning_collision.ros.collision_server``.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from array import array
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps

import numpy as np
import yaml
from nav_msgs.msg import OccupancyGrid
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from visualization_msgs.msg import MarkerArray

from planning_collision import geometry, grid
from planning_collision.geometry import ConvexShape, ObstacleSet
from planning_collision.geometry.outline import outline
from planning_collision.geometry.raycast import cast_segments
from planning_collision_interfaces.msg import ObstacleArray
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

from . import markers
from .conversions import (
    MAX_MESSAGE_COORD,
    RequestError,
    float64_field,
    float_array,
    grid_from_msg,
    int32_field,
    obstacle_parts,
    point_msg,
    point_xy,
    points_msgs,
    poses_array,
    shape_from_msg,
    shape_is_empty,
)
from .parameters import Param, ParameterError, declare
from .run import run_node

LAYER_GRID = 1
LAYER_OBSTACLES = 2
LAYERS_ALL = 3
GRID_BLOCKER = -2
# Marker ids of the query namespaces keep increasing (so recent queries stay drawn until their
# lifetime ends) and wrap here, inside int32.
MARKER_ID_WRAP = 2**31 - 1
# A footprint reaching farther than this many cells from the robot's origin is refused for grid
# checks: rasterising it costs about that many rows per pose (and a scratch array as large).
MAX_FOOTPRINT_CELLS = 10_000
# Request coordinates must stay within this (metres): see conversions.MAX_MESSAGE_COORD.
MAX_REQUEST_COORD = MAX_MESSAGE_COORD

PARAMETERS = (
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
    Param("occupied_threshold", 65, "Cells with occupancy >= this (1..100) are blocked."),
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
          "polygon is rounded by this radius, not scaled)."),
    Param("publish_markers", True, "Publish RViz markers on ~/markers: obstacle outlines, "
          "recent line-of-sight queries and footprints checked."),
    Param("marker_lifetime", 5.0, "Seconds a query's markers stay in RViz."),
    Param("max_markers_per_query", 50, "At most this many rays or footprints of one request "
          "are drawn."),
    Param("max_request_size", 1_000_000, "Requests with more rays or poses than this are "
          "refused (success: false), so no request can stall the node."),
)


@dataclass(frozen=True)
class ObstacleSnapshot:
    """Convex parts of the current obstacles, their ids and the BVH over them."""

    parts: ObstacleSet
    part_ids: tuple[str, ...]
    outlines: tuple[tuple[str, np.ndarray], ...]


@dataclass(frozen=True)
class World:
    """What one request checks against: the map and the obstacles, swapped in together."""

    grid: grid.GridMap | None = None
    obstacles: ObstacleSnapshot | None = None


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


@contextmanager
def request_field(field: str) -> Iterator[None]:
    """Turn a core function's ValueError (bad input it refused) into a RequestError naming the
    request field the input came from."""
    try:
        yield
    except RequestError:
        raise
    except ValueError as exc:
        raise RequestError(f"{field}: {exc}") from exc


def answers(response_type):
    """Wrap a service handler: RequestError -> success false + its message; any other error
    -> success false + 'internal error' (logged with the traceback: a bug). Never raises."""

    def wrap(handler):
        @wraps(handler)
        def callback(self, request, response):
            try:
                handler(self, request, response)
                response.success = True
            except RequestError as exc:
                response = response_type.Response(success=False, message=str(exc))
            except Exception as exc:  # a bug must not take the node down
                self.get_logger().error(f"{handler.__name__} failed: {exc}\n"
                                        f"{traceback.format_exc()}")
                response = response_type.Response(success=False,
                                                  message=f"internal error: {exc}")
            return response

        return callback

    return wrap


def topic_callback(what: str):
    """Wrap a subscription or timer callback so that it never raises into the executor (which
    would end the node): a RequestError (a message the node cannot use) is logged as a warning,
    anything else as an error with its traceback; the node keeps its previous state."""

    def wrap(handler):
        @wraps(handler)
        def callback(self, *args):
            try:
                handler(self, *args)
            except RequestError as exc:
                self.get_logger().warning(f"{what} ignored: {exc}")
            except Exception as exc:
                self.get_logger().error(f"{what} ignored: {type(exc).__name__}: {exc}\n"
                                        f"{traceback.format_exc()}")

        return callback

    return wrap


def _first(mask: np.ndarray) -> int | None:
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def _beyond_range(field: str) -> str:
    return f"{field} has a coordinate beyond +-{MAX_REQUEST_COORD:g} m"


def _off_grid(field: str, far: float, gmap: grid.GridMap) -> str:
    return (f"{field} lies {far:.4g} m from the map's origin, more than {grid.MAX_CELL_COORD} "
            f"cells of {gmap.resolution:g} m")


class CollisionServer(Node):
    def __init__(self, **node_kwargs):
        super().__init__("collision_server", **node_kwargs)
        self.params = p = declare(self, PARAMETERS)
        if not 1 <= p.occupied_threshold <= 100:
            raise ParameterError(f"occupied_threshold must be in 1..100, got "
                                 f"{p.occupied_threshold}")
        self.default_footprint = self._footprint_from_parameters()

        started = time.perf_counter()
        geometry.warmup()
        grid.warmup()
        self.get_logger().info(f"kernels ready in {time.perf_counter() - started:.2f} s")

        self._world = World()
        self._pending_markers: deque = deque(maxlen=64)
        # Marker bookkeeping, touched only by the builds _flush_markers runs (one timer in its
        # own mutually exclusive group, so no lock is needed).
        self._next_marker_id: dict[str, int] = {}
        self._obstacle_namespaces: set[str] = set()
        self._marker_subscribers = 0

        inputs = MutuallyExclusiveCallbackGroup()
        queries = ReentrantCallbackGroup()
        # Queries run on the spinning thread (no hand-off to a worker: ~0.3 ms less per call);
        # map and obstacle updates run on the executor's worker threads (see ros/run.py), one
        # at a time (one mutually exclusive group), so each can build the next World from the
        # current one without a lock.
        self.inline_callback_groups = (queries,)

        def qos(latched: bool) -> QoSProfile:
            return QoSProfile(
                depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                else DurabilityPolicy.VOLATILE)

        self._map_sub = self.create_subscription(
            OccupancyGrid, p.map_topic, self._on_map, qos(p.map_subscribe_transient_local),
            callback_group=inputs)
        self._obstacles_sub = self.create_subscription(
            ObstacleArray, p.obstacles_topic, self._on_obstacles,
            qos(p.obstacles_subscribe_transient_local), callback_group=inputs)

        self._marker_pub = None
        if p.publish_markers:
            self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 10)
            self.create_timer(0.1, self._flush_markers,
                              callback_group=MutuallyExclusiveCallbackGroup())
        # Services last: once they are visible, the node is fully built.
        self.create_service(CheckLineOfSight, "check_line_of_sight", self._check_line_of_sight,
                            callback_group=queries)
        self.create_service(CheckLinesOfSight, "check_lines_of_sight",
                            self._check_lines_of_sight, callback_group=queries)
        self.create_service(CheckCollision, "check_collision", self._check_collision,
                            callback_group=queries)
        self.create_service(CheckPath, "check_path", self._check_path, callback_group=queries)
        self.create_service(ComputeDistance, "compute_distance", self._compute_distance,
                            callback_group=queries)

        self.get_logger().info(
            f"ready: map on {self._map_sub.topic_name}, obstacles on "
            f"{self._obstacles_sub.topic_name}, frame '{p.global_frame}'")

    # ------------------------------------------------------------------ parameters
    def _footprint_from_parameters(self) -> ConvexShape:
        p = self.params
        if p.footprint_padding < 0.0 or not math.isfinite(p.footprint_padding):
            raise ParameterError(f"footprint_padding must be >= 0, got {p.footprint_padding}")
        points = parse_footprint(p.footprint)
        try:
            if points is None:
                if not p.robot_radius > 0.0:
                    raise ParameterError(f"footprint is '[]' and robot_radius is "
                                         f"{p.robot_radius}; one of them must give a shape")
                return ConvexShape.circle((0.0, 0.0), p.robot_radius + p.footprint_padding)
            polygon = ConvexShape.polygon(points) if len(points) >= 3 else ConvexShape(points)
            return ConvexShape(polygon.points, polygon.radius + p.footprint_padding)
        except ValueError as exc:
            raise ParameterError(f"footprint: {exc}") from exc

    # ------------------------------------------------------------------ inputs
    @topic_callback("map")
    def _on_map(self, msg: OccupancyGrid) -> None:
        p = self.params
        if msg.header.frame_id != p.global_frame:
            self.get_logger().warning(
                f"map in frame '{msg.header.frame_id}' ignored: global_frame is "
                f"'{p.global_frame}'")
            return
        started = time.perf_counter()
        new = grid_from_msg(msg, p.occupied_threshold, p.unknown_is_occupied)
        self._world = World(new, self._world.obstacles)
        seconds = time.perf_counter() - started
        self.get_logger().info(
            f"map {new.width} x {new.height} at {new.resolution} m received, converted in "
            f"{seconds * 1e3:.2f} ms")

    @topic_callback("obstacles")
    def _on_obstacles(self, msg: ObstacleArray) -> None:
        p = self.params
        if msg.header.frame_id != p.global_frame:
            self.get_logger().warning(
                f"obstacles in frame '{msg.header.frame_id}' ignored: global_frame is "
                f"'{p.global_frame}'")
            return
        parts: list[ConvexShape] = []
        part_ids: list[str] = []
        outlines: list[tuple[str, np.ndarray]] = []
        seen: set[str] = set()
        for i, obstacle in enumerate(msg.obstacles):
            field = f"obstacles[{i}]"
            if obstacle.id in seen:
                self.get_logger().warning(f"{field}: duplicate id '{obstacle.id}' ignored")
                continue
            try:
                shapes = obstacle_parts(obstacle, field)
                if obstacle.type == obstacle.TYPE_POLYGON:
                    ring = np.array([point_xy(q, field) for q in obstacle.polygon])
                else:
                    ring = outline(shapes[0])
            except RequestError as exc:
                self.get_logger().warning(f"obstacle '{obstacle.id}' ignored: {exc}")
                continue
            except Exception as exc:  # one obstacle must not cost the others
                self.get_logger().error(f"obstacle '{obstacle.id}' ignored: "
                                        f"{type(exc).__name__}: {exc}")
                continue
            seen.add(obstacle.id)
            parts.extend(shapes)
            part_ids.extend([obstacle.id] * len(shapes))
            outlines.append((obstacle.id, ring))
        snapshot = ObstacleSnapshot(ObstacleSet.from_shapes(parts), tuple(part_ids),
                                    tuple(outlines))
        self._world = World(self._world.grid, snapshot)
        self.get_logger().info(f"{len(seen)} obstacles received ({len(parts)} convex parts)")
        self._queue_obstacle_markers(snapshot)

    # ------------------------------------------------------------------ request helpers
    def _check_frame(self, frame_id: str, field: str) -> None:
        if frame_id not in ("", self.params.global_frame):
            raise RequestError(
                f"{field} is '{frame_id}' but this server works in '{self.params.global_frame}' "
                f"(no tf2 here: transform the request first)")

    def _layers(self, value: int, default: int, field: str = "layers") -> int:
        if value > LAYERS_ALL:
            raise RequestError(f"{field} is {value}; use LAYER_GRID (1), LAYER_OBSTACLES (2), "
                               f"LAYERS_ALL (3) or LAYERS_DEFAULT (0)")
        return value or default

    def _view(self, layers: int) -> tuple[grid.GridMap | None, ObstacleSnapshot | None]:
        """The map and obstacles of one request, from one read of the current World: the map
        (None when layers leave it out; no map yet is an error) and the obstacles (None when
        layers leave them out or there are none)."""
        world = self._world
        gmap = obstacles = None
        if layers & LAYER_GRID:
            gmap = world.grid
            if gmap is None:
                raise RequestError(f"no map received on {self._map_sub.topic_name}")
        if layers & LAYER_OBSTACLES and world.obstacles is not None \
                and len(world.obstacles.parts):
            obstacles = world.obstacles
        return gmap, obstacles

    def _mode(self, mode: str, field: str = "mode") -> str:
        mode = mode or self.params.los_mode
        if mode not in grid.MODES:
            raise RequestError(f"{field} '{mode}' is not one of {', '.join(grid.MODES)}")
        return mode

    def _size(self, n: int, field: str) -> None:
        if n == 0:
            raise RequestError(f"{field} is empty")
        if n > self.params.max_request_size:
            raise RequestError(f"{field} has {n} entries; max_request_size is "
                               f"{self.params.max_request_size}")

    def _footprint(self, msg, field: str) -> ConvexShape:
        return self.default_footprint if shape_is_empty(msg) else shape_from_msg(msg, field)

    @staticmethod
    def _in_range(xy: np.ndarray, name) -> None:
        """Coordinates (N, 2) within MAX_REQUEST_COORD; ``name(i)`` names entry i."""
        i = _first(~(np.abs(xy) <= MAX_REQUEST_COORD).all(axis=1))
        if i is not None:
            raise RequestError(_beyond_range(name(i)))

    @staticmethod
    def _on_grid(gmap: grid.GridMap, xy: np.ndarray, name, reach: float = 0.0) -> None:
        """Points (N, 2) (with a footprint reaching ``reach`` metres around them) within
        MAX_CELL_COORD cells of the map's origin, the range the grid cores accept (the same
        bound as theirs, or tighter); ``name(i)`` names entry i."""
        ox, oy, _ = gmap.origin
        far = np.hypot(xy[:, 0] - ox, xy[:, 1] - oy) + reach
        i = _first(~(far / gmap.resolution <= grid.MAX_CELL_COORD))
        if i is not None:
            raise RequestError(_off_grid(name(i), float(far[i]), gmap))

    @staticmethod
    def _point_on(gmap: grid.GridMap | None, xy: tuple[float, float], field: str) -> None:
        """:meth:`_in_range` and :meth:`_on_grid` for one point, in plain Python (a single
        line-of-sight query must not pay numpy's per-call overhead)."""
        x, y = xy
        if not (abs(x) <= MAX_REQUEST_COORD and abs(y) <= MAX_REQUEST_COORD):
            raise RequestError(_beyond_range(field))
        if gmap is not None:
            ox, oy, _ = gmap.origin
            far = math.hypot(x - ox, y - oy)
            if not far / gmap.resolution <= grid.MAX_CELL_COORD:
                raise RequestError(_off_grid(field, far, gmap))

    @staticmethod
    def _rasterisable(gmap: grid.GridMap, footprint: ConvexShape, field: str) -> float:
        """The footprint's reach (metres from the robot's origin), refused when too many
        cells for the grid check."""
        reach = float(np.max(np.hypot(footprint.points[:, 0], footprint.points[:, 1]))) \
            + footprint.radius
        if not reach / gmap.resolution <= MAX_FOOTPRINT_CELLS:
            raise RequestError(
                f"{field} reaches {reach:.4g} m from the robot's origin: more than "
                f"{MAX_FOOTPRINT_CELLS} cells of the map's {gmap.resolution:g} m")
        return reach

    def _segments(self, starts: np.ndarray, goals: np.ndarray, gmap: grid.GridMap | None,
                  obstacles: ObstacleSnapshot | None, mode: str, field: str):
        """Line of sight for segments (N, 2) against one snapshot -> (clear (N,), first
        blocked point (N, 2), first blocked grid cell (N, 2), blocker (N,): -1 clear,
        GRID_BLOCKER, or the index of the obstacle part met first; grid cells checked (N,))."""
        n = starts.shape[0]
        clear = np.ones(n, dtype=bool)
        point = np.full((n, 2), np.nan)
        cell = np.full((n, 2), -1, dtype=np.int64)
        blocker = np.full(n, -1, dtype=np.int64)
        checked = np.zeros(n, dtype=np.int64)
        if gmap is not None:
            with request_field(field):
                grid_clear, first, checked = grid.line_of_sight_batch(
                    gmap, gmap.world_to_cell(starts), gmap.world_to_cell(goals), mode,
                    self.params.out_of_map, cells_checked=True)
            hit = np.flatnonzero(~grid_clear)
            cell[hit] = first[hit]
            point[hit] = gmap.cell_to_world(cell[hit])
            blocker[hit] = GRID_BLOCKER
            clear &= grid_clear
        if obstacles is not None:
            with request_field(field):
                cast = cast_segments(obstacles.parts, starts, goals)
            # Which blocks first along the segment: the grid cell's centre or the obstacle.
            d = goals - starts
            dd = np.einsum("ij,ij->i", d, d)
            t_grid = np.where(
                blocker == GRID_BLOCKER,
                np.einsum("ij,ij->i", point - starts, d) / np.where(dd > 0.0, dd, 1.0), np.inf)
            first_obstacle = (cast.index >= 0) & (cast.t < t_grid)
            blocker[first_obstacle] = cast.index[first_obstacle]
            point[first_obstacle] = cast.point[first_obstacle]
            clear &= cast.index < 0
        return clear, point, cell, blocker, checked

    def _footprint_checks(self, footprint: ConvexShape, poses: np.ndarray,
                          gmap: grid.GridMap | None, obstacles: ObstacleSnapshot | None,
                          field: str, max_distance: float = math.inf):
        """Per pose, against one snapshot: grid collision, obstacle collision, nearest obstacle
        (index, signed distance, witness points)."""
        n = poses.shape[0]
        grid_hit = np.zeros(n, dtype=bool)
        if gmap is not None and n:
            with request_field(field):
                grid_hit = grid.footprint_collides(gmap, footprint, poses,
                                                   self.params.out_of_map)
        index = np.full(n, -1, dtype=np.int64)
        distance = np.full(n, np.inf)
        on_footprint = np.full((n, 2), np.nan)
        on_obstacle = np.full((n, 2), np.nan)
        if obstacles is not None and n:
            c, s = np.cos(poses[:, 2]), np.sin(poses[:, 2])
            px, py = footprint.points[:, 0], footprint.points[:, 1]
            placed = np.empty((n, px.size, 2))
            placed[:, :, 0] = c[:, None] * px - s[:, None] * py + poses[:, 0, None]
            placed[:, :, 1] = s[:, None] * px + c[:, None] * py + poses[:, 1, None]
            counts = np.full(n, px.size, dtype=np.int64)
            radii = np.full(n, footprint.radius)
            with request_field(field):
                nearest = obstacles.parts.nearest(placed, counts, radii, max_distance,
                                                  signed=True)
            index, distance = nearest.index, nearest.distance
            found = index >= 0
            on_footprint[found] = nearest.point_query[found]
            on_obstacle[found] = nearest.point_obstacle[found]
        obstacle_hit = (index >= 0) & (distance <= 0.0)
        return grid_hit, obstacle_hit, index, distance, on_footprint, on_obstacle

    # ------------------------------------------------------------------ services
    @answers(CheckLineOfSight)
    def _check_line_of_sight(self, request, response):
        self._check_frame(request.header.frame_id, "header.frame_id")
        layers = self._layers(request.layers, LAYER_GRID)
        mode = self._mode(request.mode)
        start = point_xy(request.start, "start")
        goal = point_xy(request.goal, "goal")
        gmap, obstacles = self._view(layers)
        self._point_on(gmap, start, "start")
        self._point_on(gmap, goal, "goal")
        t_grid = math.inf
        response.clear = True
        response.first_blocked_cell_x = response.first_blocked_cell_y = -1
        if gmap is not None:
            with request_field("start, goal"):
                result = gmap.line_of_sight(start, goal, mode, self.params.out_of_map)
            response.cells_checked = result.cells_checked
            if not result.clear:
                response.clear = False
                response.first_blocked_cell_x, response.first_blocked_cell_y = \
                    (int(v) for v in result.first_blocked_cell)
                response.first_blocked_point = point_msg(*result.first_blocked_point)
                response.blocked_by = "grid"
                dx, dy = goal[0] - start[0], goal[1] - start[1]
                dd = dx * dx + dy * dy
                bx, by = result.first_blocked_point
                t_grid = ((bx - start[0]) * dx + (by - start[1]) * dy) / dd if dd > 0 else 0.0
        if obstacles is not None:
            with request_field("start, goal"):
                cast = cast_segments(obstacles.parts, np.array([start]), np.array([goal]))
            if cast.index[0] >= 0 and cast.t[0] < t_grid:
                response.clear = False
                response.first_blocked_point = point_msg(*cast.point[0])
                response.blocked_by = obstacles.part_ids[cast.index[0]]
        end = goal if response.clear else (response.first_blocked_point.x,
                                           response.first_blocked_point.y)
        self._queue_rays(np.array([start]), np.array([end]), [response.clear])

    @answers(CheckLinesOfSight)
    def _check_lines_of_sight(self, request, response):
        self._check_frame(request.header.frame_id, "header.frame_id")
        layers = self._layers(request.layers, LAYER_GRID)
        mode = self._mode(request.mode)
        names = ("start_x", "start_y", "goal_x", "goal_y")
        for name in names[1:]:
            if len(getattr(request, name)) != len(request.start_x):
                raise RequestError(
                    f"{name} has {len(getattr(request, name))} entries but start_x has "
                    f"{len(request.start_x)}: start_x, start_y, goal_x and goal_y must have "
                    f"the same length")
        self._size(len(request.start_x), "start_x")
        arrays = [float_array(getattr(request, name), name) for name in names]
        starts = np.column_stack(arrays[:2])
        goals = np.column_stack(arrays[2:])
        self._in_range(starts, lambda i: f"start_x[{i}], start_y[{i}]")
        self._in_range(goals, lambda i: f"goal_x[{i}], goal_y[{i}]")
        gmap, obstacles = self._view(layers)
        if gmap is not None:
            self._on_grid(gmap, starts, lambda i: f"start_x[{i}], start_y[{i}]")
            self._on_grid(gmap, goals, lambda i: f"goal_x[{i}], goal_y[{i}]")
        clear, point, cell, blocker, checked = self._segments(
            starts, goals, gmap, obstacles, mode, "start_x, start_y, goal_x, goal_y")
        response.clear = clear.tolist()
        # blocker -1 (clear) and GRID_BLOCKER (-2) index the two names appended at the end.
        names = [*(obstacles.part_ids if obstacles is not None else ()), "grid", ""]
        response.blocked_by = [names[k] for k in blocker.tolist()]
        response.cells_checked = array("I", checked.tolist())
        response.first_blocked_x = float64_field(point[:, 0])
        response.first_blocked_y = float64_field(point[:, 1])
        response.first_blocked_cell_x = int32_field(cell[:, 0])
        response.first_blocked_cell_y = int32_field(cell[:, 1])
        if self._marker_pub is not None:
            ends = np.where(clear[:, None], goals, point)
            self._queue_rays(starts, ends, clear)

    def _poses(self, poses_msgs, field: str, footprint: ConvexShape,
               gmap: grid.GridMap | None) -> np.ndarray:
        """The (N, 3) poses of a request, checked against the snapshot's map."""
        poses = poses_array(poses_msgs, field)
        self._in_range(poses[:, :2], lambda i: f"{field}[{i}]")
        if gmap is not None:
            reach = self._rasterisable(gmap, footprint, "footprint")
            self._on_grid(gmap, poses[:, :2], lambda i: f"{field}[{i}]", reach)
        return poses

    @answers(CheckCollision)
    def _check_collision(self, request, response):
        self._check_frame(request.header.frame_id, "header.frame_id")
        layers = self._layers(request.layers, LAYERS_ALL)
        footprint = self._footprint(request.footprint, "footprint")
        self._size(len(request.poses), "poses")
        if math.isnan(request.max_distance):
            raise RequestError("max_distance is NaN")
        limit = request.max_distance if request.max_distance > 0.0 else math.inf
        gmap, obstacles = self._view(layers)
        poses = self._poses(request.poses, "poses", footprint, gmap)
        grid_hit, obstacle_hit, index, distance, on_fp, on_obs = \
            self._footprint_checks(footprint, poses, gmap, obstacles, "poses", limit)
        response.grid_collision = grid_hit.tolist()
        response.obstacle_collision = obstacle_hit.tolist()
        response.in_collision = (grid_hit | obstacle_hit).tolist()
        response.distance = float64_field(distance)
        response.nearest_obstacle_id = [obstacles.part_ids[i] if i >= 0 else "" for i in index]
        response.footprint_points = points_msgs(on_fp)
        response.obstacle_points = points_msgs(on_obs)
        self._queue_footprints(footprint, poses, grid_hit | obstacle_hit)

    @answers(CheckPath)
    def _check_path(self, request, response):
        self._check_frame(request.path.header.frame_id, "path.header.frame_id")
        layers = self._layers(request.layers, LAYERS_ALL)
        mode = self._mode(request.mode)
        footprint = self._footprint(request.footprint, "footprint")
        self._size(len(request.path.poses), "path.poses")
        if math.isnan(request.max_lookahead):
            raise RequestError("max_lookahead is NaN")
        gmap, obstacles = self._view(layers)
        poses = self._poses([ps.pose for ps in request.path.poses], "path.poses", footprint,
                            gmap)
        steps = np.hypot(np.diff(poses[:, 0]), np.diff(poses[:, 1]))
        along = np.concatenate([[0.0], np.cumsum(steps)])
        n = poses.shape[0]
        if request.max_lookahead > 0.0:
            n = int(np.searchsorted(along, request.max_lookahead, side="right"))
        poses = poses[:n]
        grid_hit, obstacle_hit, *_ = self._footprint_checks(footprint, poses, gmap, obstacles,
                                                            "path.poses")
        visible = np.ones(max(n - 1, 0), dtype=bool)
        if n > 1:
            visible, *_ = self._segments(poses[:-1, :2], poses[1:, :2], gmap, obstacles, mode,
                                         "path.poses")
        invalid = grid_hit | obstacle_hit
        invalid[1:] |= ~visible
        bad = np.flatnonzero(invalid)
        checked = n
        if request.stop_at_first_collision and bad.size:
            bad = bad[:1]
            checked = int(bad[0]) + 1
            visible = visible[: max(checked - 1, 0)]
        response.valid = bad.size == 0
        response.first_invalid_index = int(bad[0]) if bad.size else -1
        response.invalid_indices = int32_field(bad)
        response.segment_visible = visible.tolist()
        response.poses_checked = checked
        self._queue_footprints(footprint, poses[:checked], invalid[:checked])

    @answers(ComputeDistance)
    def _compute_distance(self, request, response):
        a = shape_from_msg(request.shape_a, "shape_a")
        b = shape_from_msg(request.shape_b, "shape_b")
        with request_field("shape_a, shape_b"):
            result = geometry.gjk_distance(a, b)
            pen = geometry.penetration(a, b) if result.intersecting else None
        response.intersecting = bool(result.intersecting)
        if pen is not None:
            response.distance = -float(pen.depth)
            response.point_a = point_msg(*pen.point_a)
            response.point_b = point_msg(*pen.point_b)
            normal = pen.normal
        else:
            response.distance = float(result.distance)
            response.point_a = point_msg(*result.point_a)
            response.point_b = point_msg(*result.point_b)
            normal = (np.asarray(result.point_b) - np.asarray(result.point_a)) / result.distance
        response.normal.x = float(normal[0])
        response.normal.y = float(normal[1])

    # ------------------------------------------------------------------ markers
    def _queue(self, build) -> None:
        if self._marker_pub is not None:
            self._pending_markers.append(build)

    def _marker_ids(self, ns: str, k: int) -> list[int]:
        """The next ``k`` ids of a query namespace (flush thread only): ids keep increasing, so
        a query's markers do not replace the previous query's before their lifetime ends."""
        first = self._next_marker_id.get(ns, 0)
        self._next_marker_id[ns] = (first + k) % MARKER_ID_WRAP
        return [(first + i) % MARKER_ID_WRAP for i in range(k)]

    def _queue_rays(self, starts, ends, clear) -> None:
        """Draw rays: green to the goal when clear, red up to the first blocked point."""
        if self._marker_pub is None:
            return
        k = min(len(starts), self.params.max_markers_per_query)
        if k == 0:
            return
        starts, ends, clear = starts[:k].copy(), ends[:k].copy(), list(clear[:k])

        def build(frame, stamp, lifetime):
            ids = self._marker_ids("line_of_sight", k)
            return [markers.polyline("line_of_sight", ids[i], frame, stamp, [starts[i], ends[i]],
                                     markers.GREEN if clear[i] else markers.RED, 0.03,
                                     lifetime)
                    for i in range(k)]

        self._queue(build)

    def _queue_footprints(self, footprint: ConvexShape, poses, collided) -> None:
        """Draw footprints: green when free, red when in collision (or, on a path, invalid)."""
        if self._marker_pub is None:
            return
        k = min(len(poses), self.params.max_markers_per_query)
        if k == 0:
            return
        ring = outline(footprint)
        poses, collided = poses[:k].copy(), np.asarray(collided[:k]).copy()

        def build(frame, stamp, lifetime):
            ids = self._marker_ids("footprints", k)
            out = []
            for i in range(k):
                x, y, yaw = poses[i]
                c, s = math.cos(yaw), math.sin(yaw)
                xy = np.column_stack([c * ring[:, 0] - s * ring[:, 1] + x,
                                      s * ring[:, 0] + c * ring[:, 1] + y])
                color = markers.RED if collided[i] else markers.GREEN
                out.append(markers.polyline("footprints", ids[i], frame, stamp, xy, color, 0.02,
                                            lifetime, closed=True))
            return out

        self._queue(build)

    def _queue_obstacle_markers(self, snapshot: ObstacleSnapshot) -> None:
        """Obstacle outlines, one namespace per id (no lifetime: they stay until the obstacle
        goes). Outlines of obstacles that are gone are deleted one by one; query markers are
        left alone."""
        current = [(f"obstacle/{obstacle_id}", ring) for obstacle_id, ring in snapshot.outlines]

        def build(frame, stamp, lifetime):
            names = {ns for ns, _ in current}
            out = [markers.delete(ns, 0, frame, stamp)
                   for ns in sorted(self._obstacle_namespaces - names)]
            for ns, ring in current:
                out.append(markers.polyline(ns, 0, frame, stamp, ring, markers.GREY, 0.04, 0.0,
                                            closed=True))
            self._obstacle_namespaces = names
            return out

        self._queue(build)

    @topic_callback("marker batch")
    def _flush_markers(self) -> None:
        # The outlines go out once per obstacle message; a subscriber that joins later (RViz
        # started after the obstacles arrived) gets them again, as from a latched topic.
        subscribers = self._marker_pub.get_subscription_count()
        if subscribers > self._marker_subscribers and self._world.obstacles is not None:
            self._queue_obstacle_markers(self._world.obstacles)
        self._marker_subscribers = subscribers
        if not self._pending_markers:
            return
        frame = self.params.global_frame
        stamp = self.get_clock().now().to_msg()
        batch = MarkerArray()
        while self._pending_markers:
            build = self._pending_markers.popleft()
            try:
                batch.markers.extend(build(frame, stamp, self.params.marker_lifetime))
            except Exception as exc:  # drop that query's markers, keep the others
                self.get_logger().error(f"markers of one query dropped: "
                                        f"{type(exc).__name__}: {exc}")
        if batch.markers:
            self._marker_pub.publish(batch)


def main(args=None) -> int:
    return run_node(CollisionServer, args)


if __name__ == "__main__":
    sys.exit(main())
