"""The fleet demo (``make demo``): ORCA for a simulated fleet over ROS 2, with pictures.

Starts map_publisher, collision_server, fleet_sim and orca_node as separate processes over DDS
on loopback (a ROS domain of the run's own), gives each robot its goal, starts fleet_sim's
simulated time once orca_node steers every robot (so nobody walks into robots whose controller
is still loading), prints progress until
every robot has arrived or the scenario's timeout passes, calls a few collision services, then
writes a PNG of the trajectories and a GIF of one robot's ORCA half-planes. The room is
``config/scenarios/swap_room_sensed.yaml`` with ``config/demo_sensed_orca.yaml``: a laser on
every robot and a person who publishes nothing, whom orca_node knows only from the robots'
scans (doc/sensors.md); ``--observed`` runs it with the person's odometry observed instead
(``swap_room.yaml`` with ``demo_orca.yaml``). Exit code: 0 when
every robot arrived without a collision, 1 on any collision, 2 when robots did not arrive or a
process failed.

    python -m planning_collision.demo [--scenario FILE] [--output DIR] [--robot NAME] [--observed]

A ROS client application over the nodes, so it lives above ``ros/`` and ``sim/`` (neither
imports it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point, Pose, PoseStamped
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor

from planning_collision_interfaces.msg import OrcaStatus, Shape, TrackArray
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

from .grid.map_file import load_map_file
from .resources import config_file
from .ros import processes
from .ros.orca_scans import tracks_from_msg
from .ros.qos import LATCHED
from .ros.run import close_within
from .ros.service_call import call_service
from .sim.plots import HalfPlaneFrame, animate_halfplanes, plot_trajectories
from .sim.scenario import Scenario, load_scenario
from .sim.trajectory_contacts import contacts_of

NODES = ("map_publisher", "collision_server", "fleet_sim", "orca_node")
# The room with lasers on the robots and a person seen only by them (issue #25).
SENSED_SCENARIO = "scenarios/swap_room_sensed.yaml"
SENSED_ORCA = "demo_sensed_orca.yaml"


class Demo:
    orca_params: Path | None = None  # orca_node's parameter file (default demo_orca.yaml)
    # Extra parameters given on the command line of fleet_sim and orca_node, over their files
    # (e.g. fleet_sim's network, tools/demo_with_network.py).
    fleet_sim_overrides: dict | None = None
    orca_overrides: dict | None = None

    def __init__(self, scenario_path: Path, output: Path, robot: str, domain_id: int,
                 timeout: float | None):
        self.scenario_path = scenario_path
        self.scenario: Scenario = load_scenario(scenario_path)
        self.output = output
        self.robot = robot
        self.domain_id = domain_id
        self.timeout = timeout if timeout is not None else self.scenario.timeout
        self.procs: dict[str, processes.RosProcess] = {}
        self.logs = []
        self.fleet: dict[str, dict[str, str]] = {}
        self.fleet_clock: list[tuple[float, float]] = []  # (ROS stamp, sim time)
        self.orca_rate = float("nan")
        self.orca_robots = {r.name for r in self.scenario.robots if r.orca}
        self.orca_ready = False  # orca_node/status showed every ORCA robot active
        self.orca_frames: list[tuple[float, object]] = []
        self.tracks: list[tuple[float, np.ndarray]] = []  # orca_node/tracks: (stamp, (K, 5))
        self.service_log: list[str] = []
        self.teardown_hung = False

    # ------------------------------------------------------------------ processes
    def start_processes(self) -> None:
        scenario = str(self.scenario_path)
        trajectory = self.output / "trajectories.npz"
        trajectory.unlink(missing_ok=True)
        logs = self.output / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        commands = {
            "map_publisher": processes.node_command(
                "planning_collision.ros.map_publisher",
                [config_file("map_publisher.yaml")], {"scenario": scenario}),
            "collision_server": processes.node_command(
                "planning_collision.ros.collision_server",
                [config_file("collision_server.yaml")]),
            "fleet_sim": processes.node_command(
                "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
                {"scenario": scenario, "trajectory_file": str(trajectory),
                 "start": "wait",  # until _start_clock
                 **(self.fleet_sim_overrides or {})}),
            "orca_node": processes.node_command(
                "planning_collision.ros.orca_node",
                [self.orca_params or config_file("demo_orca.yaml")],
                {"publish_orca_lines": True, **(self.orca_overrides or {})}),
        }
        for name in NODES:
            log = open(logs / f"{name}.log", "w")  # noqa: SIM115 (closed in stop_processes)
            self.logs.append(log)
            self.procs[name] = processes.RosProcess(name, commands[name], self.domain_id,
                                                    output=log)

    def stop_processes(self) -> dict[str, int]:
        codes = {name: proc.stop(timeout=10.0) for name, proc in reversed(self.procs.items())}
        for log in self.logs:
            log.close()
        return codes

    def dead_process(self) -> str | None:
        for name, proc in self.procs.items():
            if not proc.running():
                return name
        return None

    # ------------------------------------------------------------------ ROS side
    def run(self) -> int:
        rclpy.init()
        node = rclpy.create_node("demo")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        self.node, self.executor = node, executor
        node.create_subscription(DiagnosticArray, "fleet_sim/status", self._on_fleet, 10)
        node.create_subscription(OrcaStatus, "orca_node/status", self._on_orca, 50)
        node.create_subscription(TrackArray, "orca_node/tracks", self._on_tracks, 50)
        goal_pubs = []
        for robot in self.scenario.robots:
            if not robot.orca:
                continue
            pub = node.create_publisher(PoseStamped, f"{robot.name}/goal_pose", LATCHED)
            goal = PoseStamped()
            goal.header.frame_id = self.scenario.global_frame
            goal.pose.position.x, goal.pose.position.y = robot.goal
            goal.pose.orientation.w = 1.0
            goal_pubs.append((pub, goal))
        try:
            print(f"starting {', '.join(NODES)} (ROS_DOMAIN_ID={self.domain_id}, loopback "
                  f"only; logs in {self.output / 'logs'})", flush=True)
            self.start_processes()
            if not self._wait_ready():
                return 2
            for pub, goal in goal_pubs:
                goal.header.stamp = node.get_clock().now().to_msg()
                pub.publish(goal)
            if not self._start_clock():
                return 2
            print(f"goals sent to {len(goal_pubs)} robots; running (timeout "
                  f"{self.timeout:.0f} s of simulated time)", flush=True)
            outcome = self._watch()
            self._service_calls()
        finally:
            # The demo's own node goes first: a participant that watches other processes leave
            # can deadlock in Fast DDS 3.2 (eProsima/Fast-DDS#6502), and then so would this.
            self._close_node()
            codes = self.stop_processes()
        return self._finish(outcome, codes)

    def _close_node(self) -> None:
        """Destroy the demo's node; if the DDS teardown hangs, leave it behind (the run's
        results do not depend on it) and remember to end the process with os._exit."""
        if not close_within(self.node, self.executor, 10.0):
            self.teardown_hung = True
            print("the demo's DDS teardown hung (Fast DDS deadlock, eProsima/Fast-DDS#6502); "
                  "carrying on without it", file=sys.stderr, flush=True)

    def _spin(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)

    def _on_fleet(self, msg) -> None:
        for status in msg.status:
            self.fleet[status.hardware_id] = {kv.key: kv.value for kv in status.values}
        fleet = self.fleet.get("fleet")
        if fleet and "sim_time" in fleet:
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            self.fleet_clock.append((stamp, float(fleet["sim_time"])))

    def _on_orca(self, msg) -> None:
        self.orca_rate = msg.achieved_rate
        if not self.orca_ready:
            self.orca_ready = self.orca_robots <= {a.name for a in msg.agents if a.active}
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        for agent in msg.agents:
            if agent.name == self.robot:
                self.orca_frames.append((stamp, agent))

    def _on_tracks(self, msg) -> None:
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        tracks = tracks_from_msg(msg)
        self.tracks.append((stamp, np.column_stack((tracks.positions, tracks.velocities,
                                                    tracks.radii))))

    def _wait_ready(self) -> bool:
        client = self.node.create_client(CheckLineOfSight, "check_line_of_sight")
        deadline = time.monotonic() + 180.0
        while time.monotonic() < deadline:
            dead = self.dead_process()
            if dead:
                print(f"{dead} exited during start-up; see {self.output / 'logs'}/{dead}.log",
                      file=sys.stderr)
                return False
            if client.service_is_ready() and "fleet" in self.fleet and self.orca_ready:
                return True
            self._spin(0.1)
        print("the nodes did not come up within 180 s", file=sys.stderr)
        return False

    def _start_clock(self) -> bool:
        """Start fleet_sim's simulated time (``start: wait`` holds it at zero) now that
        orca_node has reported ready: a status in which it steers every ORCA robot."""
        client = self.node.create_client(SetParameters, "fleet_sim/set_parameters")
        deadline = time.monotonic() + 30.0
        while not client.service_is_ready() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        request = SetParameters.Request(parameters=[Parameter(name="start", value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value="now"))])
        reply = call_service(self.executor, client, request, timeout=10.0)
        self.node.destroy_client(client)
        if reply is None or not reply.results[0].successful:
            why = "no answer" if reply is None else reply.results[0].reason
            print(f"could not start fleet_sim's clock: {why}", file=sys.stderr)
            return False
        print(f"orca_node steers all {len(self.orca_robots)} robots: simulated time starts",
              flush=True)
        return True

    def _watch(self) -> str:
        started = time.monotonic()
        last_print = 0.0
        while True:
            self._spin(0.1)
            fleet = self.fleet.get("fleet", {})
            sim_time = float(fleet.get("sim_time", "0") or 0)
            if time.monotonic() - last_print > 2.0 and fleet:
                last_print = time.monotonic()
                print(f"  t = {sim_time:5.1f} s  arrived {fleet.get('arrived')}/"
                      f"{fleet.get('robots')}  collisions {fleet.get('collisions')}  min "
                      f"separation {float(fleet.get('min_separation', 'nan')):.3f} m  "
                      f"orca {self.orca_rate:.1f} Hz", flush=True)
            if fleet.get("all_arrived") == "true":
                return "arrived"
            if sim_time > self.timeout or time.monotonic() - started > 2 * self.timeout + 30:
                return "timeout"
            dead = self.dead_process()
            if dead:
                return f"{dead} exited"

    def _service_calls(self) -> None:
        """A few collision-service calls against the live map and obstacles, printed."""
        robots = {r.name: r for r in self.scenario.robots}
        first = self.scenario.robots[0]
        person = next((r for r in self.scenario.robots if not r.orca), first)
        where = {name: (float(v.get("x", "nan")), float(v.get("y", "nan")))
                 for name, v in self.fleet.items() if name in robots}
        where = {name: xy for name, xy in where.items() if all(map(math.isfinite, xy))}

        def call(srv_type, name, request, describe) -> None:
            """Call one service and log a line: what ``describe(reply)`` says of the answer,
            or why there is none."""
            client = self.node.create_client(srv_type, name)
            deadline = time.monotonic() + 10.0
            while not client.service_is_ready() and time.monotonic() < deadline:
                self.executor.spin_once(timeout_sec=0.05)
            started = time.perf_counter()
            reply = call_service(self.executor, client, request, timeout=10.0)
            ms = (time.perf_counter() - started) * 1e3
            if reply is None:
                self.service_log.append(f"{name}: no answer within 10 s")
            elif not reply.success:
                self.service_log.append(f"{name}: refused: {reply.message}")
            else:
                self.service_log.append(f"{name} {describe(reply)}  [{ms:.1f} ms]")
            self.node.destroy_client(client)

        los = CheckLineOfSight.Request(layers=CheckLineOfSight.Request.LAYERS_ALL)
        los.header.frame_id = self.scenario.global_frame
        los.start.x, los.start.y = first.start[:2]
        los.goal.x, los.goal.y = first.goal
        call(CheckLineOfSight, "check_line_of_sight", los, lambda r: (
            f"{first.name} start -> goal {first.goal}: clear={r.clear}"
            + ("" if r.clear else f", blocked by {r.blocked_by} at "
               f"({r.first_blocked_point.x:.2f}, {r.first_blocked_point.y:.2f})")))

        names = sorted(where)
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        if pairs:
            rays = CheckLinesOfSight.Request(layers=CheckLinesOfSight.Request.LAYERS_ALL)
            rays.header.frame_id = self.scenario.global_frame
            rays.start_x = [where[a][0] for a, _ in pairs]
            rays.start_y = [where[a][1] for a, _ in pairs]
            rays.goal_x = [where[b][0] for _, b in pairs]
            rays.goal_y = [where[b][1] for _, b in pairs]
            call(CheckLinesOfSight, "check_lines_of_sight", rays, lambda r: (
                f"between the {len(names)} final positions: {sum(r.clear)} of {len(pairs)} "
                f"pairs see each other past the pillars and walls"))

        disc = Shape(type=Shape.TYPE_CIRCLE, radius=first.radius)
        poses = []
        for name in names:
            pose = Pose()
            pose.position.x, pose.position.y = where[name]
            pose.orientation.w = 1.0
            poses.append((name, pose))
        if poses:
            request = CheckCollision.Request(footprint=disc, poses=[p for _, p in poses])
            request.header.frame_id = self.scenario.global_frame

            def closest(r) -> str:
                k = int(np.argmin(r.distance))
                return (f"of {len(poses)} discs at the final positions: "
                        f"{sum(r.in_collision)} in collision; closest to an obstacle: "
                        f"{poses[k][0]}, {r.distance[k]:.2f} m from "
                        f"{r.nearest_obstacle_id[k] or 'nothing'}")

            call(CheckCollision, "check_collision", request, closest)

        path = CheckPath.Request(footprint=disc)
        path.path.header.frame_id = self.scenario.global_frame
        for s in np.linspace(0.0, 1.0, 25):
            ps = PoseStamped()
            ps.pose.position.x = person.start[0] + s * (person.goal[0] - person.start[0])
            ps.pose.position.y = person.start[1] + s * (person.goal[1] - person.start[1])
            ps.pose.orientation.w = 1.0
            path.path.poses.append(ps)
        call(CheckPath, "check_path", path, lambda r: (
            f"of {person.name}'s straight walk ({len(path.path.poses)} poses): "
            f"is_valid={r.is_valid}, first invalid index {r.first_invalid_index}"))

        a_name, b_name = first.name, self.scenario.robots[1].name
        if a_name in where and b_name in where:
            shapes = []
            for name in (a_name, b_name):
                shape = Shape(type=Shape.TYPE_POINTS, points=[Point()],
                              radius=robots[name].radius)
                shape.pose.position.x, shape.pose.position.y = where[name]
                shape.pose.orientation.w = 1.0
                shapes.append(shape)
            call(ComputeDistance, "compute_distance",
                 ComputeDistance.Request(shape_a=shapes[0], shape_b=shapes[1]), lambda r: (
                     f"{a_name} <-> {b_name}: {r.distance:.3f} m "
                     f"(intersecting={r.intersecting})"))

    # ------------------------------------------------------------------ summary
    def _sim_time_of(self, stamp: float) -> float:
        clock = np.array(self.fleet_clock)
        if clock.shape[0] < 2:
            return 0.0
        return float(np.interp(stamp, clock[:, 0], clock[:, 1]))

    def _finish(self, outcome: str, codes: dict[str, int]) -> int:
        fleet = self.fleet.get("fleet", {})
        print("\n=== summary ===")
        print(f"outcome: {outcome}")
        print(f"arrived: {fleet.get('arrived', '?')}/{fleet.get('robots', '?')} robots "
              f"in {float(fleet.get('sim_time', 'nan')):.1f} s of simulated time")
        arrivals = [float(v["arrival_time"]) for k, v in self.fleet.items()
                    if k != "fleet" and v.get("arrival_time")]
        if arrivals:
            print(f"last arrival at t = {max(arrivals):.1f} s")
        print(f"collisions: {fleet.get('collisions', '?')} "
              f"(robot-robot {fleet.get('robot_collisions', '?')}, obstacles "
              f"{fleet.get('obstacle_collisions', '?')}, map {fleet.get('map_collisions', '?')})")
        print(f"minimum separation between robots: "
              f"{float(fleet.get('min_separation', 'nan')):.3f} m "
              f"({fleet.get('min_separation_pair', '')}); minimum obstacle clearance "
              f"{float(fleet.get('min_obstacle_clearance', 'nan')):.3f} m")
        print(f"control rate: orca_node {self.orca_rate:.1f} Hz, fleet_sim "
              f"{fleet.get('achieved_rate', '?')} Hz")
        print("collision services:")
        for line in self.service_log:
            print(f"  {line}")
        failed = {name: code for name, code in codes.items() if code not in (0, None)}
        if failed:
            print(f"processes that did not exit cleanly: {failed}")
        self._pictures()
        collisions = int(fleet.get("collisions", "0") or 0)
        if collisions:
            return 1
        if outcome != "arrived" or failed:
            return 2
        return 0

    def _pictures(self) -> None:
        trajectory_path = self.output / "trajectories.npz"
        deadline = time.monotonic() + 10.0
        while not trajectory_path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not trajectory_path.exists():
            print("no trajectory file was written; no pictures")
            return
        trajectory = dict(np.load(trajectory_path))
        for c in contacts_of(trajectory):  # who moved: passive safety (issue #25)
            other = c.other if math.isnan(c.other_speed) else f"{c.other} ({c.other_speed:.2f} m/s)"
            print(f"contact at t = {c.time:.2f} s: {c.robot} ({c.robot_speed:.2f} m/s) - {other}: "
                  f"{'a robot drove into it' if c.moving else 'no robot was moving'}")
        grid = None
        if self.scenario.map is not None:
            grid = load_map_file(self.scenario.map).to_grid()
        png = plot_trajectories(trajectory, self.scenario, grid,
                                self.output / "trajectories.png")
        print(f"wrote {png}")
        frames = []
        track_stamps = np.array([stamp for stamp, _ in self.tracks])
        no_tracks = np.zeros((0, 5))
        for stamp, agent in self.orca_frames:
            # the last TrackArray stamped at or before this status
            k = int(np.searchsorted(track_stamps, stamp, side="right")) - 1
            frames.append(HalfPlaneFrame(
                sim_time=self._sim_time_of(stamp),
                preferred=(agent.preferred_velocity.x, agent.preferred_velocity.y),
                velocity=(agent.velocity.x, agent.velocity.y),
                line_points=np.array([(p.x, p.y) for p in agent.orca_line_points]).reshape(-1, 2),
                line_directions=np.array([(d.x, d.y) for d in agent.orca_line_directions]
                                         ).reshape(-1, 2),
                infeasible=agent.infeasible,
                tracks=self.tracks[k][1] if k >= 0 else no_tracks))
        if frames:
            robot = next(r for r in self.scenario.robots if r.name == self.robot)
            gif = animate_halfplanes(frames, trajectory, self.scenario, grid, self.robot,
                                     robot.max_speed, self.output / f"{self.robot}_orca.gif")
            tracked = sum(1 for frame in frames if len(frame.tracks))
            print(f"wrote {gif} (tracks in {tracked} of {len(frames)} steps)")
        else:
            print(f"no ORCA status was received for {self.robot}; no GIF")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=None,
                        help=f"default: config/{SENSED_SCENARIO}")
    parser.add_argument("--output", type=Path, default=Path("output/demo"))
    parser.add_argument("--robot", default="robot1", help="robot whose half-planes the GIF shows")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds of simulated time (default: the scenario's)")
    parser.add_argument("--orca-params", type=Path, default=None,
                        help=f"orca_node's parameter file for the scenario's robots (default: "
                             f"config/{SENSED_ORCA} with the default scenario, else "
                             f"config/demo_orca.yaml, the swap_room scenario's)")
    parser.add_argument("--observed", action="store_true",
                        help="the person publishes odometry and orca_node observes it: "
                             "config/scenarios/swap_room.yaml with config/demo_orca.yaml")
    args = parser.parse_args(argv)
    if args.scenario is None:
        if args.observed:
            args.scenario = config_file("scenarios/swap_room.yaml")
        else:
            args.scenario = config_file(SENSED_SCENARIO)
            args.orca_params = args.orca_params or config_file(SENSED_ORCA)
    args.output.mkdir(parents=True, exist_ok=True)
    domain_id = processes.pick_domain_id()
    processes.apply_network_rule(domain_id)
    try:
        demo = Demo(args.scenario.resolve(), args.output.resolve(), args.robot, domain_id,
                    args.timeout)
    except ValueError as exc:
        print(f"cannot run the demo: {exc}", file=sys.stderr)
        return 2
    demo.orca_params = args.orca_params.resolve() if args.orca_params else None
    if args.robot not in {r.name for r in demo.scenario.robots}:
        print(f"--robot {args.robot} is not in the scenario", file=sys.stderr)
        return 2
    code = demo.run()
    if demo.teardown_hung:  # a stuck DDS participant would also hang the interpreter's exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
