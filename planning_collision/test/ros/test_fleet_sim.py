"""fleet_sim as a real process over DDS on loopback: commanded motion (TwistStamped and Twist,
odometry in start frames and in the global frame), a unicycle turning in place, stale commands,
a collision counted once and reported, an obstacle contact, NaN commands ignored, a person
walking by itself, the trajectory file, and a bad scenario reported without a crash."""

from __future__ import annotations

import json
import math
import signal
import time
from functools import partial

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import DescribeParameters
from rclpy.duration import Duration
from ros_clients import stopping
from visualization_msgs.msg import Marker, MarkerArray

from planning_collision.resources import config_file
from planning_collision.ros.conversions import yaw_of
from planning_collision.ros.processes import RosProcess, node_command

MODULE = "planning_collision.ros.fleet_sim"
RATE = 20.0  # commands per second sent by the tests

ROBOTS = [
    {"name": "holo", "start": [0.0, 0.0, math.pi / 2]},
    {"name": "uni", "start": [5.0, 0.0, 0.0], "drive": "unicycle"},
    {"name": "stale", "start": [10.0, 0.0, 0.0]},
    {"name": "a", "start": [0.0, 10.0, 0.0]},
    {"name": "b", "start": [1.0, 10.0, math.pi]},
    {"name": "nan", "start": [5.0, 10.0, 0.0]},
    {"name": "wallbot", "start": [-5.0, 0.0, math.pi]},
    {"name": "walker", "start": [10.0, 10.0, 0.0], "goal": [11.0, 10.0], "orca": False},
]
NAMES = [r["name"] for r in ROBOTS]
SCENARIO = {
    "obstacles": [{"id": "block", "polygon": [[-6.2, -1], [-5.8, -1], [-5.8, 1], [-6.2, 1]]}],
    "robot_defaults": {"radius": 0.25, "max_speed": 1.0},
    "robots": [{"goal": [r["start"][0], r["start"][1] + 40.0], **r} for r in ROBOTS],
}


