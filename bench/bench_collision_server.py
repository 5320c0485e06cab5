"""collision_server end to end: service round trips from another process over DDS on loopback.

    .venv/bin/python bench/bench_collision_server.py

Starts collision_server as its own process (loopback discovery, a domain of its own), feeds it
a 1000 x 1000 map about 20 % occupied and 1,000 obstacles, then measures from this process:
sequential check_line_of_sight round trips, check_lines_of_sight with 10,000 rays,
check_collision with 1,000 poses against the 1,000 obstacles, and how long queries are held
back while 4000 x 4000 maps are being replaced (published by a third process, this script with
``--publish-big-maps``, as map_server would). Prints the date, the CPU model and the core
count, then a markdown table; exits with status 1 when a row misses its target (or the server
does not come up, or does not report the map and obstacles in time).
"""

from __future__ import annotations

import math
import statistics
import sys
import threading
import time
from array import array

import numpy as np
from machine import machine_header  # bench/machine.py

from planning_collision.common.work_sharing import available_threads
from planning_collision.ros import processes
from planning_collision.ros.collision_server_parameters import PARAMETERS

# The big-map publisher (--publish-big-maps) is started by this script in the ROS environment
# it chose; only the measuring process picks a domain of its own.
if "--publish-big-maps" not in sys.argv:
    DOMAIN = processes.pick_domain_id()
    processes.apply_network_rule(DOMAIN)

import rclpy  # noqa: E402  (after the network rule is applied)
from geometry_msgs.msg import Point, Pose, PoseStamped  # noqa: E402
from maps import random_rect_map  # noqa: E402  (bench/maps.py)
from nav_msgs.msg import OccupancyGrid  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from round_trips import one_ray_round_trips  # noqa: E402  (bench/round_trips.py)

from planning_collision.ros.service_call import call_service  # noqa: E402
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape  # noqa: E402
from planning_collision_interfaces.srv import (  # noqa: E402
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
)

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RES = 0.05
MAX_REQUEST_SIZE = next(p.default for p in PARAMETERS if p.name == "max_request_size")
SERVICES_TIMEOUT = 300.0  # seconds for the server to start (first run: kernel compilation)
INPUTS_TIMEOUT = 60.0  # seconds for it to report the map and the obstacles


def map_msg(data: np.ndarray) -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.header.frame_id = "map"
    msg.info.resolution = RES
    msg.info.width, msg.info.height = data.shape[1], data.shape[0]
    msg.info.origin.orientation.w = 1.0
    msg.data = data.reshape(-1).tobytes()
    return msg


def obstacles_msg(rng, n: int, extent: float) -> ObstacleArray:
    msg = ObstacleArray()
    msg.header.frame_id = "map"
    for i in range(n):
        shape = Shape(type=Shape.TYPE_BOX, length=float(rng.uniform(0.2, 1.0)),
                      width=float(rng.uniform(0.2, 1.0)))
        shape.pose.position.x, shape.pose.position.y = (float(v) for v in
                                                        rng.uniform(0, extent, 2))
        yaw = float(rng.uniform(-math.pi, math.pi))
        shape.pose.orientation.z, shape.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        msg.obstacles.append(Obstacle(id=f"box{i}", type=Obstacle.TYPE_SHAPE, shape=shape))
    return msg


BIG_MAPS = 6
BIG_MAP_PERIOD = 0.5


