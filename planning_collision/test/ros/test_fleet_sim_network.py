"""fleet_sim's simulated network over DDS (issue #24): commands reach the base late and some
never, odometry arrives late and some never, and a base without fresh commands still stops.
The channel itself (delay, jitter, loss, order, seeds) is tested without DDS in
test/sim/test_network.py."""

from __future__ import annotations

import time

import pytest
import yaml
from ros_clients import stopping
from test_fleet_sim import Fleet

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command

MODULE = "planning_collision.ros.fleet_sim"
COMMAND_LATENCY, ODOM_LATENCY = 0.4, 0.1


@pytest.fixture(scope="module")
def lossy(tmp_path_factory, domain_id, client_factory):
    scenario = tmp_path_factory.mktemp("fleet_sim_network") / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({
        "robot_defaults": {"radius": 0.25, "max_speed": 1.0},
        "robots": [{"name": "late", "start": [0.0, 0.0, 0.0], "goal": [40.0, 0.0]}]}))
    process = RosProcess("fleet_sim_network", node_command(
        MODULE, [config_file("fleet_sim.yaml")],
        {"scenario": str(scenario), "command_latency": COMMAND_LATENCY,
         "command_jitter": 0.1, "command_loss": 0.2, "odom_latency": ODOM_LATENCY,
         "odom_jitter": 0.05, "odom_loss": 0.2, "noise_seed": 3}, namespace="net"),
        domain_id)
    clients: list = []
    with stopping(clients, [process]):
        client = client_factory("fleet_sim_network_tests")
        clients.append(client)
        fleet = Fleet(client, "net", ["late"], stamped=True)
        fleet.wait_ready(process, ["late"])
        yield fleet


def test_commands_act_late_odometry_arrives_late_in_order_and_the_base_still_stops(lossy):
    fleet = lossy
    fleet.settle(0.5)
    mark = fleet.received["late"]
    sent = time.monotonic()
    moving_seen = None
    while time.monotonic() - sent < 2.0:  # 20 Hz for 2 s
        fleet.command("late", 0.5)
        fleet.client.spin_for(0.05)
        if moving_seen is None and fleet.odom["late"][-1].twist.twist.linear.x > 0.0:
            moving_seen = time.monotonic()
    fleet.stop_sent = time.monotonic()  # no zero command: the base must stop by itself
    assert moving_seen is not None, "the robot never moved"
    # Its first command moved it no earlier than the command network's delay, and the motion
    # was seen no earlier than that plus the odometry network's.
    assert moving_seen - sent >= COMMAND_LATENCY + ODOM_LATENCY - 0.02
    stopped_after = fleet.still("late", timeout=10.0)
    # The last commands arrive up to 0.5 s late, then cmd_vel_timeout (0.5 s) runs out.
    assert stopped_after < 5.0
    messages = fleet.since("late", mark)
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in messages]
    assert stamps == sorted(stamps)  # network_in_order: a stream is never reordered
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    # 50 Hz odometry with one message in five lost: some gaps span a lost message.
    assert max(gaps) > 0.035
