"""fleet_sim: a kinematic simulator for a scenario's robots, with odometry, commands and a
collision referee.

A thin adapter around pure parts: :class:`~planning_collision.sim.simulation.FleetSimulation`
(motion and referee), :class:`~planning_collision.sim.pacing.PacingClock` (simulated time paced
by the wall clock) and :mod:`planning_collision.sim.status` (what ``~/status`` says); its
parameters and their bounds are in :mod:`.fleet_sim_parameters`, what the robots publish in
:mod:`.fleet_sim_sensors`, the markers in :mod:`.fleet_sim_markers`. Every robot of the
scenario gets a namespace of its own name; ORCA robots follow ``<name>/cmd_vel`` (body frame,
geometry_msgs/TwistStamped or Twist); every robot, people included, publishes
``<name>/odom`` (nav_msgs/Odometry, twist in the body frame as REP-105 asks) at ``rate_hz``,
except the agents with ``odometry: false``, which publish nothing; a robot's ``scan`` block: a
laser on ``<name>/scan``, ``cloud``: a depth camera on ``<name>/points`` (:mod:`.fleet_sim_scans`).
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

import sys
import traceback
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist, TwistStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from visualization_msgs.msg import MarkerArray

from planning_collision.fleet.controller import sample_time
from planning_collision.grid.map_file import load_map_file
from planning_collision.sim import status
from planning_collision.sim.pacing import PacingClock
from planning_collision.sim.scenario import Scenario, load_scenario
from planning_collision.sim.simulation import FleetSimulation, layout_problems

from .diagnostics import entry
from .fleet_sim_markers import FleetMarkers
from .fleet_sim_parameters import PARAMETERS, check_parameters
from .fleet_sim_scans import SimulatedScans
from .fleet_sim_sensors import SimulatedSensors, network_channel
from .parameters import declare
from .run import run_node

WAITING = {"now": "", "wait": "; simulated time starts when start is set to now",
           "commands": "; simulated time starts once every ORCA robot has a command"}


def diagnostic(status_entry: status.StatusEntry, node_name: str) -> DiagnosticStatus:
    """The ROS message of one status entry (its values are already text)."""
    return entry(f"{node_name}/{status_entry.hardware_id}", bytes([status_entry.level]),
                 status_entry.message, status_entry.values, status_entry.hardware_id)


class FleetSim(Node):
    def __init__(self, **node_kwargs):
        super().__init__("fleet_sim", **node_kwargs)
        self.params = p = declare(self, PARAMETERS)
        check_parameters(p)
        self.problem = ""  # why nothing is simulated, for ~/status
        self.map_problem = ""
        self.scenario: Scenario | None = None
        self.sim = self._load(p)
        self.pacing = PacingClock(1.0 / p.rate_hz)
        self.started = p.start == "now"
        self._start_requested = False
        self._group = MutuallyExclusiveCallbackGroup()
        self.sensors: SimulatedSensors | None = None
        self.scans: SimulatedScans | None = None
        self.markers: FleetMarkers | None = None
        if self.sim is not None:
            self._connect(p)
        self._status_pub = self.create_publisher(DiagnosticArray, "~/status", 10)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.create_timer(1.0 / p.status_rate_hz, self._publish_status,
                          callback_group=self._group)
        if self.sim is not None:
            self._announce(p)

    def _load(self, p) -> FleetSimulation | None:
        """The simulation of the scenario (None when it cannot be loaded: ``self.problem``
        says why); a map that cannot be loaded is not refereed (``self.map_problem``)."""
        log = self.get_logger()
        try:
            self.scenario = load_scenario(p.scenario) if p.scenario else None
        except ValueError as exc:
            self.problem = str(exc)
        if self.scenario is None:
            self.problem = self.problem or "no scenario: set the scenario parameter"
            log.error(f"nothing simulated: {self.problem}")
            return None
        grid = None
        if self.scenario.map is not None:
            try:
                grid = load_map_file(self.scenario.map).to_grid()
            except ValueError as exc:
                self.map_problem = f"map not used for collisions: {exc}"
                log.error(self.map_problem)
        for problem in layout_problems(self.scenario, grid):
            log.warning(f"scenario layout: {problem}")
        return FleetSimulation(
            self.scenario, 1.0 / p.rate_hz, grid, cmd_vel_timeout=p.cmd_vel_timeout,
            goal_tolerance=p.goal_tolerance, max_linear_accel=p.max_linear_accel,
            max_angular_accel=p.max_angular_accel, record=bool(p.trajectory_file),
            drift_seed=p.noise_seed)

    def _connect(self, p) -> None:
        """Commands in, sensors out, the step timer and the markers."""
        cmd_type = TwistStamped if p.stamped_cmd_vel else Twist
        frames = []
        for robot in self.scenario.robots:
            odom_frame = (f"{robot.name}/odom" if p.odom_frames_at_start
                          else self.scenario.global_frame)
            frames.append((odom_frame, f"{robot.name}/base_link"))
            if robot.orca:
                self.create_subscription(cmd_type, f"{robot.name}/{p.cmd_vel_topic}",
                                         partial(self._on_command, robot.name), 10,
                                         callback_group=self._group)
        self._commands = {robot.name: network_channel(p, "command", i)
                          for i, robot in enumerate(self.scenario.robots) if robot.orca}
        self.sensors = SimulatedSensors(
            self, self.sim, frames, not p.odom_frames_at_start,
            [r.name for r in self.scenario.robots if r.orca], p,
            np.random.default_rng(p.noise_seed))
        self.scans = SimulatedScans(self, self.sim, np.random.default_rng(p.noise_seed + 2))
        self.create_timer(1.0 / p.rate_hz, self._step, callback_group=self._group)
        if p.publish_markers:
            self.markers = FleetMarkers(self.sim, self.scenario.global_frame, p.goal_tolerance)
            self._marker_pub = self.create_publisher(MarkerArray, "~/markers", 10)
            self.create_timer(1.0 / p.marker_rate_hz, self._publish_markers,
                              callback_group=self._group)

    def _announce(self, p) -> None:
        self.sensors.publish(self._now())
        robots = self.scenario.robots
        self.get_logger().info(
            f"simulating {len(robots)} robots from {p.scenario} at {p.rate_hz:g} Hz "
            f"({sum(r.orca for r in robots)} ORCA), {len(self.scenario.obstacles)} obstacles, "
            f"map {'yes' if self.sim.monitor.grid is not None else 'no'}{WAITING[p.start]}")

    def _now(self) -> float:
        """ROS time in seconds."""
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ inputs
    def _on_command(self, name: str, msg) -> None:
        """A command goes on the robot's command network (sim/network.py); the base applies
        it when it arrives (:meth:`_deliver_commands`)."""
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        stamp = msg.header.stamp if isinstance(msg, TwistStamped) else None
        self._commands[name].send(self._now(), (stamp, (twist.linear.x, twist.linear.y,
                                                        twist.angular.z)))

    def _deliver_commands(self) -> None:
        """Apply the commands that arrived, in the order they arrive."""
        for name, channel in self._commands.items():
            for stamp, twist in channel.receive(self._now()):
                self._apply_command(name, stamp, twist)

    def _apply_command(self, name: str, stamp, twist) -> None:
        age = 0.0 if stamp is None else self._age(stamp)  # the base times out from the stamp
        if age > self.params.cmd_vel_timeout:
            self.get_logger().warning(
                f"command for {name} dropped: stamped {age:.2f} s ago, more than "
                f"cmd_vel_timeout ({self.params.cmd_vel_timeout:g} s; are the clocks in "
                f"sync?)", throttle_duration_sec=2.0)
            return
        try:
            self.sim.command(name, twist, age=age)
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
        now = self._now()
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
        self.pacing.restart()  # simulated time follows the wall clock from the next tick
        self.get_logger().info(f"simulated time starts: {why}")

    def _may_start(self) -> bool:
        """Whether simulated time runs, starting it when it is asked to."""
        if not self.started:
            if self._start_requested:
                self._start("start was set to now")
            elif self.params.start == "commands" and np.all(
                    np.isfinite(self.sim.command_times[self.sim.orca])):
                self._start("every ORCA robot has a command")
        return self.started

    # ------------------------------------------------------------------ stepping
    def _step(self) -> None:
        """Advance simulated time to the wall clock in fixed steps (the pacing clock says how
        many), then publish what the sensors measured. Before the clock starts, only publish
        (the robots stand at their starts)."""
        self.pacing.tick()
        try:
            self._deliver_commands()
            if self._may_start():
                due = self.pacing.due(self.sim.time, self.sim.steps)
                if due <= 0:
                    return
                self._advance(due)
            now = self._now()
            self.sensors.publish(now)
            self.scans.publish(now)
        except Exception as exc:
            self.get_logger().error(f"step failed: {exc}\n{traceback.format_exc()}",
                                    throttle_duration_sec=5.0)
        finally:
            self.pacing.tick_done()

    def _advance(self, steps: int) -> None:
        sim = self.sim
        before = len(sim.events)
        for _ in range(steps):
            sim.step()
        for event in sim.events[before:]:
            self.get_logger().warning(f"collision at t={event.time:.2f} s: {event.pair}")

    # ------------------------------------------------------------------ outputs
    def _publish_status(self) -> None:
        pacing = self.pacing.report(self.sim.steps if self.sim is not None else 0)
        if self.sim is None:
            entries = [status.problem_entry(self.problem)]
        else:
            run = status.RunState(self.params.scenario, self.params.rate_hz, self.started,
                                  pacing, self.map_problem)
            entries = [status.fleet_entry(self.sim, run), *status.robot_entries(self.sim)]
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [diagnostic(e, self.get_name()) for e in entries]
        self._status_pub.publish(msg)

    def _publish_markers(self) -> None:
        self._marker_pub.publish(self.markers.message(self.get_clock().now().to_msg()))

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
