"""Deadlock detection and resolution by priority (issue #22 item 3).

A robot is *stalled* when it wants to move (its preferred velocity is not zero) and for
``stall_time`` seconds got no closer to its goal by ``min_progress`` metres (the distance is
the route's when a route map is given, else the straight one). ORCA's symmetric stand-offs
(two robots nose to nose, a knot at a crossing) look exactly like this. Without a goal (cmd_vel
mode: the navigation stack plans, orca_node has its command) progress is the way made good
along the preferred velocity: each step's displacement projected on the direction the robot
wanted to go then, summed; a robot that wants to move and made no ``min_progress`` metres of
it in ``stall_time`` is stalled the same way.

Resolution by priority: the agent index is the priority (lower first: the same order on
every node, as the agents are listed the same). A stalled robot with a robot of higher
priority within ``near`` metres that also wants to move backs away from the nearest such
robot at ``back_off_speed`` for ``yield_time`` seconds; the robot of highest priority in a
knot keeps its preferred velocity and goes through the room the others leave. After yielding
a robot's progress clock starts again.

Parked robots give way. A robot standing at its goal is not stalled (it wants nothing), yet in
a corridor it can close the way for good: in the 4-way intersection a robot parked at its goal
in an arm left the robot whose goal lies deeper in that arm, or one pushed into the arm, no
room to pass (the runs that failed there ended so). So a stalled robot also asks the parked
robots within ``near`` that stand ahead of it (in the half-plane its preferred velocity points
into) to make room: each steps away from it, sideways to its way where it can, at
``back_off_speed`` for ``yield_time`` seconds, then stands there until that robot has passed
it (or is ``2 * near`` away, or arrived, or ``hold_time`` ran out) and only then returns to
its goal; the stalled robot does not yield to the robots making room for it. (Returning after
``yield_time`` while the stalled robot, of lower priority, yielded to them as to any robot
wanting to move sent all of them back and forth to the timeout: intersection of 8, seeds 33
and 86.) Stalled robots ask in priority order; a parked robot serves the first that asks and
is not asked again while it gives way. Deterministic from positions, routes and the agent
order, as the rest.

Not into a passage's mouth. Given ``mouth`` (the controller passes
:meth:`.PassageMap.in_mouth`: a passage's core and the ``radius`` round it, where the
passage rule counts a robot as inside), a parked robot whose step aside would end there
does not make room (the stalled robot asks the others, or yields as any stalled robot).
Standing aside there up to ``hold_time``, it boxed in the robots the passage let through:
doorway of 16, seed 71, robot 9, parked 1.2 m from the door, stepped into its mouth for
robot 10 and stood there 27-40 s; robot 14, of the batch kept at 23.5 s, crept through the
door beside it at 0.04-0.1 m/s (25-36 s), the two behind it waited, and robot 1 of the other
side waited 30.9 s (22.7 s with this rule). Stepping to the other side of the stalled
robot's way instead sent robots across that way (seed 15: 22.9 -> 33.8 s).

:class:`ProgressMonitor` keeps, per controlled agent, its best distance so far, when it last
improved and until when it yields: a few arrays, updated once per control step.
"""

from __future__ import annotations

import numpy as np