def values_of(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


class Fleet:
    """Test-side view of one fleet_sim: latest odometry per robot, statuses, command
    publishers."""

    def __init__(self, client, namespace: str, names, stamped: bool):
        self.client, self.ns, self.stamped = client, namespace, stamped
        self.odom: dict[str, list[Odometry]] = {name: [] for name in names}
        self.received = dict.fromkeys(names, 0)
        self.statuses: list[DiagnosticArray] = []
        node = client.node
        for name in names:
            node.create_subscription(Odometry, f"/{namespace}/{name}/odom",
                                     partial(self._keep, name), 50)
        node.create_subscription(DiagnosticArray, f"/{namespace}/fleet_sim/status",
                                 self.statuses.append, 10)
        self.markers: list[MarkerArray] = []
        node.create_subscription(MarkerArray, f"/{namespace}/fleet_sim/markers",
                                 self.markers.append, 10)
        self.cmd_type = TwistStamped if stamped else Twist
        self.pubs = {name: node.create_publisher(self.cmd_type, f"/{namespace}/{name}/cmd_vel",
                                                 10) for name in names}

    def _keep(self, name, msg):
        box = self.odom[name]
        box.append(msg)
        del box[:-500]
        self.received[name] += 1

    def since(self, name, mark: int) -> list[Odometry]:
        """Odometry of ``name`` received after ``self.received[name]`` was ``mark``."""
        new = self.received[name] - mark
        return self.odom[name][-new:] if new else []

    def wait_ready(self, process, orca_names, timeout=120.0):
        deadline = time.monotonic() + timeout
        while not (all(self.odom.values()) and self.statuses
                   and all(self.pubs[n].get_subscription_count() for n in orca_names)):
            assert process.running(), process.lines[-30:]
            assert time.monotonic() < deadline, "fleet_sim did not come up"
            self.client.spin_for(0.05)

    def command(self, name, vx=0.0, vy=0.0, wz=0.0):
        msg = self.cmd_type()
        twist = msg.twist if self.stamped else msg
        twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
        self.pubs[name].publish(msg)

    def drive(self, commands: dict, seconds: float, stop: bool = True) -> float:
        """Send the commands at RATE for ``seconds``, then (``stop``) zero; returns the wall
        time from the first command to the stop."""
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            for name, twist in commands.items():
                self.command(name, *twist)
            self.client.spin_for(1.0 / RATE)
        elapsed = time.monotonic() - started
        if stop:
            for name in commands:
                self.command(name)
        self.stop_sent = time.monotonic()
        return elapsed

    def still(self, name, timeout=5.0) -> float:
        """Spin until ``name``'s odometry reports it standing; returns the wall time since
        the last command went out (the stop, or the last motion command for a timeout)."""
        def standing():
            t = self.odom[name][-1].twist.twist
            return t.linear.x == t.linear.y == t.angular.z == 0.0

        assert self.client.spin_until(standing, timeout), f"{name} did not stop"
        return time.monotonic() - self.stop_sent

    def pose(self, name):
        msg = self.odom[name][-1]
        p = msg.pose.pose
        return p.position.x, p.position.y, yaw_of(p.orientation)

    def settle(self, seconds=0.3):
        self.client.spin_for(seconds)

    def status_until(self, predicate, timeout=10.0) -> dict[str, DiagnosticStatus]:
        """Spin until a status message satisfies ``predicate`` (given statuses by
        hardware_id); returns that message's statuses."""
        deadline = time.monotonic() + timeout
        seen = len(self.statuses)
        while time.monotonic() < deadline:
            self.client.spin_for(0.05)
            for msg in self.statuses[seen:]:
                by_id = {s.hardware_id: s for s in msg.status}
                if predicate(by_id):
                    return by_id
            seen = len(self.statuses)
        raise AssertionError(f"no status matched within {timeout} s; last: "
                             f"{[values_of(s) for s in self.statuses[-1].status[:1]]}")


def assert_travelled(distance: float, rate: float, elapsed: float, stopped: float) -> None:
    """``distance`` (or angle) covered at ``rate`` by commands sent for ``elapsed`` wall
    seconds, the robot seen standing ``stopped`` seconds after the last command went out.
    The test and the three sims share two cores, so commands can reach the sim late: it must
    have covered at least half of it, and never more than it could in the time from the
    first command until it was seen standing (plus one 25 Hz step)."""
    assert 0.5 * rate * elapsed <= distance <= rate * (elapsed + stopped + 0.04), \
        (distance, elapsed, stopped)


@pytest.fixture(scope="module")
def sims(tmp_path_factory, domain_id, client_factory):
    """Three fleet_sims started together: stamped commands with start-frame odometry at 25 Hz;
    Twist commands with global odometry and a trajectory file (default 50 Hz); a broken
    scenario."""
    tmp = tmp_path_factory.mktemp("fleet_sim")
    scenario = tmp / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    broken = tmp / "broken.yaml"
    broken.write_text("robots:\n  - {name: r, start: [0, 0, 0], goal: [1, 2, 3], radius: 0.2, "
                      "max_speed: 1.0}\n")
    trajectory = tmp / "trajectory.npz"
    params = [config_file("fleet_sim.yaml")]
    procs = {
        "fs1": RosProcess("fleet_sim_1", node_command(
            MODULE, params, {"scenario": str(scenario), "rate_hz": 25.0}, namespace="fs1"),
            domain_id),
        "fs2": RosProcess("fleet_sim_2", node_command(
            MODULE, params, {"scenario": str(scenario), "stamped_cmd_vel": False,
                             "odom_frames_at_start": False, "publish_markers": False,
                             "trajectory_file": str(trajectory)}, namespace="fs2"),
            domain_id),
        "fs3": RosProcess("fleet_sim_3", node_command(
            MODULE, params, {"scenario": str(broken)}, namespace="fs3"), domain_id),
    }
    clients: list = []
    with stopping(clients, procs.values()):
        client = client_factory("fleet_sim_tests")
        clients.append(client)
        orca = [r["name"] for r in ROBOTS if r.get("orca", True)]
        fleets = {"fs1": Fleet(client, "fs1", NAMES, stamped=True),
                  "fs2": Fleet(client, "fs2", ["holo"], stamped=False)}
        fleets["fs1"].wait_ready(procs["fs1"], orca)
        fleets["fs2"].wait_ready(procs["fs2"], ["holo"])
        yield procs, fleets, trajectory


def test_holonomic_robot_moves_forward_in_its_odometry_frame(sims):
    procs, fleets, _ = sims
    fleet = fleets["fs1"]
    start = fleet.odom["holo"][-1]
    assert (start.header.frame_id, start.child_frame_id) == ("holo/odom", "holo/base_link")
    assert fleet.pose("holo") == (0.0, 0.0, 0.0)  # odometry starts at zero
    mark = fleet.received["holo"]
    elapsed = fleet.drive({"holo": (0.5, 0.0, 0.0)}, 1.0)
    stopped = fleet.still("holo")
    fleet.settle()
    x, y, yaw = fleet.pose("holo")
    # Facing +y in the world, it moved along its own x axis.
    assert_travelled(x, 0.5, elapsed, stopped)
    assert abs(y) < 1e-9 and abs(yaw) < 1e-9
    speeds = [m.twist.twist.linear.x for m in fleet.since("holo", mark)]
    assert max(speeds) == 0.5 and speeds[-1] == 0.0


def test_twist_commands_and_global_odometry_and_the_trajectory_file(sims):
    procs, fleets, trajectory = sims
    fleet = fleets["fs2"]
    first = fleet.odom["holo"][-1]
    assert first.header.frame_id == "map"
    assert fleet.pose("holo") == pytest.approx((0.0, 0.0, math.pi / 2))
    elapsed = fleet.drive({"holo": (0.5, 0.0, 0.0)}, 1.0)
    stopped = fleet.still("holo")
    fleet.settle()
    x, y, _ = fleet.pose("holo")
    assert_travelled(y, 0.5, elapsed, stopped)
    assert abs(x) < 1e-9
    # Stopped with SIGINT, it writes the recorded trajectories.
    proc = procs["fs2"]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10.0) == 0
    with np.load(trajectory, allow_pickle=False) as saved:
        assert saved["names"].tolist() == NAMES
        times = saved["times"]
        assert np.allclose(np.diff(times), 0.02)
        holo = NAMES.index("holo")
        assert saved["y"][-1, holo] == pytest.approx(y, abs=1e-9)
        assert saved["x"].shape == (times.size, len(NAMES))
        walker = NAMES.index("walker")
        assert saved["x"][-1, walker] == pytest.approx(11.0)
    assert any("trajectories of" in line for line in proc.lines)


