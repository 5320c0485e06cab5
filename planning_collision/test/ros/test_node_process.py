"""A node process started with a params file answers a service from another process, over DDS
on loopback, and stops cleanly on SIGINT and SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rcl_interfaces.srv import GetParameters

from planning_collision.resources import config_file
from planning_collision.ros import processes

PARAMS = """\
/**/collision_server:
  ros__parameters:
    los_mode: supercover
    occupied_threshold: 50
    footprint: "[[0.5, 0.25], [-0.5, 0.25], [-0.5, -0.25], [0.5, -0.25]]"
"""


def test_params_file_reaches_the_node_and_its_service_answers(tmp_path, start_process, client):
    params = tmp_path / "params.yaml"
    params.write_text(PARAMS)
    server = start_process("collision_server", processes.node_command(
        "planning_collision.ros.collision_server", [params], namespace="pf"))
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"

    request = GetParameters.Request(names=["los_mode", "occupied_threshold", "footprint",
                                           "unknown_is_occupied"])
    reply = client.call(GetParameters, "/pf/collision_server/get_parameters", request,
                        timeout=90.0, process=server)
    values = [v.string_value or v.integer_value or v.bool_value for v in reply.values]
    assert values[0] == "supercover"
    assert values[1] == 50
    assert values[2].startswith("[[0.5, 0.25]")
    assert reply.values[3].bool_value is True  # default from the node's table
    assert server.running()
    # Talking to each other, neither the node nor this process touched Fast DDS's shared
    # memory: no port, no data-sharing segment (the shipped profile is UDP only, doc/dds.md).
    for pid in (server.pid, os.getpid()):
        assert shared_memory_ports(pid) == [], (pid, shared_memory_ports(pid))


def shared_memory_ports(pid: int) -> list[str]:
    """Fast DDS shared-memory ports and data-sharing segments mapped by process ``pid``."""
    with open(f"/proc/{pid}/maps") as maps:
        names = {line.split()[-1] for line in maps if "/dev/shm/" in line}
    return sorted(name for name in names
                  if any(kind in name for kind in ("fastdds_port", "fastrtps_port",
                                                   "fast_datasharing")))


def test_empty_array_parameters_are_typed_and_answer_get_parameters(start_process, client):
    """With the shipped ``agents: []`` and ``observed: []``, a GetParameters request naming
    them and a plain parameter answers all three: the arrays as typed empty arrays (an unset
    parameter in the request made the node answer nothing at all, for every name)."""
    from rcl_interfaces.msg import ParameterType

    orca = start_process("orca_node", processes.node_command(
        "planning_collision.ros.orca_node", [config_file("orca.yaml")],
        namespace="empty_arrays"))
    request = GetParameters.Request(names=["agents", "observed", "rate_hz"])
    reply = client.call(GetParameters, "/empty_arrays/orca_node/get_parameters", request,
                        timeout=90.0, process=orca)
    assert [v.type for v in reply.values] == [ParameterType.PARAMETER_STRING_ARRAY,
                                              ParameterType.PARAMETER_STRING_ARRAY,
                                              ParameterType.PARAMETER_DOUBLE]
    assert list(reply.values[0].string_array_value) == []
    assert list(reply.values[1].string_array_value) == []
    assert reply.values[2].double_value == 20.0


def test_sigint_and_sigterm_stop_the_node_promptly(start_process, client):
    from planning_collision_interfaces.srv import ComputeDistance

    for sig in (signal.SIGINT, signal.SIGTERM):
        server = start_process("collision_server", processes.node_command(
            "planning_collision.ros.collision_server", namespace=f"sig{int(sig)}"))
        name = f"/sig{int(sig)}/compute_distance"
        client.wait_for_service(ComputeDistance, name, timeout=90.0, process=server)
        assert server.wait_for_line("ready:", 60.0), server.lines[-20:]  # it spins
        server.send_signal(sig)
        started = time.monotonic()
        code = server.wait(timeout=10.0)
        assert time.monotonic() - started < 5.0
        assert code == 0, server.lines[-20:]
        assert_clean_stop(server.lines, sig)


def assert_clean_stop(lines: list[str], sig: int) -> None:
    """The node logged its stop, printed no error, and its DDS teardown finished without the
    watchdog (one process stopping alone, with no peer leaving at the same time)."""
    assert any(f"stopping on {signal.Signals(sig).name}" in line for line in lines), lines[-20:]
    noisy = [line for line in lines if re.search(
        r"Traceback|ERROR|FATAL|KeyboardInterrupt|most recent call first", line)]
    assert not noisy, noisy


SWAP_ROOM = str(config_file("scenarios/swap_room.yaml"))
OTHER_NODES = {  # module, its parameters, a line it logs once it runs
    "orca_node": ("planning_collision.ros.orca_node",
                  {"agents": ["robot1"], "use_map_obstacles": True}, "ready:"),
    "fleet_sim": ("planning_collision.ros.fleet_sim", {"scenario": SWAP_ROOM}, "simulating"),
    "map_publisher": ("planning_collision.ros.map_publisher", {"scenario": SWAP_ROOM},
                      "published"),
}


@pytest.mark.parametrize("node", sorted(OTHER_NODES))
def test_every_other_node_stops_promptly_on_sigint_and_sigterm(start_process, node):
    module, parameters, ready = OTHER_NODES[node]
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = start_process(node, processes.node_command(
            module, parameters=parameters, namespace=f"{node}_{int(sig)}"))
        assert proc.wait_for_line(ready, 120.0), proc.lines[-20:]
        proc.send_signal(sig)
        started = time.monotonic()
        code = proc.wait(timeout=10.0)
        assert time.monotonic() - started < 5.0
        assert code == 0, proc.lines[-20:]
        assert_clean_stop(proc.lines, sig)


def test_child_processes_follow_the_network_rule(domain_id, monkeypatch):
    """Whatever the caller's shell says, a process the project starts discovers on loopback
    only, in the run's domain, with the shipped discovery profile."""
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")
    monkeypatch.setenv("ROS_STATIC_PEERS", "192.0.2.1")
    monkeypatch.setenv("FASTDDS_DEFAULT_PROFILES_FILE", "/elsewhere/profile.xml")
    keys = ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "ROS_STATIC_PEERS",
            "FASTDDS_DEFAULT_PROFILES_FILE")
    script = f"import os; print('|'.join(os.environ.get(k, '-') for k in {keys!r}))"
    child = processes.RosProcess("env", [sys.executable, "-c", script], domain_id, echo=False)
    assert child.wait(30.0) == 0
    values = dict(zip(keys, child.lines[-1].split("|"), strict=True))
    assert values["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert values["ROS_DOMAIN_ID"] == str(domain_id)
    assert values["ROS_STATIC_PEERS"] == "-"
    assert values["FASTDDS_DEFAULT_PROFILES_FILE"] == str(processes.shipped_profile())


def test_fastdds_2_reads_the_profile_from_its_own_variable():
    """Fast DDS 2 (Jazzy) reads FASTRTPS_DEFAULT_PROFILES_FILE only: without it the shipped
    profile was never applied there (shared memory, slow discovery)."""
    env = processes.ros_environment(7)
    if processes.fastdds_2_installed():
        assert env["FASTRTPS_DEFAULT_PROFILES_FILE"] == env["FASTDDS_DEFAULT_PROFILES_FILE"]
    else:  # Fast DDS 3 would warn that the old name is deprecated
        assert "FASTRTPS_DEFAULT_PROFILES_FILE" not in env or (
            env["FASTRTPS_DEFAULT_PROFILES_FILE"] == os.environ.get(
                "FASTRTPS_DEFAULT_PROFILES_FILE"))


def test_another_fastdds_profile_is_chosen_by_its_own_variable(tmp_path, monkeypatch):
    """PLANNING_COLLISION_FASTDDS_PROFILE replaces the shipped profile (to measure, or to give
    shared memory back, doc/dds.md); a name that is not a file is an error, not a fallback."""
    profile = tmp_path / "mine.xml"
    profile.write_text("<dds/>")
    monkeypatch.setenv(processes.PROFILE_VARIABLE, str(profile))
    assert processes.ros_environment(7)["FASTDDS_DEFAULT_PROFILES_FILE"] == str(profile)
    monkeypatch.setenv(processes.PROFILE_VARIABLE, str(tmp_path / "missing.xml"))
    with pytest.raises(FileNotFoundError, match="PLANNING_COLLISION_FASTDDS_PROFILE"):
        processes.ros_environment(7)


@pytest.mark.parametrize("name", ["fastdds_discovery.xml", "fastdds2_discovery.xml"])
def test_the_shipped_profile_keeps_data_off_shared_memory(name):
    """Every process the project starts talks UDP only: the participant lists its own
    transport (UDPv4) without the built-in ones, listens for data on UDPv4 locators only (so
    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, whose rmw adds a shared-memory transport, still
    gets no shared-memory port), and data sharing is off for every writer and reader. The same
    in the profile of each Fast DDS."""
    import xml.etree.ElementTree as ET

    ns = {"d": "http://www.eprosima.com"}
    root = ET.parse(config_file(name)).getroot()
    descriptors = {d.findtext("d:transport_id", namespaces=ns): d.findtext("d:type", namespaces=ns)
                   for d in root.iterfind(".//d:transport_descriptor", ns)}
    participant = root.find(".//d:participant[@is_default_profile='true']", ns)
    rtps = participant.find("d:rtps", ns)
    assert rtps.findtext("d:useBuiltinTransports", namespaces=ns) == "false"
    used = [t.text for t in rtps.iterfind("d:userTransports/d:transport_id", ns)]
    assert used and all(descriptors[t] == "UDPv4" for t in used)
    locators = list(rtps.find("d:defaultUnicastLocatorList", ns))
    assert locators and all([child.tag for child in loc] == [f"{{{ns['d']}}}udpv4"]
                            for loc in locators)
    for kind in ("data_writer", "data_reader"):
        profile = root.find(f".//d:{kind}[@is_default_profile='true']", ns)
        assert profile.findtext("d:qos/d:data_sharing/d:kind", namespaces=ns) == "OFF"


def test_each_fast_dds_gets_the_shipped_profile_in_its_own_element_names():
    """Fast DDS 2 (Jazzy) rejects the whole profile over a Fast DDS 3 name (heartbeat_period:
    "Invalid element found into 'writerTimesType'") and Fast DDS 3 over a Fast DDS 2 one, so
    each gets its own file: the Fast DDS 2 one is the other translated, and up to date."""
    import importlib.util
    import xml.etree.ElementTree as ET

    tool_path = Path(__file__).resolve().parents[3] / "tools" / "fastdds2_profile.py"
    spec = importlib.util.spec_from_file_location("fastdds2_profile", tool_path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0, "run tools/fastdds2_profile.py"
    ns = "{http://www.eprosima.com}"
    fastdds_3_names = set(processes.FASTDDS_2_NAMES)
    fastdds_2_names = set(processes.FASTDDS_2_NAMES.values())
    for name, own, other in (("fastdds_discovery.xml", fastdds_3_names, fastdds_2_names),
                             ("fastdds2_discovery.xml", fastdds_2_names, fastdds_3_names)):
        tags = {element.tag.removeprefix(ns)
                for element in ET.parse(config_file(name)).getroot().iter()}
        assert tags & own and not tags & other, (name, tags & (own | other))
    expected = "fastdds2_discovery.xml" if processes.fastdds_2_installed() else (
        "fastdds_discovery.xml")
    assert processes.shipped_profile() == config_file(expected)


def test_wait_for_line_with_no_timeout_looks_at_the_lines_already_printed(domain_id):
    """A timeout of 0 asks "has it printed this yet?": it used to answer no without looking,
    so a benchmark that polled a running server with it waited forever."""
    proc = processes.RosProcess("talker", [sys.executable, "-c",
                                           "import time; print('hello', flush=True); "
                                           "time.sleep(30)"], domain_id, echo=False)
    try:
        assert proc.wait_for_line("hello", 30.0)
        assert proc.wait_for_line("hello", 0.0)
        assert not proc.wait_for_line("goodbye", 0.0)
    finally:
        proc.stop()


def test_a_run_never_picks_a_domain_another_run_on_the_machine_holds(domain_id):
    """Each run holds its domain: another run (a process of its own) picks one of the others,
    however its random choice falls, and gets the held one back once the holder ended."""
    pick = ("import random, sys; from planning_collision.ros import processes; "
            "print(processes.pick_domain_id(random.Random(int(sys.argv[1]))), flush=True); "
            "sys.stdin.read()")
    holders = []
    picks: list[int] = []
    try:
        held = {domain_id}  # this test run's own
        for seed in range(5):
            holder = subprocess.Popen([sys.executable, "-c", pick, str(seed)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            holders.append(holder)
            picked = int(holder.stdout.readline())
            assert 1 <= picked <= 100 and picked not in held, (picked, held)
            held.add(picked)
            picks.append(picked)
        # The same random order as the first holder's: it moves on past the held domain...
        once = pick.replace("; sys.stdin.read()", "")
        again = subprocess.run([sys.executable, "-c", once, "0"], capture_output=True,
                               text=True, timeout=60)
        assert int(again.stdout) not in held
        # ... and gets it once its holder ended.
        holders[0].stdin.close()
        holders[0].wait(timeout=30)
        again = subprocess.run([sys.executable, "-c", once, "0"], capture_output=True,
                               text=True, timeout=60)
        assert int(again.stdout) == picks[0], (again.stdout, picks)
    finally:
        for holder in holders:
            if holder.poll() is None:
                holder.stdin.close()
                holder.wait(timeout=30)


def test_a_fixture_whose_node_never_comes_up_still_stops_it(domain_id):
    """ros_clients.stopping: a fixture's readiness wait that fails before its yield still
    stops the processes it started (they are sessions of their own and outlived the run)."""
    from ros_clients import stopping

    proc = processes.RosProcess("never_ready", [sys.executable, "-c",
                                                "import time; time.sleep(120)"], domain_id)
    with pytest.raises(AssertionError, match="never ready"):
        with stopping([], [proc]):
            assert proc.wait_for_line("ready", 0.2), "never ready"
    assert not proc.running() and proc.returncode is not None
