"""A simulated network stream: delay, jitter and loss, seeded (no ROS).

A :class:`Channel` carries the messages of one stream (one robot's odometry, its commands, its
localizer poses) from the moment they are sent to the moment they are delivered. Each message
is lost with probability ``loss``; otherwise it is delivered ``latency + U(0, jitter)`` seconds
after it was sent (``U`` uniform, drawn per message). ``in_order`` (the default, as a reliable
DDS reader delivers a stream) holds a message back until every message sent before it and not
lost has been delivered; without it a message overtakes an earlier one whose jitter was larger,
as datagrams do. Every draw comes from the channel's own generator, so a run is repeated
exactly by its seed, and two streams never share a sequence of draws.

With no jitter and no loss a channel is a plain delay line: each message is delivered at
``sent + latency``, in the order sent.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any, NamedTuple

import numpy as np

from planning_collision.common.checks import finite_scalar

# A message due within this of the time asked counts as due (the callers' clocks are floats).
DUE_SLACK = 1e-9


class NetworkSettings(NamedTuple):
    """One stream's delay (s), jitter (s, the width of the uniform extra delay) and loss
    (probability that a message never arrives)."""

    latency: float = 0.0
    jitter: float = 0.0
    loss: float = 0.0

    def check(self, prefix: str = "") -> NetworkSettings:
        """The settings as floats; ValueError names the first bad one (``prefix`` + field:
        a stream's parameter name such as ``command_jitter``)."""
        return NetworkSettings(
            latency=finite_scalar(self.latency, f"{prefix}latency", at_least=0.0),
            jitter=finite_scalar(self.jitter, f"{prefix}jitter", at_least=0.0),
            loss=finite_scalar(self.loss, f"{prefix}loss", at_least=0.0, at_most=1.0))

    @property
    def ideal(self) -> bool:
        """No delay, no jitter, no loss: every message is delivered as soon as asked."""
        return self.latency == 0.0 and self.jitter == 0.0 and self.loss == 0.0


def stream_rng(seed: int, *keys: int) -> np.random.Generator:
    """An independent generator for the stream named by ``keys`` under ``seed`` (a run's
    ``noise_seed``): the same seed and keys give the same draws."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), *map(int, keys)]))


class Channel:
    """One stream through a network with delay, jitter and loss (see the module docstring)."""

    def __init__(self, settings: NetworkSettings | None = None, *, in_order: bool = True,
                 rng: np.random.Generator | None = None):
        self.settings = (settings or NetworkSettings()).check()
        self.in_order = bool(in_order)
        self._rng = rng if rng is not None else np.random.default_rng(0)
        self._queue: list[tuple[float, int, Any]] = []  # heap of (due, sequence, message)
        self._sequence = itertools.count()
        self._last_due = -math.inf  # in order: when the latest message sent is delivered
        self.sent = 0
        self.lost = 0
        self.delivered = 0

    def send(self, now: float, message: Any) -> float:
        """Put ``message`` on the wire at time ``now``; return when it will be delivered
        (``inf``: it is lost)."""
        s = self.settings
        self.sent += 1
        # Both draws every time, so the delays do not depend on which messages were lost.
        lost = s.loss > 0.0 and self._rng.random() < s.loss
        extra = s.jitter * self._rng.random() if s.jitter > 0.0 else 0.0
        if lost:
            self.lost += 1
            return math.inf
        due = now + s.latency + extra
        if self.in_order:
            due = max(due, self._last_due)
            self._last_due = due
        heapq.heappush(self._queue, (due, next(self._sequence), message))
        return due

    def receive(self, now: float) -> list:
        """The messages due by ``now``, in the order they are delivered (by due time; sent
        order among equal times)."""
        out = []
        while self._queue and self._queue[0][0] <= now + DUE_SLACK:
            out.append(heapq.heappop(self._queue)[2])
        self.delivered += len(out)
        return out

    @property
    def pending(self) -> int:
        """Messages on the wire (sent, not lost, not yet delivered)."""
        return len(self._queue)