def test_unicycle_turns_in_place(sims):
    _, fleets, _ = sims
    fleet = fleets["fs1"]
    elapsed = fleet.drive({"uni": (0.0, 0.3, 1.0)}, 0.5)  # linear.y is not a unicycle's
    stopped = fleet.still("uni")
    fleet.settle()
    x, y, yaw = fleet.pose("uni")
    assert_travelled(yaw, 1.0, elapsed, stopped)
    assert (x, y) == (0.0, 0.0)


def test_a_stale_command_stops_the_robot(sims):
    _, fleets, _ = sims
    fleet = fleets["fs1"]
    elapsed = fleet.drive({"stale": (0.5, 0.0, 0.0)}, 0.2, stop=False)
    assert fleet.client.spin_until(
        lambda: fleet.odom["stale"][-1].twist.twist.linear.x > 0.0, 2.0)
    stopped_after = fleet.still("stale")
    assert 0.3 < stopped_after < 2.0  # cmd_vel_timeout is 0.5 s (and two busy cores)
    x, _, _ = fleet.pose("stale")
    # It kept going for the timeout after the last command.
    assert_travelled(x, 0.5, elapsed + 0.5, stopped_after - 0.5)
    fleet.settle(0.5)
    assert fleet.pose("stale")[0] == x
    statuses = fleet.status_until(lambda s: "stale" in s)
    assert values_of(statuses["stale"])["command"] == "stale"


