"""What the shipped UDP-only Fast DDS profile costs against shared memory (doc/dds.md).

    .venv/bin/python bench/bench_transport.py

The shipped profile (config/fastdds_discovery.xml) keeps the project's processes off Fast DDS's
shared-memory transport. For comparison this script derives the same profile without the
transport part (no user transport, no UDP-only listening locators), which is what the project
shipped before: Fast DDS then moves data between processes of the host through shared memory.
For each profile it starts collision_server (its own process) and a measuring client (another
process), both with that profile, and measures: the one-ray check_line_of_sight round trip
(1,000 sequential calls), check_lines_of_sight with 10,000 rays (end to end), and the delivery
of a 4000 x 4000 (16 MB) latched map: from publish until the server reports it converted.
Prints the date, the CPU model and the core count, then a markdown table.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from machine import machine_header  # bench/machine.py

from planning_collision.ros import processes

NS = "http://www.eprosima.com"
RES = 0.05
ROUNDS = 3  # each profile measured this many times, alternating, so both see the same load


def shared_memory_profile(shipped: Path, out: Path) -> Path:
    """The shipped profile without its transport settings: Fast DDS's defaults (shared memory
    between processes of a host, with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST)."""
    ET.register_namespace("", NS)
    tree = ET.parse(shipped)
    root = tree.getroot()
    profiles = root.find(f"{{{NS}}}profiles")
    for descriptors in profiles.findall(f"{{{NS}}}transport_descriptors"):
        profiles.remove(descriptors)
    for rtps in root.iter(f"{{{NS}}}rtps"):
        for tag in ("defaultUnicastLocatorList", "userTransports", "useBuiltinTransports"):
            for element in rtps.findall(f"{{{NS}}}{tag}"):
                rtps.remove(element)
    tree.write(out, xml_declaration=True, encoding="UTF-8")
    return out


def measure() -> int:
    """The measuring client (run in the profile under test): prints ``result {json}``."""
    domain = processes.pick_domain_id()
    processes.apply_network_rule(domain)
    import rclpy
    from maps import random_rect_map  # bench/maps.py
    from nav_msgs.msg import OccupancyGrid
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from round_trips import one_ray_round_trips  # bench/round_trips.py

    from planning_collision.ros.service_call import call_service
    from planning_collision_interfaces.srv import CheckLineOfSight, CheckLinesOfSight

    def grid(size: int, rng) -> OccupancyGrid:
        data = random_rect_map(rng, size, 0.2)
        msg = OccupancyGrid()
        msg.header.frame_id = "map"
        msg.info.resolution = RES
        msg.info.width = msg.info.height = size
        msg.info.origin.orientation.w = 1.0
        msg.data = data.reshape(-1).tobytes()
        return msg

    rng = np.random.default_rng(7)
    server = processes.RosProcess(
        "collision_server", processes.node_command(
            "planning_collision.ros.collision_server", parameters={"publish_markers": False}),
        domain, echo=False)
    rclpy.init()
    node = rclpy.create_node("bench_transport")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    map_pub = node.create_publisher(OccupancyGrid, "map", latched)
    map_pub.publish(grid(1000, rng))
    los = node.create_client(CheckLineOfSight, "check_line_of_sight")
    batch = node.create_client(CheckLinesOfSight, "check_lines_of_sight")
    try:
        deadline = time.monotonic() + 300.0
        while not (los.service_is_ready() and batch.service_is_ready()
                   and server.wait_for_line("map 1000 x 1000", 0.0)):
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() > deadline or not server.running():
                print("\n".join(server.lines[-20:]), file=sys.stderr)
                return 1
        ms = one_ray_round_trips(executor, los, rng, side=50.0)
        starts = rng.uniform(0, 50, (10000, 2))
        ang = rng.uniform(-math.pi, math.pi, 10000)
        length = rng.uniform(0, 300 * RES, 10000)
        goals = np.clip(starts + length[:, None] * np.column_stack([np.cos(ang), np.sin(ang)]),
                        0, 49.99)
        request = CheckLinesOfSight.Request(start_x=starts[:, 0], start_y=starts[:, 1],
                                            goal_x=goals[:, 0], goal_y=goals[:, 1])
        rays = []
        for _ in range(25):
            started = time.perf_counter()
            reply = call_service(executor, batch, request, 30.0)
            rays.append(time.perf_counter() - started)
            assert reply is not None and reply.success and len(reply.clear) == 10000
        big_maps = []
        for k in range(3):
            msg = grid(4000, rng)
            seen = sum("map 4000 x 4000" in line for line in server.lines)
            started = time.perf_counter()
            map_pub.publish(msg)
            while sum("map 4000 x 4000" in line for line in server.lines) == seen:
                executor.spin_once(timeout_sec=0.005)
                if time.perf_counter() - started > 60.0:
                    raise TimeoutError(f"the 4000 x 4000 map {k} never arrived")
            big_maps.append(time.perf_counter() - started)
        print("result " + json.dumps({
            "los_median": float(np.median(ms)), "los_p99": float(np.percentile(ms, 99)),
            "rays_median": statistics.median(rays[3:]) * 1e3,
            "map_worst": max(big_maps) * 1e3, "map_median": statistics.median(big_maps) * 1e3}),
            flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        server.stop()
    return 0


def main() -> int:
    print(machine_header(), flush=True)
    shipped = processes.shipped_profile()
    with tempfile.TemporaryDirectory() as tmp:
        profiles = {"UDP only (shipped)": shipped,
                    "shared memory (before)": shared_memory_profile(
                        shipped, Path(tmp) / "shared_memory.xml")}
        results: dict[str, list[dict]] = {name: [] for name in profiles}
        for _ in range(ROUNDS):
            for name, profile in profiles.items():
                client = processes.RosProcess(
                    "bench_client", [sys.executable, __file__, "--measure"],
                    processes.pick_domain_id(), echo=False,
                    extra_env={processes.PROFILE_VARIABLE: str(profile)})
                try:
                    code = client.wait(900.0)
                finally:
                    client.stop()  # a timed-out run is ended, with its server (SIGINT first)
                lines = [line for line in client.lines if line.startswith("result ")]
                if code != 0 or not lines:
                    print(f"error: the {name} run failed:\n" + "\n".join(client.lines[-20:]),
                          file=sys.stderr)
                    return 1
                results[name].append(json.loads(lines[0].split(" ", 1)[1]))
    print(f"| profile (median of {ROUNDS} runs; map: worst) | 1-ray round trip median / p99 "
          "| 10,000 rays end to end | 16 MB latched map, publish to converted |")
    print("| --- | --- | --- | --- |")
    for name, runs in results.items():
        def med(key, runs=runs):
            return statistics.median(r[key] for r in runs)
        print(f"| {name} | {med('los_median'):.2f} / {med('los_p99'):.2f} ms | "
              f"{med('rays_median'):.1f} ms | {med('map_median'):.0f} ms "
              f"(worst {max(r['map_worst'] for r in runs):.0f} ms) |")
    return 0


if __name__ == "__main__":
    sys.exit(measure() if "--measure" in sys.argv else main())
