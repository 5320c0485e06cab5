"""orca_node as real processes over DDS on loopback.

Two deployments drive the same 4-robot crossing (two holonomic robots, two unicycles, a concave
obstacle) in fleet_sim: one orca_node for the fleet, and one orca_node per robot that watches
the others. Around them, orca_nodes fed with odometry by the test check one behaviour each:
Twist output, stale odometry stopping a robot, NaN odometry dropped, an observed person avoided
and then forgotten, map obstacles, and the cmd_vel_nav input mode. All processes start
together, once for the module.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import defaultdict
from functools import partial

import numpy as np
import pytest
import yaml
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, PoseStamped, TransformStamped, Twist, TwistStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from ros_clients import Client, close_then_stop
from visualization_msgs.msg import Marker, MarkerArray

from planning_collision import orca
from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.map_publisher import obstacle_array_msg
from planning_collision.ros.orca_obstacles import obstacle_array_polygons, signed_area
from planning_collision.ros.orca_parameters import PARAMETERS
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.scenario import load_scenario, parse_scenario
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, OrcaStatus, Shape

ORCA = "planning_collision.ros.orca_node"
FLEET_SIM = "planning_collision.ros.fleet_sim"

# Four robots on a circle swap sides through the middle, past a concave (L-shaped) obstacle.
CROSSING_ROBOTS = [
    {"name": f"r{k + 1}", "start": [2.0 * math.cos(a), 2.0 * math.sin(a), a + math.pi],
     "goal": [-2.0 * math.cos(a), -2.0 * math.sin(a)], "drive": drive}
    for k, (a, drive) in enumerate([(0.0, "holonomic"), (math.pi / 2, "unicycle"),
                                    (math.pi, "holonomic"), (3 * math.pi / 2, "unicycle")])]
CROSSING = {
    "timeout": 60.0,
    "obstacles": [{"id": "ell", "polygon": [[0.6, 0.6], [1.5, 0.6], [1.5, 0.8], [0.8, 0.8],
                                            [0.8, 1.5], [0.6, 1.5]]}],
    "robot_defaults": {"radius": 0.25, "max_speed": 0.6},
    "robots": CROSSING_ROBOTS,
}
NAMES = [r["name"] for r in CROSSING_ROBOTS]
UNICYCLE_LIMITS = orca.DiffDriveLimits(0.6, 2.0, 0.4, 0.05)  # orca.yaml's, max_speed 0.6

# The test-fed nodes: agent -> goal. Far apart, so that they never see each other.
LAB_GOALS = {"avoider": [5.0, 0.0], "stale": [5.0, 5.0], "nanbot": [5.0, -5.0],
             "mapper": [5.0, 10.0], "lost": [5.0, 15.0]}
LAB3_GOALS = {"robA": [5.0, 0.0], "quarter": [5.0, 20.0]}
# cmd_vel mode: nav meets blocker (never fed); fed is fed and then not; never is never fed.
LAB2_AGENTS = ["nav", "blocker", "fed", "never"]
LAB_STARTS = {"avoider": (0.0, 0.0), "stale": (0.0, 5.0), "nanbot": (0.0, -5.0),
              "mapper": (0.0, 10.0), "lost": (0.0, 15.0)}


def values_of(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def odometry(name: str, x: float, y: float, yaw: float = 0.0, vx: float = 0.0,
             frame: str = "map") -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = frame, f"{name}/base_link"
    msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
    msg.pose.pose.orientation = quaternion_from_yaw(yaw)
    msg.twist.twist.linear.x = vx
    return msg


class Watch:
    """Everything one namespace's nodes publish that the tests look at."""

    def __init__(self, client, ns: str, cmd_names=(), stamped: bool = True, depth: int = 2,
                 nodes=("orca_node",), markers: bool = True):
        """``depth``: status and marker messages kept by DDS until the test takes them; 2 keeps
        a busy test process looking at the latest step rather than at a backlog. ``nodes``:
        the orca_nodes of the namespace, whose own ``~/status`` (and ``~/markers``) are
        watched."""
        self.client, self.ns = client, ns
        self.status: list[OrcaStatus] = []
        self.status_by_node: dict[str, list[OrcaStatus]] = {n: [] for n in nodes}
        self.fleet: list[DiagnosticArray] = []
        self.markers: list[MarkerArray] = []
        self.cmd: dict[str, list] = {name: [] for name in cmd_names}
        node = client.node
        for orca_node in nodes:
            node.create_subscription(OrcaStatus, f"/{ns}/{orca_node}/status",
                                     partial(self._on_status, orca_node), depth)
            if markers:
                node.create_subscription(MarkerArray, f"/{ns}/{orca_node}/markers",
                                         self.markers.append, depth)
        node.create_subscription(DiagnosticArray, f"/{ns}/fleet_sim/status", self.fleet.append,
                                 10)
        for name in cmd_names:
            node.create_subscription(TwistStamped if stamped else Twist,
                                     f"/{ns}/{name}/cmd_vel", self.cmd[name].append, 2)

    def _on_status(self, orca_node: str, msg: OrcaStatus) -> None:
        self.status.append(msg)
        self.status_by_node[orca_node].append(msg)

    def agent(self, name: str):
        """The latest status of agent ``name`` (None before any)."""
        for msg in reversed(self.status):
            for agent in msg.agents:
                if agent.name == name:
                    return agent
        return None

    def until(self, predicate, timeout: float, what: str, agent: str | None = None):
        """Spin until ``predicate()`` holds; fail naming ``what`` (and showing ``agent``'s
        latest status) otherwise."""
        assert self.client.spin_until(predicate, timeout), \
            f"{self.ns}: {what}" + (f"; {agent}: {self.agent(agent)}" if agent else "")

    def fleet_values(self) -> dict[str, str]:
        if not self.fleet:
            return {}
        return values_of(next(s for s in self.fleet[-1].status if s.hardware_id == "fleet"))


class Feeder:
    """Publishes odometry for test-driven agents at 20 Hz while the client spins."""

    def __init__(self, client, ns: str, names):
        self.poses: dict[str, tuple] = {}
        self.pubs = {name: client.node.create_publisher(Odometry, f"/{ns}/{name}/odom", 10)
                     for name in names}
        client.node.create_timer(0.05, self._publish)

    def _publish(self) -> None:
        for name, pose in list(self.poses.items()):
            self.pubs[name].publish(pose if isinstance(pose, Odometry) else
                                    odometry(name, *pose))


def crossing_parameters(robots, odom_at_start: bool) -> dict:
    out = {}
    for r in robots:
        out[f"{r['name']}.holonomic"] = r["drive"] == "holonomic"
        if odom_at_start:
            out[f"{r['name']}.odom_origin"] = [float(v) for v in r["start"]]
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory, domain_id, client_factory, latched_qos):
    procs: dict[str, RosProcess] = {}
    clients = []
    try:
        yield start_world(tmp_path_factory.mktemp("orca_node"), procs, domain_id,
                          clients, latched_qos)
    finally:  # also when start-up failed: no node outlives the module
        close_then_stop(clients, procs.values())


