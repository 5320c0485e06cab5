"""Subscriptions made again when their publisher has matched but delivered nothing.

The publisher's participant can lose a subscription during discovery the same way a
subscriber can lose a publisher (Fast DDS 3's type lookup race, see :mod:`.type_registration`:
on that side it is the publisher's process that looked the type up). It then never sends,
while this side counts the publisher as matched. A new subscription is announced anew and
matched at once, since by then that participant knows the type. orca_node keeps its odometry
subscriptions this way: :meth:`Resubscriber.check` (once a second) replaces one whose
publisher matched but has sent nothing for ``after`` seconds since it was made.
"""

from __future__ import annotations

import time


class Resubscriber:
    def __init__(self, node, warn, after: float = 5.0):
        self.node = node
        self.warn = warn
        self.after = after
        self._subscriptions: dict = {}  # key -> [subscription, made at, delivered, args]

    def subscribe(self, key, msg_type, topic: str, callback, qos, **kwargs) -> None:
        entry = self._subscriptions.get(key)
        if entry is not None:
            self.node.destroy_subscription(entry[0])

        def delivered(msg, key=key):
            self._subscriptions[key][2] = True
            callback(msg)

        subscription = self.node.create_subscription(msg_type, topic, delivered, qos, **kwargs)
        self._subscriptions[key] = [subscription, time.monotonic(), False,
                                    (msg_type, topic, callback, qos, kwargs)]

    def check(self) -> None:
        now = time.monotonic()
        for key, (subscription, made, delivered, args) in list(self._subscriptions.items()):
            if not delivered and now - made >= self.after \
                    and subscription.get_publisher_count() > 0:
                msg_type, topic, callback, qos, kwargs = args
                self.warn(f"resubscribe/{topic}", f"{topic}: its publisher matched but sent "
                          f"nothing in {self.after:g} s; subscribing again")
                self.subscribe(key, msg_type, topic, callback, qos, **kwargs)
