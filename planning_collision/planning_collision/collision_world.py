"""The collision server's queries on one snapshot of the world: the map and the obstacles.

Pure (numpy and the cores, no ROS): collision_server converts each request into arrays, calls
one of these on the :class:`World` it read once at the request's start (so an answer sees
one map and one obstacle set, never a mix), and converts the result back.

* :meth:`World.segments` -- line of sight for any number of segments; one rule decides what
  blocks first along a segment, the grid (the centre of its first blocked cell) or an
  obstacle (where the segment first touches it), for one ray and for a million alike;
* :meth:`World.footprints` -- a footprint at poses: grid collision, obstacle collision, the
  nearest obstacle (signed distance, witness points);
* :meth:`World.path` -- Nav2's path validity: a pose is invalid when its footprint collides
  or the segment from the previous pose is blocked, up to a look-ahead distance.

Every input is checked where it comes in: coordinates beyond :data:`MAX_QUERY_COORD`,
points more than ``2**29`` cells from the map's origin, a footprint too large to rasterise.
:class:`QueryError` (a ValueError) names the offending request field, as given by the caller.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from planning_collision import geometry, grid
from planning_collision.common import se2
from planning_collision.geometry import ConvexShape, ObstacleSet, decompose
from planning_collision.geometry.outline import outline
from planning_collision.geometry.raycast import cast_segments
from planning_collision.geometry.shapes import check_convex_polygon
from planning_collision.geometry.tolerances import MAX_COORD

LAYER_GRID = 1
LAYER_OBSTACLES = 2
LAYERS_ALL = 3
LAYER_SENSORS = 4  # what the sensors see now (collision_server's sensor layer, #25); opt-in
GRID_BLOCKER = -2  # SegmentsResult.blocker of a segment the grid blocks first
SENSOR_BLOCKER = -3  # ... the sensor layer blocks first
# Request coordinates (metres) stay within this, so that a footprint placed at a pose, or a
# segment's extent, stays inside the geometry cores' range (MAX_COORD).
MAX_QUERY_COORD = MAX_COORD / 4.0
# A footprint reaching farther than this many cells from the robot's origin is refused for
# grid checks: rasterising it costs about that many rows per pose (and a scratch array).
MAX_FOOTPRINT_CELLS = 10_000

Namer = Callable[[int], str]  # entry i -> the request field it came from


class QueryError(ValueError):
    """A query the world cannot answer; the text names the request field. ``reason`` says
    why in one word, the name of the services' error code (BAD_REQUEST, NO_MAP, TOO_LARGE,
    OUT_OF_RANGE, ...)."""

    def __init__(self, message: str, reason: str = "BAD_REQUEST"):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Footprint:
    """A robot's footprint in its own frame as convex parts: one part for a convex shape,
    several for a concave polygon (:func:`~planning_collision.geometry.decompose`); their
    union is the footprint. ``ring`` is its outline (for drawing)."""

    parts: tuple[ConvexShape, ...]
    ring: np.ndarray

    @classmethod
    def of(cls, shape: ConvexShape) -> Footprint:
        return cls((shape,), outline(shape))

    @classmethod
    def from_points(cls, points: np.ndarray, padding: float = 0.0) -> Footprint:
        """The footprint of Nav2's point list (robot frame): 1 point a disc of ``padding``
        (a point when 0), 2 a capsule, 3 or more a polygon, convex or not (a simple
        polygon: its convex parts). Every part is rounded by ``padding``, so the union is
        the polygon grown by exactly ``padding``. ValueError for a polygon that cannot be
        split (self-intersecting, zero area)."""
        points = np.asarray(points, dtype=np.float64)
        if len(points) < 3:
            return cls.of(ConvexShape(points, padding))
        try:
            check_convex_polygon(points, "points")
            parts = [ConvexShape.polygon(points)]
        except ValueError:
            parts = decompose(points)
        rounded = tuple(ConvexShape(p.points, p.radius + padding) for p in parts)
        if len(rounded) == 1:
            return cls.of(rounded[0])
        ring = points if padding == 0.0 else outline(ConvexShape(points, padding))
        return cls(rounded, np.asarray(ring, dtype=np.float64))


def footprint_parts(footprint: ConvexShape | Footprint) -> tuple[ConvexShape, ...]:
    return (footprint,) if isinstance(footprint, ConvexShape) else footprint.parts


@dataclass(frozen=True)
class ObstacleSnapshot:
    """The obstacles' convex parts, each part's obstacle id, and each obstacle's outline."""

    parts: ObstacleSet
    part_ids: tuple[str, ...]
    outlines: tuple[tuple[str, np.ndarray], ...]


