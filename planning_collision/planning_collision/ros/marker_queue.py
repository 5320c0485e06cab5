"""collision_server's RViz markers: what queries and obstacle sets queue, built off the query
path and sent in bounded batches.

Queries only queue a small closure (at most ``per_query`` rays or footprints each, at most
``MAX_PENDING`` queries kept); the marker timer builds them. Obstacle outlines (namespace
``obstacle/<id>``, no lifetime) are sent once per obstacle set and again to a subscriber that
joins later (RViz started after the obstacles arrived), at most ``outlines_per_message`` per
timer tick, so a set of 100,000 obstacles is drawn over several ticks instead of in one
100,000-marker message built while queries wait. Outlines of obstacles that are gone are
deleted one by one; query markers are left alone.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
from visualization_msgs.msg import Marker

from planning_collision.collision_world import Footprint
from planning_collision.common import se2
from planning_collision.geometry import ConvexShape
from planning_collision.geometry.outline import outline

from . import markers

MAX_PENDING = 64  # queries whose markers wait for the next tick (older ones are dropped)
# Marker ids of the query namespaces keep increasing (so recent queries stay drawn until their
# lifetime ends) and wrap here, inside int32.
MARKER_ID_WRAP = 2**31 - 1


class MarkerQueue:
    def __init__(self, frame_id: str, lifetime: float, per_query: int,
                 outlines_per_message: int):
        self.frame_id = frame_id
        self.lifetime = lifetime
        self.per_query = per_query
        self.outlines_per_message = outlines_per_message
        self._pending: deque = deque(maxlen=MAX_PENDING)
        self._next_id: dict[str, int] = {}
        self._lock = threading.Lock()  # the outline state below
        self._outlines: tuple[tuple[str, np.ndarray], ...] = ()
        self._drawn: set[str] = set()  # outline namespaces sent so far
        self._backlog: deque = deque()  # outlines still to send
        self._gone: list[str] = []  # outline namespaces to delete

    # ------------------------------------------------------------------ queries
    def rays(self, starts: np.ndarray, ends: np.ndarray, clear) -> None:
        """Rays: green to the goal when clear, red up to the first blocked point."""
        k = min(len(starts), self.per_query)
        if k == 0:
            return
        starts, ends, clear = starts[:k].copy(), ends[:k].copy(), list(clear[:k])

        def build(stamp) -> list[Marker]:
            ids = self._ids("line_of_sight", k)
            return [markers.polyline("line_of_sight", ids[i], self.frame_id, stamp,
                                     [starts[i], ends[i]],
                                     markers.GREEN if clear[i] else markers.RED, 0.03,
                                     self.lifetime) for i in range(k)]

        self._pending.append(build)

    def footprints(self, footprint: ConvexShape | Footprint, poses: np.ndarray,
                   collided) -> None:
        """Footprints: green when free, red when in collision (or, on a path, invalid)."""
        k = min(len(poses), self.per_query)
        if k == 0:
            return
        ring = footprint.ring if isinstance(footprint, Footprint) else outline(footprint)
        poses, collided = poses[:k].copy(), np.asarray(collided[:k]).copy()

        def build(stamp) -> list[Marker]:
            ids = self._ids("footprints", k)
            out = []
            for i in range(k):
                xy = np.column_stack(se2.compose(tuple(poses[i]), (ring[:, 0], ring[:, 1],
                                                                   0.0))[:2])
                out.append(markers.polyline("footprints", ids[i], self.frame_id, stamp, xy,
                                            markers.RED if collided[i] else markers.GREEN,
                                            0.02, self.lifetime, closed=True))
            return out

        self._pending.append(build)

    def _ids(self, ns: str, k: int) -> list[int]:
        first = self._next_id.get(ns, 0)
        self._next_id[ns] = (first + k) % MARKER_ID_WRAP
        return [(first + i) % MARKER_ID_WRAP for i in range(k)]

    # ------------------------------------------------------------------ obstacles
    def obstacles(self, outlines: tuple[tuple[str, np.ndarray], ...]) -> None:
        """A new obstacle set: (id, outline) per obstacle."""
        with self._lock:
            self._outlines = tuple((f"obstacle/{oid}", ring) for oid, ring in outlines)
            current = {ns for ns, _ in self._outlines}
            self._gone = sorted((self._drawn - current) | set(self._gone) - current)
            self._drawn &= current
            self._backlog = deque(self._outlines)

    def resend_obstacles(self) -> None:
        """Send every outline again (a subscriber joined)."""
        with self._lock:
            self._backlog = deque(self._outlines)

    # ------------------------------------------------------------------ the timer
    def take(self, stamp) -> tuple[list[Marker], list[str]]:
        """The markers to publish now, and a problem text per query whose markers could not
        be built (dropped)."""
        out: list[Marker] = []
        problems: list[str] = []
        with self._lock:
            out += [markers.delete(ns, 0, self.frame_id, stamp) for ns in self._gone]
            self._gone = []
            for _ in range(min(self.outlines_per_message, len(self._backlog))):
                ns, ring = self._backlog.popleft()
                out.append(markers.polyline(ns, 0, self.frame_id, stamp, ring, markers.GREY,
                                            0.04, 0.0, closed=True))
                self._drawn.add(ns)
        while self._pending:
            build = self._pending.popleft()
            try:
                out.extend(build(stamp))
            except Exception as exc:  # drop that query's markers, keep the others
                problems.append(f"{type(exc).__name__}: {exc}")
        return out, problems

    @property
    def outlines_waiting(self) -> int:
        return len(self._backlog)
