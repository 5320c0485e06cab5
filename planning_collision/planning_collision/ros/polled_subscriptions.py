"""Subscriptions that no executor waits on: the newest message of each is taken when asked.

One orca_node per robot in a 24-robot fleet receives every robot's odometry at 50 Hz, 1,200
messages a second, and uses the newest of each once per control step (20 Hz). Through an
executor each message woke the spinning thread and ran a Python callback that only kept it
(doc/delays.md measures what that cost). Here the subscriptions belong to a second rclpy node
of the same context that is never added to an executor: DDS keeps the newest sample of each
in its reader (keep-last QoS, depth 1 for odometry) and wakes no one, and :meth:`take` takes
it when the control step asks, with the time it was received. The node's Python cost then
follows its step rate, not the fleet's odometry rate.

The second node is hidden (``_<node>_polled``), in the node's namespace, and reads no
command-line arguments (a ``__node:=`` remap would give it the node's own name); topic names
are resolved by the node itself first, so the user's remaps still apply. Its rclpy node is
destroyed by :meth:`destroy`, with its subscriptions.

Arrival time. A message's arrival is the time DDS received it (the message info's
``received_timestamp``, system time, filled in by Fast DDS and Cyclone DDS), carried over to
the node's clock as ``now - (system time now - received)``: a message that waited in the
reader since the last step is as old as it is, never as new as the step. An RMW that gives no
receive time (0) makes it ``now``.

rclpy's subscription handle's ``take_message`` (what rclpy's own executors call) is used in
this module only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.node import Node
from rclpy.subscription import Subscription

#: Messages taken from one subscription per :meth:`PolledSubscriptions.take` at most (keep-last
#: depth 1 holds one; a deeper queue is drained to its newest, within this bound).
MAX_TAKEN = 1000


def arrival_time(now: float, received_ns: int, system_now_ns: int) -> float:
    """The time on the node's clock (``now``, seconds) at which a message arrived that DDS
    received at ``received_ns`` (system time, ns; 0 when unknown), ``system_now_ns`` being
    the system time now. Never later than ``now``."""
    if received_ns <= 0:
        return now
    return now - max(0.0, (system_now_ns - received_ns) * 1e-9)


class PolledSubscriptions:
    """Subscriptions of a node of their own that no executor spins, read with :meth:`take`.

    Offers ``create_subscription`` and ``destroy_subscription`` as a node does (for
    :class:`.resubscribe.Resubscriber`); the callback is called by :meth:`take` as
    ``callback(msg, arrival)``, with the newest message only."""

    def __init__(self, node: Node):
        self._owner = node
        namespace = node.get_namespace()
        self.node = Node(f"_{node.get_name()}_polled", namespace=namespace,
                         context=node.context, use_global_arguments=False,
                         start_parameter_services=False, enable_rosout=False)
        self._callbacks: dict[Subscription, Callable] = {}
        self._destroyed = False

    def create_subscription(self, msg_type, topic: str, callback: Callable, qos,
                            raw: bool = False) -> Subscription:
        resolved = self._owner.resolve_topic_name(topic)
        subscription = self.node.create_subscription(msg_type, resolved, _never_called, qos,
                                                     raw=raw)
        self._callbacks[subscription] = callback
        return subscription

    def destroy_subscription(self, subscription: Subscription) -> None:
        self._callbacks.pop(subscription, None)
        self.node.destroy_subscription(subscription)

    def take(self, now: float) -> int:
        """Take the newest message of every subscription that has one and call its callback
        with it and its arrival time (see the module's docstring); returns how many were
        delivered."""
        delivered = 0
        for subscription, callback in list(self._callbacks.items()):
            newest = None
            with subscription.handle:
                for _ in range(MAX_TAKEN):
                    taken = subscription.handle.take_message(subscription.msg_type,
                                                             subscription.raw)
                    if taken is None:
                        break
                    newest = taken
            if newest is None:
                continue
            msg, info = newest
            callback(msg, arrival_time(now, int(info.get("received_timestamp") or 0),
                                       time.time_ns()))
            delivered += 1
        return delivered

    def destroy(self) -> None:
        """Destroy the node and its subscriptions (again: nothing)."""
        if not self._destroyed:
            self._destroyed = True
            self._callbacks = {}
            self.node.destroy_node()


def _never_called(msg) -> None:  # the node is in no executor
    raise AssertionError("a polled subscription's callback was called by an executor")