class SegmentsResult(NamedTuple):
    clear: np.ndarray  # (N,) bool
    point: np.ndarray  # (N, 2) where the segment is first blocked (NaN where clear)
    cell: np.ndarray  # (N, 2) first blocked grid cell (-1 where the grid does not block)
    blocker: np.ndarray  # (N,) -1 clear, GRID_BLOCKER, or the obstacle part met first
    checked: np.ndarray  # (N,) grid cells visited before the answer was known


class FootprintResult(NamedTuple):
    grid_hit: np.ndarray  # (N,) bool
    obstacle_hit: np.ndarray  # (N,) bool (touching counts)
    index: np.ndarray  # (N,) nearest obstacle part, -1 when none within max_distance
    distance: np.ndarray  # (N,) signed distance to it (negative: penetration), inf if none
    on_footprint: np.ndarray  # (N, 2) witness point on the footprint (NaN if none)
    on_obstacle: np.ndarray  # (N, 2) witness point on the obstacle (NaN if none)


class ShapeDistance(NamedTuple):
    """ComputeDistance's answer: ``distance`` is the gap when separated and minus the
    penetration depth when the shapes overlap (touching counts as intersecting); ``normal``
    is the unit vector from A towards B (point_b - point_a = distance * normal when
    separated; moving B by -distance * normal separates them when they overlap)."""

    intersecting: bool
    distance: float
    point_a: np.ndarray  # (2,)
    point_b: np.ndarray  # (2,)
    normal: np.ndarray  # (2,)


class PathResult(NamedTuple):
    invalid: np.ndarray  # (checked,) bool per pose checked
    visible: np.ndarray  # (checked - 1,) pose i sees pose i + 1
    checked: int  # poses checked (look-ahead, stop at the first collision)


def entry(field: str) -> Namer:
    """A namer for entries of an array field: ``field[i]``."""
    return lambda i: f"{field}[{i}]"


def _first(mask: np.ndarray) -> int | None:
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def check_in_range(xy: np.ndarray, name: Namer) -> None:
    """Coordinates (N, 2) within MAX_QUERY_COORD; QueryError naming the first one beyond."""
    i = _first(~(np.abs(xy) <= MAX_QUERY_COORD).all(axis=1))
    if i is not None:
        raise QueryError(f"{name(i)} has a coordinate beyond +-{MAX_QUERY_COORD:g} m",
                         "OUT_OF_RANGE")


