"""collision_server's entry on /diagnostics over DDS: map age and size, obstacle count,
warm-up state, requests and failed requests."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from ros_clients import Client, close_then_stop
from test_collision_server import los_request, make_map_data, map_msg

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.srv import CheckLineOfSight

SERVER = "planning_collision.ros.collision_server"
ENTRY = "diag/collision_server: world"


def test_collision_server_reports_its_world_and_requests_on_diagnostics(domain_id, latched_qos):
    client = Client("diagnostics_test")
    proc = RosProcess("diag_server", node_command(
        SERVER, [config_file("collision_server.yaml")], {"publish_markers": False},
        namespace="diag"), domain_id)
    try:
        arrays: list[DiagnosticArray] = []
        client.node.create_subscription(DiagnosticArray, "/diagnostics", arrays.append, 10)

        def entry():
            for array in reversed(arrays):
                for status in array.status:
                    if status.name == ENTRY:
                        return status
            return None

        def values():
            return {kv.key: kv.value for kv in entry().values}

        assert client.spin_until(lambda: entry() is not None or not proc.running(), 120.0), \
            "no collision_server entry on /diagnostics"
        assert proc.running(), "\n".join(proc.lines[-20:])
        assert values()["map_age"] == "none" and entry().level == DiagnosticStatus.WARN
        map_pub = client.node.create_publisher(type(map_msg(make_map_data())), "/diag/map",
                                               latched_qos)
        map_pub.publish(map_msg(make_map_data()))
        assert client.spin_until(lambda: values()["map_size"] == "200 x 100", 10.0), entry()
        good = client.call(CheckLineOfSight, "/diag/check_line_of_sight",
                           los_request((0.0, 0.5), (3.0, 0.5), layers=1), process=proc)
        assert good.success, good.message
        bad = client.call(CheckLineOfSight, "/diag/check_line_of_sight",
                          los_request((0.0, 0.5), (3.0, 0.5), mode="nonsense", layers=1))
        assert not bad.success
        # Requests made while the kernels warmed up were answered success: false too.
        assert client.spin_until(lambda: entry().level == DiagnosticStatus.OK
                                 and int(values()["failed_requests"]) >= 1
                                 and int(values()["requests"]) >= 2, 10.0), entry()
        v = values()
        assert v["kernels_ready"] == "true" and v["state"] == "active"
        assert v["map_size"] == "200 x 100" and 0.0 <= float(v["map_age"]) < 60.0
        assert v["obstacles"] == "none"
        assert int(v["requests.check_line_of_sight"]) == int(v["requests"])
        assert "mode 'nonsense'" in v["last_failure"]
    finally:
        close_then_stop([client], [proc])