class ProgressMonitor:
    """Progress and yielding of ``k`` controlled agents (see the module docstring)."""

    def __init__(self, k: int, *, stall_time: float = 8.0, min_progress: float = 0.2,
                 yield_time: float = 3.0, near: float = 1.5, back_off_speed: float = 0.3,
                 hold_time: float = 20.0):
        self.stall_time, self.min_progress, self.hold_time = stall_time, min_progress, hold_time
        self.yield_time, self.near, self.back_off_speed = yield_time, near, back_off_speed
        self.best = np.full(k, np.inf)  # the smallest distance to the goal so far
        self.since = np.full(k, np.nan)  # when it last improved by min_progress (NaN: idle)
        self.yield_until = np.full(k, -np.inf)
        self.yield_direction = np.zeros((k, 2))
        self.made_good = np.zeros(k)  # metres along the preferred velocity so far
        self._last = None  # the positions at the previous step
        self.host = np.full(k, -1)  # the stalled robot a parked one makes room for (-1: none)
        self.host_way = np.zeros((k, 2))  # that robot's way when it asked
        self.host_until = np.full(k, -np.inf)  # the latest it keeps the room open
        self._rebase = np.zeros(k, dtype=bool)  # best distance to take afresh (rebase)

    def rebase(self) -> None:
        """The distances change meaning from the next step (a new route map: the way round
        the new map is longer or shorter). Each robot's best distance is then taken afresh
        from its next distance, but its stall clock keeps running: restarting it, as a new
        monitor would, let a map republished with changes every second (a costmap) keep every
        knot from ever counting as stalled. A robot measured afresh anyway (idle, or just
        yielded) is left so."""
        self._rebase[:] = np.isfinite(self.best)

    def idle(self, now: float) -> None:
        """A step in which no robot wants to move (the controller does not call
        :meth:`resolve` then): every clock stops, as :meth:`resolve` would stop it, and the
        robots making room are released. Without this a robot that arrived kept its old
        clock and best distance through the idle time and counted as stalled at the first
        step of its next goal, and yielded for nothing."""
        self.since[:] = np.nan
        self.best[:] = np.inf
        self.host[:] = -1
        np.minimum(self.yield_until, now, out=self.yield_until)
        self._last = None  # the way made good counts from the next step on

    def advance(self, positions: np.ndarray, velocities: np.ndarray,
                wants: np.ndarray) -> np.ndarray:
        """Update with the positions (k, 2) and preferred velocities (k, 2) of this step:
        (k,) each robot's way made good along its preferred velocity so far (the progress
        measure without a goal; only steps in which it ``wants`` to move count)."""
        positions = np.asarray(positions, dtype=np.float64)
        if self._last is not None:
            speed = np.hypot(velocities[:, 0], velocities[:, 1])
            unit = velocities / np.where(speed > 0.0, speed, 1.0)[:, None]
            along = np.einsum("ij,ij->i", positions - self._last, unit)
            self.made_good += np.where(wants & np.isfinite(along), along, 0.0)
        self._last = positions.copy()
        return self.made_good

    def stalled(self, now: float, distance: np.ndarray, wants: np.ndarray) -> np.ndarray:
        """Update with each agent's ``distance`` to its goal (k,) and whether it ``wants``
        to move (k,); return who is stalled."""
        rebase = self._rebase & wants & np.isfinite(self.best)
        self.best[rebase] = distance[rebase]
        self._rebase[:] = False
        improved = wants & (distance < self.best - self.min_progress)
        restart = wants & (np.isnan(self.since) | improved)
        self.since[restart] = now
        self.best[restart] = distance[restart]
        self.since[~wants] = np.nan
        self.best[~wants] = np.inf
        return wants & (now - self.since >= self.stall_time)

    def resolve(self, now: float, positions: np.ndarray, velocities: np.ndarray,
                distance: np.ndarray, wants: np.ndarray,
                parked: np.ndarray | None = None,
                mouth=None) -> tuple[np.ndarray, np.ndarray]:
        """The preferred ``velocities`` (k, 2) with the yielding robots backing off, and
        who yields (k,). ``positions`` (k, 2), ``distance`` and ``wants`` as in
        :meth:`stalled` (inf: no goal; then the way made good along ``velocities`` counts,
        :meth:`advance`); ``parked`` (k,): robots standing at their goal, which give way to
        the stalled robots they stand in front of; ``mouth``: a function of points (M, 2)
        telling (M,) which lie in a passage's mouth, where a parked robot does not step
        aside (:meth:`.PassageMap.in_mouth`; None: anywhere)."""
        made_good = self.advance(positions, velocities, wants)
        stalled = self.stalled(now, np.where(np.isfinite(distance), distance, -made_good),
                               wants)
        velocities = np.array(velocities, dtype=np.float64, copy=True)
        parked = np.zeros(len(wants), dtype=bool) if parked is None else parked & ~wants
        hosting = self._keep_room(now, positions, wants)
        stalled &= ~hosting
        if parked.any():
            self._make_room(now, positions, velocities, stalled, parked & ~hosting, mouth)
        for i in np.flatnonzero(stalled & (self.yield_until <= now)):
            # higher priority, wanting to move, and not making room for this one
            ahead = np.flatnonzero(wants[:i] & (self.host[:i] != i))
            if not ahead.size:
                continue
            gaps = positions[ahead] - positions[i]
            dist = np.hypot(gaps[:, 0], gaps[:, 1])
            j = int(np.argmin(dist))
            if dist[j] > self.near:
                continue
            away = -gaps[j] / max(dist[j], 1e-9)
            self.yield_until[i] = now + self.yield_time
            self.yield_direction[i] = away
            self.best[i] = np.inf  # its progress is measured afresh from here
        yielding = (wants | parked | hosting) & (self.yield_until > now)
        velocities[yielding] = self.yield_direction[yielding] * self.back_off_speed
        holding = hosting & ~yielding  # stepped aside: stands there until the way is clear
        velocities[holding] = 0.0
        return velocities, yielding | holding

    def _keep_room(self, now: float, positions: np.ndarray, wants: np.ndarray) -> np.ndarray:
        """Who still makes room (k,): a robot that stepped aside for a stalled one stands
        aside until that robot has passed it (along the way it asked with), is no longer
        within ``2 * near``, wants nothing any more (it arrived), or ``hold_time`` ran out;
        then it drives back to its goal."""
        hosting = self.host >= 0
        for j in np.flatnonzero(hosting):
            i = int(self.host[j])
            gap = positions[j] - positions[i]
            if (now >= self.host_until[j] or not wants[i] or gap @ self.host_way[j] <= 0.0
                    or float(np.hypot(*gap)) > 2.0 * self.near):
                self.host[j] = -1
                hosting[j] = False
                self.yield_until[j] = min(self.yield_until[j], now)
        self.best[hosting] = np.inf  # its progress is measured afresh once it is released
        return hosting

    def _make_room(self, now: float, positions: np.ndarray, velocities: np.ndarray,
                   stalled: np.ndarray, parked: np.ndarray, mouth=None) -> None:
        """Parked robots ahead of a stalled one (within ``near``, in front of its preferred
        velocity) step away from it, sideways to its way, for ``yield_time``."""
        free = parked & (self.yield_until <= now)
        for i in np.flatnonzero(stalled):
            candidates = np.flatnonzero(free)
            if not candidates.size:
                return
            way = velocities[i] / max(float(np.hypot(*velocities[i])), 1e-9)
            gaps = positions[candidates] - positions[i]
            along = gaps @ way
            near = (along > 0.0) & (np.hypot(gaps[:, 0], gaps[:, 1]) <= self.near)
            for j, gap, ahead in zip(candidates[near], gaps[near], along[near], strict=True):
                side = gap - ahead * way  # its offset from the stalled robot's way
                width = float(np.hypot(*side))
                # sideways, to the side it already stands on (left of the way when on it),
                # and a little onwards so that it also leaves a way too narrow for two
                lateral = side / width if width > 1e-6 else np.array([-way[1], way[0]])
                step = lateral + 0.5 * way
                step /= float(np.hypot(*step))
                reach = self.back_off_speed * self.yield_time
                if mouth is not None and mouth(positions[j] + reach * step)[0]:
                    continue  # its step aside would end in a passage's mouth: it stays
                self.yield_until[j] = now + self.yield_time
                self.yield_direction[j] = step
                self.host[j], self.host_way[j] = i, way
                self.host_until[j] = now + self.hold_time
                free[j] = False