def publish_big_maps() -> int:
    """The third process: once collision_server subscribes, publish BIG_MAPS 4000 x 4000
    maps (two alternating contents) BIG_MAP_PERIOD apart, then wait to be stopped."""
    rng = np.random.default_rng(11)
    rclpy.init()
    node = rclpy.create_node("big_map_publisher")
    publisher = node.create_publisher(OccupancyGrid, "map", LATCHED)
    big = [map_msg(random_rect_map(rng, 4000, 0.2)), map_msg(np.zeros((4000, 4000), np.int8))]
    try:
        while publisher.get_subscription_count() == 0:
            time.sleep(0.05)
        print("ready", flush=True)
        time.sleep(1.0)
        for k in range(BIG_MAPS):
            publisher.publish(big[k % 2])
            time.sleep(BIG_MAP_PERIOD)
        print("done", flush=True)
        while rclpy.ok():
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def large_requests(rng, batch, path_client):
    """(what, client, request): the largest requests the shipped limits allow (rays and path
    poses up to max_request_size), on the 1000 x 1000 map."""
    n = MAX_REQUEST_SIZE
    starts, goals = rng.uniform(0, 50, (n, 2)), rng.uniform(0, 50, (n, 2))
    rays = CheckLinesOfSight.Request()
    rays.start_x, rays.start_y = array("d", starts[:, 0]), array("d", starts[:, 1])
    rays.goal_x, rays.goal_y = array("d", goals[:, 0]), array("d", goals[:, 1])
    path = CheckPath.Request(stop_at_first_collision=False, layers=1)
    path.path.header.frame_id = "map"
    xy = np.column_stack([np.linspace(1, 49, n), np.full(n, 25.0)])
    for x, y in xy.tolist():
        ps = PoseStamped()
        ps.pose.position.x, ps.pose.position.y = x, y
        path.path.poses.append(ps)
    return [(f"a {n:,}-ray check_lines_of_sight", batch, rays),
            (f"a {n:,}-pose check_path", path_client, path)]


def call(executor, client, request, timeout=60.0):
    reply = call_service(executor, client, request, timeout)
    if reply is None:
        raise TimeoutError("no answer")
    return reply


