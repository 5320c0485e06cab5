"""orca_node with a large fleet in one node: does it hold rate_hz = 20 with 200 robots?

    .venv/bin/python bench/bench_orca_node.py [--robots 50 100 200] [--seconds 20]

For each configuration this script starts orca_node (N agents in goal mode, each with a goal,
all within a few metres of each other so every agent has neighbours) and a light odometry
source in another process (this script with ``--source``: N nav_msgs/Odometry at 30 Hz,
serialized once and re-sent, since fleet_sim is too heavy at that size; the robots therefore
stay where they are, which keeps each one's neighbour count, the main cost, constant and
reported). Over ``--seconds`` it
measures, from this process: the achieved control rate (orca_node/status messages per second,
one per step), the node's CPU share (utime + stime from /proc/<pid>/stat, 100 % = one core),
the compute time per step the node reports in orca_node/status, and the node's own breakdown
of a step (its debug log: decoding inputs, ORCA, publishing the commands, the status, the markers).
What the step does not account for is message handling in the executor (200 subscriptions).
Prints a markdown table; exits 1 when the largest fleet with serialized messages (the
default configuration) does not hold the target: at least 19.5 of the 20 steps per second.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time

from machine import machine_header  # bench/machine.py

from planning_collision.resources import config_file
from planning_collision.ros import processes

# The odometry source (--source) is started by this script in the ROS environment it chose;
# only the measuring process picks a domain of its own.
if "--source" not in sys.argv:
    DOMAIN = processes.pick_domain_id()
    processes.apply_network_rule(DOMAIN)

import rclpy  # noqa: E402  (after the network rule is applied)
from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from planning_collision_interfaces.msg import OrcaStatus  # noqa: E402

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
SPACING = 1.2  # metres between neighbouring robots of the square layout
ODOM_RATE = 30.0
RATE_HZ = 20.0
HOLDS = 19.5  # achieved steps per second that count as holding RATE_HZ


def names(n: int) -> list[str]:
    return [f"robot{i}" for i in range(n)]


def layout(n: int) -> list[tuple[float, float]]:
    side = math.ceil(math.sqrt(n))
    return [(SPACING * (i % side), SPACING * (i // side)) for i in range(n)]


# ---------------------------------------------------------------------- odometry source
def run_source(n: int, rate: float) -> int:
    """N Odometry topics at ``rate``: the messages are serialized once and re-sent as bytes,
    so the source stays light."""
    rclpy.init()
    node = rclpy.create_node("odometry_source")
    publishers, payloads = [], []
    for name, (x, y) in zip(names(n), layout(n), strict=True):
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "map", f"{name}/base_link"
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        msg.pose.pose.orientation.w = 1.0
        msg.twist.twist.linear.x = 0.3
        publishers.append(node.create_publisher(Odometry, f"{name}/odom", 1))
        payloads.append(serialize_message(msg))
    period = 1.0 / rate
    started = next_time = time.monotonic()
    rounds = 0
    try:
        while rclpy.ok():
            for publisher, payload in zip(publishers, payloads, strict=True):
                publisher.publish(payload)
            rounds += 1
            if rounds % int(5 * rate) == 0:
                print(f"source: {rounds / (time.monotonic() - started):.1f} rounds/s",
                      flush=True)
            next_time += period
            time.sleep(max(0.0, next_time - time.monotonic()))
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ---------------------------------------------------------------------- measurement
def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(n: int, seconds: float, extra: dict, with_markers: bool) -> dict:
    agents = names(n)
    parameters = {"agents": agents, "rate_hz": RATE_HZ, "goal_subscribe_transient_local": True,
                  **extra}
    command = processes.node_command("planning_collision.ros.orca_node",
                                     [config_file("orca.yaml")], parameters)
    command += ["--log-level", "orca_node:=debug"]
    orca = processes.RosProcess("orca_node", command, DOMAIN, echo="--echo" in sys.argv)
    source = processes.RosProcess("source", [sys.executable, __file__, "--source", str(n)],
                                  DOMAIN, echo=False)
    rclpy.init()
    node = rclpy.create_node("bench_orca_node")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    arrivals: list[float] = []
    samples: list[OrcaStatus] = []

    def on_status(data: bytes) -> None:  # raw: only every 10th message is deserialized
        arrivals.append(time.monotonic())
        if len(arrivals) % 10 == 0:
            samples.append(deserialize_message(data, OrcaStatus))

    node.create_subscription(OrcaStatus, "orca_node/status", on_status, 50, raw=True)
    if with_markers:
        node.create_subscription(MarkerArray, "orca_node/markers", lambda data: None, 5,
                                 raw=True)
    goal_pubs = []
    for name, (x, y) in zip(agents, layout(n), strict=True):
        goal = PoseStamped()
        goal.header.frame_id = "map"
        goal.pose.position.x, goal.pose.position.y = -x, -y  # through the crowd
        goal.pose.orientation.w = 1.0
        publisher = node.create_publisher(PoseStamped, f"{name}/goal_pose", LATCHED)
        publisher.publish(goal)
        goal_pubs.append(publisher)
    try:
        # Ready once every robot is active, or 60 s after start-up: an overloaded node may
        # never get there, and that is a result too.
        deadline = time.monotonic() + 60.0
        while not (samples and all(a.active for a in samples[-1].agents)):
            if not orca.running():
                raise RuntimeError("orca_node exited:\n" + "\n".join(orca.lines[-20:]))
            if time.monotonic() > deadline:
                break
            executor.spin_once(timeout_sec=0.05)
        settle = time.monotonic() + 3.0
        while time.monotonic() < settle:
            executor.spin_once(timeout_sec=0.05)
        first = len(arrivals)
        first_sample = len(samples)
        cpu0, wall0 = cpu_seconds(orca.pid), time.monotonic()
        while time.monotonic() - wall0 < seconds:
            executor.spin_once(timeout_sec=0.05)
        cpu1, wall1 = cpu_seconds(orca.pid), time.monotonic()
        window = [t for t in arrivals[first:] if t <= wall1]
        measured = samples[first_sample:]
        compute = sorted(s.compute_time for s in measured)
        phases = [line for line in orca.lines if "ms per step over" in line]
        return {
            "rate": len(window) / (wall1 - wall0),
            "cpu": 100.0 * (cpu1 - cpu0) / (wall1 - wall0),
            "compute_ms": 1e3 * compute[len(compute) // 2] if compute else math.nan,
            "compute_p95_ms": 1e3 * compute[int(0.95 * (len(compute) - 1))] if compute
            else math.nan,
            "neighbors": (sum(a.agent_neighbors for a in measured[-1].agents) / n
                          if measured else math.nan),
            "active": (sum(a.active for a in measured[-1].agents) / n if measured else 0.0),
            "phases": phases[-1].split("steps: ", 1)[1] if phases else "",
            "source": next((line for line in reversed(source.lines) if "rounds/s" in line),
                           ""),
        }
    finally:
        source.stop()
        orca.stop()
        node.destroy_node()
        rclpy.try_shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--source", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--echo", action="store_true", help="show orca_node's output")
    parser.add_argument("--only-serialized", action="store_true",
                        help="skip the message-object and marker rows")
    args = parser.parse_args()
    if args.source is not None:
        return run_source(args.source, ODOM_RATE)
    configurations = [(n, "serialized messages", {}, False) for n in args.robots]
    largest = max(args.robots)
    configurations += [
        (largest, "message objects", {"raw_messages": False}, False),
        (largest, "serialized, markers subscribed", {}, True),
    ] if not args.only_serialized else []
    print(machine_header())
    print(f"orca_node, {RATE_HZ:g} Hz target, odometry at {ODOM_RATE:g} Hz from another "
          f"process, {args.seconds:g} s per row; machine load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for n, label, extra, with_markers in configurations:
        print(f"... {n} robots, {label}", flush=True)
        result = measure(n, args.seconds, extra, with_markers)
        rows.append((n, label, result))
        print(f"    {result}", flush=True)
    print()
    print("| robots | messages | target rate | achieved rate | CPU % | compute time per step "
          "(median / p95) | neighbours per robot | robots active |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n, label, r in rows:
        print(f"| {n} | {label} | {RATE_HZ:g} Hz | {r['rate']:.1f} Hz | {r['cpu']:.0f} | "
              f"{r['compute_ms']:.1f} / {r['compute_p95_ms']:.1f} ms | {r['neighbors']:.1f} | "
              f"{100 * r['active']:.0f} % |")
    print()
    print("Step breakdown (ms per step, from orca_node's debug log):")
    for n, label, r in rows:
        print(f"- {n} robots, {label}: {r['phases'] or 'n/a'}")
    sources = {re.sub(r'.*source: ', '', r['source']) for _, _, r in rows if r["source"]}
    print(f"Odometry source: {', '.join(sorted(sources))} (target {ODOM_RATE:g})")
    held = next(r["rate"] for n, label, r in rows
                if n == largest and label == "serialized messages")
    verdict = "holds" if held >= HOLDS else "does NOT hold"
    print(f"{largest} robots in one node: {held:.1f} steps/s, {verdict} {RATE_HZ:g} Hz")
    return 0 if held >= HOLDS else 1


if __name__ == "__main__":
    sys.exit(main())
