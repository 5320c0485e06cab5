"""A destroyed managed node leaves the ROS graph at once, even while its Python object lives on.

Issue #21: rclpy's LifecycleNode keeps its state machine after ``destroy_node``, and the state
machine holds the rcl node, so the DDS participant kept announcing the node and its lifecycle
services until the object was collected; the test session keeps every node referenced
(ros_leaks.py), so never. In a full test run five in-process ``/orca_node``s of earlier tests
were still on the graph when test_launch_files.py launched a real one under a lifecycle
manager: the manager saw ``/orca_node/change_state`` served before the real node existed, sent
configure to the stale servers, and the request never reached the new node. ManagedNode's
``destroy_node`` ends the state machine too.
"""

from __future__ import annotations

import pytest
import rclpy
from rclpy.context import Context
from rclpy.parameter import Parameter

from planning_collision.ros.collision_server import CollisionServer
from planning_collision.ros.orca_node import OrcaNode

NAMESPACE = "teardown"
SEEN_TIMEOUT = 30.0  # discovery on a loaded machine
GONE_TIMEOUT = 10.0  # a participant announces its nodes' departure when they are destroyed


def on_graph(client, name: str) -> tuple[bool, bool]:
    """Whether the observer's graph lists the node, and its change_state service."""
    node = (f"/{NAMESPACE}", name) in {(ns, n) for n, ns in
                                      client.node.get_node_names_and_namespaces()}
    service = f"/{NAMESPACE}/{name}/change_state" in {
        s for s, _ in client.node.get_service_names_and_types()}
    return node, service


@pytest.mark.parametrize("kind", ["orca_node", "collision_server"])
def test_a_destroyed_managed_node_leaves_the_graph_while_still_referenced(client, kind):
    context = Context()
    rclpy.init(context=context)
    overrides = [Parameter("agents", value=["a"])] if kind == "orca_node" else []
    make = OrcaNode if kind == "orca_node" else CollisionServer
    node = make(context=context, namespace=NAMESPACE, parameter_overrides=overrides)
    destroyed = False
    try:
        assert client.spin_until(lambda: on_graph(client, kind) == (True, True),
                                 SEEN_TIMEOUT), f"{kind} never appeared on the graph"
        node.close()
        node.destroy_node()
        destroyed = True
        # `node` is still referenced here, as by any caller that keeps it after destroying.
        gone = client.spin_until(lambda: on_graph(client, kind) == (False, False),
                                 GONE_TIMEOUT)
        assert gone, f"destroyed {kind} still on the graph (node, change_state): " \
                     f"{on_graph(client, kind)}"
    finally:
        if not destroyed:
            node.close()
            node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("kind", ["orca_node", "collision_server"])
def test_cleanup_runs_once_configured_timers_and_subscriptions_are_gone(ros_context, kind):
    """The cleanup transition destroys what configure created before the node's own cleanup
    releases its state: no step timer (orca_node) nor map message or query (collision_server,
    whose executor runs callbacks on several threads) can then run against the released
    state. Before, cleanup ran first and the step timer, still alive, could fire on another
    thread into ``_polled`` and ``fleet`` set to None."""
    overrides = [Parameter("agents", value=["a"])] if kind == "orca_node" else []
    make = OrcaNode if kind == "orca_node" else CollisionServer
    node = make(context=ros_context, namespace=NAMESPACE, parameter_overrides=overrides)
    try:
        configured = list(node._owned)
        assert any(s in configured for s in node.subscriptions)
        if kind == "orca_node":  # its control step
            assert any(t in configured for t in node.timers)
        alive_at_cleanup = []
        release_state = node.cleanup

        def cleanup():
            alive_at_cleanup.extend(e for e in configured if e in {
                *node.timers, *node.subscriptions, *node.services, *node.publishers})
            release_state()

        node.cleanup = cleanup
        node.trigger_deactivate()
        node.trigger_cleanup()
        assert node.state == "unconfigured"
        assert alive_at_cleanup == [], f"still alive when cleanup ran: {alive_at_cleanup}"
    finally:
        node.close()
        node.destroy_node()
