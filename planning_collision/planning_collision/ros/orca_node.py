"""orca_node: ORCA collision avoidance for a robot fleet over ROS 2.

A thin adapter around :class:`planning_collision.fleet.FleetController`: it turns messages
into timestamped samples, runs one controller step per timer tick and publishes the commands,
then the status and the markers (which can never change or hold back a command). Per agent
``<name>``: in ``<name>/odom``, a goal (``goal_pose``) or the navigation stack's command
(``cmd_vel_nav``), and its pose source (``amcl_pose`` or tf); out ``<name>/cmd_vel`` (body
frame), sent only while the robot is engaged (see :mod:`planning_collision.fleet.controller`:
in cmd_vel mode while its navigation command is fresh; never while handed over with
``<name>/orca/enable``). Status and markers are the node's own (``~/status``,
``~/markers``), and ``/diagnostics`` has an entry per robot (:mod:`.diagnostics`). Static
obstacles are built off the control thread (:mod:`.orca_obstacles`); the
parameters are in :mod:`.orca_parameters`; the lifecycle in :mod:`.lifecycle`.

Run: ``ros2 run planning_collision orca_node --ros-args --params-file config/orca.yaml``.
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from functools import partial

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from std_srvs.srv import SetBool
from visualization_msgs.msg import MarkerArray

from planning_collision.fleet import FleetController
from planning_collision_interfaces.msg import ObstacleArray, OrcaStatus

from .diagnostics import DiagnosticsPublisher, InfeasibleCounter, node_label, orca_statuses
from .lifecycle import ManagedNode
from .message_codecs import LatestInputs, choose_codecs
from .node_executor import events_executor
from .orca_footprints import subscribe_footprints
from .orca_markers import fleet_markers, publish_markers, track_markers
from .orca_obstacles import ObstacleWorker
from .orca_parameters import (
    DYNAMIC,
    PARAMETERS,
    check_parameters,
    declare_agents,
    requested_changes,
)
from .orca_status import PhaseTimes, publish_status
from .parameters import ParameterError, declare
from .polled_subscriptions import PolledSubscriptions
from .pose_sources import subscribe_pose_sources
from .qos import LATEST, RELIABLE, latched_or_volatile
from .resubscribe import Resubscriber
from .run import run_node

WARN_PERIOD = 5.0


def grouped_events(events: list[str]) -> tuple[str, str]:
    """A step's events as one line of news ("received") and one of warnings (going stale),
    each ``"; "``-joined ("" when none): one log call each, as rclpy's Python logger looks its
    caller up in the source files on every call (0.5 ms of CPU here), and a loaded fleet's
    odometry can go stale and come back for several agents in the same step."""
    news = [event for event in events if event.endswith("received")]
    return "; ".join(news), "; ".join(event for event in events
                                      if not event.endswith("received"))


class OrcaNode(ManagedNode):
    def __init__(self, **node_kwargs):
        # Before anything can fail: a node whose parameters are refused here is still
        # destroyed by its context's shutdown, and destroy_node reads this.
        self._polled: PolledSubscriptions | None = None  # the odometry (configure makes it)
        super().__init__("orca_node", **node_kwargs)
        self.params = p = declare(self, PARAMETERS, refuse=False)  # configure refuses
        # With a map: its obstacles (grid), and its routes and passages (fleet) when on.
        routes = p.use_map_obstacles and (p.route_planning or p.passages)
        self.KERNELS = ("orca", *(("grid",) if p.use_map_obstacles else ()),
                        *(("fleet",) if routes else ()))
        self._warned: dict[str, float] = {}
        self.fleet: FleetController | None = None
        self._obstacles: ObstacleWorker | None = None
        self._following: list[Parameter] = []  # agent parameters a node-wide change sets
        self.add_on_set_parameters_callback(self._check_changes)
        self.add_post_set_parameters_callback(self._apply_changes)
        self.start()

    # ------------------------------------------------------------------ lifecycle
    def configure(self) -> None:
        p = self.params
        settings = check_parameters(p)
        controlled, observed = declare_agents(self, p)
        try:
            self.fleet = FleetController(controlled, observed, settings, warn=self._warn)
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
        names, k = self.fleet.names, self.fleet.controlled
        log = self.get_logger()
        codecs = choose_codecs(p.raw_messages, p.stamped_cmd_vel, k, log.warning)
        self._decode_odometry, self._twist = codecs.decode_odometry, codecs.twist
        self._odom_in, self._cmd_in = LatestInputs(len(names)), LatestInputs(k)
        self._step_starts: deque[float] = deque()
        self._markers_due = 0.0
        coordinate = p.use_map_obstacles and (p.passages or (
            p.route_planning and p.preferred_velocity_source == "goal"))
        self._obstacles = ObstacleWorker(p.global_frame, p.obstacles_topic,
                                         p.occupied_threshold, p.unknown_is_occupied,
                                         p.map_simplify_tolerance, log, self.kernels_ready,
                                         on_grid=self._on_grid if coordinate else None)
        self._cmd_pubs = [self.create_publisher(self._twist.message_type,
                                                f"{name}/{p.cmd_vel_out_topic}", RELIABLE)
                          for name in names[:k]]
        # The node's own outputs: N nodes side by side (one per robot) keep them apart.
        self._status_pub = self.create_publisher(OrcaStatus, "~/status", 10)
        self._phases = PhaseTimes()
        self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 50)
        self._marker_names = [f"{self.get_name()}/{name}" for name in names]
        self._raw_markers, self._raw_status = codecs.raw_markers, codecs.raw_status
        self._last_step = None
        self._publishing = np.zeros(k, dtype=bool)
        self._compute_time = 0.0
        self._infeasible = InfeasibleCounter(k)
        for name in names[:k]:
            self.create_service(SetBool, f"{name}/orca/enable", partial(self._on_enable, name))
        DiagnosticsPublisher(self, self._diagnostics)
        # Odometry is taken at each step, not delivered by the executor per message (its
        # rate is the fleet's, 1,200 messages a second for 24 robots at 50 Hz).
        self._polled = PolledSubscriptions(self)
        self._odometry = Resubscriber(self, self._warn, tries=p.odometry_resubscribe_tries,
                                      subscriber=self._polled)
        self._subscribe(p, codecs.raw_odometry)
        self._sensed, self._tracks = None, None
        if p.scan_topic or p.cloud_topic or p.external_tracks_topic:  # seen only by sensors
            from .orca_scans import SensedObjects
            self._sensed = SensedObjects(self, self.fleet, p, self._obstacles, self._warn)
        self.create_timer(1.0, self._odometry.check)
        self.create_timer(settings.time_step, self._step)
        log.info(f"ready: {k} agents, {len(names) - k} observed, {p.rate_hz:g} Hz, preferred "
                 f"velocity from {p.preferred_velocity_source}, "
                 f"{'serialized' if codecs.raw_odometry else 'object'} odometry")

    def deactivate(self) -> None:
        """One zero command per robot commanded at the last step, then no more until
        activated."""
        released = self.fleet.release()
        self._publish(lambda: self._publish_commands(np.zeros((self.fleet.controlled, 3)),
                                                     released), "commands")

    def cleanup(self) -> None:
        if self._obstacles is not None:
            self._obstacles.close()
        self._obstacles = None
        self._sensed = self._tracks = None
        self.fleet = None
        if self._polled is not None:
            self._polled.destroy()
        self._polled = None

    def _subscribe(self, p, raw_odometry: bool) -> None:
        names, k = self.fleet.names, self.fleet.controlled
        self.create_subscription(ObstacleArray, p.obstacles_topic,
                                 partial(self._obstacles.submit, "obstacles"),
                                 latched_or_volatile(p.obstacles_subscribe_transient_local))
        if p.use_map_obstacles:
            self.create_subscription(OccupancyGrid, p.map_topic, partial(self._obstacles.submit,
                                                                         "map"),
                                     latched_or_volatile(p.map_subscribe_transient_local))
        goal_qos = latched_or_volatile(p.goal_subscribe_transient_local)
        for i, name in enumerate(names):
            self._odometry.subscribe(i, Odometry, f"{name}/{p.odom_topic}",
                                     partial(self._store, self._odom_in, i), LATEST,
                                     raw=raw_odometry)
            if i < k and p.preferred_velocity_source == "goal":
                self.create_subscription(PoseStamped, f"{name}/{p.goal_topic}",
                                         partial(self._on_goal, i), goal_qos)
            elif i < k:
                self.create_subscription(self._twist.message_type,
                                         f"{name}/{p.cmd_vel_in_topic}",
                                         partial(self._store, self._cmd_in, i), LATEST,
                                         raw=self._twist.raw)
        subscribe_pose_sources(self, self.fleet, p, self._warn)
        subscribe_footprints(self, names, p)

    def _on_grid(self, grid) -> None:
        """A new map (on the obstacle worker's thread): routes and passages for it (#22)."""
        from planning_collision.fleet.passages import coordination_world
        from planning_collision.fleet.routes import LATENCY_SLACK
        from planning_collision.fleet.zones import parse_zones

        p, fleet = self.params, self.fleet
        if fleet is None:
            return
        started = time.perf_counter()
        # The largest controlled robot with its margins (and the controller's latency slack
        # where there is room; not on a one-lane passage's centre line: fleet/routes.py).
        needed = float(fleet.radius[:fleet.controlled].max()) + p.safety_margin
        routes, passages = coordination_world(grid.blocked_mask(), grid.resolution,
                                              grid.origin, needed + LATENCY_SLACK,
                                              passages=p.passages,
                                              zone=p.passage_zone,
                                              declared=parse_zones(p.passage_zones),
                                              min_radius=needed)
        fleet.set_world(routes if p.route_planning else None, passages)
        self.get_logger().info(
            f"routes for the map: {0 if passages is None else len(passages.passages)} "
            f"passages one direction at a time, built in "
            f"{(time.perf_counter() - started) * 1e3:.0f} ms")

    # ------------------------------------------------------------------ callbacks
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _store(self, inputs: LatestInputs, i: int, msg, arrival: float | None = None) -> None:
        inputs.store(i, self._now() if arrival is None else arrival, msg)

    def _on_goal(self, i: int, msg: PoseStamped) -> None:
        name, frame = self.fleet.names[i], msg.header.frame_id
        if frame and frame != self.params.global_frame:
            self._warn(f"goal-frame/{name}", f"{name}: goal in frame '{frame}' ignored: "
                       f"global_frame is '{self.params.global_frame}'")
        elif self.fleet.goal(i, msg.pose.position.x, msg.pose.position.y):
            self.get_logger().info(f"{name}: goal ({msg.pose.position.x:.2f}, "
                                   f"{msg.pose.position.y:.2f})")

    def _on_enable(self, name: str, request: SetBool.Request, response: SetBool.Response):
        """``<name>/orca/enable``: false hands the robot over (one zero command, then
        nothing; the others avoid it fully), true takes it back. Sets ``<name>.enabled``."""
        (result,) = self.set_parameters([Parameter(f"{name}.enabled", value=request.data)])
        response.success = result.successful
        response.message = (result.reason if not result.successful else
                            f"{name}: commanded by {self.get_name()}" if request.data else
                            f"{name}: handed over, {self.get_name()} sends it nothing")
        return response

    def _warn(self, key: str, text: str, period: float = WARN_PERIOD) -> None:
        """A warning at most once per ``period`` seconds for each ``key``."""
        now = time.monotonic()
        if now - self._warned.get(key, -math.inf) >= period:
            self._warned[key] = now
            self.get_logger().warning(text)

    # ------------------------------------------------------------------ parameters
    def _check_changes(self, params: list[Parameter]) -> SetParametersResult:
        if self.fleet is None:  # not configured: configure reads the new values
            return SetParametersResult(successful=True)
        try:
            requested_changes(self.fleet, params)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_changes(self, params: list[Parameter]) -> None:
        for p in params:
            if p.name in DYNAMIC:
                setattr(self.params, p.name, p.value)
        if self.fleet is None:  # configure reads them
            return
        settings, agents = requested_changes(self.fleet, params)
        self.fleet.configure(settings)
        for name, changes in agents.items():
            self.fleet.set_agent(name, **changes)
        for p in params:
            if p.name in ("radius", "max_speed"):  # keep every agent's own parameter true
                self._following += [Parameter(f"{name}.{p.name}", value=p.value)
                                    for name in self.fleet.names]
        self.get_logger().info("parameters changed: " + ", ".join(
            f"{p.name}={p.value}" for p in params))

    # ------------------------------------------------------------------ the step
    def _step(self) -> None:
        if not self.active:  # kept taking: the Resubscriber sees the odometry delivered
            self._polled.take(self._now())
            return
        if not self.kernels_ready.is_set():  # warming up: hold every robot commanded
            self._refresh_inputs()
            held = self._hold(self._now())
            self._publish(lambda: self._publish_commands(np.zeros((self.fleet.controlled, 3)),
                                                         held), "commands")
            self._warn("warming-up", "kernels warming up: commanding zero velocity")
            return
        started, now = time.perf_counter(), self._now()
        self._phases.start()
        self._step_starts.append(now)
        while self._step_starts[0] <= now - 1.0:
            self._step_starts.popleft()
        p, k = self.params, self.fleet.controlled
        want_status = self._status_pub.get_subscription_count() > 0
        want_markers = (p.publish_markers and now >= self._markers_due
                        and self._marker_pub.get_subscription_count() > 0)
        step = None
        if self._following:  # set outside the parameter callbacks, which must not nest
            following, self._following = self._following, []
            self.set_parameters(following)
        try:
            self._refresh_inputs()
            self._phases.mark("inputs")
            discs = None
            if self._sensed is not None:
                self._tracks = self._sensed.tracks(now)
                discs = self._sensed.discs(now)
            step = self.fleet.step(now, self._obstacles.current, want_lines=want_markers or (
                want_status and p.publish_orca_lines), discs=discs)
            commands, publish = step.commands, step.publish
            if self._sensed is not None:  # stop rather than touch a tracked person
                commands = self._sensed.brake(step, commands, discs)
        except Exception as exc:  # a bug must not leave robots driving on old commands
            self.get_logger().error(f"step failed, commanding zero velocity: {exc}",
                                    throttle_duration_sec=5.0)
            commands, publish = np.zeros((k, 3)), self._hold(now)
        self._phases.mark("controller")
        self._publish(lambda: self._publish_commands(commands, publish), "commands")
        self._phases.mark("commands")
        if step is None:
            return
        self._last_step, self._compute_time = step, time.perf_counter() - started
        self._infeasible.add(step.infeasible & step.active)
        news, warnings = grouped_events(step.events)
        if news:
            self.get_logger().info(news)
        if warnings:
            self.get_logger().warning(warnings)
        stamp = self.get_clock().now().to_msg()
        if self._tracks is not None:
            self._publish(lambda: self._sensed.publish(self._tracks, stamp), "tracks")
        if want_status:
            self._publish(lambda: self._publish_status(step, stamp, started), "status")
        self._phases.mark("status")
        if want_markers:
            self._markers_due = now + 1.0 / min(p.marker_rate_hz, p.rate_hz) - 0.5 / p.rate_hz
            self._publish(lambda: self._publish_markers(step, stamp), "markers")
        self._phases.mark("markers")
        if (summary := self._phases.end_step()) is not None:
            self.get_logger().debug(summary)

    def _publish(self, publish, what: str) -> None:
        """Publish one output; an error is logged and never reaches the other outputs."""
        try:
            publish()
        except Exception as exc:
            if self.context.ok():  # else shutting down: the publishers are gone
                self.get_logger().error(f"publishing {what} failed: {exc}",
                                        throttle_duration_sec=5.0)

    def _refresh_inputs(self) -> None:
        """Hand what arrived since the last step to the controller (the latest of each)."""
        names = self.fleet.names
        self._polled.take(self._now())  # the newest odometry of each agent, into _odom_in
        for i, msg, arrival in self._odom_in.fresh():
            try:
                numbers, child, stamp = self._decode_odometry(msg)
            except Exception as exc:  # cdr.DecodeError, or whatever a bad message causes
                self._warn(f"odom/{names[i]}", f"{names[i]}: odometry dropped: {exc}")
                continue
            if self.fleet.odometry(i, arrival, stamp, *numbers) and i < self.fleet.controlled:
                self._twist.set_frame(i, child.decode(errors="replace"))
        for i, msg, arrival in self._cmd_in.fresh():
            try:
                self.fleet.nav_command(i, arrival, None, *self._twist.decode(msg))
            except Exception as exc:
                self._warn(f"cmd/{names[i]}", f"{names[i]}: command dropped: {exc}")

    def _hold(self, now: float) -> np.ndarray:
        """The robots to send a zero command when the step cannot run: those commanded
        (every robot if even that fails: it would be a bug)."""
        try:
            return self.fleet.hold(now)
        except Exception:
            return np.ones(self.fleet.controlled, dtype=bool)

    def _publish_commands(self, commands: np.ndarray, publish: np.ndarray) -> None:
        """Send ``commands[i]`` to every robot with ``publish[i]``; nothing to the others."""
        self._publishing = publish.copy()
        stamp = self.get_clock().now().to_msg()
        rows = commands.tolist()
        for i in np.flatnonzero(publish).tolist():
            self._cmd_pubs[i].publish(self._twist.encode(i, stamp, *rows[i]))

    def _diagnostics(self):
        now = self._now()
        rate = sum(1 for t in self._step_starts if t > now - 1.0) if self.active else 0.0
        return orca_statuses(node_label(self), self.state, self.params.rate_hz, float(rate),
                             self._compute_time, self.fleet.names, self._last_step,
                             self._publishing, self._infeasible)

    def _publish_status(self, step, stamp, started: float) -> None:
        publish_status(self._status_pub, self._raw_status, step, self.fleet.names,
                       self.params.publish_orca_lines, self.params.global_frame, stamp,
                       float(len(self._step_starts)), started)

    def _publish_markers(self, step, stamp) -> None:
        publish_markers(self._marker_pub, self._raw_markers, self.params.global_frame, stamp,
                        fleet_markers(step, self._marker_names, self.fleet.radius,
                                      self.fleet.max_speed,
                                      max(1.0, 3.0 / self.params.marker_rate_hz))
                        + ([] if self._tracks is None else track_markers(
                            f"{self.get_name()}/tracks", self._tracks,
                            2.0 / self.params.marker_rate_hz)))

    def close(self) -> None:
        """run_node's last call: a zero command per robot if active, the worker ended."""
        super().close()
        if self._obstacles is not None:
            self._obstacles.close()

    def destroy_node(self) -> None:
        """The polled odometry subscriptions first (cleanup destroys them too): they are in
        no list rclpy's Node.destroy_node walks."""
        if self._polled is not None:
            self._polled.destroy()
        super().destroy_node()


def main(args=None) -> int:
    """Spin an OrcaNode until SIGINT or SIGTERM, on rclpy's EventsExecutor where it exists."""
    return run_node(OrcaNode, args, make_executor=events_executor)


if __name__ == "__main__":
    sys.exit(main())
