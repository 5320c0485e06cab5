"""A person who publishes nothing, over DDS (issue #25): fleet_sim walks someone with
``odometry: false`` across a robot's path, and the robot's 10 Hz laser is the only way to know.
Two fleets run side by side, each a fleet_sim and an orca_node: one orca_node reads the scans
(``scan_topic: scan``) and never drives into the person; the other knows nothing of the person
and drives into them (so the scenario needs the sensor). Contacts and the speeds at them come
from each fleet_sim's recorded trajectories (sim/trajectory_contacts.py)."""

from __future__ import annotations

import numpy as np
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from ros_clients import Client, close_then_stop

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.trajectory_contacts import contacts_of
from planning_collision_interfaces.msg import OrcaStatus

# The robot drives 6 m along y = 0 at 0.5 m/s; the person crosses x = 3 at 0.5 m/s, reaching
# the robot's line when the robot, driving straight, would be there (about 6 s in): passing
# in front of or behind the person takes knowing where they are.
SCENARIO = {
    "timeout": 30.0,
    "robot_defaults": {"radius": 0.25, "max_speed": 0.6, "drive": "holonomic",
                       "scan": {"beams": 360, "range_max": 8.0, "rate_hz": 10.0,
                                "noise": 0.01}},
    "robots": [
        {"name": "bot", "start": [0.0, 0.0, 0.0], "goal": [6.0, 0.0]},
        {"name": "walker", "start": [3.0, -3.0, 1.5708], "goal": [3.0, 3.0], "radius": 0.3,
         "max_speed": 0.5, "orca": False, "odometry": False, "scan": False},
    ],
}
MODES = ("with_scans", "without_scans")
SIM_SECONDS = 13.0  # the person is past the robot's line by 8 s; the robot arrives by 13 s


def fleet_value(statuses, key: str):
    for msg in reversed(statuses):
        for status in msg.status:
            if status.hardware_id == "fleet":
                values = {kv.key: kv.value for kv in status.values}
                if key in values:
                    return values[key]
    return None


def test_only_the_scanning_robot_keeps_off_a_person_who_publishes_nothing(tmp_path, domain_id):
    scenario = tmp_path / "crossing_person.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    procs, clients = {}, []
    try:
        for mode in MODES:
            procs[f"sim_{mode}"] = RosProcess(f"sim_{mode}", node_command(
                "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")], {
                    "scenario": str(scenario), "start": "wait", "odom_frames_at_start": False,
                    "publish_markers": False, "status_rate_hz": 4.0,
                    "trajectory_file": str(tmp_path / f"{mode}.npz")}, namespace=mode),
                domain_id)
            procs[f"orca_{mode}"] = RosProcess(f"orca_{mode}", node_command(
                "planning_collision.ros.orca_node", [config_file("orca.yaml")], {
                    "agents": ["bot"], "bot.goal": [6.0, 0.0], "radius": 0.25,
                    "max_speed": 0.6, "pref_speed": 0.5, "publish_markers": False,
                    "scan_topic": "scan" if mode == "with_scans" else ""}, namespace=mode),
                domain_id)
        client = Client("sensed_people_test")
        clients.append(client)
        orca = {mode: [] for mode in MODES}
        fleet = {mode: [] for mode in MODES}
        for mode in MODES:
            client.node.create_subscription(OrcaStatus, f"/{mode}/orca_node/status",
                                            orca[mode].append, 5)
            client.node.create_subscription(DiagnosticArray, f"/{mode}/fleet_sim/status",
                                            fleet[mode].append, 5)

        def steering(mode: str) -> bool:
            return bool(orca[mode]) and all(a.active for a in orca[mode][-1].agents) and \
                fleet_value(fleet[mode], "sim_time") is not None

        def log_tail() -> str:
            return "\n".join(line for proc in procs.values() for line in proc.lines[-8:])

        assert client.spin_until(lambda: all(map(steering, MODES)), 60.0), log_tail()
        start = SetParameters.Request(parameters=[Parameter(name="start", value=ParameterValue(
            type=ParameterType.PARAMETER_STRING, string_value="now"))])
        for mode in MODES:
            reply = client.call(SetParameters, f"/{mode}/fleet_sim/set_parameters", start)
            assert reply.results[0].successful, reply.results[0].reason

        def done() -> bool:
            return all(float(fleet_value(fleet[m], "sim_time") or 0.0) >= SIM_SECONDS
                       for m in MODES)

        assert client.spin_until(done, 3 * SIM_SECONDS), log_tail()
        rates = {m: orca[m][-1].achieved_rate for m in MODES}
        for mode in MODES:  # fleet_sim writes its trajectories as it stops
            assert procs[f"sim_{mode}"].stop(timeout=10.0) == 0, log_tail()
        runs = {mode: dict(np.load(tmp_path / f"{mode}.npz")) for mode in MODES}
    finally:
        close_then_stop(clients, list(procs.values()))

    seen = contacts_of(runs["with_scans"])
    blind = contacts_of(runs["without_scans"])
    print(f"with scans: {seen}; without: {blind}; orca_node rates {rates}")
    assert not [c for c in seen if c.moving], (seen, rates)
    # ... and it did not get there by standing still: it passed the person's line.
    bot = runs["with_scans"]["names"].tolist().index("bot")
    assert runs["with_scans"]["x"][-1, bot] > 4.0, (runs["with_scans"]["x"][-1, bot], rates)
    assert [c for c in blind if c.moving and {c.robot, c.other} == {"bot", "walker"}], \
        (blind, rates)