def start_world(tmp, procs, domain_id, clients, latched_qos) -> dict:
    """Start every process of the module (into ``procs``) and the test's client (into
    ``clients``), wait until all report."""
    scenario = tmp / "crossing.yaml"
    scenario.write_text(yaml.safe_dump(CROSSING))
    sim_params = [config_file("fleet_sim.yaml")]
    orca_params = [config_file("orca.yaml")]

    def start(key, command):
        procs[key] = RosProcess(key, command, domain_id)

    # One orca_node for the fleet; odometry in per-robot frames that start at the start poses.
    start("fleet_sim", node_command(FLEET_SIM, sim_params, {"scenario": str(scenario)},
                                    namespace="fleet"))
    start("fleet_orca", node_command(ORCA, orca_params, {
        "agents": NAMES, "publish_orca_lines": True,
        **crossing_parameters(CROSSING_ROBOTS, odom_at_start=True)}, namespace="fleet"))
    # One orca_node per robot, goals from parameters; odometry in the global frame.
    start("per_sim", node_command(FLEET_SIM, sim_params, {
        "scenario": str(scenario), "odom_frames_at_start": False, "publish_markers": False},
        namespace="per"))
    for r in CROSSING_ROBOTS:
        name, others = r["name"], [n for n in NAMES if n != r["name"]]
        start(f"orca_{name}", node_command(ORCA, orca_params, {
            "agents": [name], "observed": others, f"{name}.goal": r["goal"],
            f"{name}.holonomic": r["drive"] == "holonomic", "publish_markers": False,
            **{f"{o}.responsibility": 0.5 for o in others}},
            node_name=f"orca_{name}", namespace="per"))
    # Test-fed: Twist output, map obstacles, an observed person.
    start("lab", node_command(ORCA, orca_params, {
        "agents": list(LAB_GOALS), "observed": ["person"], "stamped_cmd_vel": False,
        "use_map_obstacles": True, "publish_markers": False, "wait_for_all_agents": False,
        "lost.pose_source": "tf", "tf_topic": "tf",  # lost: placed by /lab/lost/tf
        **{f"{name}.goal": goal for name, goal in LAB_GOALS.items()}}, namespace="lab"))
    # Test-fed: absurd inputs (huge twists, unnormalised quaternions, bad obstacles).
    start("lab3", node_command(ORCA, orca_params, {
        "agents": list(LAB3_GOALS), "observed": ["robB"], "publish_markers": False,
        "wait_for_all_agents": False, "footprint_topic": "footprint",
        **{f"{name}.goal": goal for name, goal in LAB3_GOALS.items()}}, namespace="lab3"))
    # Test-fed: the navigation stack's command as the preferred velocity.
    # Nav2's chain: velocity_smoother -> cmd_vel_smoothed -> orca_node -> cmd_vel.
    start("lab2", node_command(ORCA, orca_params, {
        "agents": LAB2_AGENTS, "preferred_velocity_source": "cmd_vel",
        "cmd_vel_in_topic": "cmd_vel_smoothed", "cmd_vel_out_topic": "cmd_vel",
        "publish_markers": False, "wait_for_all_agents": False}, namespace="lab2"))

    client = Client("orca_node_tests")
    clients.append(client)
    node = client.node
    obstacles = obstacle_array_msg(parse_scenario(CROSSING), "map",
                                   node.get_clock().now().to_msg())
    latched = []
    for ns in ("fleet", "per"):
        publisher = node.create_publisher(ObstacleArray, f"/{ns}/obstacles", latched_qos)
        publisher.publish(obstacles)
        latched.append(publisher)
    watches = {
        "fleet": Watch(client, "fleet", NAMES, depth=50),  # every step, for the markers
        "per": Watch(client, "per", depth=8, nodes=[f"orca_{n}" for n in NAMES],
                     markers=False),
        "lab": Watch(client, "lab", list(LAB_GOALS), stamped=False),
        "lab2": Watch(client, "lab2", LAB2_AGENTS),
        "lab3": Watch(client, "lab3", list(LAB3_GOALS)),
    }
    feeders = {"lab": Feeder(client, "lab", list(LAB_GOALS) + ["person"]),
               "lab2": Feeder(client, "lab2", LAB2_AGENTS),
               "lab3": Feeder(client, "lab3", list(LAB3_GOALS) + ["robB"])}
    deadline = time.monotonic() + 120.0
    while not (watches["fleet"].status and watches["lab"].status and watches["lab2"].status
               and watches["lab3"].status
               and len({a.name for m in watches["per"].status for a in m.agents}) == 4
               and watches["fleet"].fleet_values()):
        dead = [key for key, proc in procs.items() if not proc.running()]
        assert not dead, f"{dead} exited: " + "\n".join(procs[dead[0]].lines[-20:])
        assert time.monotonic() < deadline, "the nodes did not come up within 120 s"
        client.spin_for(0.1)
    return {"procs": procs, "client": client, "watch": watches, "feed": feeders,

            "latched": latched, "latched_qos": latched_qos, "goals_sent": False}


def diagnostic(arrays, name: str):
    """The latest /diagnostics entry called ``name`` in ``arrays`` (None before any)."""
    for array in reversed(list(arrays)):
        for status in array.status:
            if status.name == name:
                return status
    return None


def wait_for_line(world, proc: RosProcess, text: str, timeout: float = 5.0) -> None:
    """Wait for a log line while spinning (the feeders keep publishing odometry)."""
    assert world["client"].spin_until(
        lambda: any(text in line for line in list(proc.lines)), timeout), \
        f"no line {text!r} from {proc.name}"


def publish_until_line(world, publisher, msg, proc: RosProcess, text: str,
                       timeout: float = 10.0) -> None:
    """Publish ``msg`` every 0.2 s until ``proc`` logs ``text``: the first messages of a new
    publisher may go out before the subscriber has matched it."""
    deadline = time.monotonic() + timeout
    while not any(text in line for line in list(proc.lines)):
        assert time.monotonic() < deadline, f"no line {text!r} from {proc.name}"
        publisher.publish(msg)
        world["client"].spin_for(0.2)


def send_fleet_goals(world) -> None:
    """Goals for the fleet-wide deployment on <robot>/goal_pose (once per module)."""
    if world["goals_sent"]:
        return
    client = world["client"]
    pubs = {name: client.node.create_publisher(PoseStamped, f"/fleet/{name}/goal_pose", 10)
            for name in NAMES}
    assert client.spin_until(lambda: all(p.get_subscription_count() for p in pubs.values()),
                             20.0)
    for r in CROSSING_ROBOTS:
        goal = PoseStamped()
        goal.header.frame_id = "map"
        goal.pose.position.x, goal.pose.position.y = r["goal"]
        goal.pose.orientation.w = 1.0
        pubs[r["name"]].publish(goal)
    world["goals_sent"] = True


def arrived_without_collision(watch: Watch) -> bool:
    values = watch.fleet_values()
    return values.get("all_arrived") == "true" or values.get("collisions", "0") != "0"


