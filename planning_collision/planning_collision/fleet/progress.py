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

Which robot it yields to, and which way. Robots well behind it going its way (preferred
velocities less than 90 degrees apart, and more behind it than beside it) never count: in
the two-lane corridor of 16 (corridor_3d, seed 38) eight robots from each end met three
abreast, and robot1, eastbound in front, backed away from robot0 of its own stream behind
it, that is on into the knot in front of robot10 coming the other way, every 8 s; robot10
waited 49 s. Of the others within ``near`` (higher priority, wanting to move), some may be
*coming at it*: it stands ahead of them along their preferred velocity, and their way and
its own are more than 135 degrees apart (nearly head on). It backs straight away from the
nearest of those (out of their way, sideways mostly), not from a nearer robot of its own
stream; with nobody coming at it, from the nearest of the others, as before, except that a
robot of its own stream beside it (not ahead of it) makes it drop back, straight against its
own way, so that the two go on in single file. Why each part: leaving out only the robots
behind going its way (474a844) jammed seed 91 for good: westbound robot11, nose to nose with
robot2 coming east, backed away from the nearer robot9 of its own stream into the south
wall, robot9 from robot2 into robot10; from 30 s nobody moved. Nearly head on only: with
every robot up to 90 degrees from head on counted as coming at it, the 16-robot
intersection's seed 17 failed (robot14, pushed into the south arm, stood 60 s). Leaving out
the robots beside it going its way too (every robot behind the line across its way), in the
two-lane corridor of 4 the higher-priority robot of each pair, side by side, yielded to
nobody and the other pair backed off and came back, over and over: seeds 0-29, median
makespan 40.8 -> 54.3 s; dropping back puts them in single file (40.5 s; 44.1 s without the
lane rule below). Helper H3's first version backed off *along the way* of the nearest robot
coming at it when that one was in its lane (under 0.5 m off its line: so as not to back
straight into a wall, corridor_3d 16 seed 54); with the wall rule below that is not needed,
and it only sent robots back and forth along a corridor (corridor_3d 16, seeds 38 and 60:
32.2 and 24.7 s with it, 24.9 and 21.0 s without; intersection 16, seeds 0-19: longest wait
25.6 s with it, 14.7 s without). Backing off along one's own way instead, for every stalled
robot, was tried before and dropped (doc/narrow_spaces.md).

Except round a passage (``plain``: the controller passes the users of a passage too narrow
for two and every robot within its zone or the reach of its holding places,
:meth:`.PassageMap.around`, fleet/passages.py): those robots yield as before, straight away
from the nearest robot of higher priority, whatever its way. The passage rule already decides
who goes there, and the rule above, built for a corridor with room for two, made the doorway
of 16 wait longer: with only the users excepted, seed 35, 23.9 -> 71.1 s (a robot west of
the door waited from 6.9 to 78.0 s), seed 2, 18.6 -> 38.9 s (robot9, past the door, backed
away from robot6 instead of from robot8 behind it going its way); with the users excepted
but not the robots round them, seed 88, 21.4 -> 30.7 s (robot13, queued along the door's
east wall 1.6 m from the door, outside the zone, stood from 65.2 to 95.9 s).

Not into a wall. Given ``wall`` (the controller passes :meth:`.RouteMap.wall_normal`: away
from the wall a robot touches, or nearly), a stalled robot whose way to back off points
nearly straight into that wall (less than 0.3 of it along the wall) backs off along the wall
instead, against its own way; partly into the wall, ORCA's wall half-plane already slides it
along. Intersection of 16, seed 43: robot3, a differential drive pushed into the east arm,
stood against its north wall, and every 8 s backed away from robot2 south of it, straight
into the wall, where ORCA held it: it stood from 27.9 to 62.4 s (10.0 s now). A parked robot
asked to make room likewise steps to the side away from a wall it touches, not into it: it
stood there on the stalled robot's way (seen in the doorway of 16, seed 88: robot15, at
the door's east wall, stood so on robot13's way up to 20 s; that run's longest wait did not
change with this alone). Round a passage (``plain``) a stalled robot still yields as
before, even into a wall; a parked robot steps off the wall everywhere.

