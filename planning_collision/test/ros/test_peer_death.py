"""Peers that die uncleanly (SIGKILL) around orca_node and collision_server stall neither.

Fast DDS's shared-memory transport leaves a dead participant's port behind; the next process
that pushes into it (a publisher, a service answering a client) regenerates the port, and that
path can self-deadlock (eProsima/Fast-DDS#6485), inside a publish, with rclpy holding the
interpreter lock. The project's processes therefore talk UDP only (config/fastdds_discovery.xml,
doc/dds.md). This test runs orca_node (two robots driven by fleet_sim) and collision_server,
then starts peer processes a few at a time (subscribers of both robots' cmd_vel, of orca status
and markers, clients keeping 10,000-ray requests in flight) and SIGKILLs each once it is busy,
over many rounds. A measuring process of its own (not this pytest process, so that a DDS
deadlock there fails the test instead of hanging it) records when each robot's commands arrive
and how long one-ray line-of-sight queries take. Pass: no gap over 1 s between a robot's
commands, every one-ray query answered within 1 s.

This file is also the measuring and the peer program (``--measure``, ``--peer``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
import zlib
from pathlib import Path

import yaml

NS = "peer_death"
ROBOTS = ("r1", "r2")
ROUNDS = 15
PEERS_PER_ROUND = 3
RAYS = 10_000
IN_FLIGHT = 1  # 10,000-ray requests each peer keeps outstanding
MAX_COMMAND_GAP = 1.0  # s, the criterion
MAX_QUERY_LATENCY = 1.0  # s
QUERY_GIVE_UP = 5.0  # s: a query not answered by then counts as unanswered
QUERY_PERIOD = 0.1  # s between one-ray queries
MAP_SIZE, MAP_RES = 200, 0.05  # cells, m per cell: a 10 m x 10 m map with a wall


def scenario() -> dict:
    """Two robots with goals 40 m away: they drive (and are commanded) through the test."""
    return {"timeout": 300.0, "obstacles": [], "robot_defaults": {"radius": 0.25,
                                                                   "max_speed": 0.6},
            "robots": [{"name": name, "start": [0.0, 4.0 * k, 0.0], "goal": [40.0, 4.0 * k],
                        "drive": "holonomic"} for k, name in enumerate(ROBOTS)]}


# ------------------------------------------------------------------------------------------
# The test (pytest process: no DDS participant of its own, only process management).


def test_peers_killed_around_the_nodes_stall_neither_commands_nor_queries(
        tmp_path, start_process):
    from planning_collision.resources import config_file
    from planning_collision.ros.processes import node_command

    path = tmp_path / "two_robots.yaml"
    path.write_text(yaml.safe_dump(scenario()))
    nodes = {
        "pd_fleet_sim": start_process("pd_fleet_sim", node_command(
            "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
            {"scenario": str(path), "odom_frames_at_start": False, "publish_markers": False},
            namespace=NS)),
        "pd_orca_node": start_process("pd_orca_node", node_command(
            "planning_collision.ros.orca_node", [config_file("orca.yaml")],
            {"agents": list(ROBOTS), **{f"{r}.goal": [40.0, 4.0 * k]
                                        for k, r in enumerate(ROBOTS)}}, namespace=NS)),
        "pd_collision_server": start_process("pd_collision_server", node_command(
            "planning_collision.ros.collision_server", [config_file("collision_server.yaml")],
            namespace=NS)),
    }
    measure = start_process("pd_measure", [sys.executable, __file__, "--measure",
                                           str(tmp_path)])

    def alive(measuring: bool = True) -> None:
        dead = [name for name, proc in nodes.items() if not proc.running()]
        assert not dead, f"{dead} exited: " + "\n".join(nodes[dead[0]].lines[-30:])
        assert not measuring or measure.running(), "\n".join(measure.lines[-30:])

    # Measured from warm kernels on: a cold kernel cache compiles first (minutes on a busy
    # machine), which is not what this test is about.
    deadline = time.monotonic() + 240.0
    while not (measure.wait_for_line("ready", 0.5)
               and all(nodes[name].wait_for_line("kernels ready in", 0.0)
                       for name in ("pd_orca_node", "pd_collision_server"))):
        alive()
        assert time.monotonic() < deadline, "the nodes did not come up within 240 s"
    (tmp_path / "go").touch()
    assert measure.wait_for_line("measuring", 10.0), measure.lines[-20:]

    rng = random.Random(20)
    started = time.monotonic()
    for round_ in range(ROUNDS):
        peers = [start_process(f"pd_peer{round_}_{k}", [sys.executable, __file__, "--peer",
                                                        f"{round_}_{k}"], echo=False)
                 for k in range(PEERS_PER_ROUND)]
        for peer in peers:  # busy: commands received, large requests in flight
            assert peer.wait_for_line("busy", 30.0), (peer.name, peer.lines[-20:])
        time.sleep(rng.uniform(0.0, 0.3))
        for peer in peers:
            os.kill(peer.pid, signal.SIGKILL)
        for peer in peers:
            assert peer.wait(10.0) == -signal.SIGKILL
        alive()
    killing = time.monotonic() - started

    (tmp_path / "stop").touch()
    assert measure.wait_for_line("result ", 30.0), (
        "the measuring process did not report within 30 s of being told to stop (a DDS "
        "deadlock in it?):\n" + "\n".join(measure.lines[-30:]))
    result = json.loads(next(line for line in measure.lines if line.startswith("result "))
                        .split(" ", 1)[1])
    alive(measuring=False)  # the nodes outlived every peer
    summary = (f"{ROUNDS * PEERS_PER_ROUND} peers killed in {killing:.1f} s; largest command "
               f"gap per robot {result['gaps']} s; {result['queries']} one-ray queries, "
               f"{result['unanswered']} unanswered, slowest {result['slowest']:.3f} s")
    print(summary)
    assert all(count > 0 for count in result["commands"].values()), summary
    assert max(result["gaps"].values()) <= MAX_COMMAND_GAP, summary
    assert result["queries"] >= 0.5 * killing / (QUERY_PERIOD + 0.05), summary
    assert result["unanswered"] == 0, summary
    assert result["slowest"] <= MAX_QUERY_LATENCY, summary


# ------------------------------------------------------------------------------------------
# The measuring process and the peers (run as scripts in the project's ROS environment).


def _map_message():
    import numpy as np
    from nav_msgs.msg import OccupancyGrid

    data = np.zeros((MAP_SIZE, MAP_SIZE), dtype=np.int8)
    data[40:160, 100:104] = 100  # a wall across the middle
    msg = OccupancyGrid()
    msg.header.frame_id = "map"
    msg.info.resolution = MAP_RES
    msg.info.width = msg.info.height = MAP_SIZE
    msg.info.origin.orientation.w = 1.0
    msg.data = data.reshape(-1).tobytes()
    return msg


def measure(files: Path) -> int:
    """Receive both robots' commands and ask one-ray queries; print ``ready`` once both work,
    measure from when ``files/go`` exists until ``files/stop`` does, print ``result {json}``."""
    import threading

    import rclpy
    from geometry_msgs.msg import TwistStamped
    from nav_msgs.msg import OccupancyGrid
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from planning_collision_interfaces.srv import CheckLineOfSight

    rclpy.init()
    node = rclpy.create_node("peer_death_measure")
    arrivals: dict[str, list[float]] = {r: [] for r in ROBOTS}
    for r in ROBOTS:
        node.create_subscription(TwistStamped, f"/{NS}/{r}/cmd_vel",
                                 lambda _msg, r=r: arrivals[r].append(time.monotonic()), 10)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    map_pub = node.create_publisher(OccupancyGrid, f"/{NS}/map", latched)
    map_pub.publish(_map_message())
    client = node.create_client(CheckLineOfSight, f"/{NS}/check_line_of_sight")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()

    def ask(timeout: float):
        """(seconds, reply) of one one-ray query across the wall; reply None if unanswered."""
        request = CheckLineOfSight.Request(layers=1)
        request.header.frame_id = "map"
        request.start.x, request.start.y = 2.0, 5.0
        request.goal.x, request.goal.y = 8.0, 5.0
        done = threading.Event()
        started = time.monotonic()
        future = client.call_async(request)
        future.add_done_callback(lambda _f: done.set())
        answered = done.wait(timeout)
        took = time.monotonic() - started
        if not answered:
            client.remove_pending_request(future)
            return took, None
        return took, future.result()

    # Ready: both robots commanded, a query answered against the map.
    while True:
        if client.service_is_ready() and all(len(a) >= 5 for a in arrivals.values()):
            _, reply = ask(10.0)
            if reply is not None and reply.success and not reply.clear:
                break
        time.sleep(0.1)
    print("ready", flush=True)
    while not (files / "go").exists():
        time.sleep(0.05)
    begin = time.monotonic()
    print("measuring", flush=True)
    latencies, unanswered = [], 0
    while not (files / "stop").exists():
        took, reply = ask(QUERY_GIVE_UP)
        if reply is None:
            unanswered += 1
        else:
            latencies.append(took)
        time.sleep(QUERY_PERIOD)
    end = time.monotonic()
    gaps, commands = {}, {}
    for r, times in arrivals.items():
        inside = [begin] + [t for t in list(times) if begin <= t <= end] + [end]
        gaps[r] = round(max(b - a for a, b in zip(inside, inside[1:], strict=False)), 3)
        commands[r] = len(inside) - 2
    print("result " + json.dumps({"gaps": gaps, "commands": commands,
                                  "queries": len(latencies) + unanswered,
                                  "unanswered": unanswered,
                                  "slowest": max(latencies, default=0.0)}), flush=True)
    executor.shutdown(timeout_sec=2.0)
    node.destroy_node()
    rclpy.try_shutdown()
    os._exit(0)  # no interpreter clean-up waiting on DDS threads


def peer(name: str) -> int:
    """Subscribe to everything orca_node publishes for the robots and keep IN_FLIGHT
    10,000-ray requests outstanding; print ``busy`` once both are flowing; run until killed."""
    import numpy as np
    import rclpy
    from geometry_msgs.msg import TwistStamped
    from visualization_msgs.msg import MarkerArray

    from planning_collision_interfaces.msg import OrcaStatus
    from planning_collision_interfaces.srv import CheckLinesOfSight

    rclpy.init()
    node = rclpy.create_node(f"peer_{name}")
    received = {"cmd": 0}
    for r in ROBOTS:
        node.create_subscription(TwistStamped, f"/{NS}/{r}/cmd_vel",
                                 lambda _m: received.__setitem__("cmd", received["cmd"] + 1),
                                 10)
    node.create_subscription(OrcaStatus, f"/{NS}/orca/status", lambda _m: None, 10)
    node.create_subscription(MarkerArray, f"/{NS}/orca/markers", lambda _m: None, 10)
    client = node.create_client(CheckLinesOfSight, f"/{NS}/check_lines_of_sight")
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    extent = MAP_SIZE * MAP_RES
    starts, goals = rng.uniform(0, extent, (RAYS, 2)), rng.uniform(0, extent, (RAYS, 2))
    request = CheckLinesOfSight.Request(start_x=starts[:, 0], start_y=starts[:, 1],
                                        goal_x=goals[:, 0], goal_y=goals[:, 1])
    request.header.frame_id = "map"
    pending: list = []
    busy = False
    while True:
        rclpy.spin_once(node, timeout_sec=0.01)
        pending = [f for f in pending if not f.done()]
        if client.service_is_ready():
            while len(pending) < IN_FLIGHT:
                pending.append(client.call_async(request))
        if not busy and received["cmd"] > 0 and len(pending) == IN_FLIGHT:
            busy = True
            print("busy", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--measure":
        sys.exit(measure(Path(sys.argv[2])))
    if sys.argv[1] == "--peer":
        sys.exit(peer(sys.argv[2]))
    sys.exit(f"usage: {sys.argv[0]} --measure DIRECTORY | --peer NAME")
