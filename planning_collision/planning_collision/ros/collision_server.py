"""collision_server: the latest map and obstacles in; line-of-sight, collision, path and distance
services out.

A thin adapter: each handler converts its request (:mod:`.conversions`), reads the current
:class:`~planning_collision.collision_world.World` once (so an answer sees one map and one
obstacle set, never a mix), asks it, and converts the answer. The queries themselves live in
:mod:`planning_collision.collision_world`; markers in :mod:`.marker_queue`.

Concurrency. Requests are answered on a pool of ``query_threads`` threads (the kernels release
the interpreter lock), so a one-ray query is never held behind a large request. Map updates
and obstacle updates run in groups of their own, each converted off the query threads and
swapped in with one assignment under a lock held only for the swap: ingesting a huge obstacle
set never delays a map update, and a query waits at most for the swap.

Bad requests are answered ``success: false`` with an ``error_code`` (the constants of each
.srv: WARMING_UP, INACTIVE, NO_MAP, BAD_REQUEST, WRONG_FRAME, ...) and a message naming the
field; a map, obstacle or footprint message that cannot be used is logged and dropped, and the
previous state stays.

Run: ``ros2 run planning_collision collision_server --ros-args --params-file
config/collision_server.yaml`` or ``python -m planning_collision.ros.collision_server``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import time
from array import array

import numpy as np
from geometry_msgs.msg import PolygonStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from visualization_msgs.msg import MarkerArray

from planning_collision import collision_world, grid
from planning_collision.collision_world import (
    LAYER_GRID,
    LAYERS_ALL,
    SENSOR_BLOCKER,
    Footprint,
    World,
)
from planning_collision_interfaces.msg import ObstacleArray
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

from .collision_server_parameters import PARAMETERS, check_footprint, default_footprint
from .collision_server_sensors import SensorSources, check_sensor_parameters, has_sensors
from .conversions import (
    RequestError,
    float64_field,
    float_array,
    footprint_from_polygon,
    footprint_from_string,
    grid_from_msg,
    int32_field,
    obstacle_snapshot,
    point_msg,
    point_xy,
    points_msgs,
    poses_array,
    shape_from_msg,
    shape_is_empty,
)
from .cycle_collector import paused as collector_paused
from .diagnostics import DiagnosticsPublisher, RequestCounter, node_label, server_status
from .footprint_pose import FootprintPose
from .guards import answers, check_frame, topic_callback
from .lifecycle import ManagedNode
from .marker_queue import MarkerQueue
from .parameters import check_bounds, declare
from .pose_sources import seconds
from .qos import RELIABLE, latched_or_volatile
from .run import run_node

#: Requests with at least this many poses convert their messages with Python's cycle
#: collector paused (see :mod:`.cycle_collector`).
LARGE_REQUEST = 10_000


class CollisionServer(ManagedNode):
    KERNELS = ("geometry", "grid")

    def __init__(self, **node_kwargs):
        super().__init__("collision_server", **node_kwargs)
        self.params = p = declare(self, PARAMETERS, refuse=False)
        # Queries on the executor's threads; map and obstacle updates each in a group of its
        # own, so one never waits for the other (see the module docstring).
        self.executor_threads = max(p.query_threads, 0) or (os.cpu_count() or 1) + 2
        self._world = World(out_of_map=p.out_of_map)
        self._swap = threading.Lock()  # held only to replace one half of the World
        self._markers: MarkerQueue | None = None
        self.map_received: float | None = None  # time.monotonic() of the latest map
        self.start()

    # ------------------------------------------------------------------ lifecycle
    def configure(self) -> None:
        p = self.params
        check_bounds(PARAMETERS, p)  # declared with refuse=False: a bad one fails configure
        with self._swap:
            self._world = dataclasses.replace(self._world, threads=p.kernel_threads or None)
        # Checked now; built at the first request that needs it, once the kernels are ready
        # (on a cold cache building it would compile numba kernels here, before the services
        # exist).
        check_footprint(p)
        check_sensor_parameters(p)
        self.default_footprint: Footprint | None = None
        self.topic_footprint: Footprint | None = None  # the latest on footprint_topic
        self._footprint_pose = None
        if p.footprint_topic:
            group = MutuallyExclusiveCallbackGroup()  # the pose history: one at a time
            self._footprint_sub = self.create_subscription(
                PolygonStamped, p.footprint_topic, self._on_footprint,
                latched_or_volatile(p.footprint_subscribe_transient_local),
                callback_group=group)
            if p.footprint_pose_topic:  # Nav2's published_footprint, in a global frame
                self._footprint_pose = FootprintPose()
                self.create_subscription(Odometry, p.footprint_pose_topic,
                                         self._on_footprint_pose, RELIABLE,
                                         callback_group=group)
        self._map_sub = self.create_subscription(
            OccupancyGrid, p.map_topic, self._on_map,
            latched_or_volatile(p.map_subscribe_transient_local),
            callback_group=MutuallyExclusiveCallbackGroup())
        self._obstacles_sub = self.create_subscription(
            ObstacleArray, p.obstacles_topic, self._on_obstacles,
            latched_or_volatile(p.obstacles_subscribe_transient_local),
            callback_group=MutuallyExclusiveCallbackGroup())
        if p.publish_markers:
            self._markers = MarkerQueue(p.global_frame, p.marker_lifetime,
                                        p.max_markers_per_query, p.max_obstacle_markers)
            self._marker_subscribers = 0
            self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 10)
            self.create_timer(0.1, self._flush_markers,
                              callback_group=MutuallyExclusiveCallbackGroup())
        self._sensors = None
        if has_sensors(p):  # the sensor layer (#25): LAYER_SENSORS in a request's layers
            self._sensors = SensorSources(self, p, lambda snapshot: self._replace(
                sensors=snapshot), self.kernels_ready.is_set)
        self._requests = RequestCounter()
        DiagnosticsPublisher(self, self._diagnostics)
        queries = ReentrantCallbackGroup()
        # Services last: once they are visible, the node is fully built.
        for srv_type, name, handler in (
                (CheckLineOfSight, "check_line_of_sight", self._check_line_of_sight),
                (CheckLinesOfSight, "check_lines_of_sight", self._check_lines_of_sight),
                (CheckCollision, "check_collision", self._check_collision),
                (CheckPath, "check_path", self._check_path),
                (ComputeDistance, "compute_distance", self._compute_distance)):
            self.create_service(srv_type, name, self._requests.counted(name, handler),
                                callback_group=queries)
        self.get_logger().info(
            f"ready: map on {self._map_sub.topic_name}, obstacles on "
            f"{self._obstacles_sub.topic_name}, frame '{p.global_frame}', "
            f"{self.executor_threads} query threads, kernels on "
            f"{p.kernel_threads or 'every'} core(s)")

    def cleanup(self) -> None:
        self._markers = None
        self._replace(grid=None, obstacles=None, sensors=None)

    # ------------------------------------------------------------------ inputs
    def _replace(self, **half) -> None:
        with self._swap:
            self._world = dataclasses.replace(self._world, **half)

    def _in_global_frame(self, what: str, msg) -> bool:
        if msg.header.frame_id == self.params.global_frame:
            return True
        self.get_logger().warning(f"{what} in frame '{msg.header.frame_id}' ignored: "
                                  f"global_frame is '{self.params.global_frame}'")
        return False

    @topic_callback("map")
    def _on_map(self, msg: OccupancyGrid) -> None:
        p = self.params
        if not self._in_global_frame("map", msg):
            return
        started = time.perf_counter()
        new = grid_from_msg(msg, p.occupied_threshold, p.unknown_is_occupied)
        self._replace(grid=new)
        self.map_received = time.monotonic()
        self.get_logger().info(
            f"map {new.width} x {new.height} at {new.resolution} m received, converted in "
            f"{(time.perf_counter() - started) * 1e3:.2f} ms")

    @topic_callback("footprint pose")
    def _on_footprint_pose(self, msg: Odometry) -> None:
        reason = self._footprint_pose.on_odometry(msg)
        if reason:
            self.get_logger().warning(reason, throttle_duration_sec=5.0)

    @topic_callback("footprint")
    def _on_footprint(self, msg: PolygonStamped) -> None:
        p, frame, points = self.params, msg.header.frame_id, msg.polygon.points
        placer = self._footprint_pose
        if placer is not None and frame and placer.placed(frame):
            points, reason = placer.robot_frame(points, seconds(msg.header.stamp))
            if points is None:
                self.get_logger().warning(f"footprint in frame '{frame}' ignored: {reason}",
                                          throttle_duration_sec=5.0)
                return
        elif frame not in ("", p.footprint_frame):
            places = ("is empty" if placer is None else "has sent no pose yet"
                      if placer.frame is None else f"places frame '{placer.frame}'")
            self.get_logger().warning(
                f"footprint in frame '{frame}' ignored: footprint_frame is "
                f"'{p.footprint_frame}' (the robot's own frame; no tf2 here) and "
                f"footprint_pose_topic {places}", throttle_duration_sec=5.0)
            return
        self.kernels_ready.wait()  # decomposing a concave polygon runs kernels
        footprint = footprint_from_polygon(points, p.footprint_padding,
                                           "footprint.polygon.points")
        changed = self.topic_footprint is None or not np.array_equal(
            footprint.ring, self.topic_footprint.ring)
        self.topic_footprint = footprint
        if changed:
            self.get_logger().info(f"footprint of {len(msg.polygon.points)} points "
                                   f"({len(footprint.parts)} convex parts) received")

    @topic_callback("obstacles")
    def _on_obstacles(self, msg: ObstacleArray) -> None:
        if not self._in_global_frame("obstacles", msg):
            return
        self.kernels_ready.wait()  # the parts' kernels: loaded here, not compiled twice
        started = time.perf_counter()
        snapshot = obstacle_snapshot(msg, self.get_logger().warning)
        self._replace(obstacles=snapshot)
        self.get_logger().info(f"{len(snapshot.outlines)} obstacles received "
                               f"({len(snapshot.part_ids)} convex parts) in "
                               f"{time.perf_counter() - started:.3f} s")
        if self._markers is not None:
            self._markers.obstacles(snapshot.outlines)

    # ------------------------------------------------------------------ request helpers
    def _view(self, frame_id: str, frame_field: str, layers: int, default: int) -> World:
        check_frame(frame_id, self.params.global_frame, frame_field)
        if layers == 0:
            raise RequestError("layers is 0: name at least one layer (the field's default "
                               "is the service's usual set)")
        return self._world.view(layers, default,
                                f"no map received on {self._map_sub.topic_name}",
                                "this server has no sensors (scan_topics, cloud_topics)")

    def _mode(self, mode: str) -> str:
        mode = mode or self.params.los_mode
        if mode not in grid.MODES:
            raise RequestError(f"mode '{mode}' is not one of {', '.join(grid.MODES)}")
        return mode

    def _size(self, n: int, field: str) -> None:
        if n == 0:
            raise RequestError(f"{field} is empty")
        if n > self.params.max_request_size:
            raise RequestError(f"{field} has {n} entries; max_request_size is "
                               f"{self.params.max_request_size}", "TOO_LARGE")

    def _footprint(self, request) -> Footprint:
        """The request's footprint: its Shape, else its footprint_string, else the default
        (footprint_topic's latest, else the parameters')."""
        if not shape_is_empty(request.footprint):
            return Footprint.of(shape_from_msg(request.footprint, "footprint"))
        if request.footprint_string:
            return footprint_from_string(request.footprint_string, "footprint_string")
        if self.params.footprint_topic:
            footprint = self.topic_footprint
            if footprint is None:
                raise RequestError(f"no footprint given and none received yet on "
                                   f"{self._footprint_sub.topic_name}", "NO_FOOTPRINT")
            return footprint
        if self.default_footprint is None:  # two threads may both build it: same shape
            self.default_footprint = default_footprint(self.params)
        return self.default_footprint

    # ------------------------------------------------------------------ services
    @answers(CheckLineOfSight)
    def _check_line_of_sight(self, request, response):
        world = self._view(request.header.frame_id, "header.frame_id", request.layers,
                           LAYER_GRID)
        mode = self._mode(request.mode)
        start = np.array([point_xy(request.start, "start")])
        goal = np.array([point_xy(request.goal, "goal")])
        world.check_points(start, lambda i: "start")
        world.check_points(goal, lambda i: "goal")
        result = world.segments(start, goal, mode, "start, goal")
        blocker = int(result.blocker[0])
        response.clear = bool(result.clear[0])
        response.cells_checked = int(result.checked[0])
        response.first_blocked_cell_x, response.first_blocked_cell_y = \
            (int(v) for v in result.cell[0])
        if not response.clear:
            response.first_blocked_point = point_msg(*result.point[0])
            response.blocked_by = ("sensors" if blocker == SENSOR_BLOCKER else "grid"
                                   if blocker < 0 else world.obstacles.part_ids[blocker])
        if self._markers is not None:
            self._markers.rays(start, goal if response.clear else result.point, result.clear)

    @answers(CheckLinesOfSight)
    def _check_lines_of_sight(self, request, response):
        world = self._view(request.header.frame_id, "header.frame_id", request.layers,
                           LAYER_GRID)
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
        starts, goals = np.column_stack(arrays[:2]), np.column_stack(arrays[2:])
        world.check_points(starts, lambda i: f"start_x[{i}], start_y[{i}]")
        world.check_points(goals, lambda i: f"goal_x[{i}], goal_y[{i}]")
        result = world.segments(starts, goals, mode, "start_x, start_y, goal_x, goal_y")
        response.clear = result.clear.tolist()
        # blocker -1 (clear), GRID_BLOCKER (-2) and SENSOR_BLOCKER (-3) index the three names
        # appended at the end.
        ids = [*(world.obstacles.part_ids if world.obstacles is not None else ()), "sensors",
               "grid", ""]
        response.blocked_by = [ids[k] for k in result.blocker.tolist()]
        response.cells_checked = array("I", result.checked.tolist())
        response.first_blocked_x = float64_field(result.point[:, 0])
        response.first_blocked_y = float64_field(result.point[:, 1])
        response.first_blocked_cell_x = int32_field(result.cell[:, 0])
        response.first_blocked_cell_y = int32_field(result.cell[:, 1])
        if self._markers is not None:
            ends = np.where(result.clear[:, None], goals, result.point)
            self._markers.rays(starts, ends, result.clear)

    @answers(CheckCollision)
    def _check_collision(self, request, response):
        world = self._view(request.header.frame_id, "header.frame_id", request.layers,
                           LAYERS_ALL)
        footprint = self._footprint(request)
        self._size(len(request.poses), "poses")
        if math.isnan(request.max_distance):
            raise RequestError("max_distance is NaN")
        with collector_paused(len(request.poses) >= LARGE_REQUEST):
            poses = poses_array(request.poses, "poses")
            world.check_poses(poses, footprint, "poses")
            hits = world.footprints(footprint, poses, "poses", request.max_distance
                                    if request.max_distance >= 0.0 else math.inf)
            collided = hits.grid_hit | hits.obstacle_hit
            response.grid_collision = hits.grid_hit.tolist()
            response.obstacle_collision = hits.obstacle_hit.tolist()
            response.in_collision = collided.tolist()
            response.distance = float64_field(hits.distance)
            ids = world.obstacles.part_ids if world.obstacles is not None else ()
            response.nearest_obstacle_id = [ids[i] if i >= 0 else "" for i in hits.index.tolist()]
            response.footprint_points = points_msgs(hits.on_footprint)
            response.obstacle_points = points_msgs(hits.on_obstacle)
            if self._markers is not None:
                self._markers.footprints(footprint, poses, collided)

    @answers(CheckPath)
    def _check_path(self, request, response):
        world = self._view(request.path.header.frame_id, "path.header.frame_id",
                           request.layers, LAYERS_ALL)
        mode = self._mode(request.mode)
        footprint = self._footprint(request)
        self._size(len(request.path.poses), "path.poses")
        with collector_paused(len(request.path.poses) >= LARGE_REQUEST):
            poses = poses_array([ps.pose for ps in request.path.poses], "path.poses")
        world.check_poses(poses, footprint, "path.poses")
        result = world.path(footprint, poses, mode, request.max_lookahead_distance,
                            request.stop_at_first_collision, "path.poses")
        bad = np.flatnonzero(result.invalid)
        response.is_valid = bad.size == 0
        response.first_invalid_index = int(bad[0]) if bad.size else -1
        response.invalid_pose_indices = int32_field(bad)
        response.segment_visible = result.visible.tolist()
        response.poses_checked = result.checked
        if self._markers is not None:
            self._markers.footprints(footprint, poses[:result.checked], result.invalid)

    @answers(ComputeDistance)
    def _compute_distance(self, request, response):
        result = collision_world.shape_distance(shape_from_msg(request.shape_a, "shape_a"),
                                                shape_from_msg(request.shape_b, "shape_b"))
        response.intersecting = result.intersecting
        response.distance = result.distance
        response.point_a = point_msg(*result.point_a)
        response.point_b = point_msg(*result.point_b)
        response.normal.x, response.normal.y = float(result.normal[0]), float(result.normal[1])

    def _diagnostics(self) -> list:
        world = self._world
        size = None if world.grid is None else (world.grid.width, world.grid.height)
        obstacles = None if world.obstacles is None else len(world.obstacles.outlines)
        return [server_status(node_label(self), self.state, self.kernels_ready.is_set(),
                              self.map_received if size else None, size, obstacles,
                              self._requests)]

    # ------------------------------------------------------------------ markers
    @topic_callback("marker batch")
    def _flush_markers(self) -> None:
        # A subscriber that joins later (RViz started after the obstacles arrived) gets the
        # outlines again, as from a latched topic.
        subscribers = self._marker_pub.get_subscription_count()
        if subscribers > self._marker_subscribers:
            self._markers.resend_obstacles()
        self._marker_subscribers = subscribers
        batch, problems = self._markers.take(self.get_clock().now().to_msg())
        for problem in problems:
            self.get_logger().error(f"markers of one query dropped: {problem}")
        if batch:
            self._marker_pub.publish(MarkerArray(markers=batch))


def main(args=None) -> int:
    return run_node(CollisionServer, args)


if __name__ == "__main__":
    sys.exit(main())
