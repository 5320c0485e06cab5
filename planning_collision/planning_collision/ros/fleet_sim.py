"""fleet_sim: a kinematic simulator for a scenario's robots, with odometry, commands and a
collision referee.

A thin adapter around :class:`planning_collision.sim.simulation.FleetSimulation`: every robot of the
scenario gets a namespace of its own name; ORCA robots follow ``<name>/cmd_vel`` (body frame,
geometry_msgs/TwistStamped or Twist); every robot, people included, publishes
``<name>/odom`` (nav_msgs/Odometry, twist in the body frame as REP-105 asks) at ``rate_hz``.
Non-ORCA agents (people) walk straight to their goals by themselves.

Each step the referee checks robot against robot, against the scenario's obstacles (exact,
geometry core) and against the map's blocked cells (grid core), counts every contact once when
it begins and keeps the smallest separation; ``~/status`` (diagnostic_msgs/DiagnosticArray)
reports it twice a second with each robot's progress. The recorded trajectories are written to
``trajectory_file`` (.npz) when the node stops.

Simulated time starts at once (``start: now``), or only when told (``start: wait``, until the
parameter is set to ``now``: ``ros2 param set /fleet_sim start now``), or once every ORCA robot
has received a command (``start: commands``), so that nobody walks into robots whose
controller is still loading. Until then the robots stand at their starts and their odometry
is still published.

A scenario that cannot be loaded is logged and reported on ``~/status`` (level ERROR); the node
keeps running. Malformed commands (NaN, inf) are dropped with a throttled warning.

Run: ``ros2 run planning_collision fleet_sim --ros-args --params-file config/fleet_sim.yaml
-p scenario:=config/scenarios/swap_room.yaml`` or ``python -m planning_collision.ros.fleet_sim``.
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, Twist, TwistStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from visualization_msgs.msg import Marker, MarkerArray

from planning_collision.fleet.controller import sample_time
from planning_collision.grid.map_file import load_map_file
from planning_collision.sim.scenario import Scenario, load_scenario
from planning_collision.sim.simulation import MAP_ID, FleetSimulation, layout_problems

from . import markers
from .fleet_sim_sensors import PARAMETERS as SENSOR_PARAMETERS
from .fleet_sim_sensors import SimulatedSensors
from .parameters import Param, ParameterError, declare, relative_topic
from .run import run_node

START_CHOICES = ("now", "wait", "commands")
PARAMETERS = (
    Param("scenario", "", "Scenario YAML to simulate (robots, obstacles, map)."),
    Param("rate_hz", 50.0, "Simulation steps per second; each step advances 1 / rate_hz "
          "seconds of simulated time. Odometry is published after every timer tick; a tick "
          "that comes late runs the missed steps first (at most 5; a longer stall is dropped "
          "and reported as dropped_time on ~/status), so simulated time keeps up with the "
          "wall clock."),
    Param("stamped_cmd_vel", True, "Subscribe geometry_msgs/TwistStamped on cmd_vel (as Nav2 "
          "on Kilted); false: geometry_msgs/Twist."),
    Param("cmd_vel_timeout", 0.5, "Seconds (simulated) after which a robot's last command "
          "is stale and the robot stops. A TwistStamped stamped longer ago than this (by the "
          "ROS clock, as ros2_control's diff_drive_controller judges it) is dropped on "
          "arrival; a zero stamp counts as now."),
    Param("odom_frames_at_start", True, "True: each robot's odometry is in its own frame "
          "'<name>/odom' whose origin is its start pose, so it starts at zero like a real "
          "robot's; false: odometry is in the scenario's global frame."),
    Param("max_linear_accel", 0.0, "Largest change of a robot's planar velocity, m/s^2 "
          "(0 = unlimited: commands take effect at once)."),
    Param("max_angular_accel", 0.0, "Largest change of a robot's turn rate, rad/s^2 "
          "(0 = unlimited)."),
    Param("goal_tolerance", 0.15, "A robot has arrived once its centre is this close (m) to its "
          "goal."),
    Param("cmd_vel_topic", "cmd_vel", "Command topic inside each robot's namespace."),
    Param("odom_topic", "odom", "Odometry topic inside each robot's namespace."),
    Param("status_rate_hz", 2.0, "Publications per second of ~/status."),
    Param("publish_markers", True, "Publish ~/markers (robot discs, headings, goals, names)."),
    Param("marker_rate_hz", 10.0, "Publications per second of ~/markers."),
    Param("trajectory_file", "", "Where to write the recorded trajectories (.npz: names, "
          "times, x, y, yaw, ...) when the node stops; empty = not written."),
    Param("noise_seed", 0, "Seed of the odometry noise and of the signs of each robot's "
          "drift (the scenario's noise gives their sizes)."),
    Param("start", "now", "When simulated time starts: 'now'; 'wait': when this parameter is "
          "set to 'now' (ros2 param set /fleet_sim start now); 'commands': once every ORCA "
          "robot has received a command (its controller runs), or when set to 'now'. Until "
          "then the robots stand at their starts and their odometry is still published. The "
          "one parameter that can be set while the node runs, and only to 'now'.",
          choices=START_CHOICES, dynamic=True),
    *SENSOR_PARAMETERS,
)

MAX_CATCH_UP = 5
ORCA_COLOR = markers.BLUE
PERSON_COLOR = markers.ORANGE


def _positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0.0):
        raise ParameterError(f"{name} must be finite and > 0, got {value}")


def _fmt(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else str(value)


class FleetSim(Node):
    def __init__(self, **node_kwargs):
        super().__init__("fleet_sim", **node_kwargs)
        self.params = p = declare(self, PARAMETERS)
        for name in ("rate_hz", "status_rate_hz", "marker_rate_hz", "cmd_vel_timeout",
                     "goal_tolerance"):
            _positive(name, getattr(p, name))
        for name in ("max_linear_accel", "max_angular_accel", "odom_rate_hz", "odom_latency",
                     "localization_rate_hz", "localization_latency",
                     "localization_position_noise", "localization_yaw_noise"):
            value = getattr(p, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ParameterError(f"{name} must be finite and >= 0, got {value}")
        cmd_topic = relative_topic("cmd_vel_topic", p.cmd_vel_topic)
        relative_topic("odom_topic", p.odom_topic)
        relative_topic("pose_topic", p.pose_topic)
        log = self.get_logger()

        self.problem = ""  # why nothing is simulated, for ~/status
        self.map_problem = ""
        self.sim: FleetSimulation | None = None
        self.scenario: Scenario | None = None
        if not p.scenario:
            self.problem = "no scenario: set the scenario parameter"
        else:
            try:
                self.scenario = load_scenario(p.scenario)
            except ValueError as exc:
                self.problem = str(exc)
        grid = None
        if self.scenario is not None and self.scenario.map is not None:
            try:
                grid = load_map_file(self.scenario.map).to_grid()
            except ValueError as exc:
                self.map_problem = f"map not used for collisions: {exc}"
                log.error(self.map_problem)
        if self.scenario is not None:
            self.sim = FleetSimulation(
                self.scenario, 1.0 / p.rate_hz, grid, cmd_vel_timeout=p.cmd_vel_timeout,
                goal_tolerance=p.goal_tolerance, max_linear_accel=p.max_linear_accel,
                max_angular_accel=p.max_angular_accel, record=bool(p.trajectory_file),
                drift_seed=p.noise_seed)
            for problem in layout_problems(self.scenario, grid):
                log.warning(f"scenario layout: {problem}")
        else:
            log.error(f"nothing simulated: {self.problem}")

        self._group = MutuallyExclusiveCallbackGroup()
        self._rng = np.random.default_rng(p.noise_seed)
        self.sensors: SimulatedSensors | None = None
        if self.sim is not None:
            cmd_type = TwistStamped if p.stamped_cmd_vel else Twist
            frames = []
            for robot in self.scenario.robots:
                odom_frame = (f"{robot.name}/odom" if p.odom_frames_at_start
                              else self.scenario.global_frame)
                frames.append((odom_frame, f"{robot.name}/base_link"))
                if robot.orca:
                    self.create_subscription(cmd_type, f"{robot.name}/{cmd_topic}",
                                             partial(self._on_command, robot.name), 10,
                                             callback_group=self._group)
            self.sensors = SimulatedSensors(
                self, self.sim, frames, not p.odom_frames_at_start,
                [r.name for r in self.scenario.robots if r.orca], p, self._rng)
            self.create_timer(1.0 / p.rate_hz, self._step, callback_group=self._group)

        self._status_pub = self.create_publisher(DiagnosticArray, "~/status", 10)
        self.started = p.start == "now"
        self._start_requested = False
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._wall_origin: float | None = None
        self.dropped_seconds = 0.0
        self._busy_seconds = 0.0
        self._last_rate_sample = (time.monotonic(), 0, 0.0)
        self.achieved_rate = 0.0
        self.load = 0.0
        self.create_timer(1.0 / p.status_rate_hz, self._publish_status,
                          callback_group=self._group)
        self._marker_pub = None
        self._markers: MarkerArray | None = None
        if p.publish_markers and self.sim is not None:
            self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 10)
            self.create_timer(1.0 / p.marker_rate_hz, self._publish_markers,
                              callback_group=self._group)
        if self.sim is not None:
            self.sensors.publish(self.get_clock().now().nanoseconds * 1e-9)
            waiting = {"now": "", "wait": "; simulated time starts when start is set to now",
                       "commands": "; simulated time starts once every ORCA robot has a "
                                   "command"}[p.start]
            log.info(f"simulating {len(self.scenario.robots)} robots from {p.scenario} at "
                     f"{p.rate_hz:g} Hz ({sum(r.orca for r in self.scenario.robots)} ORCA), "
                     f"{len(self.scenario.obstacles)} obstacles, "
                     f"map {'yes' if grid is not None else 'no'}{waiting}")

    # ------------------------------------------------------------------ inputs
    def _on_command(self, name: str, msg) -> None:
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        if isinstance(msg, TwistStamped) and (age := self._age(msg.header.stamp)) > \
                self.params.cmd_vel_timeout:
            self.get_logger().warning(
                f"command for {name} dropped: stamped {age:.2f} s ago, more than "
                f"cmd_vel_timeout ({self.params.cmd_vel_timeout:g} s; are the clocks in "
                f"sync?)", throttle_duration_sec=2.0)
            return
        try:
            self.sim.command(name, (twist.linear.x, twist.linear.y, twist.angular.z))
        except ValueError as exc:
            self.get_logger().warning(f"command for {name} dropped: {exc}",
                                      throttle_duration_sec=2.0)
        except Exception as exc:  # nothing a topic sends may take the node down
            self.get_logger().error(f"command for {name} failed: {exc}",
                                    throttle_duration_sec=2.0)

    def _age(self, stamp) -> float:
        """Seconds since ``stamp`` by this node's clock, by orca_node's rule for stamps
        (:func:`~planning_collision.fleet.controller.sample_time`: a zero stamp, or one from
        the future, means now)."""
        now = self.get_clock().now().nanoseconds * 1e-9
        return now - sample_time(stamp.sec + 1e-9 * stamp.nanosec, now)

    # ------------------------------------------------------------------ the clock
    def _on_set_parameters(self, parameters) -> SetParametersResult:
        """Accept one change only: ``start`` to 'now', which starts the clock at the next
        tick (the other parameters are read-only)."""
        for parameter in parameters:
            if parameter.name != "start":
                continue
            if parameter.value != "now":
                return SetParametersResult(
                    successful=False, reason=f"start can only be set to 'now' while the node "
                                             f"runs, not {parameter.value!r}")
            if self.sim is None:
                return SetParametersResult(successful=False,
                                           reason=f"nothing simulated: {self.problem}")
            self._start_requested = True
        return SetParametersResult(successful=True)

    def _start(self, why: str) -> None:
        self.started = True
        self._wall_origin = None  # simulated time follows the wall clock from the next tick
        self.get_logger().info(f"simulated time starts: {why}")

    # ------------------------------------------------------------------ stepping
    def _step(self) -> None:
        """Advance simulated time to the wall clock in fixed steps (at most MAX_CATCH_UP per
        call; a longer stall is dropped, not replayed), then publish odometry once. Before
        the clock starts, only publish odometry (the robots stand at their starts)."""
        tick = time.monotonic()
        try:
            sim = self.sim
            if not self.started:
                if self._start_requested:
                    self._start("start was set to now")
                elif self.params.start == "commands" and np.all(
                        np.isfinite(sim.command_times[sim.orca])):
                    self._start("every ORCA robot has a command")
                else:
                    self.sensors.publish(self.get_clock().now().nanoseconds * 1e-9)
                    return
            if self._wall_origin is None:
                self._wall_origin = tick - sim.time
            due = round((tick - self._wall_origin) / sim.dt) - sim.steps
            if due > MAX_CATCH_UP:
                skipped = due - MAX_CATCH_UP
                self._wall_origin += skipped * sim.dt
                self.dropped_seconds += skipped * sim.dt
                due = MAX_CATCH_UP
            if due <= 0:
                return
            before = len(sim.events)
            for _ in range(due):
                sim.step()
            for event in sim.events[before:]:
                self.get_logger().warning(f"collision at t={event.time:.2f} s: {event.pair}")
            self.sensors.publish(self.get_clock().now().nanoseconds * 1e-9)
        except Exception as exc:
            self.get_logger().error(f"step failed: {exc}\n{traceback.format_exc()}",
                                    throttle_duration_sec=5.0)
        finally:
            self._busy_seconds += time.monotonic() - tick

    # ------------------------------------------------------------------ status
    def _publish_status(self) -> None:
        now = time.monotonic()
        steps = self.sim.steps if self.sim is not None else 0
        then, steps_then, busy_then = self._last_rate_sample
        if now > then:
            self.achieved_rate = (steps - steps_then) / (now - then)
            self.load = (self._busy_seconds - busy_then) / (now - then)
        self._last_rate_sample = (now, steps, self._busy_seconds)
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self._fleet_status()] + self._robot_statuses()
        self._status_pub.publish(msg)

    def _fleet_status(self) -> DiagnosticStatus:
        status = DiagnosticStatus(name=f"{self.get_name()}/fleet", hardware_id="fleet")
        sim = self.sim
        if sim is None:
            status.level = DiagnosticStatus.ERROR
            status.message = self.problem
            status.values = [KeyValue(key="problem", value=self.problem)]
            return status
        events = sim.events
        robot_names = set(sim.names)
        robot_hits = sum(1 for e in events if e.other in robot_names)
        map_hits = sum(1 for e in events if e.other == MAP_ID)
        arrived = int(sim.arrived.sum())
        values = {
            "collisions": str(len(events)),
            "robot_collisions": str(robot_hits),
            "obstacle_collisions": str(len(events) - robot_hits - map_hits),
            "map_collisions": str(map_hits),
            "collision_pairs": json.dumps([[e.robot, e.other, round(e.time, 3)]
                                           for e in events]),
            "min_separation": _fmt(sim.min_separation),
            "min_separation_pair": "-".join(sim.min_separation_pair),
            "min_obstacle_clearance": _fmt(sim.min_obstacle_clearance),
            "arrived": str(arrived),
            "robots": str(len(sim.names)),
            "all_arrived": str(arrived == len(sim.names)).lower(),
            "orca_arrived": str(int((sim.arrived & sim.orca).sum())),
            "orca_robots": str(int(sim.orca.sum())),
            "started": str(self.started).lower(),
            "sim_time": _fmt(sim.time),
            "steps": str(sim.steps),
            "achieved_rate": f"{self.achieved_rate:.2f}",
            "rate_hz": f"{self.params.rate_hz:g}",
            "dropped_time": _fmt(self.dropped_seconds),
            "step_load": f"{self.load:.3f}",
            "timeout": _fmt(self.scenario.timeout),
            "timed_out": str(sim.time > self.scenario.timeout).lower(),
            "scenario": self.params.scenario,
        }
        if self.map_problem:
            values["map_problem"] = self.map_problem
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        if events:
            status.level = DiagnosticStatus.WARN
        elif self.map_problem:
            status.level = DiagnosticStatus.WARN
        else:
            status.level = DiagnosticStatus.OK
        status.message = (f"{arrived}/{len(sim.names)} arrived, {len(events)} collisions, "
                          f"t = {sim.time:.1f} s")
        return status

    def _robot_statuses(self) -> list[DiagnosticStatus]:
        sim = self.sim
        if sim is None:
            return []
        out = []
        distances = sim.distances_to_goal
        fresh = sim.command_fresh()
        counts = sim.contact_counts()
        touching: dict[str, list[str]] = {name: [] for name in sim.names}
        for robot, other in sorted(sim.current_contacts):
            touching[robot].append(other)
            if other in touching:
                touching[other].append(robot)
        for i, name in enumerate(sim.names):
            x, y, yaw = sim.poses[i]
            vx, vy, wz = sim.velocities[i]
            if not sim.orca[i]:
                command = "none (walks by itself)"
            elif np.isneginf(sim.command_times[i]):
                command = "none yet"
            else:
                command = "fresh" if fresh[i] else "stale"
            arrived = bool(sim.arrived[i])
            values = {
                "arrived": str(arrived).lower(),
                "arrival_time": _fmt(sim.arrival_times[i]) if arrived else "",
                "distance_to_goal": _fmt(distances[i]),
                "x": _fmt(x), "y": _fmt(y), "yaw": _fmt(yaw),
                "speed": _fmt(math.hypot(vx, vy)),
                "angular_speed": _fmt(wz),
                "command": command,
                "orca": str(bool(sim.orca[i])).lower(),
                "drive": self.scenario.robots[i].drive,
                "collisions": str(counts[name]),
                "in_contact_with": ",".join(touching[name]),
            }
            level = DiagnosticStatus.WARN if touching[name] else DiagnosticStatus.OK
            message = ("in contact with " + ", ".join(touching[name]) if touching[name]
                       else "arrived" if arrived else f"{distances[i]:.2f} m to goal")
            out.append(DiagnosticStatus(
                level=level, name=f"{self.get_name()}/{name}", hardware_id=name,
                message=message, values=[KeyValue(key=k, value=v) for k, v in values.items()]))
        return out

    # ------------------------------------------------------------------ markers
    def _marker_messages(self) -> MarkerArray:
        """Markers built once, moved in place: a disc and a name per robot, one line list of
        headings, one of goal circles."""
        sim = self.sim
        frame = self.scenario.global_frame
        stamp = self.get_clock().now().to_msg()
        batch = MarkerArray()
        self._discs, self._labels = [], []
        for i, name in enumerate(sim.names):
            disc = markers.marker(Marker.CYLINDER, "robots", i, frame, stamp, ORCA_COLOR,
                                  2.0 * float(sim.radii[i]))
            disc.scale.z = 0.1
            disc.pose.position.z = 0.05
            label = markers.marker(Marker.TEXT_VIEW_FACING, "names", i, frame, stamp,
                                   markers.GREY, 0.25)
            label.text = name
            label.pose.position.z = 0.5
            self._discs.append(disc)
            self._labels.append(label)
        self._headings = markers.marker(Marker.LINE_LIST, "headings", 0, frame, stamp,
                                        markers.GREY, 0.04)
        rings = []
        tolerance = self.params.goal_tolerance
        angles = np.linspace(0.0, 2.0 * math.pi, 17)
        for gx, gy in sim.goals:
            ring = np.column_stack([gx + tolerance * np.cos(angles),
                                    gy + tolerance * np.sin(angles)])
            for a, b in zip(ring[:-1], ring[1:], strict=True):
                rings += [Point(x=float(a[0]), y=float(a[1])), Point(x=float(b[0]),
                                                                     y=float(b[1]))]
        goals = markers.marker(Marker.LINE_LIST, "goals", 0, frame, stamp, markers.GREEN, 0.03)
        goals.points = rings
        batch.markers = self._discs + self._labels + [self._headings, goals]
        return batch

    def _publish_markers(self) -> None:
        sim = self.sim
        if self._markers is None:
            self._markers = self._marker_messages()
        stamp = self.get_clock().now().to_msg()
        in_contact = {name for pair in sim.current_contacts for name in pair}
        xs, ys, yaws = (sim.poses[:, k].tolist() for k in range(3))
        heading_points = []
        for i, name in enumerate(sim.names):
            x, y, r = xs[i], ys[i], float(sim.radii[i])
            disc, label = self._discs[i], self._labels[i]
            disc.pose.position.x, disc.pose.position.y = x, y
            disc.color = (markers.RED if name in in_contact
                          else ORCA_COLOR if sim.orca[i] else PERSON_COLOR)
            label.pose.position.x, label.pose.position.y = x, y
            heading_points += [Point(x=x, y=y, z=0.12),
                               Point(x=x + r * math.cos(yaws[i]), y=y + r * math.sin(yaws[i]),
                                     z=0.12)]
        self._headings.points = heading_points
        for m in self._markers.markers:
            m.header.stamp = stamp
        self._marker_pub.publish(self._markers)

    # ------------------------------------------------------------------ shutdown
    def close(self) -> None:
        """Called by run_node when the node stops: write the trajectories if asked to."""
        path = self.params.trajectory_file
        if not path or self.sim is None:
            return
        try:
            self.sim.save_trajectory(path)
            self.get_logger().info(f"trajectories of {self.sim.steps} steps written to {path}")
        except Exception as exc:
            self.get_logger().error(f"could not write trajectories to {path}: {exc}")


def main(args=None) -> int:
    return run_node(FleetSim, args)


if __name__ == "__main__":
    sys.exit(main())