@dataclass(frozen=True)
class World:
    """What one request checks against: the map and the obstacles, swapped in together.
    ``grid`` or ``obstacles`` None: that layer is left out (or there is none). ``threads``:
    how many cores one request's kernels may share its rows over (None: every core; small
    requests stay on the calling thread whatever it says)."""

    grid: grid.GridMap | None = None
    obstacles: ObstacleSnapshot | None = None
    out_of_map: str = "blocked"
    threads: int | None = None
    #: The sensor layer's snapshot (:mod:`planning_collision.grid.sensor_layer`): a grid
    #: whose outside is free; None when the server has no sensors or it is left out.
    sensors: grid.GridMap | None = None

    def view(self, layers: int, default: int, missing_map: str,
             missing_sensors: str = "this server has no sensor sources") -> World:
        """The layers a request asks for (``layers`` 0: ``default``); QueryError when the
        grid is asked for and there is no map (``missing_map`` says why), or the sensors
        and there are none."""
        if not 0 <= layers <= LAYERS_ALL | LAYER_SENSORS:
            raise QueryError(f"layers is {layers}; use LAYER_GRID (1), LAYER_OBSTACLES (2), "
                             f"LAYERS_ALL (3), LAYER_SENSORS (4) or a sum of them")
        layers = layers or default
        gmap = self.grid if layers & LAYER_GRID else None
        if layers & LAYER_GRID and gmap is None:
            raise QueryError(missing_map, "NO_MAP")
        if layers & LAYER_SENSORS and self.sensors is None:
            raise QueryError(f"layers asks for LAYER_SENSORS: {missing_sensors}")
        obstacles = self.obstacles if (layers & LAYER_OBSTACLES and self.obstacles is not None
                                       and len(self.obstacles.parts)) else None
        sensors = self.sensors if layers & LAYER_SENSORS else None
        return dataclasses.replace(self, grid=gmap, obstacles=obstacles, sensors=sensors)

    # ------------------------------------------------------------------ checks
    def check_points(self, xy: np.ndarray, name: Namer, reach: float = 0.0) -> None:
        """Points (N, 2) within MAX_QUERY_COORD and, with a map, within MAX_CELL_COORD cells
        of its origin (with a footprint reaching ``reach`` metres around them)."""
        check_in_range(xy, name)
        if self.grid is None:
            return
        ox, oy, _ = self.grid.origin
        far = np.hypot(xy[:, 0] - ox, xy[:, 1] - oy) + reach
        i = _first(~(far / self.grid.resolution <= grid.MAX_CELL_COORD))
        if i is not None:
            raise QueryError(f"{name(i)} lies {float(far[i]):.4g} m from the map's origin, more "
                             f"than {grid.MAX_CELL_COORD} cells of {self.grid.resolution:g} m",
                             "OUT_OF_RANGE")

    def footprint_reach(self, footprint: ConvexShape | Footprint, field: str) -> float:
        """How far (m) the footprint reaches from the robot's origin; QueryError when that
        is too many cells to rasterise on the map."""
        reach = max(float(np.max(np.hypot(part.points[:, 0], part.points[:, 1]))) + part.radius
                    for part in footprint_parts(footprint))
        if self.grid is not None and not reach / self.grid.resolution <= MAX_FOOTPRINT_CELLS:
            raise QueryError(
                f"{field} reaches {reach:.4g} m from the robot's origin: more than "
                f"{MAX_FOOTPRINT_CELLS} cells of the map's {self.grid.resolution:g} m",
                "TOO_LARGE")
        return reach

    def check_poses(self, poses: np.ndarray, footprint: ConvexShape | Footprint,
                    field: str) -> None:
        """Poses (N, 3) where ``footprint`` (the request's ``footprint``) can be checked."""
        self.check_points(poses[:, :2], entry(field),
                          self.footprint_reach(footprint, "footprint"))

    # ------------------------------------------------------------------ queries
    def segments(self, starts: np.ndarray, goals: np.ndarray, mode: str,
                 field: str) -> SegmentsResult:
        """Line of sight for segments (N, 2) -> (N, 2); ``field`` names them in errors."""
        n = starts.shape[0]
        clear = np.ones(n, dtype=bool)
        point = np.full((n, 2), np.nan)
        cell = np.full((n, 2), -1, dtype=np.int64)
        blocker = np.full(n, -1, dtype=np.int64)
        checked = np.zeros(n, dtype=np.int64)
        gmap = self.grid
        if gmap is not None:
            with _named(field):
                grid_clear, first, checked = grid.line_of_sight_batch(
                    gmap, gmap.world_to_cell(starts), gmap.world_to_cell(goals), mode,
                    self.out_of_map, cells_checked=True, threads=self.threads)
            hit = np.flatnonzero(~grid_clear)
            cell[hit] = first[hit]
            point[hit] = gmap.cell_to_world(cell[hit])
            blocker[hit] = GRID_BLOCKER
            clear &= grid_clear
        if self.sensors is not None:
            self._sensor_segments(starts, goals, mode, field, clear, point, blocker)
        if self.obstacles is not None:
            with _named(field):
                cast = cast_segments(self.obstacles.parts, starts, goals, self.threads)
            # What blocks first along the segment: the grid cell's centre or the obstacle.
            d = goals - starts
            dd = np.einsum("ij,ij->i", d, d)
            t_grid = np.where(
                blocker <= GRID_BLOCKER,  # the map's or the sensor layer's cell
                np.einsum("ij,ij->i", point - starts, d) / np.where(dd > 0.0, dd, 1.0), np.inf)
            first_obstacle = (cast.index >= 0) & (cast.t < t_grid)
            blocker[first_obstacle] = cast.index[first_obstacle]
            point[first_obstacle] = cast.point[first_obstacle]
            clear &= cast.index < 0
        return SegmentsResult(clear, point, cell, blocker, checked)

    def _sensor_segments(self, starts, goals, mode, field, clear, point, blocker) -> None:
        """The sensor layer's part of :meth:`segments` (in place): where its first blocked
        cell's centre comes before the map's along a segment, the sensors block first."""
        seen = self.sensors
        with _named(field):
            free, first = grid.line_of_sight_batch(
                seen, seen.world_to_cell(starts), seen.world_to_cell(goals), mode, "free",
                threads=self.threads)
        hit = np.flatnonzero(~free)
        if not hit.size:
            return
        at = seen.cell_to_world(first[hit])
        d = goals[hit] - starts[hit]
        dd = np.einsum("ij,ij->i", d, d)
        dd = np.where(dd > 0.0, dd, 1.0)
        t_seen = np.einsum("ij,ij->i", at - starts[hit], d) / dd
        t_map = np.where(blocker[hit] == GRID_BLOCKER,
                         np.einsum("ij,ij->i", point[hit] - starts[hit], d) / dd, np.inf)
        earlier = t_seen < t_map
        blocker[hit[earlier]] = SENSOR_BLOCKER
        point[hit[earlier]] = at[earlier]
        clear[hit] = False

    def footprints(self, footprint: ConvexShape | Footprint, poses: np.ndarray, field: str,
                   max_distance: float = math.inf) -> FootprintResult:
        """``footprint`` (robot frame) placed at each pose (N, 3). A footprint of several
        convex parts collides where one of its parts does (exact); its distance is the
        smallest of its parts' (exact when apart; when overlapping, the deepest part's
        penetration, which may be less than the union's), with that part's witnesses."""
        parts = footprint_parts(footprint)
        if len(parts) > 1:
            each = [self.footprints(part, poses, field, max_distance) for part in parts]
            distance = np.stack([r.distance for r in each])
            best = np.argmin(distance, axis=0)
            rows = np.arange(poses.shape[0])

            def pick(name):
                return np.stack([getattr(r, name) for r in each])[best, rows]

            return FootprintResult(
                np.logical_or.reduce([r.grid_hit for r in each]),
                np.logical_or.reduce([r.obstacle_hit for r in each]),
                pick("index"), pick("distance"), pick("on_footprint"), pick("on_obstacle"))
        footprint = parts[0]
        n = poses.shape[0]
        grid_hit = np.zeros(n, dtype=bool)
        if self.grid is not None and n:
            with _named(field):
                grid_hit = grid.footprint_collides(self.grid, footprint, poses, self.out_of_map,
                                                   threads=self.threads)
        if self.sensors is not None and n:  # what the sensors see counts as the grid's
            with _named(field):
                grid_hit = grid_hit | grid.footprint_collides(
                    self.sensors, footprint, poses, "free", threads=self.threads)
        index = np.full(n, -1, dtype=np.int64)
        distance = np.full(n, np.inf)
        on_footprint = np.full((n, 2), np.nan)
        on_obstacle = np.full((n, 2), np.nan)
        if self.obstacles is not None and n:
            px, py = footprint.points[:, 0], footprint.points[:, 1]
            placed = np.empty((n, px.size, 2))
            placed[:, :, 0], placed[:, :, 1] = se2.compose(
                (poses[:, 0, None], poses[:, 1, None], poses[:, 2, None]), (px, py, 0.0))[:2]
            with _named(field):
                nearest = self.obstacles.parts.nearest(
                    placed, np.full(n, px.size, dtype=np.int64), np.full(n, footprint.radius),
                    max_distance, signed=True, threads=self.threads)
            index, distance = nearest.index, nearest.distance
            found = index >= 0
            on_footprint[found] = nearest.point_query[found]
            on_obstacle[found] = nearest.point_obstacle[found]
        obstacle_hit = (index >= 0) & (distance <= 0.0)
        return FootprintResult(grid_hit, obstacle_hit, index, distance, on_footprint,
                               on_obstacle)

    def path(self, footprint: ConvexShape | Footprint, poses: np.ndarray, mode: str,
             max_lookahead: float, stop_at_first_collision: bool, field: str) -> PathResult:
        """Nav2's path validity for poses (N, 3) along a path: checked up to
        ``max_lookahead`` metres along it (negative: all; 0: the first pose only), stopping
        at the first invalid pose when asked."""
        if math.isnan(max_lookahead):
            raise QueryError("max_lookahead_distance is NaN")
        steps = np.hypot(np.diff(poses[:, 0]), np.diff(poses[:, 1]))
        along = np.concatenate([[0.0], np.cumsum(steps)])
        n = poses.shape[0]
        if max_lookahead >= 0.0:
            n = int(np.searchsorted(along, max_lookahead, side="right"))
        poses = poses[:n]
        hits = self.footprints(footprint, poses, field)
        visible = np.ones(max(n - 1, 0), dtype=bool)
        if n > 1:
            visible = self.segments(poses[:-1, :2], poses[1:, :2], mode, field).clear
        invalid = hits.grid_hit | hits.obstacle_hit
        invalid[1:] |= ~visible
        checked = n
        bad = np.flatnonzero(invalid)
        if stop_at_first_collision and bad.size:
            checked = int(bad[0]) + 1
        return PathResult(invalid[:checked], visible[: max(checked - 1, 0)], checked)


def shape_distance(a: ConvexShape, b: ConvexShape) -> ShapeDistance:
    """Signed distance, witness points and normal of two shapes (GJK, then the penetration
    depth when they overlap). The normal is the core's own unit vector, never a difference
    divided by the distance, which loses its length when the gap underflows."""
    check_in_range(a.points, entry("shape_a.points"))
    check_in_range(b.points, entry("shape_b.points"))
    with _named("shape_a, shape_b"):
        result = geometry.gjk_distance(a, b)
        if not result.intersecting:
            return ShapeDistance(False, float(result.distance), np.asarray(result.point_a),
                                 np.asarray(result.point_b), np.asarray(result.normal))
        pen = geometry.penetration(a, b)
    return ShapeDistance(True, -float(pen.depth), np.asarray(pen.point_a),
                         np.asarray(pen.point_b), np.asarray(pen.normal))


class _named:
    """Turn a core's ValueError (input it refused) into a QueryError naming the field."""

    def __init__(self, field: str):
        self.field = field

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if exc is not None and isinstance(exc, ValueError) and not isinstance(exc, QueryError):
            raise QueryError(f"{self.field}: {exc}") from exc
        return False
