"""orca_node's odometry taken at the control step (ros/polled_subscriptions.py), not delivered
by the executor message by message (issue #24: 24 per-robot nodes each woke 1,200 times a
second for odometry they use 20 times a second).

In one process: an OrcaNode spun by an executor, and a publisher node of the test's. The
odometry subscriptions are outside the executor's wait set; the node still follows the newest
odometry of each agent (a burst of several messages between two steps counts by its last)
and reports its age; a deeper queue is drained to its newest; the arrival time handed on is
the receive time, not the time of the take.
"""

from __future__ import annotations

import time

import pytest
import rclpy
from nav_msgs.msg import Odometry
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_clients import spun_orca_node

from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.orca_node import OrcaNode
from planning_collision.ros.polled_subscriptions import PolledSubscriptions, arrival_time
from planning_collision.ros.qos import LATEST
from planning_collision_interfaces.msg import OrcaStatus

NEAR, FAR = (1.0, 0.0), (40.0, 0.0)  # neighbor_dist is 3 m (config/orca.yaml's default)


def stamped_odometry(name: str, xy, stamp: float) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = "map", f"{name}/base_link"
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = int((stamp - int(stamp)) * 1e9)
    msg.pose.pose.position.x, msg.pose.pose.position.y = xy
    msg.pose.pose.orientation = quaternion_from_yaw(0.0)
    return msg


def test_arrival_time_is_the_receive_time_on_the_nodes_clock():
    now_ns = 2_000_000_000_000
    assert arrival_time(100.0, now_ns - 250_000_000, now_ns) == pytest.approx(99.75)
    assert arrival_time(100.0, 0, now_ns) == 100.0  # no receive time: now
    assert arrival_time(100.0, now_ns + 10_000_000, now_ns) == 100.0  # never in the future


@pytest.fixture
def pubsub():
    context = Context()
    rclpy.init(context=context)
    owner = rclpy.create_node("polled_owner", namespace="fleet", context=context)
    sender = rclpy.create_node("polled_sender", context=context)
    polled = PolledSubscriptions(owner)
    try:
        yield owner, sender, polled
    finally:
        polled.destroy()
        sender.destroy_node()
        owner.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("depth", [1, 10])
def test_take_hands_on_the_newest_message_once_with_its_receive_time(pubsub, depth):
    owner, sender, polled = pubsub
    qos = QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE)
    got: list = []
    subscription = polled.create_subscription(Odometry, "r/odom",
                                              lambda msg, at: got.append((msg, at)), qos)
    assert subscription.topic_name == "/fleet/r/odom"  # resolved with the owner's namespace
    # In the graph it is the owner's (ros2 node info, rqt_graph, the Nav2 wiring checks), and
    # in no executor's wait set: not in the owner's list of subscriptions.
    infos = owner.get_subscriptions_info_by_topic("/fleet/r/odom")
    assert [(i.node_name, i.node_namespace) for i in infos] == [("polled_owner", "/fleet")]
    assert all(s is not subscription for s in owner.subscriptions)
    publisher = sender.create_publisher(Odometry, "/fleet/r/odom", qos)
    deadline = time.monotonic() + 10.0
    while subscription.get_publisher_count() == 0 or publisher.get_subscription_count() == 0:
        assert time.monotonic() < deadline, "never matched"
        time.sleep(0.02)
    assert polled.take(time.time()) == 0 and got == []
    sent = time.time()
    for x in range(1, 4):
        publisher.publish(stamped_odometry("r", (float(x), 0.0), 0.0))
    deadline = time.monotonic() + 10.0
    while not got:  # the three wait in the reader; one take gets the newest
        assert time.monotonic() < deadline, "nothing taken"
        time.sleep(0.2)  # received well before the take
        now = time.time()
        polled.take(now)
    assert len(got) == 1
    msg, at = got[0]
    assert msg.pose.pose.position.x == 3.0
    assert sent - 0.05 <= at <= now - 0.15  # received before the take, not at it
    assert polled.take(time.time()) == 0 and len(got) == 1  # taken once
    polled.destroy_subscription(subscription)
    assert len(polled) == 0
    deadline = time.monotonic() + 10.0
    while owner.get_subscriptions_info_by_topic("/fleet/r/odom"):  # gone from the graph
        assert time.monotonic() < deadline, "still in the graph"
        time.sleep(0.02)


@pytest.fixture
def running_orca():
    """orca_node for 'me' (at the origin) observing 'a' and 'b', spun in a thread, and the
    test's node publishing their odometry and watching the status."""
    with spun_orca_node([
            Parameter("agents", value=["me"]), Parameter("observed", value=["a", "b"]),
            Parameter("me.goal", value=[5.0, 0.0]), Parameter("publish_markers", value=False)],
            "polled_odometry_test") as spun:
        yield spun


