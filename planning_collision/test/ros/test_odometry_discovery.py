"""The nodes against the start-up race that left one robot without odometry (issue #12).

Fast DDS 3.x matches a discovered endpoint whose type the local participant does not know yet
only after a TypeLookup exchange, and a race in that exchange can drop the endpoint for good
(see ``ros/type_registration.py``). The nodes defend against both sides of it:

- their own participant: every type they use is registered before it exists (run_node), so
  it never looks one up (the race itself cannot be provoked from a test: it needs a
  thread preempted within microseconds; the investigation forced it with an LD_PRELOAD shim);
- the publisher's participant: an odometry publisher that matched but sent nothing for 5 s
  gets a new subscription from orca_node, announced anew (ros/resubscribe.py). The test plays a
  publisher that lost orca_node's subscription (it never sends) and checks that orca_node
  subscribes again and then gets the odometry.
"""

from __future__ import annotations

import os

import pytest
import rclpy
from nav_msgs.msg import Odometry
from rclpy.context import Context
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.parameter import Parameter
from ros_clients import close_then_stop

from planning_collision.ros.collision_server import CollisionServer
from planning_collision.ros.orca_node import OrcaNode
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.ros.type_registration import (
    MESSAGE_TYPES,
    SERVICE_TYPES,
    register_types_early,
)

CONFIGURATIONS = {
    "goal mode, odom_origin, stamped, map": [
        Parameter("agents", value=["a", "b"]), Parameter("observed", value=["p"]),
        Parameter("use_map_obstacles", value=True)],
    "cmd_vel mode, amcl_pose, unstamped": [
        Parameter("agents", value=["a"]), Parameter("preferred_velocity_source", value="cmd_vel"),
        Parameter("pose_source", value="pose_topic"), Parameter("stamped_cmd_vel", value=False)],
    "PoseStamped poses, tf": [
        Parameter("agents", value=["a", "b"]), Parameter("pose_source", value="pose_topic"),
        Parameter("pose_topic_type", value="PoseStamped"), Parameter("b.pose_source", value="tf")],
}


@pytest.mark.parametrize("name", [*CONFIGURATIONS, "collision_server"])
def test_every_type_of_a_node_is_registered_before_its_participant(name):
    """Whatever the configuration, each type a node publishes, subscribes or serves is among
    those register_types_early registers (a type missing there could be looked up, and
    lost)."""
    context = Context()
    rclpy.init(context=context)
    node = (CollisionServer(context=context) if name == "collision_server" else
            OrcaNode(context=context, parameter_overrides=CONFIGURATIONS[name]))
    try:
        used = {s.msg_type for s in node.subscriptions} | {p.msg_type for p in node.publishers}
        builtin = {t for t in used if t.__module__.startswith(("rcl_interfaces.", "type_",
                                                                "rosgraph_msgs."))}
        assert used - builtin, "the node created no topics of its own"
        assert used - builtin <= set(MESSAGE_TYPES), used - builtin - set(MESSAGE_TYPES)
        served = {s.srv_type for s in node.services}
        served = {t for t in served
                  if not t.__module__.startswith(("rcl_interfaces.", "type_description"))}
        assert served <= set(SERVICE_TYPES), served - set(SERVICE_TYPES)
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("before", [None, "LOCALHOST", "SUBNET"])
def test_registering_the_types_leaves_the_discovery_setting_as_it_was(monkeypatch, before):
    if before is None:
        monkeypatch.delenv("ROS_AUTOMATIC_DISCOVERY_RANGE", raising=False)
    else:
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", before)
    register_types_early()
    assert os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") == before


def test_a_matched_publisher_that_never_sends_gets_a_new_subscription(domain_id, client):
    matches: list = []
    publisher = client.node.create_publisher(
        Odometry, "/quiet/odom", 10,
        event_callbacks=PublisherEventCallbacks(matched=matches.append))
    orca = RosProcess("orca_node", node_command(
        "planning_collision.ros.orca_node", parameters={"agents": ["quiet"],
                                                        "quiet.goal": [1.0, 0.0]}), domain_id)
    try:
        assert client.spin_until(lambda: any(m.current_count > 0 for m in matches), 60.0), \
            "orca_node's odometry subscription never matched\n" + "\n".join(orca.lines[-20:])
        # A publisher that lost that subscription sends nothing: orca_node must subscribe again.
        assert client.spin_until(lambda: any(m.total_count >= 2 for m in matches),
                                 4 * 5.0 + 10.0), \
            "no new subscription\n" + "\n".join(orca.lines[-20:])
        assert orca.wait_for_line("quiet/odom: its publisher matched but sent nothing", 5.0)
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "map", "quiet/base_link"
        msg.pose.pose.orientation.w = 1.0
        assert client.spin_until(
            lambda: publisher.publish(msg) or any("quiet: odometry received" in line
                                                  for line in orca.lines), 30.0), \
            "\n".join(orca.lines[-20:])
    finally:
        close_then_stop([client], [orca])