def test_two_robots_driven_into_each_other_are_one_collision(sims):
    procs, fleets, _ = sims
    fleet = fleets["fs1"]
    fleet.drive({"a": (0.5, 0.0, 0.0), "b": (0.5, 0.0, 0.0)}, 1.2)

    def ab_pairs(fleet_status):
        return [p for p in json.loads(values_of(fleet_status)["collision_pairs"])
                if p[:2] == ["a", "b"]]

    statuses = fleet.status_until(lambda s: ab_pairs(s["fleet"]) and
                                  values_of(s["a"])["in_contact_with"] == "b")
    fleet_values = values_of(statuses["fleet"])
    assert len(ab_pairs(statuses["fleet"])) == 1
    assert float(fleet_values["min_separation"]) < 0.0
    assert fleet_values["min_separation_pair"] == "a-b"
    assert int(fleet_values["robot_collisions"]) >= 1
    assert statuses["fleet"].level == DiagnosticStatus.WARN
    assert statuses["a"].level == DiagnosticStatus.WARN
    assert values_of(statuses["a"])["collisions"] == "1"
    assert values_of(statuses["b"])["in_contact_with"] == "a"
    assert any("collision at" in line and "a-b" in line for line in procs["fs1"].lines)
    # In RViz both discs turn red, where the odometry says they are (once both stand: while
    # they move, the markers' 10 Hz and the odometry's 50 Hz sample different instants).
    fleet.still("a")
    fleet.still("b")
    fleet.markers.clear()
    assert fleet.client.spin_until(lambda: fleet.markers, 5.0)
    discs = {m.id: m for m in fleet.markers[-1].markers if m.ns == "robots"}
    assert sorted(discs) == list(range(len(NAMES)))
    for name in ("a", "b"):
        disc = discs[NAMES.index(name)]
        assert disc.type == Marker.CYLINDER and disc.header.frame_id == "map"
        assert (disc.color.r, disc.color.g) == pytest.approx((0.9, 0.1))
        assert disc.scale.x == pytest.approx(0.5)
        x, y, _ = fleet.pose(name)  # start-frame odometry; both started facing each other
        start_x = 0.0 if name == "a" else 1.0
        assert disc.pose.position.x == pytest.approx(start_x + (x if name == "a" else -x),
                                                     abs=1e-9)
    assert (discs[NAMES.index("holo")].color.r, discs[NAMES.index("holo")].color.b) == \
        pytest.approx((0.2, 1.0))
    # Still overlapping a second later: still one collision.
    fleet.settle(1.0)
    later = fleet.status_until(lambda s: True)
    assert len(ab_pairs(later["fleet"])) == 1
    assert values_of(later["a"])["in_contact_with"] == "b"


def test_a_robot_driven_into_an_obstacle_is_a_collision(sims):
    _, fleets, _ = sims
    fleet = fleets["fs1"]
    fleet.drive({"wallbot": (0.8, 0.0, 0.0)}, 1.0)
    statuses = fleet.status_until(lambda s: values_of(s["wallbot"])["in_contact_with"]
                                  == "block")
    pairs = json.loads(values_of(statuses["fleet"])["collision_pairs"])
    assert [p[:2] for p in pairs].count(["wallbot", "block"]) == 1
    assert int(values_of(statuses["fleet"])["obstacle_collisions"]) == 1


def test_a_command_stamped_longer_ago_than_the_timeout_is_dropped(sims):
    """A loaded machine delivers commands late; the sim obeys only those stamped within
    cmd_vel_timeout (0.5 s), as ros2_control's diff_drive_controller does."""
    procs, fleets, _ = sims
    fleet = fleets["fs1"]
    node = fleet.client.node
    x0 = fleet.pose("stale")[0]

    def send(age: float, seconds: float) -> None:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            msg = TwistStamped()
            msg.header.stamp = (node.get_clock().now() - Duration(seconds=age)).to_msg()
            msg.twist.linear.x = 0.5
            fleet.pubs["stale"].publish(msg)
            fleet.client.spin_for(1.0 / RATE)

    send(1.0, 0.5)
    assert procs["fs1"].wait_for_line("command for stale dropped: stamped 1.0", 5.0)
    fleet.settle(0.3)
    assert fleet.pose("stale")[0] == x0
    send(0.05, 0.3)  # stamped just now: obeyed
    fleet.command("stale")
    fleet.still("stale")
    assert fleet.pose("stale")[0] > x0 + 0.05


def test_a_late_command_stands_only_what_is_left_of_its_timeout(sims):
    """A command that arrives 0.4 s after its stamp moves the base for what is left of
    cmd_vel_timeout (0.5 s), about 0.1 s, as ros2_control's diff_drive_controller times it
    out; a watchdog counted from its arrival held it 0.5 s (0.25 m at 0.5 m/s), and that
    hold carried robot22 into robot24 in issue #24's 24-process crossing."""
    _, fleets, _ = sims
    fleet = fleets["fs1"]
    fleet.command("stale")
    fleet.stop_sent = time.monotonic()
    fleet.still("stale")
    x0 = fleet.pose("stale")[0]
    msg = TwistStamped()
    msg.header.stamp = (fleet.client.node.get_clock().now()
                        - Duration(seconds=0.4)).to_msg()
    msg.twist.linear.x = 0.5
    fleet.pubs["stale"].publish(msg)
    fleet.stop_sent = time.monotonic()
    fleet.settle(1.0)
    fleet.still("stale")
    travelled = fleet.pose("stale")[0] - x0
    # 0.05 m when it arrives at once; less, or nothing, when it arrives later still.
    assert 0.0 <= travelled < 0.15, travelled


