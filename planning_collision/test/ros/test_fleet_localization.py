"""orca_node in a fleet where odometry drifts and arrives late, over DDS (fleet_sim simulates
the drift, a localizer, slow and delayed odometry).

1. Eight robots cross a circle while their odometry drifts by decimetres (drift_scale and
   drift_heading 0.15). Placed by a fixed odom_origin, orca_node believes the robots are
   where they are not and they collide; placed by the localizer's amcl_pose (fused by
   timestamp) or by its map -> odom transforms on tf, none collide and all arrive.
2. One orca_node per robot, odometry published at 10 Hz and delivered 0.3 s after it was
   measured: with ages taken from the stamps, positions extrapolated and radii grown by what
   extrapolation cannot cover, nobody collides.
"""

from __future__ import annotations

import math
import time

import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from ros_clients import Client, close_then_stop

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.msg import OrcaStatus

ORCA = "planning_collision.ros.orca_node"
FLEET_SIM = "planning_collision.ros.fleet_sim"


def circle(n: int, radius: float = 2.5) -> list[dict]:
    return [{"name": f"r{k}", "start": [radius * math.cos(a), radius * math.sin(a), a + math.pi],
             "goal": [-radius * math.cos(a), -radius * math.sin(a)]}
            for k, a in enumerate(2 * math.pi * k / n for k in range(n))]


def fleet_values(msg: DiagnosticArray) -> dict[str, str]:
    fleet = next(s for s in msg.status if s.hardware_id == "fleet")
    return {kv.key: kv.value for kv in fleet.values}


def watch(client: Client, namespaces) -> dict[str, dict]:
    latest: dict[str, dict] = {}
    for ns in namespaces:
        client.node.create_subscription(
            DiagnosticArray, f"/{ns}/fleet_sim/status",
            lambda msg, ns=ns: latest.__setitem__(ns, fleet_values(msg)), 10)
    return latest


def assert_alive(procs) -> None:
    dead = [p for p in procs if not p.running()]
    assert not dead, f"{dead[0].name} exited: " + "\n".join(dead[0].lines[-20:])


@pytest.fixture
def run(tmp_path, domain_id):
    procs: list[RosProcess] = []
    clients: list[Client] = []

    def start(name, command):
        procs.append(RosProcess(name, command, domain_id, echo=False))

    def client() -> Client:
        clients.append(Client("localization_test"))
        return clients[-1]

    yield tmp_path, start, client, procs
    close_then_stop(clients, procs)


SOURCES = {"fixed": "odom_origin", "amcl": "pose_topic", "tf": "tf"}


def test_drifting_odometry_needs_localization(run):
    tmp, start, client, procs = run
    robots = circle(8)
    names = [r["name"] for r in robots]
    scenario = tmp / "drift.yaml"
    scenario.write_text(yaml.safe_dump({
        "timeout": 60.0, "noise": {"drift_scale": 0.15, "drift_heading": 0.15},
        "robot_defaults": {"radius": 0.25, "max_speed": 0.6}, "robots": robots}))
    for ns, source in SOURCES.items():
        start(f"sim_{ns}", node_command(FLEET_SIM, [config_file("fleet_sim.yaml")], {
            "scenario": str(scenario), "localization_rate_hz": 5.0, "localization_latency": 0.1,
            "start": "commands", "publish_markers": False, "tf_topic": f"/{ns}/tf"},
            namespace=ns))
        parameters = {"agents": names, "pose_source": source, "publish_markers": False,
                      "tf_topic": f"/{ns}/tf", **{f"{r['name']}.goal": r["goal"] for r in robots}}
        if source == "odom_origin":  # where each odometry frame started: exact only at first
            parameters.update({f"{r['name']}.odom_origin": [float(v) for v in r["start"]]
                               for r in robots})
        start(f"orca_{ns}", node_command(ORCA, [config_file("orca.yaml")], parameters,
                                         namespace=ns))
    c = client()
    latest = watch(c, SOURCES)

    def done() -> bool:
        assert_alive(procs)
        if len(latest) < 3:
            return False
        localized = all(latest[ns].get("all_arrived") == "true"
                        or int(latest[ns]["collisions"]) > 0 for ns in ("amcl", "tf"))
        fixed = latest["fixed"]
        return localized and (int(fixed["collisions"]) > 0 or fixed["timed_out"] == "true")

    assert c.spin_until(done, 150.0), latest
    report = {ns: (v["collisions"], v["min_separation"], v["orca_arrived"])
              for ns, v in latest.items()}
    print(f"collisions, min separation, arrived per pose source: {report}")
    for ns in ("amcl", "tf"):
        assert latest[ns]["collisions"] == "0", report
        assert latest[ns]["orca_arrived"] == "8", report
    # The control: the same drift with a fixed odometry origin makes robots collide.
    assert int(latest["fixed"]["collisions"]) > 0, report


def test_slow_and_late_odometry_in_a_per_robot_deployment(run):
    tmp, start, client, procs = run
    robots = circle(8)
    names = [r["name"] for r in robots]
    scenario = tmp / "late.yaml"
    scenario.write_text(yaml.safe_dump({
        "timeout": 60.0, "robot_defaults": {"radius": 0.25, "max_speed": 0.6},
        "robots": robots}))
    start("sim", node_command(FLEET_SIM, [config_file("fleet_sim.yaml")], {
        "scenario": str(scenario), "odom_frames_at_start": False, "publish_markers": False,
        "odom_rate_hz": 10.0, "odom_latency": 0.3, "start": "commands"}, namespace="late"))
    for r in robots:
        name, others = r["name"], [n for n in names if n != r["name"]]
        start(f"orca_{name}", node_command(ORCA, [config_file("orca.yaml")], {
            "agents": [name], "observed": others, f"{name}.goal": r["goal"],
            "publish_markers": False, **{f"{o}.responsibility": 0.5 for o in others}},
            node_name=f"orca_{name}", namespace="late"))
    c = client()
    latest = watch(c, ["late"])
    ages: list[float] = []
    for name in names:  # each node's own status
        c.node.create_subscription(OrcaStatus, f"/late/orca_{name}/status",
                                   lambda msg: ages.extend(a.odometry_age for a in msg.agents
                                                           if math.isfinite(a.odometry_age)),
                                   50)

    def done() -> bool:
        assert_alive(procs)
        values = latest.get("late", {})
        return values.get("all_arrived") == "true" or values.get("timed_out") == "true" \
            or int(values.get("collisions", "0")) > 0

    started = time.monotonic()
    assert c.spin_until(done, 150.0), latest
    values = latest["late"]
    print(f"late odometry: collisions {values['collisions']}, min separation "
          f"{values['min_separation']}, arrived {values['orca_arrived']} in "
          f"{time.monotonic() - started:.1f} s; odometry ages {min(ages):.2f}-{max(ages):.2f} s")
    assert values["collisions"] == "0", values["collision_pairs"]
    assert values["orca_arrived"] == "8"
    assert min(ages) >= 0.29  # the nodes saw the odometry as late as it was
