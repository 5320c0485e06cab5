"""fleet_sim's clock over DDS: with ``start: wait`` simulated time stands still (robots and
people at their starts, odometry still published) until the ``start`` parameter is set to
``now``; with ``start: commands`` it starts once every ORCA robot has received a command."""

from __future__ import annotations

from functools import partial

import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from ros_clients import stopping

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command

SCENARIO = {
    "robot_defaults": {"radius": 0.25, "max_speed": 1.0},
    "robots": [
        {"name": "bot", "start": [0.0, 0.0, 0.0], "goal": [5.0, 0.0]},
        {"name": "walker", "start": [0.0, 5.0, 0.0], "goal": [20.0, 5.0], "orca": False},
    ],
}


class Sim:
    """Test-side view of one fleet_sim: its fleet status and the walker's odometry."""

    def __init__(self, client, namespace: str):
        self.client, self.ns = client, namespace
        self.fleet: list[dict[str, str]] = []
        self.walker: list[float] = []  # x of each odometry message (global frame)
        node = client.node
        node.create_subscription(DiagnosticArray, f"/{namespace}/fleet_sim/status",
                                 self._on_status, 10)
        node.create_subscription(Odometry, f"/{namespace}/walker/odom", partial(
            lambda box, msg: box.append(msg.pose.pose.position.x), self.walker), 50)
        self.cmd = node.create_publisher(TwistStamped, f"/{namespace}/bot/cmd_vel", 10)

    def _on_status(self, msg) -> None:
        for status in msg.status:
            if status.hardware_id == "fleet":
                self.fleet.append({kv.key: kv.value for kv in status.values})

    def wait_for_statuses(self, count: int, process, timeout: float = 90.0) -> None:
        """Spin until ``count`` more statuses have arrived (at 2 Hz: count / 2 seconds)."""
        target = len(self.fleet) + count
        assert self.client.spin_until(lambda: len(self.fleet) >= target or
                                      not process.running(), timeout), self.fleet[-1:]
        assert process.running(), process.lines[-30:]

    def set_start(self, value: str):
        request = SetParameters.Request(parameters=[Parameter(name="start", value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value=value))])
        reply = self.client.call(SetParameters, f"/{self.ns}/fleet_sim/set_parameters", request)
        return reply.results[0]


@pytest.fixture(scope="module")
def sims(tmp_path_factory, domain_id, client_factory):
    scenario = tmp_path_factory.mktemp("fleet_sim_start") / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    params = [config_file("fleet_sim.yaml")]
    procs = {
        mode: RosProcess(f"fleet_sim_{mode}", node_command(
            "planning_collision.ros.fleet_sim", params,
            {"scenario": str(scenario), "start": mode, "odom_frames_at_start": False,
             "status_rate_hz": 4.0}, namespace=f"start_{mode}"), domain_id)
        for mode in ("wait", "commands")
    }
    clients: list = []
    with stopping(clients, procs.values()):
        client = client_factory("fleet_sim_start_tests")
        clients.append(client)
        sims = {mode: Sim(client, f"start_{mode}") for mode in procs}
        yield procs, sims


def assert_standing_still(sim: Sim) -> None:
    assert sim.fleet and all(f["started"] == "false" and f["steps"] == "0" and
                             float(f["sim_time"]) == 0.0 for f in sim.fleet), sim.fleet[-1]
    assert len(sim.walker) > 20 and set(sim.walker) == {0.0}, sim.walker[-5:]


def test_simulated_time_stands_still_until_start_is_set_to_now(sims):
    procs, all_sims = sims
    sim, proc = all_sims["wait"], procs["wait"]
    sim.wait_for_statuses(8, proc)  # two seconds of wall time
    assert_standing_still(sim)
    # Commands do not start this clock, nor do other values of start; other parameters
    # stay read-only.
    for _ in range(10):
        sim.cmd.publish(TwistStamped())
        sim.client.spin_for(0.05)
    for value in ("wait", "commands", "later"):
        result = sim.set_start(value)
        assert not result.successful and "only be set to 'now'" in result.reason
    sim.wait_for_statuses(2, proc)
    assert_standing_still(sim)

    assert sim.set_start("now").successful
    assert sim.client.spin_until(lambda: sim.fleet[-1]["started"] == "true" and
                                 float(sim.fleet[-1]["sim_time"]) > 0.5, 30.0), sim.fleet[-1]
    assert sim.walker[-1] > 0.1  # the person walks once time runs
    assert any("simulated time starts: start was set to now" in line for line in proc.lines)
    assert sim.set_start("now").successful  # again: harmless


def test_simulated_time_starts_once_every_orca_robot_has_a_command(sims):
    procs, all_sims = sims
    sim, proc = all_sims["commands"], procs["commands"]
    sim.wait_for_statuses(8, proc)
    assert_standing_still(sim)
    assert sim.client.spin_until(lambda: sim.cmd.get_subscription_count() > 0, 30.0)
    sim.cmd.publish(TwistStamped())  # a (zero) command: bot's controller runs
    assert sim.client.spin_until(lambda: sim.fleet[-1]["started"] == "true" and
                                 float(sim.fleet[-1]["sim_time"]) > 0.5, 30.0), sim.fleet[-1]
    assert any("every ORCA robot has a command" in line for line in proc.lines)