def test_nan_commands_are_ignored_and_the_node_keeps_running(sims):
    procs, fleets, _ = sims
    fleet = fleets["fs1"]
    for bad in ((math.nan, 0.0, 0.0), (0.5, 0.0, math.inf), (0.0, -math.inf, math.nan)):
        fleet.command("nan", *bad)
    assert procs["fs1"].wait_for_line("command for nan dropped", 5.0)
    fleet.settle(0.3)
    assert fleet.pose("nan") == (0.0, 0.0, 0.0)
    assert procs["fs1"].running()
    # A command far above max_speed (1.0) is clamped, and the robot still obeys.
    mark = fleet.received["nan"]
    fleet.drive({"nan": (5.0, 0.0, 0.0)}, 0.3)
    fleet.settle()
    assert max(m.twist.twist.linear.x for m in fleet.since("nan", mark)) == 1.0
    assert fleet.pose("nan")[0] > 0.1


def test_a_person_walks_to_its_goal_by_itself(sims):
    _, fleets, _ = sims
    fleet = fleets["fs1"]
    statuses = fleet.status_until(lambda s: values_of(s["walker"])["arrived"] == "true")
    walker = values_of(statuses["walker"])
    assert walker["command"] == "none (walks by itself)"
    # 1 m at 1 m/s in 0.04 s steps: within goal_tolerance (0.15 m) after 22 steps.
    assert float(walker["arrival_time"]) == pytest.approx(0.88, abs=1e-9)
    assert fleet.pose("walker")[:2] == pytest.approx((1.0, 0.0), abs=1e-9)
    # Only ORCA robots listen for commands.
    node = fleet.client.node
    assert fleet.client.spin_until(lambda: node.count_subscribers("/fs1/holo/cmd_vel") == 1, 5)
    assert node.count_subscribers("/fs1/walker/cmd_vel") == 0
    fleet_values = values_of(statuses["fleet"])
    assert fleet_values["robots"] == str(len(NAMES)) and fleet_values["rate_hz"] == "25"
    assert float(fleet_values["sim_time"]) == pytest.approx(int(fleet_values["steps"]) * 0.04)
    assert int(fleet_values["steps"]) > 25
    # The pacing clock's report: simulated seconds per wall second are steps per second x dt.
    assert float(fleet_values["real_time_factor"]) == pytest.approx(
        float(fleet_values["achieved_rate"]) * 0.04, abs=1e-3)
    assert int(fleet_values["late_ticks"]) >= 0 and float(fleet_values["dropped_time"]) >= 0.0


def test_ros2_param_describe_shows_the_bounds(sims):
    client = sims[1]["fs1"].client
    names = ["rate_hz", "odom_latency", "noise_seed", "scenario"]
    reply = client.call(DescribeParameters, "/fs1/fleet_sim/describe_parameters",
                        DescribeParameters.Request(names=names))
    rate, latency, seed, scenario = reply.descriptors
    assert rate.additional_constraints == "finite and > 0" and not rate.floating_point_range
    assert latency.additional_constraints == "finite and >= 0"
    assert latency.floating_point_range[0].from_value == 0.0
    assert (seed.integer_range[0].from_value, seed.additional_constraints) == (0, "an integer >= 0")
    assert scenario.additional_constraints == "" and rate.read_only


def test_a_bad_scenario_is_reported_and_the_node_keeps_running(sims, client):
    procs, _, _ = sims
    inbox: list[DiagnosticArray] = []
    client.node.create_subscription(DiagnosticArray, "/fs3/fleet_sim/status", inbox.append, 10)
    assert client.spin_until(lambda: inbox, 10.0)
    (status,) = inbox[-1].status
    assert status.level == DiagnosticStatus.ERROR
    assert "robots[0].goal" in status.message
    assert procs["fs3"].running()
    assert any("nothing simulated" in line for line in procs["fs3"].lines)