A yield is passed on. A stalled robot yields only to robots within ``near``, so in a knot
strung out along a corridor the robot of highest priority can be beyond ``near`` of a robot
that blocks the others' way back: intersection of 16, seed 20 (with the wall rule above),
robot3 wanted north up the north arm, robots 8, 9, 12 and 13, coming south, backed off north
for it, and robot4, behind them coming south too, 1.7 m from robot3, yielded to nobody and
kept pushing into them: from 33 s to the end of the run (300 s) nobody moved. So a stalled
robot that yields to nobody near, but that a robot of lower priority backs off towards
(within ``near``) to make way for a robot of higher priority than both, yields to that
robot as if it were near, by the same rule, when their ways are opposed (seed 20: 12.6 s).
Without that last condition it also passed on yields between robots of one stream
(corridor_3d of 16, seed 38: 17.9 -> 31.3 s).

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

HEAD_ON = np.cos(np.radians(45.0))  # "coming at it": ways more than 135 degrees apart


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
        self.yield_to = np.full(k, -1)  # the robot it yields to (-1: none, or making room)
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
                mouth=None, plain: np.ndarray | None = None,
                wall=None) -> tuple[np.ndarray, np.ndarray]:
        """The preferred ``velocities`` (k, 2) with the yielding robots backing off, and
        who yields (k,). ``positions`` (k, 2), ``distance`` and ``wants`` as in
        :meth:`stalled` (inf: no goal; then the way made good along ``velocities`` counts,
        :meth:`advance`); ``parked`` (k,): robots standing at their goal, which give way to
        the stalled robots they stand in front of; ``mouth``: a function of points (M, 2)
        telling (M,) which lie in a passage's mouth, where a parked robot does not step
        aside (:meth:`.PassageMap.in_mouth`; None: anywhere); ``plain`` (k,): robots that
        yield straight away from the nearest robot of higher priority whatever its way (the
        users of a passage, whom the passage rule already orders; module docstring);
        ``wall``: a function of points (M, 2) giving (M, 2) the unit normal pointing away
        from the nearest wall where a robot there touches one, else zero
        (:meth:`.RouteMap.wall_normal`; None: no walls)."""
        made_good = self.advance(positions, velocities, wants)
        stalled = self.stalled(now, np.where(np.isfinite(distance), distance, -made_good),
                               wants)
        velocities = np.array(velocities, dtype=np.float64, copy=True)
        parked = np.zeros(len(wants), dtype=bool) if parked is None else parked & ~wants
        hosting = self._keep_room(now, positions, wants)
        stalled &= ~hosting
        if parked.any():
            self._make_room(now, positions, velocities, stalled, parked & ~hosting, mouth,
                            wall)
        plain = np.zeros(len(wants), dtype=bool) if plain is None else plain
        for i in np.flatnonzero(stalled & (self.yield_until <= now)):
            # higher priority, wanting to move, and not making room for this one
            ahead = np.flatnonzero(wants[:i] & (self.host[:i] != i))
            chosen = self._choose(positions, velocities, i, ahead, bool(plain[i]), self.near)
            if chosen is not None:  # round a passage as before: not off the wall either
                self._yield(now, i, *chosen, velocities[i], None if plain[i] else wall,
                            positions)
        self._pass_on(now, positions, velocities, stalled, wants, plain, wall)
        yielding = (wants | parked | hosting) & (self.yield_until > now)
        velocities[yielding] = self.yield_direction[yielding] * self.back_off_speed
        holding = hosting & ~yielding  # stepped aside: stands there until the way is clear
        velocities[holding] = 0.0
        return velocities, yielding | holding

    @staticmethod
    def _off_wall(away: np.ndarray, way: np.ndarray, normal) -> np.ndarray:
        """``away`` without its part into the wall the robot touches (``normal``: the unit
        vector away from it, zero or None: no wall), along the wall; when it pointed nearly
        straight into the wall, along the wall back against the robot's own ``way``."""
        if normal is None or not normal.any():
            return away
        into = float(away @ normal)
        if into >= 0.0:
            return away
        along = away - into * normal
        if float(np.hypot(*along)) >= 0.3:  # ORCA slides it along the wall
            return away
        tangent = np.array([-normal[1], normal[0]])  # nearly straight into it: along it
        return tangent if tangent @ way <= 0.0 else -tangent

    def _choose(self, positions: np.ndarray, velocities: np.ndarray, i: int,
                ahead: np.ndarray, plain: bool, near: float):
        """Whom robot ``i`` yields to among the robots ``ahead`` (of higher priority,
        wanting to move) and which way (module docstring): (the unit vector it backs off
        along, that robot), or None when none counts within ``near``."""
        if not ahead.size:
            return None
        gaps = positions[ahead] - positions[i]
        if plain:  # round a passage: straight away from the nearest, whatever its way
            dist = np.hypot(gaps[:, 0], gaps[:, 1])
            j = int(np.argmin(dist))
            return None if dist[j] > near else (-gaps[j] / max(dist[j], 1e-9), int(ahead[j]))
        way, theirs = velocities[i], velocities[ahead]
        along = gaps @ way
        side = np.abs(gaps[:, 0] * way[1] - gaps[:, 1] * way[0])
        # not the robots well behind it going its way: backing away from one drives it on
        keep = (along >= -side) | (theirs @ way <= 0.0)
        ahead, gaps, theirs, along = ahead[keep], gaps[keep], theirs[keep], along[keep]
        dist = np.hypot(gaps[:, 0], gaps[:, 1])
        # the robots coming at it first: it stands in their way, they come nearly head on
        coming = (np.einsum("ij,ij->i", -gaps, theirs) > 0.0) & (dist <= near)
        coming &= theirs @ way < -HEAD_ON * np.hypot(theirs[:, 0], theirs[:, 1]) * float(
            np.hypot(*way))
        if coming.any():
            # straight away from the nearest of them, not from a robot of its own stream
            j = int(np.argmin(np.where(coming, dist, np.inf)))
            return -gaps[j] / max(dist[j], 1e-9), int(ahead[j])
        if ahead.size and dist.min() <= near:
            j = int(np.argmin(dist))
            if theirs[j] @ way > 0.0 and along[j] <= 0.0:
                # beside it going its way: it drops back behind that robot (single file)
                return -way / max(float(np.hypot(*way)), 1e-9), int(ahead[j])
            # nobody coming at it: straight away from the nearest, as before
            return -gaps[j] / max(dist[j], 1e-9), int(ahead[j])
        return None

    def _pass_on(self, now: float, positions: np.ndarray, velocities: np.ndarray,
                 stalled: np.ndarray, wants: np.ndarray, plain: np.ndarray, wall) -> None:
        """A stalled robot (not round a passage) that yields to nobody near, but that a
        robot of lower priority backs off towards (within ``near``) to make way for a robot
        of higher priority than both, whose way is opposed to its own, yields to that robot
        too, by the same rule, as if it were near (module docstring)."""
        order = np.arange(len(wants))
        for i in np.flatnonzero(stalled & ~plain & (self.yield_until <= now)):
            k = np.flatnonzero((self.yield_until > now) & wants & (order > i)
                               & (self.yield_to >= 0) & (self.yield_to < i))
            gaps = positions[i] - positions[k]
            dist = np.hypot(gaps[:, 0], gaps[:, 1])
            towards = (np.einsum("ij,ij->i", gaps, self.yield_direction[k]) > 0.0)
            towards &= dist <= self.near
            if not towards.any():
                continue
            j = int(self.yield_to[k[int(np.argmin(np.where(towards, dist, np.inf)))]])
            if float(velocities[j] @ velocities[i]) >= 0.0:
                continue  # its way and that robot's are not opposed: nothing to make way for
            chosen = self._choose(positions, velocities, i, np.array([j]), False, np.inf)
            if chosen is not None:
                self._yield(now, i, *chosen, velocities[i], wall, positions)

    def _yield(self, now: float, i: int, away: np.ndarray, j: int, way: np.ndarray,
               wall, positions: np.ndarray) -> None:
        """Robot ``i`` backs off for robot ``j`` along the unit vector ``away`` for
        ``yield_time`` (off the wall it touches, :meth:`_off_wall`)."""
        if wall is not None:
            away = self._off_wall(away, way, wall(positions[i:i + 1])[0])
        self.yield_until[i] = now + self.yield_time
        self.yield_direction[i] = away
        self.yield_to[i] = j
        self.best[i] = np.inf  # its progress is measured afresh from here

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
                   stalled: np.ndarray, parked: np.ndarray, mouth=None,
                   wall=None) -> None:
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
                if wall is not None and lateral @ wall(positions[j:j + 1])[0] < 0.0:
                    lateral = -lateral  # that side is a wall it touches: the other one
                step = lateral + 0.5 * way
                step /= float(np.hypot(*step))
                reach = self.back_off_speed * self.yield_time
                if mouth is not None and mouth(positions[j] + reach * step)[0]:
                    continue  # its step aside would end in a passage's mouth: it stays
                self.yield_until[j] = now + self.yield_time
                self.yield_direction[j] = step
                self.yield_to[j] = -1
                self.host[j], self.host_way[j] = i, way
                self.host_until[j] = now + self.hold_time
                free[j] = False
