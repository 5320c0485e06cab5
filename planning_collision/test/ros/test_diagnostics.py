"""/diagnostics entries without DDS: what orca_node reports per robot and for its loop, and
collision_server's entry (ros/diagnostics.py)."""

from __future__ import annotations

import math

from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.ros.diagnostics import (
    ERROR,
    OK,
    WARN,
    InfeasibleCounter,
    RequestCounter,
    find,
    orca_statuses,
    server_status,
)


def feed(c, i, t, x, y):
    qx, qy, qz, qw = se2.quaternion_from_yaw(0.0)
    assert c.odometry(i, t, None, x, y, qx, qy, qz, qw, 0.0, 0.0, 0.0)


def values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def test_orca_entries_name_the_robot_whose_odometry_stopped():
    c = FleetController([AgentSpec("r1"), AgentSpec("r2"), AgentSpec("idle")],
                        [AgentSpec("person")],
                        FleetSettings(preferred_velocity_source="cmd_vel"))
    for i, y in enumerate((0.0, 5.0, 10.0, 20.0)):
        feed(c, i, 1.0, 0.0, y)
    feed(c, 0, 2.0, 0.0, 0.0)  # r1 and idle keep reporting; r2 and person fell silent
    feed(c, 2, 2.0, 0.0, 10.0)
    for i in (0, 1):
        c.nav_command(i, 2.0, None, 0.3, 0.0, 0.0)
    step = c.step(2.0)
    counter = InfeasibleCounter(3)
    counter.add(step.infeasible & step.active)
    out = orca_statuses("fleet/orca_node", "active", 20.0, 19.0, 0.002, c.names, step,
                        step.publish, counter)
    loop = find(out, "fleet/orca_node: control loop")
    assert loop.level == OK and values(loop)["achieved_rate"] == "19.000"
    r1, r2 = find(out, "fleet/orca_node: r1"), find(out, "fleet/orca_node: r2")
    assert r1.level == OK and r1.message == "active" and r1.hardware_id == "r1"
    assert values(r1)["commanded"] == "true" and values(r1)["odometry_age"] == "0.000"
    assert r2.level == ERROR and r2.message == "odometry stale (1.00 s old)"
    assert values(r2)["odometry_age"] == "1.000" and values(r2)["active"] == "false"
    idle = find(out, "fleet/orca_node: idle")  # never fed: idle by design, not a fault
    assert idle.level == OK and idle.message == "no navigation command"
    assert values(idle)["commanded"] == "false"
    person = find(out, "fleet/orca_node: person")
    assert person.level == WARN and person.message == "forgotten: odometry stale"
    assert values(person)["role"] == "observed"
    # Slow loop, inactive node, no step yet.
    assert find(orca_statuses("n", "active", 20.0, 9.0, 0.0, c.names, step, None, None),
                "n: control loop").level == WARN
    before = orca_statuses("n", "inactive", 20.0, 0.0, 0.0, c.names, None, None, None)
    assert len(before) == 1 and before[0].message == "inactive: not commanding"


def test_infeasible_steps_are_counted_per_report():
    counter = InfeasibleCounter(2)
    for _ in range(3):
        counter.add([True, False])
    assert counter.take_recent().tolist() == [3, 0]
    assert counter.take_recent().tolist() == [0, 0] and counter.total.tolist() == [3, 0]


def test_collision_server_entry_counts_requests_and_failures():
    class Response:
        def __init__(self, success, message=""):
            self.success, self.message = success, message

    counter = RequestCounter()
    ok = counter.counted("check_path", lambda req, res: Response(True))
    bad = counter.counted("check_collision", lambda req, res: Response(False, "poses is empty"))
    ok(None, None), ok(None, None), bad(None, None)
    entry = server_status("collision_server", "active", True, 10.0, (400, 300), 5, counter,
                          now=12.5)
    v = values(entry)
    assert entry.level == OK and entry.name == "collision_server: world"
    assert (v["map_age"], v["map_size"], v["obstacles"]) == ("2.500", "400 x 300", "5")
    assert (v["requests"], v["failed_requests"]) == ("3", "1")
    assert v["failed_requests.check_collision"] == "1"
    assert v["last_failure"] == "check_collision: poses is empty"
    cold = server_status("collision_server", "active", False, None, None, None,
                         RequestCounter())
    assert cold.level == WARN and "warming up" in cold.message
    assert values(cold)["map_age"] == "none" and values(cold)["kernels_ready"] == "false"
    no_map = server_status("c", "active", True, None, None, None, RequestCounter())
    assert no_map.level == WARN and no_map.message.startswith("no map")
    assert math.isfinite(float(v["map_age"]))