# ---------------------------------------------------------------------- the two deployments
def test_fleet_wide_and_per_robot_deployments_cross_without_collision(world):
    send_fleet_goals(world)
    fleet, per = world["watch"]["fleet"], world["watch"]["per"]
    fleet.until(lambda: arrived_without_collision(fleet) and arrived_without_collision(per),
                60.0, f"robots did not all arrive within 60 s: {fleet.fleet_values()}, "
                      f"{per.fleet_values()}")
    for watch in (fleet, per):
        values = watch.fleet_values()
        assert values["collisions"] == "0", (watch.ns, values["collision_pairs"])
        assert values["orca_arrived"] == "4" and float(values["min_separation"]) > 0.0
    # Each per-robot node reports its own robot only, on its own topic; the fleet node all
    # four.
    for name in NAMES:
        statuses = per.status_by_node[f"orca_{name}"]
        assert statuses and {tuple(a.name for a in m.agents) for m in statuses} == {(name,)}
    assert [a.name for a in fleet.status[-1].agents] == NAMES
    # The concave obstacle was in the problem: some robot got half-planes from its edges.
    assert max(a.obstacle_neighbors for m in fleet.status for a in m.agents) > 0
    # TwistStamped in each robot's body frame (the odometry's child frame) reached fleet_sim.
    commands = fleet.cmd["r1"]
    assert commands and commands[-1].header.frame_id == "r1/base_link"
    assert max(c.twist.linear.x for c in commands) > 0.3
    # At the goal the preferred velocity and the command are zero (no creeping).
    fleet.until(lambda: fleet.agent("r1").distance_to_goal <= 0.1, 5.0, "r1 short of its goal")
    fleet.client.spin_for(0.2)
    final = fleet.agent("r1")
    assert (final.velocity.x, final.velocity.y) == (0.0, 0.0)


def test_markers_draw_one_half_plane_per_line_of_the_status(world):
    send_fleet_goals(world)
    fleet = world["watch"]["fleet"]
    holonomic = {r["name"]: r["drive"] == "holonomic" for r in CROSSING_ROBOTS}
    trackable = len(orca.trackable_polygon(UNICYCLE_LIMITS))

    def matched_steps():
        by_stamp = defaultdict(list)
        for array in list(fleet.markers):
            for m in array.markers:
                by_stamp[(m.header.stamp.sec, m.header.stamp.nanosec)].append(m)
        out = []
        for status in list(fleet.status):
            key = (status.header.stamp.sec, status.header.stamp.nanosec)
            if key in by_stamp and any(a.agent_neighbors for a in status.agents):
                out.append((status, by_stamp[key]))
        return out

    fleet.until(lambda: len(matched_steps()) >= 5, 60.0,
                "no markers of a step in which robots saw each other")
    for status, drawn in matched_steps():
        # One namespace per agent, prefixed with the node's name.
        assert {m.ns for m in drawn} == {f"orca_node/{name}" for name in NAMES}
        for agent in status.agents:
            mine = {m.id: m for m in drawn if m.ns == f"orca_node/{agent.name}"}
            assert mine[0].type == Marker.CYLINDER
            assert mine[0].header.frame_id == "map"
            total = len(agent.orca_line_points)
            if not agent.agent_neighbors + agent.obstacle_neighbors:
                expected = 0
            else:
                # Drawn: every half-plane but a unicycle's trackable-velocity polygon.
                expected = total - (0 if holonomic[agent.name] else trackable)
            if expected == 0:
                assert mine[3].action == Marker.DELETE and mine[4].action == Marker.DELETE
                continue
            lines, sides = mine[3], mine[4]
            assert (lines.type, sides.type) == (Marker.LINE_LIST, Marker.TRIANGLE_LIST)
            assert len(lines.points) == 2 * expected
            assert len(sides.points) == 6 * expected
            assert expected >= agent.agent_neighbors + agent.obstacle_neighbors
            # Each segment lies on a half-plane's line, shifted to the robot's position.
            x, y = mine[0].pose.position.x, mine[0].pose.position.y
            hard = total - agent.agent_neighbors
            for k in range(agent.agent_neighbors):
                p = agent.orca_line_points[hard + k]
                d = agent.orca_line_directions[hard + k]
                a, b = lines.points[2 * (expected - agent.agent_neighbors + k)], \
                    lines.points[2 * (expected - agent.agent_neighbors + k) + 1]
                for end in (a, b):
                    off = (end.x - x - p.x) * d.y - (end.y - y - p.y) * d.x
                    assert abs(off) < 1e-9
            chosen = mine.get(2)
            if chosen is not None and chosen.action == Marker.ADD:
                assert chosen.points[1].x - chosen.points[0].x == pytest.approx(agent.velocity.x)


def test_per_robot_nodes_in_one_namespace_keep_status_and_markers_apart(world):
    """orca_r1 and orca_r2 run side by side in /per: each publishes on its own ~/status and
    ~/markers, and its marker namespaces carry its name, so neither overwrites the other's."""
    client, per = world["client"], world["watch"]["per"]
    nodes = ["orca_r1", "orca_r2"]
    drawn: dict[str, list] = {n: [] for n in nodes}
    subscriptions = [client.node.create_subscription(
        MarkerArray, f"/per/{n}/markers", drawn[n].append, 5) for n in nodes]
    try:
        for n in nodes:
            (result,) = set_parameters(client, f"/per/{n}", publish_markers=True)
            assert result.successful, result.reason
        per.until(lambda: all(drawn.values()), 10.0, "no markers from the per-robot nodes")
        for n, own in zip(nodes, ("r1", "r2"), strict=True):
            namespaces = {m.ns for array in drawn[n] for m in array.markers}
            # Its own robot and the three it observes, all under its own name.
            assert namespaces == {f"{n}/{name}" for name in NAMES}, namespaces
            statuses = per.status_by_node[n]
            assert statuses and {a.name for m in statuses for a in m.agents} == {own}
    finally:
        for n in nodes:
            set_parameters(client, f"/per/{n}", publish_markers=False)
        for subscription in subscriptions:
            client.node.destroy_subscription(subscription)


# ---------------------------------------------------------------------- test-fed nodes
def feed_lab(world, names) -> None:
    feeder = world["feed"]["lab"]
    for name in names:
        feeder.poses[name] = (*LAB_STARTS[name], 0.0)


def test_twist_output_and_stale_odometry_stop_a_robot(world):
    lab, proc = world["watch"]["lab"], world["procs"]["lab"]
    feed_lab(world, ["stale"])
    lab.until(lambda: lab.cmd["stale"] and lab.cmd["stale"][-1].linear.x > 0.4, 10.0,
              "stale was never commanded towards its goal")
    assert isinstance(lab.cmd["stale"][-1], Twist)  # stamped_cmd_vel false
    assert lab.cmd["stale"][-1].linear.x == pytest.approx(0.5)  # pref_speed, goal ahead
    del world["feed"]["lab"].poses["stale"]
    stopped_at = time.monotonic()
    lab.until(lambda: lab.cmd["stale"][-1].linear.x == 0.0, 5.0, "stale was not stopped")
    assert 0.3 < time.monotonic() - stopped_at < 1.5  # odom_timeout 0.5 s
    lab.until(lambda: lab.agent("stale").active is False, 2.0, "stale still active")
    wait_for_line(world, proc, "stale: odometry older than 0.5 s, commanding zero velocity")
    # /diagnostics names the robot whose odometry stopped (about once a second). A short
    # queue of our own: nine nodes publish there, and a long one would hold old arrays.
    arrays: list[DiagnosticArray] = []
    subscription = world["client"].node.create_subscription(DiagnosticArray, "/diagnostics",
                                                            arrays.append, 10)
    try:
        lab.until(lambda: (entry := diagnostic(arrays, "lab/orca_node: stale")) is not None
                  and entry.message.startswith("odometry stale"), 10.0,
                  "/diagnostics does not say that stale's odometry stopped")
        entry = diagnostic(arrays, "lab/orca_node: stale")
        assert entry.level == DiagnosticStatus.ERROR and entry.hardware_id == "stale"
        assert float(values_of(entry)["odometry_age"]) > 0.5
        lab.until(lambda: diagnostic(arrays, "lab/orca_node: control loop") is not None, 5.0,
                  "no control loop entry")
        loop = diagnostic(arrays, "lab/orca_node: control loop")
        assert float(values_of(loop)["achieved_rate"]) > 0.0
    finally:
        world["client"].node.destroy_subscription(subscription)
    # Fresh odometry brings it back.
    feed_lab(world, ["stale"])
    lab.until(lambda: lab.cmd["stale"][-1].linear.x > 0.4, 5.0, "stale did not resume")