def test_orca_node_follows_the_newest_odometry_it_takes_at_each_step(running_orca):
    node, test_node, executor = running_orca
    # The odometry is no subscription of the spun node: none is in the wait set.
    odometry_topics = {"/me/odom", "/a/odom", "/b/odom"}
    assert not odometry_topics & {s.topic_name for s in node.subscriptions}
    assert len(node._polled) == 3  # the node's own, polled
    graph = {t for t, _ in node.get_subscriber_names_and_types_by_node("orca_node", "/")}
    assert odometry_topics <= graph  # ros2 node info /orca_node lists them
    statuses: list[OrcaStatus] = []
    test_node.create_subscription(OrcaStatus, "/orca_node/status", statuses.append, 10)
    publishers = {name: test_node.create_publisher(Odometry, f"/{name}/odom", LATEST)
                  for name in ("me", "a", "b")}

    def neighbors_while(a_burst, me_age: float, seconds: float) -> list[tuple[int, float]]:
        """Publish, every 50 ms for ``seconds``: me at the origin stamped ``me_age`` s ago,
        b far away, and a's positions ``a_burst`` one after the other (stamped in that
        order); then (agent_neighbors, odometry_age) of 'me' in the statuses that came."""
        statuses.clear()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            now = time.time()
            publishers["me"].publish(stamped_odometry("me", (0.0, 0.0), now - me_age))
            publishers["b"].publish(stamped_odometry("b", (40.0, 10.0), now))
            for j, xy in enumerate(a_burst):
                publishers["a"].publish(stamped_odometry("a", xy, now - 0.01 * (
                    len(a_burst) - 1 - j)))
            time.sleep(0.05)
        return [(s.agents[0].agent_neighbors, s.agents[0].odometry_age)
                for s in list(statuses) if s.agents and s.agents[0].active]

    deadline = time.monotonic() + 60.0  # kernels loading
    while not (seen := neighbors_while([NEAR], 0.0, 0.5)):
        assert time.monotonic() < deadline, "no active status from orca_node"
    assert seen[-1][0] == 1  # a is a neighbour
    # a's burst ends far away: the newest counts, a is no neighbour (but at a step that came
    # in the middle of a burst, once at most).
    seen = neighbors_while([NEAR, NEAR, FAR], 0.0, 1.5)
    assert len(seen) >= 5 and sum(n == 0 for n, _ in seen[2:]) >= len(seen) - 3, seen
    # Ends near: a neighbour again. me's odometry, now stamped 0.2 s before it is sent, is
    # reported as that old (plus at most a step and the delivery) once its stamps pass the
    # last one stamped as sent (an older stamp is out of order: dropped), 0.2 s later.
    seen = neighbors_while([FAR, FAR, NEAR], 0.2, 2.0)
    assert len(seen) >= 12 and sum(n == 1 for n, _ in seen[2:]) >= len(seen) - 3, seen
    assert all(0.2 <= age < 0.2 + 0.25 for _, age in seen[8:]), seen


def test_an_inactive_node_still_takes_odometry_so_its_publisher_counts_as_sending():
    """Configured, not active: the step timer only takes, and the Resubscriber sees the
    odometry delivered (it would otherwise subscribe again to a publisher that sends)."""
    context = Context()
    rclpy.init(context=context)
    node = OrcaNode(context=context, parameter_overrides=[
        Parameter("agents", value=["idle"]), Parameter("autostart", value=False),
        Parameter("publish_markers", value=False)])
    sender = rclpy.create_node("polled_inactive_sender", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        node.trigger_configure()
        assert node.state == "inactive"
        publisher = sender.create_publisher(Odometry, "/idle/odom", LATEST)
        entry = node._odometry._entries[0]
        deadline = time.monotonic() + 10.0
        while not entry.delivered:
            assert time.monotonic() < deadline, "the inactive node never took the odometry"
            publisher.publish(stamped_odometry("idle", (0.0, 0.0), time.time()))
            executor.spin_once(timeout_sec=0.05)
        assert not node.active
    finally:
        node.close()
        executor.shutdown()
        node.destroy_node()
        sender.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_node_whose_parameters_are_refused_at_construction_is_destroyed_cleanly():
    """A wrong type (rate_hz: 10, an integer, from a launch argument or a YAML file) fails the
    constructor; the context's shutdown then destroys the half-made node, whose destroy_node
    read the polled odometry before the constructor had set it (AttributeError at exit)."""
    from rclpy.exceptions import InvalidParameterTypeException

    context = Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(InvalidParameterTypeException):
            OrcaNode(context=context, parameter_overrides=[Parameter("rate_hz", value=10)])
    finally:
        context.try_shutdown()  # raised AttributeError before
