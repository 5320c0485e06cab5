"""Subscriptions that no executor waits on: the newest message of each is taken when asked.

One orca_node per robot in a 24-robot fleet receives every robot's odometry at 50 Hz, 1,200
messages a second, and uses the newest of each once per control step (20 Hz). Through an
executor each message woke the spinning thread and ran a Python callback that only kept it
(doc/delays.md measures what that cost). Here each subscription is made on the node's own rcl
handle but never entered in the node's list of subscriptions, so no executor (rclpy's
EventsExecutor, SingleThreadedExecutor or MultiThreadedExecutor, which all read that list)
waits on it: DDS keeps the newest sample of each in its reader (keep-last QoS, depth 1 for
odometry) and wakes no one, and :meth:`PolledSubscriptions.take` takes it when the control
step asks, with the time it was received. The node's Python cost then follows its step rate,
not the fleet's odometry rate.

The subscriptions are the node's own in the ROS graph (``ros2 node info /orca_node`` and
rqt_graph show orca_node subscribed to each odometry topic, which is how users check a Nav2
wiring; a first version used a hidden second node, and the launch-file test of that wiring
failed). Topic names are resolved by rcl with the node's namespace and remaps, as for any
subscription. They are destroyed by :meth:`PolledSubscriptions.destroy`, before the node.

Arrival time. A message's arrival is the time DDS received it (the message info's
``received_timestamp``, system time, filled in by Fast DDS and Cyclone DDS), carried over to
the node's clock as ``now - (system time now - received)``: a message that waited in the
reader since the last step is as old as it is, never as new as the step. An RMW that gives no
receive time (0) makes it ``now``.

rclpy's C extension (``_rclpy.Subscription`` and its ``take_message``, what rclpy's own
``Node.create_subscription`` and executors call) is used in this module only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.type_support import check_is_valid_msg_type

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


class PolledSubscription:
    """One subscription of :class:`PolledSubscriptions` (what the Resubscriber asks of a
    subscription: ``get_publisher_count`` and ``topic_name``)."""

    def __init__(self, node: Node, msg_type, topic: str, qos, raw: bool):
        check_is_valid_msg_type(msg_type)  # imports its type support
        profile = qos if isinstance(qos, QoSProfile) else QoSProfile(depth=int(qos))
        with node.handle:
            try:  # rclpy >= 8 (Kilted) takes content filter options too
                self.handle = _rclpy.Subscription(node.handle, msg_type, topic,
                                                  profile.get_c_qos_profile(), None)
            except TypeError:  # rclpy 7 (Jazzy)
                self.handle = _rclpy.Subscription(node.handle, msg_type, topic,
                                                  profile.get_c_qos_profile())
        self.msg_type, self.raw = msg_type, raw

    @property
    def topic_name(self) -> str:
        with self.handle:
            return self.handle.get_topic_name()

    def get_publisher_count(self) -> int:
        with self.handle:
            return self.handle.get_publisher_count()

    def take(self):
        """The newest (message, info) waiting (up to ``MAX_TAKEN`` are drained), or None."""
        newest = None
        with self.handle:
            for _ in range(MAX_TAKEN):
                taken = self.handle.take_message(self.msg_type, self.raw)
                if taken is None:
                    break
                newest = taken
        return newest

    def destroy(self) -> None:
        self.handle.destroy_when_not_in_use()


class PolledSubscriptions:
    """Subscriptions of ``node``'s that no executor spins, read with :meth:`take`.

    Offers ``create_subscription`` and ``destroy_subscription`` as a node does (for
    :class:`.resubscribe.Resubscriber`); the callback is called by :meth:`take` as
    ``callback(msg, arrival)``, with the newest message only."""

    def __init__(self, node: Node):
        self.node = node
        self._callbacks: dict[PolledSubscription, Callable] = {}

    def __len__(self) -> int:
        return len(self._callbacks)

    def create_subscription(self, msg_type, topic: str, callback: Callable, qos,
                            raw: bool = False) -> PolledSubscription:
        subscription = PolledSubscription(self.node, msg_type, topic, qos, raw)
        self._callbacks[subscription] = callback
        return subscription

    def destroy_subscription(self, subscription: PolledSubscription) -> None:
        if self._callbacks.pop(subscription, None) is not None:
            subscription.destroy()

    def take(self, now: float) -> int:
        """Take the newest message of every subscription that has one and call its callback
        with it and its arrival time (see the module's docstring); returns how many were
        delivered."""
        delivered = 0
        system_now = time.time_ns()  # the same instant as ``now``
        for subscription, callback in list(self._callbacks.items()):
            newest = subscription.take()
            if newest is None:
                continue
            msg, info = newest
            callback(msg, arrival_time(now, int(info.get("received_timestamp") or 0),
                                       system_now))
            delivered += 1
        return delivered

    def destroy(self) -> None:
        """Destroy every subscription (before the node; again: nothing)."""
        for subscription in list(self._callbacks):
            self.destroy_subscription(subscription)