def test_a_localizer_that_stops_stops_its_robot_and_is_reported(world):
    """lost is placed by the map -> lost/odom transform on /lab/lost/tf. When the transforms
    stop, its localization goes stale after localization_timeout (1 s): it is stopped and
    /diagnostics says why; when they come back it drives on."""
    from tf2_msgs.msg import TFMessage

    from planning_collision.ros.qos import TF_TOPIC

    lab, proc, client = world["watch"]["lab"], world["procs"]["lab"], world["client"]
    transform = TFMessage()
    transform.transforms = [TransformStamped()]
    transform.transforms[0].header.frame_id = "map"
    transform.transforms[0].child_frame_id = "lost/odom"
    transform.transforms[0].transform.rotation.w = 1.0
    tf_on = [True]
    publisher = client.node.create_publisher(TFMessage, "/lab/lost/tf", TF_TOPIC)

    def send_tf():
        if tf_on[0]:
            transform.transforms[0].header.stamp = client.node.get_clock().now().to_msg()
            publisher.publish(transform)

    timer = client.node.create_timer(0.05, send_tf)
    arrays: list[DiagnosticArray] = []
    subscription = client.node.create_subscription(DiagnosticArray, "/diagnostics",
                                                   arrays.append, 10)
    try:
        feed_lab(world, ["lost"])
        lab.until(lambda: lab.cmd["lost"] and lab.cmd["lost"][-1].linear.x > 0.4, 20.0,
                  "lost was never commanded", "lost")
        tf_on[0] = False
        lab.until(lambda: lab.agent("lost").inactive_reason.startswith("localization stale"),
                  10.0, "lost's localization never went stale", "lost")
        lab.until(lambda: lab.cmd["lost"][-1].linear.x == 0.0, 5.0, "lost not stopped")
        wait_for_line(world, proc, "lost: localization")
        lab.until(lambda: (entry := diagnostic(arrays, "lab/orca_node: lost")) is not None
                  and entry.message.startswith("localization stale"), 10.0,
                  "/diagnostics does not say that lost's localization stopped")
        entry = diagnostic(arrays, "lab/orca_node: lost")
        assert entry.level == DiagnosticStatus.ERROR
        assert values_of(entry)["localization_stale"] == "true"
        assert float(values_of(entry)["localization_age"]) > 1.0
        tf_on[0] = True
        lab.until(lambda: lab.cmd["lost"][-1].linear.x > 0.4, 10.0, "lost did not drive on",
                  "lost")
    finally:
        client.node.destroy_timer(timer)
        client.node.destroy_subscription(subscription)
        del world["feed"]["lab"].poses["lost"]


def test_nan_odometry_and_bad_messages_are_dropped_and_the_node_keeps_running(world):
    lab, proc, client = world["watch"]["lab"], world["procs"]["lab"], world["client"]
    feed_lab(world, ["nanbot"])
    lab.until(lambda: lab.agent("nanbot") is not None and lab.agent("nanbot").active, 10.0,
              "nanbot never became active")
    bad = client.node.create_publisher(Odometry, "/lab/nanbot/odom", 10)
    for x, vx in ((math.nan, 0.0), (0.0, math.inf), (-math.inf, math.nan)):
        publish_until_line(world, bad, odometry("nanbot", x, -5.0, vx=vx), proc,
                           "nanbot: odometry with NaN or inf dropped")
    goal = client.node.create_publisher(PoseStamped, "/lab/nanbot/goal_pose", 10)
    nan_goal = PoseStamped()
    nan_goal.header.frame_id = "map"
    nan_goal.pose.position.x = math.nan
    publish_until_line(world, goal, nan_goal, proc,
                       "nanbot: goal ignored: pose.position contains NaN or inf")
    other_frame = PoseStamped()
    other_frame.header.frame_id = "odom"
    other_frame.pose.orientation.w = 1.0
    publish_until_line(world, goal, other_frame, proc, "goal in frame 'odom' ignored")
    obstacles = client.node.create_publisher(ObstacleArray, "/lab/obstacles",
                                             world["latched_qos"])
    broken = ObstacleArray(obstacles=[
        Obstacle(id="bowtie", type=Obstacle.TYPE_POLYGON,
                 polygon=[Point(x=0.0, y=0.0), Point(x=1.0, y=1.0), Point(x=1.0, y=0.0),
                          Point(x=0.0, y=1.0)]),
        Obstacle(id="odd", type=7)])
    broken.header.frame_id = "map"
    obstacles.publish(broken)
    wait_for_line(world, proc, "obstacle 'bowtie'")
    wait_for_line(world, proc, "obstacle 'odd'")
    # Still running, nanbot still driven by its last good odometry towards its first goal.
    mark = len(lab.status)
    lab.until(lambda: len(lab.status) > mark + 10, 5.0, "no status after the bad messages")
    agent = lab.agent("nanbot")
    assert proc.running() and agent.active
    assert agent.preferred_velocity.x == pytest.approx(0.5)
    assert all(math.isfinite(c.linear.x) for c in lab.cmd["nanbot"])


def test_an_observed_agent_is_avoided_then_forgotten(world):
    lab, proc = world["watch"]["lab"], world["procs"]["lab"]
    feeder = world["feed"]["lab"]
    feed_lab(world, ["avoider"])
    feeder.poses["person"] = (0.9, 0.0, math.pi, 0.3)  # walking at avoider, 0.9 m ahead

    def avoiding():
        agent = lab.agent("avoider")
        return (agent is not None and agent.agent_neighbors == 1
                and agent.velocity.x < agent.preferred_velocity.x - 0.05)

    lab.until(avoiding, 10.0, "avoider did not avoid the person", "avoider")
    # The command of that step travels on cmd_vel, beside the status: wait for it (reading the
    # last command at once raced the status: 0.5 in one CI run of 2026-11-26).
    lab.until(lambda: lab.cmd["avoider"][-1].linear.x < 0.45, 2.0,
              "avoider's commands did not slow down", "avoider")
    del feeder.poses["person"]
    lab.until(lambda: lab.agent("avoider").agent_neighbors == 0, 3.0,
              "the person was not forgotten", "avoider")
    agent = lab.agent("avoider")
    assert (agent.velocity.x, agent.velocity.y) == (agent.preferred_velocity.x,
                                                    agent.preferred_velocity.y)
    wait_for_line(world, proc, "person: odometry older than 0.5 s, forgotten")


