"""collision_server and orca_node as lifecycle nodes, driven over DDS from this process with
the lifecycle services (as nav2_lifecycle_manager drives them); their kernels warmed up in the
background on a cold cache; a bad parameter named without a traceback."""

from __future__ import annotations

import os
import time

import pytest
from geometry_msgs.msg import TwistStamped
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from nav_msgs.msg import Odometry
from ros_clients import Client, close_then_stop
from test_collision_server import los_request, make_map_data, map_msg

from planning_collision.resources import config_file
from planning_collision.ros.collision_server import CollisionServer
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.ros.service_call import call_service
from planning_collision_interfaces.srv import CheckLineOfSight

SERVER = "planning_collision.ros.collision_server"
ORCA = "planning_collision.ros.orca_node"


@pytest.fixture
def nodes(domain_id, latched_qos):
    procs: list[RosProcess] = []
    client = Client("lifecycle_test")

    def start(name, command, **kwargs) -> RosProcess:
        procs.append(RosProcess(name, command, domain_id, **kwargs))
        return procs[-1]

    yield start, client
    close_then_stop([client], procs)


def state(client: Client, node: str) -> int:
    return client.call(GetState, f"{node}/get_state", GetState.Request()).current_state.id


def change(client: Client, node: str, transition: int) -> bool:
    request = ChangeState.Request(transition=Transition(id=transition))
    return client.call(ChangeState, f"{node}/change_state", request).success


