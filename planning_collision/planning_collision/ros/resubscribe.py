"""Subscriptions made again when their publisher has matched but delivered nothing, a few times.

The publisher's participant can lose a subscription during discovery the same way a
subscriber can lose a publisher (Fast DDS 3's type lookup race, see :mod:`.type_registration`:
on that side it is the publisher's process that looked the type up). It then never sends,
while this side counts the publisher as matched. A new subscription is announced anew and
matched at once, since by then that participant knows the type. orca_node keeps its odometry
subscriptions this way: :meth:`Resubscriber.check` (once a second) replaces one whose
publisher matched but has sent nothing for ``after`` seconds since it was made.

A matched publisher may also be silent on purpose: an EKF before its first input, a tracker
with no one in view. Each new subscription is a new reader and a round of discovery traffic
on every participant that publishes the topic, so a subscription is made again at most
``tries`` times; then one warning says so, and the last subscription stays (it still delivers
whatever the publisher sends later). ``tries`` 0 turns the workaround off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .parameters import ParameterError


@dataclass
class _Entry:
    subscription: object
    made: float  # time.monotonic()
    args: tuple
    delivered: bool = False
    tries: int = 0  # subscriptions made again so far
    gave_up: bool = False


class Resubscriber:
    def __init__(self, node, warn, after: float = 5.0, tries: int = 3, subscriber=None):
        """``subscriber`` makes and destroys the subscriptions (``node`` by default; e.g. a
        :class:`.polled_subscriptions.PolledSubscriptions`, whose callbacks get the message
        and its arrival time: every argument is passed on)."""
        if isinstance(tries, bool) or not isinstance(tries, int) or tries < 0:
            raise ParameterError(f"odometry_resubscribe_tries must be an integer >= 0, got "
                                 f"{tries!r}")
        self.node = node
        self.subscriber = node if subscriber is None else subscriber
        self.warn = warn
        self.after = after
        self.tries = tries
        self._entries: dict = {}

    def subscribe(self, key, msg_type, topic: str, callback, qos, **kwargs) -> None:
        self._subscribe(key, (msg_type, topic, callback, qos, kwargs), tries=0)

    def _subscribe(self, key, args: tuple, tries: int) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            self.subscriber.destroy_subscription(entry.subscription)
        msg_type, topic, callback, qos, kwargs = args

        def delivered(*received, key=key):
            self._entries[key].delivered = True
            callback(*received)

        subscription = self.subscriber.create_subscription(msg_type, topic, delivered, qos,
                                                           **kwargs)
        self._entries[key] = _Entry(subscription, time.monotonic(), args, tries=tries)

    def check(self) -> None:
        now = time.monotonic()
        for key, entry in list(self._entries.items()):
            if entry.delivered or entry.gave_up or now - entry.made < self.after \
                    or entry.subscription.get_publisher_count() == 0:
                continue
            topic = entry.args[1]
            if entry.tries >= self.tries:
                entry.gave_up = True
                if self.tries:
                    self.warn(f"resubscribe-gave-up/{topic}", f"{topic}: its publisher matched "
                              f"but sent nothing in {self.tries + 1} subscriptions of "
                              f"{self.after:g} s each; not subscribing again (a publisher "
                              f"that has nothing to send yet is fine; if it should be "
                              f"sending, restart either end)")
                continue
            self.warn(f"resubscribe/{topic}", f"{topic}: its publisher matched but sent "
                      f"nothing in {self.after:g} s; subscribing again "
                      f"({entry.tries + 1} of {self.tries})")
            self._subscribe(key, entry.args, entry.tries + 1)