def test_map_obstacles_are_avoided(world, latched_qos):
    lab, proc, client = world["watch"]["lab"], world["procs"]["lab"], world["client"]
    feed_lab(world, ["mapper"])
    lab.until(lambda: lab.agent("mapper") is not None and lab.agent("mapper").active, 10.0,
              "mapper never became active")
    assert lab.agent("mapper").obstacle_neighbors == 0
    assert lab.agent("mapper").velocity.x == pytest.approx(0.5)
    # A wall 0.5 m ahead of mapper, across its way: cells x in [0.5, 1.0), y in [9, 11).
    grid = OccupancyGrid()
    grid.header.frame_id = "map"
    grid.info.resolution = 0.05
    grid.info.width, grid.info.height = 80, 80
    grid.info.origin.position.x, grid.info.origin.position.y = -2.0, 8.0
    grid.info.origin.orientation.w = 1.0
    data = np.zeros((80, 80), dtype=np.int8)
    data[20:60, 50:60] = 100
    grid.data = data.tobytes()
    publisher = client.node.create_publisher(OccupancyGrid, "/lab/map", latched_qos)
    publisher.publish(grid)
    world["latched"].append(publisher)
    wait_for_line(world, proc, "map 80 x 80: 1 polygons", 10.0)
    lab.until(lambda: lab.agent("mapper").obstacle_neighbors > 0, 5.0, "the map was not used")
    agent = lab.agent("mapper")
    assert agent.velocity.x < 0.4  # held back by the wall ahead
    avoider = lab.agent("avoider")  # far from the wall
    assert avoider is None or avoider.obstacle_neighbors == 0