def test_collision_server_configure_activate_deactivate_cleanup(nodes, latched_qos):
    start, client = nodes
    proc = start("managed_server", node_command(SERVER, [config_file("collision_server.yaml")],
                                                {"autostart": False}, namespace="lc"))
    node = "/lc/collision_server"
    client.wait_for_service(GetState, f"{node}/get_state", 120.0, proc)
    assert state(client, node) == State.PRIMARY_STATE_UNCONFIGURED
    assert not client.client(CheckLineOfSight, "/lc/check_line_of_sight").service_is_ready()
    map_pub = client.node.create_publisher(type(map_msg(make_map_data())), "/lc/map",
                                           latched_qos)
    map_pub.publish(map_msg(make_map_data()))
    assert change(client, node, Transition.TRANSITION_CONFIGURE)
    assert state(client, node) == State.PRIMARY_STATE_INACTIVE
    assert client.spin_until(lambda: proc.wait_for_line("map 200 x 100", 0.01), 10.0)
    reply = client.call(CheckLineOfSight, "/lc/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1))
    assert not reply.success and "inactive" in reply.message, reply.message
    assert reply.error_code == CheckLineOfSight.Response.INACTIVE
    assert change(client, node, Transition.TRANSITION_ACTIVATE)
    reply = client.call(CheckLineOfSight, "/lc/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1))
    assert reply.success and reply.blocked_by == "grid", reply.message
    assert change(client, node, Transition.TRANSITION_DEACTIVATE)
    reply = client.call(CheckLineOfSight, "/lc/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1))
    assert not reply.success and "inactive" in reply.message
    assert change(client, node, Transition.TRANSITION_CLEANUP)
    assert state(client, node) == State.PRIMARY_STATE_UNCONFIGURED
    assert client.spin_until(lambda: not client.client(
        CheckLineOfSight, "/lc/check_line_of_sight").service_is_ready(), 10.0)
    # Configured again (parameters declared once), it takes the latched map again.
    assert change(client, node, Transition.TRANSITION_CONFIGURE)
    assert change(client, node, Transition.TRANSITION_ACTIVATE)
    assert client.spin_until(lambda: sum("map 200 x 100" in line for line in proc.lines) == 2,
                             10.0)
    reply = client.call(CheckLineOfSight, "/lc/check_line_of_sight",
                        los_request((0.0, 0.5), (3.0, 0.5), layers=1))
    assert reply.success and reply.blocked_by == "grid", reply.message
    assert change(client, node, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert state(client, node) == State.PRIMARY_STATE_FINALIZED
    assert proc.running()
    assert not [line for line in proc.lines if "[ERROR]" in line or "Traceback" in line]


def test_orca_node_stops_its_robot_once_when_deactivated(nodes):
    start, client = nodes
    proc = start("managed_orca", node_command(ORCA, [config_file("orca.yaml")], {
        "autostart": False, "agents": ["solo"], "solo.goal": [5.0, 0.0],
        "publish_markers": False}, namespace="lo"))
    node = "/lo/orca_node"
    commands: list[TwistStamped] = []
    client.node.create_subscription(TwistStamped, "/lo/solo/cmd_vel", commands.append, 50)
    odom = client.node.create_publisher(Odometry, "/lo/solo/odom", 10)
    msg = Odometry()
    msg.header.frame_id = "map"
    msg.pose.pose.orientation.w = 1.0
    client.node.create_timer(0.05, lambda: odom.publish(msg))
    client.wait_for_service(GetState, f"{node}/get_state", 120.0, proc)
    assert change(client, node, Transition.TRANSITION_CONFIGURE)
    client.spin_for(1.0)
    assert not commands  # configured, inactive: it commands nothing
    assert change(client, node, Transition.TRANSITION_ACTIVATE)
    assert client.spin_until(lambda: commands and commands[-1].twist.linear.x == 0.5, 30.0)
    assert change(client, node, Transition.TRANSITION_DEACTIVATE)
    client.spin_for(0.5)
    last = len(commands)
    assert (commands[-1].twist.linear.x, commands[-1].twist.angular.z) == (0.0, 0.0)
    client.spin_for(1.0)
    assert len(commands) == last  # and then nothing more
    assert change(client, node, Transition.TRANSITION_CLEANUP)
    assert change(client, node, Transition.TRANSITION_CONFIGURE)  # again, same parameters
    assert change(client, node, Transition.TRANSITION_ACTIVATE)
    assert client.spin_until(lambda: len(commands) > last + 5
                             and commands[-1].twist.linear.x == 0.5, 30.0)


def test_a_bad_parameter_fails_configure_by_name(nodes):
    start, client = nodes
    proc = start("bad_orca", node_command(ORCA, [config_file("orca.yaml")], {
        "autostart": False, "agents": ["a"], "time_horizon": -1.0}, namespace="bad"))
    client.wait_for_service(GetState, "/bad/orca_node/get_state", 120.0, proc)
    assert not change(client, "/bad/orca_node", Transition.TRANSITION_CONFIGURE)
    assert state(client, "/bad/orca_node") == State.PRIMARY_STATE_UNCONFIGURED
    assert proc.wait_for_line("configure failed: time_horizon must be finite and > 0", 5.0)
    # With autostart (a plain ros2 run) the process ends, naming the problem, no traceback.
    plain = start("bad_orca_plain", node_command(ORCA, [config_file("orca.yaml")], {
        "agents": ["a"], "time_horizon": -1.0}, namespace="bad2"))
    assert plain.wait(60.0) == 1
    text = "\n".join(plain.lines)
    assert "cannot start: time_horizon must be finite and > 0" in text
    assert "Traceback" not in text


def descendants(pid: int, command: str) -> list[int]:
    """Processes below ``pid`` (children, their children, ...) whose command line contains
    ``command``."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    below, frontier = [], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        below += frontier
    out = []
    for child in below:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                if command.encode() in cmdline.read():
                    out.append(child)
        except OSError:
            pass
    return out


def test_a_cold_kernel_cache_still_answers_at_once(nodes, tmp_path, latched_qos):
    """No numba cache at all (the first start after colcon build without the warmup script):
    the services answer from the first second, saying the kernels are warming up, and the
    robot is held at zero velocity while the kernels compile in another process; a stop then
    ends that compilation too."""
    start, client = nodes
    cold = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    server = start("cold_server", node_command(SERVER, [config_file("collision_server.yaml")],
                                               namespace="cold"), extra_env=cold)
    orca = start("cold_orca", node_command(ORCA, [config_file("orca.yaml")], {
        "agents": ["solo"], "solo.goal": [5.0, 0.0], "publish_markers": False},
        namespace="cold"), extra_env=cold)
    commands: list[TwistStamped] = []
    client.node.create_subscription(TwistStamped, "/cold/solo/cmd_vel", commands.append, 50)
    odom = client.node.create_publisher(Odometry, "/cold/solo/odom", 10)
    msg = Odometry()
    msg.header.frame_id = "map"
    msg.pose.pose.orientation.w = 1.0
    client.node.create_timer(0.05, lambda: odom.publish(msg))
    client.wait_for_service(CheckLineOfSight, "/cold/check_line_of_sight", 60.0, server)
    los = client.client(CheckLineOfSight, "/cold/check_line_of_sight")
    reply = call_service(client.executor, los, los_request((0.0, 0.5), (3.0, 0.5)), 10.0,
                         while_warming_up=False)
    assert reply is not None and not reply.success and "warming up" in reply.message
    assert reply.error_code == CheckLineOfSight.Response.WARMING_UP
    assert client.spin_until(lambda: len(commands) >= 5, 30.0)
    assert all(c.twist.linear.x == 0.0 for c in commands)  # held while warming up
    assert server.wait_for_line("compiling them in a separate process", 10.0)
    assert orca.wait_for_line("kernels warming up: commanding zero velocity", 10.0)
    # the warm-up process and, on a machine with several cores, one compiler per core
    wanted = 1 + (len(CollisionServer.KERNELS) if len(os.sched_getaffinity(0)) > 1 else 0)
    deadline = time.monotonic() + 20.0
    while (len(compilers := descendants(server.pid, "planning_collision.warmup")) < wanted
           and time.monotonic() < deadline):
        time.sleep(0.05)
    assert len(compilers) >= wanted, compilers
    server.stop()
    assert server.returncode == 0
    for pid in compilers:
        assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read()
