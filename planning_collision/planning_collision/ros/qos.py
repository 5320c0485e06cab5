"""The QoS profiles the project's nodes, tools and tests use, defined once.

* ``LATCHED``: reliable + transient_local, depth 1: map_server's latched map, latched obstacle
  sets and goals; a subscriber that joins later still gets the last message.
* ``RELIABLE``: reliable + volatile, depth 1: commands, costmap-style topics.
* ``LATEST``: best effort, depth 1: odometry and navigation commands, of which only the newest
  counts (a best-effort subscription matches reliable and best-effort publishers alike).
* ``TF_TOPIC`` and ``TF_STATIC``: what tf's /tf and /tf_static publishers offer (a best-effort
  subscription for /tf, as above).
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)
LATEST = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                    reliability=ReliabilityPolicy.BEST_EFFORT)
TF_TOPIC = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                reliability=ReliabilityPolicy.BEST_EFFORT)
TF_STATIC = LATCHED


def latched_or_volatile(latched: bool) -> QoSProfile:
    """A subscription's QoS from a ``*_subscribe_transient_local`` parameter."""
    return LATCHED if latched else RELIABLE