def test_cmd_vel_nav_is_passed_through_or_avoided(world):
    lab2, client = world["watch"]["lab2"], world["client"]
    feeder = world["feed"]["lab2"]
    feeder.poses["nav"] = (0.0, 0.0, math.pi / 2)  # facing +y
    feeder.poses["blocker"] = (10.0, 10.0, 0.0)
    nav = client.node.create_publisher(TwistStamped, "/lab2/nav/cmd_vel_smoothed", 10)
    command = TwistStamped()
    command.header.frame_id = "nav/base_link"
    command.twist.linear.x, command.twist.angular.z = 0.4, 0.3

    def send_until(predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, what
            nav.publish(command)
            client.spin_for(0.05)

    def latest():
        return lab2.cmd["nav"][-1] if lab2.cmd["nav"] else None

    # Nothing in the way: the navigation command goes out exactly, angular velocity included.
    send_until(lambda: latest() is not None and latest().twist.linear.x == 0.4, 10.0,
               "cmd_vel_smoothed did not reach cmd_vel")
    out = latest()
    assert (out.twist.linear.x, out.twist.linear.y, out.twist.angular.z) == (0.4, 0.0, 0.3)
    assert out.header.frame_id == "nav/base_link"
    send_until(lambda: lab2.agent("nav").preferred_velocity.y > 0.0, 5.0,
               "the status never showed the command")
    agent = lab2.agent("nav")
    assert (agent.preferred_velocity.x, agent.preferred_velocity.y) == pytest.approx((0.0, 0.4))
    assert math.isnan(agent.distance_to_goal)
    # blocker stands in nav's way, 0.7 m ahead: ORCA changes the command. blocker has no
    # navigation input: it is not commanded, and nav avoids it with full responsibility.
    feeder.poses["blocker"] = (0.0, 0.7, 0.0)
    send_until(lambda: lab2.agent("nav").agent_neighbors == 1 and latest().twist.linear.x < 0.35,
               5.0, "nav did not avoid blocker")
    assert lab2.agent("blocker").inactive_reason == "no navigation command"
    assert not lab2.cmd["blocker"]
    # The navigation stack falls silent: its command goes stale and nav stops.
    feeder.poses["blocker"] = (10.0, 10.0, 0.0)
    lab2.until(lambda: latest().twist.linear.x == 0.0 and latest().twist.angular.z == 0.0, 3.0,
               "nav kept driving on a stale cmd_vel_smoothed")


class NavFeeder:
    """Nav2's chain played by topics: TwistStamped on ``<name>/cmd_vel_smoothed`` at 20 Hz
    while ``on``, stamped with the time it is sent (system time, as the node's clock; the
    node itself goes by the arrival); ``last_sent``: the last one's stamp in seconds."""

    def __init__(self, client, ns: str, name: str, vx: float):
        self.on, self.last_sent, self.clock = False, -math.inf, client.node.get_clock()
        self.publisher = client.node.create_publisher(TwistStamped,
                                                      f"/{ns}/{name}/cmd_vel_smoothed", 10)
        self.msg = TwistStamped()
        self.msg.header.frame_id = f"{name}/base_link"
        self.msg.twist.linear.x = vx
        self.timer = client.node.create_timer(0.05, self._publish)

    def _publish(self) -> None:
        if self.on:
            self.msg.header.stamp = self.clock.now().to_msg()
            self.publisher.publish(self.msg)
            self.last_sent = stamp_seconds(self.msg)


def stamp_seconds(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def arrivals(client, topic: str) -> list:
    """(arrival time, message) of every TwistStamped on ``topic`` from now on."""
    out: list = []
    client.node.create_subscription(TwistStamped, topic,
                                    lambda msg: out.append((time.monotonic(), msg)), 50)
    return out


def test_a_robot_is_commanded_only_while_its_navigation_command_comes(world):
    """20 Hz on fed/cmd_vel_smoothed for 2 s, then silence: fed/cmd_vel carries commands only
    while fed, then one zero within stop_pub_timeout (0.5 s) plus a step, then nothing; never,
    with odometry but no navigation input, gets nothing at all."""
    lab2, client = world["watch"]["lab2"], world["client"]
    feeder = world["feed"]["lab2"]
    feeder.poses["fed"], feeder.poses["never"] = (0.0, 30.0, 0.0), (0.0, 40.0, 0.0)
    lab2.until(lambda: lab2.agent("fed") is not None and lab2.agent("never") is not None
               and lab2.agent("never").inactive_reason == "no navigation command", 10.0,
               "fed and never not reported")
    out = arrivals(client, "/lab2/fed/cmd_vel")
    nav = NavFeeder(client, "lab2", "fed", 0.3)
    assert client.spin_until(lambda: nav.publisher.get_subscription_count() > 0, 10.0)
    client.spin_for(0.5)
    assert not out and not lab2.cmd["fed"]  # matched, not fed yet: silent
    nav.on = True
    lab2.until(lambda: len(out) >= 5, 10.0, "fed/cmd_vel_smoothed did not reach fed/cmd_vel")
    client.spin_for(2.0)
    nav.on = False
    stopped = nav.last_sent
    lab2.until(lambda: out[-1][1].twist.linear.x == 0.0, 20.0,
               f"no zero command after the input (last stamped {stopped:.3f}): "
               f"{[(round(stamp_seconds(m), 3), m.twist.linear.x) for _, m in out[-5:]]}")
    client.spin_for(1.5)  # then 1.5 s of silence
    # The command passed through while fed. (On a loaded machine an input may reach the node
    # more than 0.5 s after the one before: then it stops the robot too, with one zero.)
    speeds = [m.twist.linear.x for _, m in out]
    assert set(speeds) <= {0.3, 0.0} and speeds.count(0.3) >= 10, speeds
    assert all(a != 0.0 or b != 0.0 for a, b in itertools.pairwise(speeds))  # never two zeros
    last = out[-1][1]
    assert (last.twist.linear.x, last.twist.linear.y, last.twist.angular.z) == (0.0, 0.0, 0.0)
    # By the stamps (the node's clock and the feeder's, one machine): the zero went out
    # stop_pub_timeout (0.5 s) after the last input arrived, within the step that followed
    # (0.05 s); the input's delivery and the timer's lateness are the only other terms.
    sent_after = stamp_seconds(last) - stopped
    assert 0.5 < sent_after < 0.5 + 0.05 + 0.1, sent_after
    assert stamp_seconds(out[-2][1]) - stopped <= 0.5 + 0.05 + 0.1
    assert lab2.agent("fed").inactive_reason == "no navigation command"
    assert not lab2.cmd["never"] and not lab2.cmd["blocker"]
    client.node.destroy_timer(nav.timer)


def test_the_enable_service_hands_a_robot_over_and_back(world):
    from std_srvs.srv import SetBool

    lab2, client = world["watch"]["lab2"], world["client"]
    feeder = world["feed"]["lab2"]
    feeder.poses["fed"] = (0.0, 30.0, 0.0)
    out = arrivals(client, "/lab2/fed/cmd_vel")
    nav = NavFeeder(client, "lab2", "fed", 0.25)
    nav.on = True
    try:
        lab2.until(lambda: out and out[-1][1].twist.linear.x == pytest.approx(0.25), 10.0,
                   "fed not commanded")
        reply = client.call(SetBool, "/lab2/fed/orca/enable", SetBool.Request(data=False))
        assert reply.success and "handed over" in reply.message, reply.message
        lab2.until(lambda: any(m.twist.linear.x == 0.0 for _, m in out), 20.0,
                   "no zero command at the hand-over")
        lab2.until(lambda: lab2.agent("fed").inactive_reason.startswith("disabled"), 5.0,
                   "fed not reported disabled", "fed")
        # Still fed all along: after its one zero command, nothing for fed. (The messages are
        # taken in order, so 1.5 s after the zero any later one would have come.)
        client.spin_for(1.5)
        zeros = [m for _, m in out if m.twist.linear.x == 0.0]
        assert len(zeros) == 1 and out[-1][1] is zeros[0]
        handed = stamp_seconds(zeros[0])
        reply = client.call(SetBool, "/lab2/fed/orca/enable", SetBool.Request(data=True))
        assert reply.success, reply.message
        lab2.until(lambda: stamp_seconds(out[-1][1]) > handed
                   and out[-1][1].twist.linear.x == pytest.approx(0.25),
                   20.0, "fed not commanded again after enable true")
        (value,) = get_parameters(client, "/lab2/orca_node", ["fed.enabled"])
        assert value.bool_value is True
    finally:
        nav.on = False
        client.node.destroy_timer(nav.timer)


# ---------------------------------------------------------------------- absurd inputs
def planar_speed(command) -> float:
    return math.hypot(command.twist.linear.x, command.twist.linear.y)


def commands_since(watch: Watch, name: str, mark: int) -> list:
    return list(watch.cmd[name])[mark:]


@pytest.mark.parametrize("who,pose_a,pose_b", [
    # An observed agent 0.8 m ahead whose odometry says it comes at 1e200 m/s: robA was
    # commanded 7.9e199 m/s.
    ("observed", (0.0, 0.0, 0.0, 0.0), (0.8, 0.0, math.pi, 1e200)),
    # robA's own odometry says 1e300 m/s, robB 1 m ahead: robA was commanded 3.9e299 m/s.
    ("own", (0.0, 0.0, 0.0, 1e300), (1.0, 0.0, 0.0, 0.0)),
])
def test_no_measured_velocity_makes_a_command_faster_than_max_speed(world, who, pose_a, pose_b):
    lab3, proc = world["watch"]["lab3"], world["procs"]["lab3"]
    feeder = world["feed"]["lab3"]
    feeder.poses["robA"], feeder.poses["robB"] = pose_a, pose_b
    lab3.until(lambda: lab3.agent("robA") is not None and lab3.agent("robA").active
               and lab3.agent("robA").agent_neighbors == 1, 10.0, "robA never saw robB", "robA")
    mark = len(lab3.cmd["robA"])
    lab3.until(lambda: len(commands_since(lab3, "robA", mark)) >= 20, 5.0, "no commands")
    commands = commands_since(lab3, "robA", mark)
    speeds = [planar_speed(c) for c in commands]
    assert all(math.isfinite(v) and v <= 0.6 + 1e-12 for v in speeds), max(speeds)
    agent = lab3.agent("robA")
    assert math.hypot(agent.velocity.x, agent.velocity.y) <= 0.6 + 1e-12
    bounded = "robB" if who == "observed" else "robA"
    wait_for_line(world, proc, f"{bounded}: measured speed 1e+")
    del feeder.poses["robA"], feeder.poses["robB"]


def quarter_turn_odometry(x: float, y: float, scale: float) -> Odometry:
    """Odometry facing +y (yaw 90 degrees), the quaternion written (0, 0, scale, scale)."""
    msg = odometry("quarter", x, y)
    msg.pose.pose.orientation.z = msg.pose.pose.orientation.w = scale
    return msg


@pytest.mark.parametrize("scale", [2.0, 0.1, 1e-6])
def test_unnormalised_odometry_quaternions_drive_towards_the_goal(world, scale):
    """quarter faces +y at (0, 20) and its goal is at (5, 20), to its right: a holonomic robot
    is commanded (0, -0.5) in its body frame. (0,0,2,2) used to send it 41 degrees off, and
    (0,0,0.1,0.1) 89 degrees off."""
    lab3 = world["watch"]["lab3"]
    feeder = world["feed"]["lab3"]
    feeder.poses["quarter"] = quarter_turn_odometry(0.0, 20.0, scale)

    def right_turn() -> bool:
        commands = lab3.cmd["quarter"]
        if not commands:
            return False
        twist = commands[-1].twist
        return abs(twist.linear.x) < 1e-9 and abs(twist.linear.y + 0.5) < 1e-9

    lab3.until(right_turn, 10.0, f"quarter not commanded (0, -0.5) with scale {scale}: "
               f"{lab3.cmd['quarter'][-1:]}")
    del feeder.poses["quarter"]


def test_zero_quaternion_odometry_is_dropped(world):
    lab3, proc = world["watch"]["lab3"], world["procs"]["lab3"]
    feeder = world["feed"]["lab3"]
    feeder.poses["quarter"] = quarter_turn_odometry(0.0, 20.0, 0.0)
    wait_for_line(world, proc, "quarter: odometry with a zero quaternion dropped")
    # Nothing usable arrives any more: the last good odometry goes stale, zero velocity.
    lab3.until(lambda: not lab3.agent("quarter").active, 3.0, "quarter still active")
    lab3.until(lambda: planar_speed(lab3.cmd["quarter"][-1]) == 0.0, 1.0, "quarter not stopped")
    del feeder.poses["quarter"]


def test_one_bad_obstacle_does_not_drop_the_others(world):
    """A wall and a circle placed at x = 1e300 in one ObstacleArray: the whole set used to be
    ignored ('obstacles ignored: x must be finite'), and the wall disappeared from ORCA."""
    proc, client = world["procs"]["lab3"], world["client"]
    far = Shape(type=Shape.TYPE_CIRCLE, radius=0.3)
    far.pose.position.x = 1e300
    far.pose.orientation.w = 1.0
    msg = ObstacleArray(obstacles=[
        Obstacle(id="wall", type=Obstacle.TYPE_POLYGON,
                 polygon=[Point(x=float(x), y=float(y))
                          for x, y in ((3, -1), (3.2, -1), (3.2, 1), (3, 1))]),
        Obstacle(id="far", type=Obstacle.TYPE_SHAPE, shape=far)])
    msg.header.frame_id = "map"
    publisher = client.node.create_publisher(ObstacleArray, "/lab3/obstacles",
                                             world["latched_qos"])
    publisher.publish(msg)
    world["latched"].append(publisher)
    wait_for_line(world, proc, "obstacle 'far': obstacles[1].shape.pose: x must be finite", 10)
    wait_for_line(world, proc, "obstacles updated: 1 obstacle polygons in use")
    assert not any("[ERROR]" in line for line in list(proc.lines))


# ---------------------------------------------------------------------- run-time tuning
def set_parameters(client, node: str, **values):
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()
                                                for name, value in values.items()])
    return client.call(SetParameters, f"{node}/set_parameters", request).results