def main() -> int:
    if "--publish-big-maps" in sys.argv:
        return publish_big_maps()
    print(machine_header(), flush=True)
    rng = np.random.default_rng(7)
    server = processes.RosProcess(
        "collision_server",
        processes.node_command("planning_collision.ros.collision_server",
                               parameters={"publish_markers": False}),
        DOMAIN, echo=False)
    # The same node with kernel_threads 1: the threads column of the 10,000-ray call.
    single = processes.RosProcess(
        "collision_server_1_thread",
        processes.node_command("planning_collision.ros.collision_server",
                               parameters={"publish_markers": False, "kernel_threads": 1,
                                           "map_topic": "/map", "obstacles_topic": "/obstacles"},
                               namespace="one_thread"),
        DOMAIN, echo=False)
    rclpy.init()
    node = rclpy.create_node("bench_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    map_pub = node.create_publisher(OccupancyGrid, "map", LATCHED)
    obstacle_pub = node.create_publisher(ObstacleArray, "obstacles", LATCHED)
    map_pub.publish(map_msg(random_rect_map(rng, 1000, 0.2)))
    obstacle_pub.publish(obstacles_msg(rng, 1000, 1000 * RES))
    los = node.create_client(CheckLineOfSight, "check_line_of_sight")
    batch = node.create_client(CheckLinesOfSight, "check_lines_of_sight")
    collision = node.create_client(CheckCollision, "check_collision")
    path_client = node.create_client(CheckPath, "check_path")
    batch_single = node.create_client(CheckLinesOfSight, "/one_thread/check_lines_of_sight")
    rows = []
    try:
        deadline = time.monotonic() + SERVICES_TIMEOUT
        while not (los.service_is_ready() and batch.service_is_ready()
                   and collision.service_is_ready()):
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() > deadline or not server.running():
                why = ("exited" if not server.running()
                       else f"offered no services within {SERVICES_TIMEOUT:g} s")
                print(f"error: collision_server {why}; its last lines:", file=sys.stderr)
                print("\n".join(server.lines[-20:]), file=sys.stderr)
                return 1
        deadline = time.monotonic() + INPUTS_TIMEOUT
        while not (server.wait_for_line("map 1000 x 1000", 0.01)
                   and server.wait_for_line("1000 obstacles received", 0.01)):
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() > deadline or not server.running():
                missing = [what for what, line in (("the 1000 x 1000 map", "map 1000 x 1000"),
                                                   ("the 1,000 obstacles",
                                                    "1000 obstacles received"))
                           if not server.wait_for_line(line, 0.0)]
                print(f"error: collision_server did not report {' and '.join(missing)} within "
                      f"{INPUTS_TIMEOUT:g} s of offering its services (published latched on "
                      f"/map and /obstacles, domain {DOMAIN}); its last lines:", file=sys.stderr)
                print("\n".join(server.lines[-20:]), file=sys.stderr)
                return 1

        # 1. Sequential single line-of-sight round trips.
        times_ms = one_ray_round_trips(executor, los, rng, side=50.0, timeout=60.0)
        median, p99 = float(np.median(times_ms)), float(np.percentile(times_ms, 99))
        rows.append(("check_line_of_sight round trip, median (1000 sequential calls)",
                     f"{median:.2f} ms", "<= 1 ms", median <= 1.0))
        rows.append(("check_line_of_sight round trip, p99", f"{p99:.2f} ms", "<= 3 ms",
                     p99 <= 3.0))

        # 2. 10,000 rays up to 300 cells in one call (grid only, bresenham).
        starts = rng.uniform(0, 50, (10000, 2))
        ang = rng.uniform(-math.pi, math.pi, 10000)
        length = rng.uniform(0, 300 * RES, 10000)
        goals = np.clip(starts + length[:, None] * np.column_stack([np.cos(ang), np.sin(ang)]),
                        0, 49.99)
        request = CheckLinesOfSight.Request(start_x=starts[:, 0], start_y=starts[:, 1],
                                            goal_x=goals[:, 0], goal_y=goals[:, 1])
        deadline = time.monotonic() + SERVICES_TIMEOUT
        while not (batch_single.service_is_ready()
                   and single.wait_for_line("map 1000 x 1000", 0.0)):
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() > deadline:
                print("error: the kernel_threads=1 server did not come up:\n"
                      + "\n".join(single.lines[-20:]), file=sys.stderr)
                return 1
        samples: dict[str, list[float]] = {"all": [], "one": []}
        answers = {}
        for _ in range(25):  # interleaved, so both see the same machine load
            for which, client in (("all", batch), ("one", batch_single)):
                started = time.perf_counter()
                request.start_x = starts[:, 0]
                request.start_y = starts[:, 1]
                request.goal_x = goals[:, 0]
                request.goal_y = goals[:, 1]
                reply = call(executor, client, request)
                samples[which].append(time.perf_counter() - started)
                assert reply.success and len(reply.clear) == 10000
                answers[which] = list(reply.clear)
        assert answers["all"] == answers["one"], "kernel_threads changed an answer"
        t = statistics.median(samples["all"][3:]) * 1e3
        rows.append(("check_lines_of_sight, 10,000 rays, 1000x1000 map (end to end, median)",
                     f"{t:.1f} ms", "<= 30 ms", t <= 30.0))
        best = {which: min(times) * 1e3 for which, times in samples.items()}
        rows.append((f"same call, kernel_threads 1 vs every core ({available_threads()}), best "
                     f"of 25 interleaved", f"{best['one']:.1f} ms vs {best['all']:.1f} ms: "
                     f"{best['one'] / best['all']:.2f}x, identical answers", "report", True))

        # 3. 1,000 footprint poses against 1,000 obstacles.
        poses = []
        for x, y, yaw in zip(rng.uniform(0, 50, 1000), rng.uniform(0, 50, 1000),
                             rng.uniform(-3, 3, 1000), strict=True):
            p = Pose()
            p.position.x, p.position.y = float(x), float(y)
            p.orientation.z, p.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
            poses.append(p)
        request = CheckCollision.Request(
            footprint=Shape(points=[Point(x=0.3, y=0.2), Point(x=-0.3, y=0.2),
                                    Point(x=-0.3, y=-0.2), Point(x=0.3, y=-0.2)]),
            poses=poses)
        samples = []
        for _ in range(12):
            started = time.perf_counter()
            reply = call(executor, collision, request)
            samples.append(time.perf_counter() - started)
            assert reply.success, reply.message
        t = statistics.median(samples[2:]) * 1e3
        rows.append(("check_collision, 1,000 poses x 1,000 obstacles (grid + obstacles, median)",
                     f"{t:.1f} ms", "<= 50 ms", t <= 50.0))

        # 4. Queries while 4000 x 4000 maps arrive from another process.
        quiet = []
        request = CheckLineOfSight.Request()
        request.goal.x = request.goal.y = 10.0
        for _ in range(200):
            started = time.perf_counter()
            call(executor, los, request)
            quiet.append(time.perf_counter() - started)
        maps = processes.RosProcess("big_maps", [sys.executable, __file__, "--publish-big-maps"],
                                    DOMAIN, echo=False)
        try:
            if not maps.wait_for_line("ready", INPUTS_TIMEOUT):
                raise TimeoutError("the big-map publisher did not come up:\n"
                                   + "\n".join(maps.lines[-10:]))
            busy = []
            end = time.perf_counter() + 1.0 + BIG_MAPS * BIG_MAP_PERIOD + 1.0
            while time.perf_counter() < end:
                started = time.perf_counter()
                call(executor, los, request)
                busy.append(time.perf_counter() - started)
        finally:
            maps.stop()
        # 5. A 1-ray query behind the largest requests allowed (head-of-line waits), from a
        # second participant, so that receiving the large answer costs this one nothing.
        small_context = rclpy.Context()
        rclpy.init(context=small_context)
        small_node = rclpy.create_node("bench_small_client", context=small_context)
        small_executor = SingleThreadedExecutor(context=small_context)
        small_executor.add_node(small_node)
        small = small_node.create_client(CheckLineOfSight, "check_line_of_sight")
        try:
            while not small.service_is_ready():
                small_executor.spin_once(timeout_sec=0.05)
            for what, client, big in large_requests(rng, batch, path_client):
                result: list = []
                worker = threading.Thread(
                    target=lambda c=client, b=big, r=result: r.append(call(executor, c, b, 120.0)))
                started = time.perf_counter()
                worker.start()
                waits = []
                while worker.is_alive():
                    t0 = time.perf_counter()
                    call(small_executor, small, request)
                    waits.append(time.perf_counter() - t0)
                took = time.perf_counter() - started
                worker.join()
                assert result and result[0].success, result
                rows.append((f"check_line_of_sight round trip while {what} runs: worst of "
                             f"{len(waits)} (the large request took {took:.2f} s)",
                             f"{max(waits) * 1e3:.1f} ms", "report", True))
        finally:
            small_node.destroy_node()
            rclpy.try_shutdown(context=small_context)
        conversions = [line for line in server.lines if "map 4000 x 4000" in line]
        conv_ms = [float(line.split("converted in ")[1].split(" ms")[0]) for line in conversions]
        worst = max(busy) * 1e3
        rows.append((f"4000x4000 map swapped in: conversion ({len(conv_ms)} maps, max)",
                     f"{max(conv_ms):.2f} ms" if conv_ms else "no map reported", "report",
                     bool(conv_ms)))
        rows.append(("check_line_of_sight round trip while those maps arrive: max (before: "
                     "max)", f"{worst:.1f} ms ({max(quiet) * 1e3:.1f} ms)", "report", True))
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        server.stop()
        single.stop()

    print("| measurement | result | target | pass |")
    print("| --- | --- | --- | --- |")
    for name, value, target, ok in rows:
        print(f"| {name} | {value} | {target} | {'pass' if ok else 'FAIL'} |")
    failed = [name for name, _, _, ok in rows if not ok]
    if failed:
        print(f"{len(failed)} row(s) missed the target: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