def get_parameters(client, node: str, names):
    from rcl_interfaces.srv import GetParameters

    return client.call(GetParameters, f"{node}/get_parameters",
                       GetParameters.Request(names=list(names))).values


def test_parameters_change_while_the_node_runs_and_bad_values_are_refused(world):
    lab3 = world["watch"]["lab3"]
    feeder, client = world["feed"]["lab3"], world["client"]
    feeder.poses["robA"] = (0.0, 0.0, 0.0, 0.0)
    lab3.until(lambda: lab3.cmd["robA"] and planar_speed(lab3.cmd["robA"][-1]) == 0.5, 10.0,
               "robA not driving at pref_speed")
    try:
        (result,) = set_parameters(client, "/lab3/orca_node", **{"robA.max_speed": 0.3})
        assert result.successful, result.reason
        lab3.until(lambda: planar_speed(lab3.cmd["robA"][-1]) == pytest.approx(0.3), 5.0,
                   "robA.max_speed 0.3 did not take effect")
        (result,) = set_parameters(client, "/lab3/orca_node", pref_speed=0.2)
        assert result.successful, result.reason
        lab3.until(lambda: planar_speed(lab3.cmd["robA"][-1]) == pytest.approx(0.2), 5.0,
                   "pref_speed 0.2 did not take effect")
        for name, value, reason in (("time_horizon", -1.0, "time_horizon must be finite"),
                                    ("robA.radius", 0.0, "robA.radius must be finite"),
                                    ("marker_rate_hz", math.inf, "marker_rate_hz must be")):
            (result,) = set_parameters(client, "/lab3/orca_node", **{name: value})
            assert not result.successful and reason in result.reason, result.reason
        (result,) = set_parameters(client, "/lab3/orca_node", odom_topic="elsewhere")
        assert not result.successful and "read-only" in result.reason, result.reason
        client.spin_for(0.3)
        assert planar_speed(lab3.cmd["robA"][-1]) == pytest.approx(0.2)  # nothing changed
    finally:
        set_parameters(client, "/lab3/orca_node", pref_speed=0.5, **{"robA.max_speed": 0.6})
        del feeder.poses["robA"]


def test_a_footprint_topic_sets_the_agents_radius_to_its_circumscribed_radius(world):
    """footprint_topic: each robot-frame PolygonStamped sets <name>.radius to the distance
    from the robot's origin to its farthest vertex. One in the global or odometry frame
    (Nav2's published_footprint) is measured about the robot's position at its stamp, and
    ignored when that position is unknown."""
    from geometry_msgs.msg import Point32, PolygonStamped
    from rclpy.duration import Duration

    client = world["client"]
    publisher = client.node.create_publisher(PolygonStamped, "/lab3/quarter/footprint", 10)

    def footprint(points, frame="quarter/base_link", stamp=None):
        msg = PolygonStamped()
        msg.header.frame_id = frame
        if stamp is not None:
            msg.header.stamp = stamp.to_msg()
        msg.polygon.points = [Point32(x=float(x), y=float(y)) for x, y in points]
        return msg

    def placed(points, x, y, yaw):
        c, s = math.cos(yaw), math.sin(yaw)
        return [(x + c * px - s * py, y + s * px + c * py) for px, py in points]

    def radius():
        return get_parameters(client, "/lab3/orca_node", ["quarter.radius"])[0].double_value

    before = radius()
    forklift = [(0.5, 0.3), (-0.5, 0.3), (-0.5, -0.3), (0.5, -0.3), (0.5, 0.25),
                (1.2, 0.25), (1.2, 0.15), (0.5, 0.15)]
    want = math.hypot(1.2, 0.25)
    try:
        def taken():
            publisher.publish(footprint(forklift))
            client.spin_for(0.2)
            return radius() == pytest.approx(want, abs=1e-6)

        assert client.spin_until(taken, 15.0), radius()
        # Placed in the global frame while quarter's odometry is stale: ignored.
        for _ in range(5):
            publisher.publish(footprint([(3.0, 4.0), (3.5, 4.0), (3.5, 4.5)], frame="map"))
            client.spin_for(0.2)
        assert radius() == pytest.approx(want, abs=1e-6)
        wait_for_line(world, world["procs"]["lab3"], "quarter: footprint in frame 'map' "
                      "ignored: the robot's pose there at its stamp is unknown")
        # Nav2's published_footprint with quarter at (2, 21) turned 0.9 rad (odom_origin at
        # the map's origin: odom and map agree): a box of circumscribed radius 0.5 in the
        # global frame, then the forklift in the odometry frame.
        pose = (2.0, 21.0, 0.9)
        world["feed"]["lab3"].poses["quarter"] = pose
        box = [(0.4, 0.3), (-0.4, 0.3), (-0.4, -0.3), (0.4, -0.3)]
        for frame, points, expect in (("map", box, 0.5), ("quarter/odom", forklift, want)):
            def measured(frame=frame, points=points, expect=expect):
                publisher.publish(footprint(placed(points, *pose), frame=frame,
                                            stamp=client.node.get_clock().now()))
                client.spin_for(0.2)
                return radius() == pytest.approx(expect, abs=1e-6)

            assert client.spin_until(measured, 15.0), (frame, radius())
        # Stamped 5 s ago, beyond odom_timeout: ignored; the forklift's radius stays.
        old = client.node.get_clock().now() - Duration(seconds=5.0)
        for _ in range(5):
            publisher.publish(footprint(placed(box, *pose), frame="map", stamp=old))
            client.spin_for(0.2)
        assert radius() == pytest.approx(want, abs=1e-6)
    finally:
        world["feed"]["lab3"].poses.pop("quarter", None)
        set_parameters(client, "/lab3/orca_node", **{"quarter.radius": before})
        client.node.destroy_publisher(publisher)


def test_the_circumscribed_radius_of_a_footprint():
    from geometry_msgs.msg import Point32

    from planning_collision.ros.orca_footprints import circumscribed_radius

    points = [Point32(x=0.5, y=0.3), Point32(x=-0.6, y=-0.1), Point32(x=0.1, y=0.0)]
    assert circumscribed_radius(points) == pytest.approx(math.hypot(0.6, 0.1), rel=1e-6)
    # About a robot centre elsewhere (a footprint placed in a global frame): the same points
    # moved by (3, -4) measure the same.
    moved = [Point32(x=p.x + 3.0, y=p.y - 4.0) for p in points]
    assert circumscribed_radius(moved, (3.0, -4.0)) == pytest.approx(math.hypot(0.6, 0.1),
                                                                     rel=1e-6)
    for bad, words in (([], "no points"), ([Point32()], "no radius"),
                       ([Point32(x=math.nan)], "NaN")):
        with pytest.raises(ValueError, match=words):
            circumscribed_radius(bad)


# ---------------------------------------------------------------------- no processes
def test_obstacle_polygons_keep_concave_outlines_and_contain_shapes():
    ell = [(0, 0), (0, 2), (1, 2), (1, 1), (2, 1), (2, 0)]  # clockwise, concave
    disc = Shape(type=Shape.TYPE_CIRCLE, radius=0.5)
    disc.pose.position.x, disc.pose.position.y = 5.0, 5.0
    disc.pose.orientation.w = 1.0
    msg = ObstacleArray(obstacles=[
        Obstacle(id="ell", type=Obstacle.TYPE_POLYGON,
                 polygon=[Point(x=float(x), y=float(y)) for x, y in ell]),
        Obstacle(id="disc", type=Obstacle.TYPE_SHAPE, shape=disc),
        Obstacle(id="ell", type=Obstacle.TYPE_POLYGON,
                 polygon=[Point(x=0.0, y=0.0), Point(x=1.0, y=0.0), Point(x=0.0, y=1.0)])])
    polygons, problems = obstacle_array_polygons(msg)
    assert [name for name, _ in polygons] == ["ell", "disc"]
    assert problems == ["obstacles[2]: duplicate id 'ell'"]
    concave = polygons[0][1]
    assert signed_area(concave) == pytest.approx(3.0)  # counter-clockwise now
    assert sorted(map(tuple, concave.tolist())) == sorted(map(tuple, np.array(ell, float)))
    ring = polygons[1][1]
    assert signed_area(ring) > 0.0
    edges = np.roll(ring, -1, axis=0) - ring
    # Every edge stays at least the radius away from the centre: the disc is inside.
    centre = np.array([5.0, 5.0])
    offsets = ((centre - ring)[:, 0] * edges[:, 1] - (centre - ring)[:, 1] * edges[:, 0])
    assert np.all(-offsets / np.hypot(edges[:, 0], edges[:, 1]) >= 0.5 - 1e-12)


def test_map_polygons_an_obstacle_array_covers_are_left_out():
    """The demo's map draws the pillars and the U wall that its ObstacleArray gives exactly.
    Both copies together trap a robot in the wedge between them (it got no permitted velocity
    at all beside pillar_4 in a demo run); covered_polygons leaves the map's copies out and
    keeps the room's walls, which only the map has."""
    from planning_collision.grid import occupied_polygons
    from planning_collision.grid.map_file import load_map_file
    from planning_collision.ros.orca_obstacles import covered_polygons

    scenario = load_scenario(config_file("scenarios/swap_room.yaml"))
    grid_map = load_map_file(scenario.map).to_grid()
    traced = occupied_polygons(grid_map, 0.05)
    exact = [q for _, q in obstacle_array_polygons(
        obstacle_array_msg(scenario, "map", Time()))[0]]
    covered = covered_polygons(traced, exact, np.sqrt(2) * grid_map.resolution + 0.05)
    assert covered.sum() == len(exact) == 5  # four pillars and the U wall
    walls = [q for q, c in zip(traced, covered, strict=True) if not c]
    assert len(walls) == len(traced) - 5 and all(len(q) >= 4 for q in walls)

    def reaches_goal(polygons) -> bool:
        sim = orca.OrcaSimulator(0.05, 3.0, 10, 2.0, 1.0, 0.35, 0.6, symmetry_breaking=0.001,
                                 side_preference=0.35, keep_apart=True)
        for polygon in polygons:
            sim.add_obstacle(polygon)
        sim.process_obstacles()
        sim.add_agent((2.1, -2.1), heading=0.8, diff_drive=UNICYCLE_LIMITS)
        goal = np.array([4.157, 1.722])  # robot10's, beyond pillar_4
        for _ in range(600):
            d = goal - sim.positions[0]
            n = np.hypot(*d)
            sim.set_pref_velocities((d * min(0.5, n) / max(n, 1e-9))[None])
            sim.step()
        return bool(np.hypot(*(goal - sim.positions[0])) < 0.2)

    assert not reaches_goal(exact + traced)
    assert reaches_goal(exact + walls)


def test_demo_parameters_match_the_swap_room_scenario():
    scenario = load_scenario(config_file("scenarios/swap_room.yaml"))
    (section,) = yaml.safe_load(config_file("demo_orca.yaml").read_text()).values()
    values = section["ros__parameters"]
    robots = [r for r in scenario.robots if r.orca]
    people = [r for r in scenario.robots if not r.orca]
    assert values["agents"] == [r.name for r in robots]
    assert values["observed"] == [r.name for r in people]
    node_wide = {p.name for p in PARAMETERS}
    for key in values:
        assert key in node_wide or key in scenario.names, f"unknown parameter {key}"
    for r in scenario.robots:
        own = values[r.name]
        assert own["odom_origin"] == list(r.start)
        if r.orca:
            assert set(own) <= {"odom_origin", "goal", "holonomic", "radius", "max_speed"}
            assert own["goal"] == list(r.goal)
            assert own.get("holonomic", True) == (r.drive == "holonomic")
        else:
            assert set(own) <= {"odom_origin", "radius", "max_speed", "responsibility"}
            assert (own["radius"], own["max_speed"]) == (r.radius, r.max_speed)
        for key in ("radius", "max_speed"):
            assert own.get(key, values[key]) == getattr(r, key)


def test_observed_agents_are_drawn_as_purple_discs_with_their_velocity():
    from planning_collision.ros.markers import PURPLE
    from planning_collision.ros.orca_markers import DISC, observed_markers

    drawn = observed_markers(["person", "cart", "gone"], [True, True, False],
                             np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]]),
                             np.array([0.3, 0.4, 0.5]),
                             np.array([[0.5, -0.25], [0.0, 0.0], [1.0, 0.0]]), lifetime=1.0)
    by_ns = defaultdict(dict)
    for m in drawn:
        by_ns[m.ns][m.id] = m
    assert set(by_ns) == {"person", "cart", "gone"}
    disc = by_ns["person"][DISC]
    assert (disc.type, disc.action) == (Marker.CYLINDER, Marker.ADD)
    assert disc.pose[:2] == (1.0, 2.0) and disc.scale[:2] == (0.6, 0.6)
    arrow = by_ns["person"][2]
    assert arrow.action == Marker.ADD
    assert arrow.points[1, :2] - arrow.points[0, :2] == pytest.approx([0.5, -0.25])
    assert by_ns["cart"][2].action == Marker.DELETE  # standing still: no arrow
    assert {m.action for m in by_ns["gone"].values()} == {Marker.DELETE}  # forgotten
    purple = (PURPLE.r, PURPLE.g, PURPLE.b, PURPLE.a)
    assert disc.color == arrow.color == by_ns["cart"][DISC].color == purple
