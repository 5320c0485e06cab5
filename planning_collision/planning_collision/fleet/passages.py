"""One direction at a time through passages too narrow for two (issue #22 item 3).

ORCA alone deadlocks where two robots meet in a passage with room for one: each waits for the
other to give way, and nobody can. :class:`PassageMap` finds those passages on the map and
:meth:`PassageMap.coordinate` lets one direction through at a time.

**Passages from the map.** Where the free space is too narrow for two robots side by side,
its medial axis (the ridge of the clearance, the distance to the nearest wall) runs closer
than ``2 * radius`` to the walls (``radius`` holds the safety margin). The cells within
``radius`` of those ridge cells, where one robot fits, form a passage's *core* (a doorway, a
single-lane corridor), one per connected group. The cells within ``zone`` metres of a core
(through the free space) form its *zone*, split into *sides*: the connected parts of the
zone outside the core (a doorway or a corridor has two). A core with one side is a dead end
(a room's corner, a niche), not a passage.

**The rule, each step, from the positions, the routes and the batches below** (so every node
that sees the same fleet decides the same, whoever runs it): a robot *uses* a passage when its
route (:class:`~planning_collision.fleet.routes.RouteMap`'s steepest descent) goes through
the core; its *direction* is the side its route leaves by. Robots inside the core (within
``radius`` of it) keep going; their direction holds the passage (the most common one, ties to
the lowest side label). A free passage goes to the direction of the user nearest the core
(ties: lowest index) and keeps it for a batch. Users of any other direction wait: within
``hold`` metres of the core they back away from it (clearing its mouth for the robots coming
out), beyond that they stand (preferred velocity zero; ORCA still moves them aside).

**Batches** (the one memory it keeps, per passage: the side served and the robots admitted).
A passage keeps the side it serves until the robots it admitted are through (out of the core
and off its users), even while its core is empty between two of them; robots pushed into the
core keep going and, when none of the served side is in it, their side takes the passage.
While another side waits, at most ``batch`` robots of the served side are admitted (first
come, first served: nearest the core first, ties by id), the others wait with the other side;
when the batch is through the passage goes to the waiting side whose user is nearest the core.
While nobody else waits, every user of the served side is admitted. Deciding afresh each
step instead flipped the passage whenever its core emptied between two robots and a waiting
robot stood nearer than the next one on its way in (doc/narrow_spaces_bench.md); every node
fed the same fleet the same steps keeps the same memory.

**A bounded wait** (``max_wait`` seconds, given with the control time ``now``). Once users of
another side have waited ``max_wait`` without a break, the batch closes: nobody more is
admitted, and admitted robots still more than a diameter (``2 * radius``) from the core wait
again; when the robots inside and in the mouth are through, the passage turns to the waiting
side. The wait is counted on the control clock from the users' positions, so every node fed
the same fleet turns the passage at the same step. Without it a waiter waited for a whole
batch (8 robots through a door: over 30 s in 17 of 80 runs of the 16-robot doorway).

**Turns as long as the passage.** Given the preferred ``speed``, a passage whose core takes
longer than ``max_wait`` to drive through (its length: twice the farthest a core cell lies
from the nearest side) closes its batches after that time instead (:meth:`PassageMap.window`):
a turn of a few seconds let one or two robots into a 7 m corridor and then cost the ~14 s
the last of them took to clear it. A door keeps ``max_wait`` itself, so it decides as before.
Through such a long passage a closing batch keeps every robot it admitted (it takes nobody
more): a robot taken out of it waited for its own side to clear the passage, the other
side's whole turn and its clearing, two clearing times and more, where letting it follow
its batch in costs the other side only the seconds it takes to enter.

**Seniority.** Each passage remembers since when each of its users has been told to wait,
kept while it is admitted and in the core until it has gone through, and which robots a
closing batch took out, until they have gone through. The longest waiting are admitted
first (then the nearest); when a batch closes, the admitted robots it would take out (those
far from the core) that a batch took out before keep their places wherever they stand, so
a robot is taken out of a batch once at most; and after a turn the batch closes
``max_wait`` after the other side's longest waiting user began to wait, but not before
``max_wait / 2`` after the turn. Without it a robot taken out of its batch waited while its
own side's last robots cleared the door, through the other side's whole turn and its last
robots, and then behind nearer robots of its side (doorway of 16: 9 of 100 runs over 30 s).
Until 2026-11-27 the robots a closing batch kept were the longest waiting of those it took
out (all that waited as long), by the time each began to wait; but a waiter's seniority is
kept only while it is one of the passage's users, and a robot admitted at its holding place
beyond the zone (up to 4.5 m out) was none until it came back into the zone, where it
counted as a robot that had never waited: taken out a second time, it waited through the
other side's turn once more. Every run of the doorway of 16 that waited over 30 s on
526f96f had a robot taken out twice or more (seeds 87, 43, 67, 81, 92: 34.3, 33.9, 33.2, 32.5,
31.4 s; seed 43: robot 6, taken out at 6 s, admitted at 19 s at its place 1.8 m out, taken
out at 22.7 s, through at 58 s). Keeping the seniority of such robots instead made more
robots tie as the longest waiting (all that began to wait at the first step), and a closing
batch kept them all (seed 87: a turn of 38 s, 43.4 s waiting); keeping both the longest
waiting and the robots taken out before kept more robots per batch, and the other side
waited longer (doorway of 16, seeds 0-29: median of the longest waits 21.1 s against
18.8 s, seed 11 32.5 s).

**Taking a long passage.** When a free passage longer to drive than ``max_wait`` is taken,
the robots in its core decide which side (else those in its mouth), and a robot of another
side merely in the mouth waits like the rest of its side; a waiter in such a passage's
mouth (within ``radius`` of the core, not in it) backs straight out of it before it heads
for its holding place. A door decides as before (tried there too, the doorway of 16 had
two runs over 30 s in 12 where it had none). corridor_1.5d starts the
front robot of each block in a mouth: both counted as inside, so the one whose side lost
the tie kept going, and even told to wait, a differential-drive robot sent sideways to its
place turned while creeping forward and was in the core a few steps later, where inside
robots go on. It met the other side's first robot halfway down the corridor, and one of
them backed out metres at creeping speed while both blocks stood.

**Lined up.** Into a passage longer to drive than ``max_wait`` the admitted robots outside
its mouth come in along an *entry line* (:class:`EntryLine`, :meth:`PassageMap._line`): from
just outside the core's tip on their side straight out, the way the core runs there, as far
as the robot's disc fits. In the order of their distance to the core, each may come as far
as a robot spacing (``2 * min_radius``) behind the one before it, the first behind the robot
of its side last gone in; a robot in the line nearer than that waits, one off the line heads
for that place, and the first, with nobody in its way, keeps its route
(:meth:`PassageMap._line_up`). A robot off the line less than ``3 * radius`` from the one
before it, itself off the line (the first one too, keeping its route), waits where it stands
until that one is in the line: two differential drives heading for neighbouring places from
either side of the line met nose to nose and stood until the progress monitor counted them
stalled (corridor_1.5d of 8, seed 37: from the start to 8.3 s, and the other side waited
30.5 s with the mouth kept clear, below); behind a first one keeping its route, the robot
went for its place across that route (seed 44: both stood to 11.5 s). A block of eight
(three columns, mixed drives) entered corridor_1.5d's lane one robot every 2-3 s: robots
came at the mouth from every side, slid along the corridor's end walls and jostled in the
mouth, while the other side stood through it all (62 of 100 runs of 16 waited over 30 s; 18
with the line). Fixed places in the line, one per robot (some sent back to theirs), and
robots waiting off the line until their place came up to them did worse (seeds 0-39: 13 and
22 runs over 30 s, against 3). A door keeps filing in as before
(:meth:`PassageMap._file_in`), and so does every passage in cmd_vel mode (robots without a
goal): there orca_node filters the navigation stack's commands, and steering a robot to a
place of its own choosing is the navigation stack's part, as holding places are.

**Out of a long passage, clear of its mouth.** In goal mode, while an admitted robot of the
served side follows in a long passage's core within ``follow`` metres (2 m) of its end on
that side, a robot on that side whose goal lies in the mouth (within ``hold`` of the core)
does not stop there: it heads for a holding place (off the mouth, off the goals and the
places taken) and goes on to its goal once nobody follows that close
(:meth:`PassageMap._clear_exit`). The corridor_1.5d benchmark swaps two blocks, so the first
robots out of the corridor park in its mouth, on the goals nearest it, and the robots close
behind them had to push past them (seed 94 of 16: the last robot stood 5 s in the corridor
with its way out blocked, and the other side, waiting since 2.4 s, could go at 33.1 s;
27.7 s with the rule). Holding them aside while any admitted robot was still to come made
them wait through a whole slow batch (seed 53: 27 s at the place); ``follow`` lets them go
in the gaps of a batch that trickles in.

**Through a long passage at top speed.** In goal mode a robot in a long passage's core on
its side's turn is told to hurry (:attr:`Coordination.hurry`): the controller drives it at
its own ``max_speed`` instead of the preferred speed (fleet/controller.py). The other side
stands for about the time one batch takes to enter plus the time its last robot takes to
drive the core, ~12 s of corridor_1.5d at 0.5 m/s; nobody comes the other way there, and
the robots in line behind follow at the same speed. One slow entry put seed 42 of 16 at
32.5 s; with the rule that row's median longest wait fell from 27.0 s to 24.8 s (100 seeds,
none over 30 s). A door keeps the preferred speed (it is quicker to drive than
``max_wait``), and so does every passage in cmd_vel mode, where orca_node only filters the
navigation stack's commands and never makes one faster.

**Robots already through.** A robot that used a passage and now stands on the side it was
going to has gone through; pushed back into the core later (by a robot making room), it
goes on and takes no part in the rule (:meth:`PassageMap._went_through`).

**Mouths kept clear of robots making room.** :meth:`PassageMap.in_mouth` tells whether
points lie in a core or its mouth (within ``radius`` of it); a parked robot whose step aside
for a stalled one (fleet/progress.py) would end there does not make room, where it stood up
to 20 s and boxed in the robots let through (doorway of 16, seed 71: a kept batch of three
took 23.5 s to get through the door, 30.9 s waiting on the other side; 22.7 s with the
rule). Not ``hold`` metres round the core: at a door that covers the first rows of both
rooms.

**One at a time into the core.** Admitted robots still outside the mouth file in (one beside
the first stands); of the robots of the served side in the mouth (within ``radius`` of the
core, so counted as inside), one beside another that is farther along the passage backs out
of the mouth until that one is a diameter ahead (:meth:`PassageMap._single_file`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from .holding import HoldingPlaces
from .routes import _DI, _DJ, RouteMap, _dijkstra, _segment_clear, descend, edt, ridge
from .travel import PassageTravel
from .zones import cells_inside


@numba.njit(cache=True)
def _label(mask):  # pragma: no cover - numba
    """8-connected components of ``mask``: labels (h, w) (-1 outside) and their count."""
    h, w = mask.shape
    labels = np.full((h, w), -1, dtype=np.int64)
    stack = np.empty(h * w, dtype=np.int64)
    count = 0
    for r0 in range(h):
        for c0 in range(w):
            if not mask[r0, c0] or labels[r0, c0] >= 0:
                continue
            labels[r0, c0] = count
            top = 0
            stack[top] = r0 * w + c0
            top += 1
            while top > 0:
                top -= 1
                r, c = stack[top] // w, stack[top] % w
                for d in range(8):
                    rr, cc = r + _DI[d], c + _DJ[d]
                    if 0 <= rr < h and 0 <= cc < w and mask[rr, cc] and labels[rr, cc] < 0:
                        labels[rr, cc] = count
                        stack[top] = rr * w + cc
                        top += 1
            count += 1
    return labels, count


@numba.njit(cache=True)
def _route_through(cost, r, c, core, sides, max_cells):  # pragma: no cover - numba
    """Along the steepest descent of ``cost`` from cell (r, c): whether it enters ``core``
    and the side label of the first zone cell after the core (-1: none within max_cells)."""
    h, w = cost.shape
    if r < 0 or r >= h or c < 0 or c >= w or not np.isfinite(cost[r, c]):
        return False, -1
    entered = core[r, c]
    for _ in range(max_cells):
        nr, nc = descend(cost, r, c)
        if nr == r and nc == c:
            return entered, -1
        r, c = nr, nc
        if core[r, c]:
            entered = True
        elif entered and sides[r, c] >= 0:
            return True, sides[r, c]
    return entered, -1


@numba.njit(cache=True)
def _away(distance, r, c):  # pragma: no cover - numba
    """The neighbour cell of (r, c) farthest from the core (row, col offsets; 0, 0: none)."""
    h, w = distance.shape
    best, br, bc = distance[r, c] if 0 <= r < h and 0 <= c < w else np.inf, 0, 0
    for d in range(8):
        rr, cc = r + _DI[d], c + _DJ[d]
        if 0 <= rr < h and 0 <= cc < w and np.isfinite(distance[rr, cc]) and \
                distance[rr, cc] > best:
            best, br, bc = distance[rr, cc], _DI[d], _DJ[d]
    return br, bc


class Passage(NamedTuple):
    core: np.ndarray  # (h, w) bool
    sides: np.ndarray  # (h, w) side label, -1 outside the zone
    distance: np.ndarray  # (h, w) metres from the core through free space (inf beyond zone)
    centre: tuple[float, float]  # global frame, for reports


class Coordination(NamedTuple):
    """What :meth:`PassageMap.coordinate` decided, per robot given."""

    velocities: np.ndarray  # (N, 2) the preferred velocities after the rule
    waiting: np.ndarray  # (N,) told to wait for a passage
    passage: np.ndarray  # (N,) index of the passage it uses (-1: none)
    hurry: np.ndarray  # (N,) in a long passage's core on its turn: drives at its top speed


class EntryLine(NamedTuple):
    """Where robots line up to enter a long passage from one side (:meth:`PassageMap._line`):
    from ``start``, just outside the core's tip, ``length`` metres outward along the unit
    ``direction`` (global frame), clear of walls for the robot's disc all along."""

    start: np.ndarray  # (2,)
    direction: np.ndarray  # (2,) unit, away from the core
    length: float

    def place(self, point) -> tuple[float, float]:
        """How far ``point`` lies along the line from its start, and how far beside it."""
        off = np.asarray(point, dtype=np.float64) - self.start
        u = self.direction
        return float(off @ u), abs(float(off[0] * u[1] - off[1] * u[0]))

    def point(self, along: float) -> np.ndarray:
        """The point ``along`` metres out along the line."""
        return self.start + self.direction * along


class PassageMap:
    """The passages of a :class:`RouteMap`'s grid (see the module docstring)."""

    def __init__(self, routes: RouteMap, *, zone: float = 1.5, hold: float = 1.0,
                 back_off_speed: float = 0.3, min_sides: int = 2,
                 declared=(), batch: int = 8, holding: bool = True):
        self.routes = routes
        self.zone, self.hold, self.back_off_speed = float(zone), float(hold), back_off_speed
        if int(batch) < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self.batch = int(batch)
        self.arrived = 0.1  # metres: a waiter this near its holding place stands
        self.in_line = 0.1  # metres: a robot this near an entry line stands in it
        self.follow = 2.0  # metres: a robot this near the core's end follows (_clear_exit)
        res = routes.resolution
        wide = 2.0 * routes.radius
        shape = routes.fits.shape
        clear = routes.clearance
        narrow = routes.fits & ridge(clear) & (clear < wide)  # the medial axis, narrow
        core = routes.fits & (edt(narrow) * res <= routes.radius)
        labels, count = _label(core)
        self.passages: list[Passage] = []
        for k in range(count):
            core = labels == k
            distance = _dijkstra(np.argwhere(core).astype(np.int64), routes.fits,
                                 np.ones(shape), self.zone / res) * res
            distance[distance > self.zone] = np.inf
            zone_cells = np.isfinite(distance) & ~core
            sides, n_sides = _label(zone_cells)
            if n_sides < min_sides:
                continue  # a dead end, not a passage
            rc = np.argwhere(core).mean(axis=0) + 0.5
            centre = tuple(float(v) for v in routes.to_world([rc])[0])
            self.passages.append(Passage(core, sides, distance, centre))
        self.passages += [q for q in (declared_passage(routes, polygon, self.zone)
                                      for polygon in declared) if q is not None]
        self.travel = [PassageTravel(q.core, q.sides, routes) for q in self.passages]
        # metres a robot drives through each core: twice the farthest a core cell lies from
        # the nearest side (a doorway ~2 m, corridor_1.5d's 6 m corridor ~7.2 m)
        self.lengths = [2.0 * float(np.min(t.to_side[:, q.core], axis=0).max())
                        if len(t.to_side) and q.core.any() else 0.0
                        for q, t in zip(self.passages, self.travel, strict=True)]
        # where robots with a goal wait (fleet/holding.py): off the mouth and off the goals
        self.places = [HoldingPlaces(routes, q.core, mouth=self.hold,
                                     clear=2.0 * routes.radius + 0.1)
                       for q in self.passages] if holding else None
        # where robots line up to enter each side of a long passage (_line_up)
        self.lines = [[self._line(q, t, s) for s in range(len(t.to_side))]
                      for q, t in zip(self.passages, self.travel, strict=True)]
        self.forget()

    def _line(self, passage: Passage, travel: PassageTravel, side: int,
              reach: int = 16) -> EntryLine | None:
        """The :class:`EntryLine` of ``passage``'s side ``side``: from the core's tip on that
        side (its cells nearest the side) straight out, along the way the core runs there
        (from its cells 0.5-1 m deeper to the tip), starting ``radius + 0.05`` m out and as
        far as the robot's disc fits, checked every robot spacing (``2 * min_radius``), at
        most ``reach`` of them; None where the core is too short to tell its way or the
        disc does not fit even at the start."""
        routes = self.routes
        res, radius = routes.resolution, routes.radius
        cells = np.argwhere(passage.core)
        d = travel.to_side[side][cells[:, 0], cells[:, 1]]
        cells, d = cells[np.isfinite(d)], d[np.isfinite(d)]
        if not len(cells):
            return None
        tip = routes.to_world(cells[d <= d.min() + 1.5 * res] + 0.5).mean(axis=0)
        deep = cells[(d >= d.min() + 0.5) & (d <= d.min() + 1.0)]
        if not len(deep):
            return None
        u = tip - routes.to_world(deep + 0.5).mean(axis=0)
        if np.hypot(*u) < 1e-9:
            return None
        u = u / np.hypot(*u)
        start, step = tip + u * (radius + 0.05), 2.0 * routes.min_radius
        last, length = routes.to_cells([tip])[0], -step
        for k in range(reach):
            here = routes.to_cells([start + u * (k * step)])[0]
            if not _segment_clear(routes.fits, last[0], last[1], here[0], here[1]):
                break
            last, length = here, k * step
        return EntryLine(start, u, length) if length > 0.0 else None

    def forget(self) -> None:
        """Forget the batches served so far (every passage free, no robot admitted)."""
        self._held = [-1] * len(self.passages)  # the side each passage serves (-1: none)
        self._waited = [math.nan] * len(self.passages)  # since when another side waits
        self._closed = [False] * len(self.passages)  # the batch takes nobody more
        self._admitted: list[set] = [set() for _ in self.passages]  # ids in the core so far
        self._holds: list[dict] = [{} for _ in self.passages]  # id -> its holding place
        self._users: list[dict] = [{} for _ in self.passages]  # id -> exit side, last step
        self._through: list[dict] = [{} for _ in self.passages]  # id -> the side it came to
        self._since: list[dict] = [{} for _ in self.passages]  # id -> told to wait since
        self._out: list[set] = [set() for _ in self.passages]  # taken out, not through yet
        self._aside: list[dict] = [{} for _ in self.passages]  # id -> its place (_clear_exit)

    def coordinate(self, positions, goals, velocities, moving, ids=None,
                   keep_clear=None, now: float | None = None,
                   max_wait: float = math.inf, speed: float | None = None) -> Coordination:
        """The preferred ``velocities`` (N, 2) of robots at ``positions`` going to ``goals``
        after the one-direction rule; ``moving`` (N,): the robots that want to move (the
        others neither use nor hold a passage); ``ids`` (N,): each robot's lasting identity
        (the agent index; default: the position in the arrays), which the batches count.
        ``keep_clear`` (M, 2): points the holding places keep clear of, every robot's goal
        (default: the finite ``goals`` given). ``now``: the control time (seconds); with it a
        waiting side is let through after ``max_wait`` seconds (module docstring), or with
        ``speed`` (the preferred speed, m/s) after the time one robot takes to drive through
        the passage's core when that is longer (:meth:`window`)."""
        positions = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
        velocities = np.array(velocities, dtype=np.float64).reshape(-1, 2)
        n = len(positions)
        ids = np.arange(n) if ids is None else np.asarray(ids, dtype=np.int64).reshape(n)
        waiting = np.zeros(n, dtype=bool)
        used = np.full(n, -1, dtype=np.int64)
        hurry = np.zeros(n, dtype=bool)
        if not self.passages or not n:
            return Coordination(velocities, waiting, used, hurry)
        routes, res = self.routes, self.routes.resolution
        goals = np.asarray(goals, dtype=np.float64).reshape(-1, 2)
        if keep_clear is None:
            keep_clear = goals[np.isfinite(goals).all(axis=1)]
        keep_clear = np.asarray(keep_clear, dtype=np.float64).reshape(-1, 2)
        # a robot squeezed against a wall (where the disc does not fit) is where it would
        # fit: else it is nobody's user, and the passage turned before it was through
        cells = routes.snap(np.floor(routes.to_cells(positions)).astype(np.int64))
        h, w = routes.fits.shape
        on_map = self.routes.on_grid(cells)
        steps = int(4.0 * self.zone / res) + int(math.hypot(h, w))
        for p, passage in enumerate(self.passages):
            users, exits, near = [], [], []
            holds = self._holds[p]
            for i in np.flatnonzero(moving & on_map & (used < 0)):
                r, c = cells[i]
                d = passage.distance[r, c]
                if not np.isfinite(d) and int(ids[i]) in holds:  # waiting at its place
                    d = self.places[p].distance[r, c]
                if not np.isfinite(d):
                    continue
                if np.isfinite(goals[i]).all():
                    through, exit_side = _route_through(routes.cost_to_go(goals[i]), r, c,
                                                        passage.core, passage.sides, steps)
                else:  # no goal (cmd_vel mode): where its preferred velocity leads
                    through, exit_side = True, self.travel[p].exit_side(positions[i],
                                                                        velocities[i])
                if through and exit_side >= 0:
                    users.append(i)
                    exits.append(exit_side)
                    near.append(d)
            self._went_through(p, ids, cells, on_map, users, exits)
            self._out[p].difference_update(self._through[p])  # through: out no more
            used[users] = p
            # gone through already and pushed back in: on its way out again, it goes and
            # neither takes, keeps nor waits for the passage (_went_through)
            through = self._through[p]
            rule = [j for j, (i, e) in enumerate(zip(users, exits, strict=True))
                    if through.get(int(ids[i]), -1) != e]
            if not rule:
                holds.clear()
                self._aside[p].clear()
                self._waited[p], self._closed[p] = math.nan, False
                continue
            users_a, exits_a, near_a = (np.array(users)[rule], np.array(exits)[rule],
                                        np.array(near)[rule])
            inside = near_a <= routes.radius
            window = self.window(p, max_wait, speed)
            long = window > max_wait  # longer to drive than max_wait: not a door
            held, admitted, inside = self._serve(p, ids[users_a], exits_a, near_a, inside,
                                                 now, window, keep=long)
            kept = {}
            order = np.argsort(ids[users_a], kind="stable")  # places go by id: any listing
            for i, side, d, going in zip(users_a[order], exits_a[order], near_a[order],
                                         inside[order], strict=True):
                if going or (side == held and int(ids[i]) in admitted):
                    continue
                waiting[i] = True
                speed = float(np.hypot(*velocities[i]))
                velocities[i] = 0.0
                place = self._holding_place(p, i, ids, cells, goals, keep_clear, kept)
                # in the mouth: the way out of it
                away = self._away(passage, cells[i]) if d < self.hold else np.zeros(2)
                if place is not None:
                    kept[int(ids[i])] = place
                # in a long passage's mouth: straight out first (module docstring)
                out_first = long and 0.0 < d <= self.routes.radius and away.any()
                if place is not None and not out_first:
                    v = self._towards(positions[i], place, speed)
                    # never towards the core while in its mouth (a waiter there would be
                    # inside in a moment, and inside robots go)
                    v -= min(float(v @ away), 0.0) * away
                    velocities[i] = v if np.hypot(*v) > 0.05 or not away.any() \
                        else away * self.back_off_speed
                elif away.any():
                    velocities[i] = away * self.back_off_speed
            self._holds[p] = kept
            if now is not None:  # who waits since when, kept across turns (_wait_over)
                since = self._since[p]
                self._since[p] = {int(ids[i]): since.get(int(ids[i]), float(now))
                                  for i in users_a if waiting[i] or int(ids[i]) in since}
            goal_mode = bool(np.isfinite(goals[users_a]).all())  # module docstring
            if long and goal_mode:
                self._line_up(p, users_a, exits_a, near_a, inside, ids, held, admitted,
                              positions, velocities)
            else:
                self._file_in(users_a, exits_a, near_a, ids, held, admitted, positions,
                              velocities)
            self._single_file(p, users_a, exits_a, near_a, inside, ids, held, admitted,
                              cells, positions, velocities)
            if long and goal_mode:
                self._clear_exit(p, users_a[inside & (exits_a == held)], ids, held,
                                 admitted, cells, moving & on_map & (used < 0), positions,
                                 goals, velocities, keep_clear)
                # in the core on its side's turn: through at top speed (module docstring)
                hurry[users_a[(near_a <= 0.0) & (exits_a == held)]] = True
            else:
                self._aside[p].clear()
        return Coordination(velocities, waiting, used, hurry)

    def window(self, p: int, max_wait: float, speed: float | None = None) -> float:
        """The seconds another side waits before passage ``p``'s batch closes: ``max_wait``,
        or the time a robot at ``speed`` takes to drive through the core when that is longer
        (module docstring: turns as long as the passage). ``max_wait`` itself when it is the
        longer (a doorway), so a short passage behaves to the step as without ``speed``."""
        if speed is None or not speed > 0.0:
            return max_wait
        clearing = self.lengths[p] / float(speed)
        return clearing if clearing > max_wait else max_wait

    def in_mouth(self, points) -> np.ndarray:
        """(N,) whether each world point (N, 2) lies in a passage's core or in its mouth
        (within ``radius`` of it, where the rule counts a robot as inside): where the robots
        making room for a stalled one do not step (fleet/progress.py)."""
        on_map, r, c = self.routes.grid_cells(points)
        inside = np.zeros(on_map.size, dtype=bool)
        for passage in self.passages:  # its core's cells lie at distance 0
            inside[on_map] |= passage.distance[r, c] <= self.routes.radius
        return inside

    def around(self, points) -> np.ndarray:
        """(N,) whether each world point (N, 2) lies within a passage's zone or the reach of
        its holding places (fleet/holding.py): where the passage rule orders the robots."""
        on_map, r, c = self.routes.grid_cells(points)
        inside = np.zeros(on_map.size, dtype=bool)
        for p, passage in enumerate(self.passages):
            inside[on_map] |= np.isfinite(passage.distance[r, c])
            if self.places is not None:
                inside[on_map] |= np.isfinite(self.places[p].distance[r, c])
        return inside

    def _away(self, passage: Passage, cell) -> np.ndarray:
        """The unit vector from ``cell`` to its neighbour farthest from ``passage``'s core
        (zero when none is farther)."""
        dr, dc = _away(passage.distance, cell[0], cell[1])
        if not (dr or dc):
            return np.zeros(2)
        here, step = self.routes.to_world([[cell[0] + 0.5, cell[1] + 0.5],
                                           [cell[0] + 0.5 + dr, cell[1] + 0.5 + dc]])
        return (step - here) / np.hypot(*(step - here))

    def _single_file(self, p, users, exits, near, inside, ids, held, admitted, cells,
                     positions, velocities) -> None:
        """Robots of the served side enter the core one at a time. Ordered by how far they
        still have to go through the passage to the side they leave by (then id), a robot
        in the core's mouth (within ``radius`` of it, so counted as inside, but not in it;
        farther out :meth:`_file_in` holds them), less than a diameter (``2 * radius``)
        behind a robot ahead of it
        and beside it rather than in line (less far behind than three quarters of their
        distance apart), backs away from the core at ``back_off_speed`` (it stands where it
        has no way back) until that one is farther along. Two robots reaching a door's mouth
        together, one along its wall and one from straight ahead, were both within
        ``radius`` of the core, so both counted as inside and went; each stood in the
        other's way until one stalled (8 s) and the other made room (doorway of 16, seeds
        24 and 80). Standing aside was not enough: the one against the door's jamb stood in
        the other's way in."""
        to_side = self.travel[p].to_side
        if not 0 <= held < len(to_side):
            return
        left = to_side[held]
        going = [k for k in range(len(users)) if exits[k] == held
                 and (inside[k] or int(ids[users[k]]) in admitted)]
        togo = {k: float(left[cells[users[k], 0], cells[users[k], 1]]) for k in going}
        going = sorted((k for k in going if np.isfinite(togo[k])),
                       key=lambda k: (togo[k], int(ids[users[k]])))
        diameter = 2.0 * self.routes.radius
        passage = self.passages[p]
        for n, k in enumerate(going[1:], 1):
            if not 0.0 < near[k] <= self.routes.radius:
                continue  # in the core it goes on; farther out it files in (_file_in)
            for j in going[:n]:
                behind = togo[k] - togo[j]
                apart = float(np.hypot(*(positions[users[k]] - positions[users[j]])))
                if behind < diameter and behind < 0.75 * apart:
                    velocities[users[k]] = self._away(passage, cells[users[k]]) * \
                        self.back_off_speed
                    break

    def _file_in(self, users, exits, near, ids, held, admitted, positions,
                 velocities) -> None:
        """The admitted robots outside the core go in one after another: one beside the
        admitted robot nearest the core (by distance, then id), about as near the core as it
        (less than a diameter, ``2 * radius``, farther, and not behind it: farther from the
        core by less than half their distance apart) stands until that one is in. Two of
        the same batch reaching the mouth together, one on each side of a door, met head on
        in it and stood until the progress monitor made one yield (8 s and more); robots
        following in line keep going."""
        radius = self.routes.radius
        going = [k for k in range(len(users)) if exits[k] == held and near[k] > radius
                 and int(ids[users[k]]) in admitted]
        if len(going) < 2:
            return
        going.sort(key=lambda k: (near[k], int(ids[users[k]])))
        first = going[0]
        for k in going[1:]:
            behind = near[k] - near[first]
            apart = float(np.hypot(*(positions[users[k]] - positions[users[first]])))
            if behind < 2.0 * radius and behind < 0.5 * apart:
                velocities[users[k]] = 0.0

    def _line_up(self, p, users, exits, near, inside, ids, held, admitted, positions,
                 velocities) -> None:
        """Into a long passage, the admitted robots outside the mouth (``near`` beyond
        ``radius``) enter in a line (module docstring: lined up). Per entry side (the
        :class:`EntryLine` whose start is nearest, of the sides other than the ``held`` one),
        in the order of their distance to the core (then id): each may come as far as a
        robot spacing (``2 * min_radius``) behind the one before it, the robot of its side
        last gone in (the farthest out of those ``inside``) for the first, never nearer
        than the line's start nor farther than its end. Where that is ahead of it, it heads
        there; where it is not and it stands in the line (within ``in_line`` of it), it
        waits; off the line it heads there too, unless the robot before it (the first one
        too) is off the line as well and less than ``3 * radius`` away: then it waits where
        it stands until that one is in the line. The first robot, with nobody in the way,
        keeps its route."""
        lines, tol = self.lines[p], self.in_line
        gap = 2.0 * self.routes.min_radius
        close = 3.0 * self.routes.radius  # off the line this near the one before: waits
        going = sorted((k for k in range(len(users)) if exits[k] == held
                        and near[k] > self.routes.radius and int(ids[users[k]]) in admitted),
                       key=lambda k: (near[k], int(ids[users[k]])))
        if not going:
            return
        starts = [(s, line.start) for s, line in enumerate(lines)
                  if s != held and line is not None]
        if not starts:
            return

        def entry(k) -> int:  # the side robot k enters from: the nearest line start
            at = positions[users[k]]
            return min(starts, key=lambda sl: float(np.hypot(*(sl[1] - at))))[0]

        gone = [k for k in range(len(users)) if exits[k] == held and inside[k]]
        sides = {k: entry(k) for k in going + gone}
        for s, line in enumerate(lines):
            order = [k for k in going if sides[k] == s]
            if not order:
                continue
            prev = max((line.place(positions[users[k]])[0] for k in gone if sides[k] == s),
                       default=-math.inf)
            before = None  # where the robot before it stands while that one is off the line
            for n, k in enumerate(order):
                i = users[k]
                along, lateral = line.place(positions[i])
                want = min(max(0.0, prev + gap), line.length)
                off = lateral > tol
                if n == 0 and want <= 0.0:  # nobody in its way: its route takes it in
                    prev = 0.0 if off else along
                    before = positions[i] if off else None
                    continue
                if off and before is not None and \
                        float(np.hypot(*(positions[i] - before))) < close:
                    velocities[i] = 0.0  # the one before, close by, is not in the line yet
                    prev, before = want, positions[i]
                    continue
                if along <= want + tol and not off:
                    velocities[i] = 0.0  # in the line, close behind the one before: waits
                    prev, before = max(along, want), None
                    continue
                velocities[i] = self._towards(positions[i], line.point(want),
                                              float(np.hypot(*velocities[i])))
                prev = want if off else max(along, want)
                before = positions[i] if off else None

    def _clear_exit(self, p, going, ids, held, admitted, cells, free, positions,
                    goals, velocities, keep_clear) -> None:
        """Out of long passage ``p``, its mouth kept clear (module docstring): while one of
        the robots ``going`` (inside, towards the served side ``held``) that was admitted
        is in the core within ``follow`` metres of that side, each robot of ``free`` (the
        robots no passage rule took) standing on that side with its goal in the mouth
        (within ``hold`` of the core, on that side) heads for a holding place instead of
        its goal, the same one until nobody follows that close."""
        places, to_side = self.places, self.travel[p].to_side
        if places is None or not 0 <= held < len(to_side):
            self._aside[p].clear()
            return
        left = to_side[held]
        if not any(int(ids[i]) in admitted and left[cells[i, 0], cells[i, 1]] <= self.follow
                   for i in going):
            self._aside[p].clear()
            return
        passage, routes, holding = self.passages[p], self.routes, places[p]
        free = free & np.isfinite(goals).all(axis=1)
        ends = np.floor(routes.to_cells(np.where(free[:, None], goals, 0.0))).astype(np.int64)
        free &= routes.on_grid(ends)
        aside, kept = self._aside[p], {}
        taken = list(self._holds[p].values())
        for i in np.flatnonzero(free):
            r, c = ends[i]
            if passage.sides[r, c] != held or not passage.distance[r, c] <= self.hold:
                continue
            side = holding.part_of(positions[i])
            if side < 0 or side != holding.part_of(goals[i]):
                continue  # not (yet) on the side of its goal
            key = int(ids[i])
            place = aside.get(key)
            if place is None:
                place = holding.pick(positions[i], np.concatenate(
                    (keep_clear, np.reshape(taken + list(kept.values()), (-1, 2)))))
            if place is None:
                continue
            kept[key] = place
            velocities[i] = self._towards(positions[i], place, float(np.hypot(*velocities[i])))
        self._aside[p] = kept

    def _holding_place(self, p, i, ids, cells, goals, keep_clear, kept):
        """Where waiting robot ``i`` (a robot with a goal) waits for passage ``p``: the place
        it holds already, else a new one clear of the goals and the places taken
        (fleet/holding.py); None without holding places or a goal (cmd_vel mode), or when
        no place is free. Picked from its cell in ``cells`` (snapped where the disc fits):
        from where it stood, a robot squeezed against a wall (nearer than the route map's
        margins) stood on no side, so it got no place and stood there, beside the way the
        robots of its side take to the door (doorway of 16, seed 96: robot 0 pushed against
        the wall beside the door at 6 s, standing there at 0.3 m from it; admitted at 30 s,
        it could not move off the wall past its neighbour, waiting until 41 s)."""
        if self.places is None or not np.isfinite(goals[i]).all():
            return None
        place = self._holds[p].get(int(ids[i]))
        if place is not None:
            return place
        taken = [q for k, q in self._holds[p].items() if k != int(ids[i])] + list(kept.values())
        at = self.routes.to_world([cells[i] + 0.5])[0]
        return self.places[p].pick(at, np.concatenate((keep_clear, np.reshape(taken, (-1, 2)))))

    def _towards(self, position, place, speed) -> np.ndarray:
        """The velocity that takes a robot at ``position`` to ``place`` along its route at
        ``speed`` (the back-off speed when it has none), zero when it is there."""
        if float(np.hypot(*(place - position))) <= self.arrived:
            return np.zeros(2)
        ahead = self.routes.waypoints([position], [place])
        heading = (ahead.points[0] if ahead.routed[0] else place) - position
        length = float(np.hypot(*heading))
        if length <= 1e-9:
            return np.zeros(2)
        return heading / length * (speed if speed > 0.0 else self.back_off_speed)

    def _went_through(self, p, ids, cells, on_map, users, exits) -> None:
        """Remember who went through passage ``p``: a robot that used it last step (by its
        route) and now stands on the side it was going to, no longer using it. Such a robot,
        pushed back into the core later (a robot making room for another), is on its way
        out again: it goes on, and neither takes the passage, nor keeps it from turning, nor
        counts as a robot waiting for it. A robot using it towards another side is
        forgotten. The doorway's core reaches 1 m out from its wall (the ridge of the
        clearance runs closer than a diameter to the door's jambs out there); in seed 60 of
        16 a robot already through, pushed back to 1 m from the wall by a robot making
        room, took the passage 1.5 s after it had turned to the other side: that side,
        waiting 19 s already, was sent back to wait 25 s more."""
        passage, last, through = self.passages[p], self._users[p], self._through[p]
        now = {int(ids[i]): int(e) for i, e in zip(users, exits, strict=True)}
        for k in np.flatnonzero(on_map):
            key = int(ids[k])
            if key in last and key not in now and \
                    passage.sides[cells[k, 0], cells[k, 1]] == last[key]:
                through[key] = last[key]
        for key, side in now.items():
            if through.get(key, side) != side:
                del through[key]
        self._users[p] = now

    def _serve(self, p, ids, exits, near, inside, now=None,
               max_wait=math.inf, keep=False) -> tuple[int, set, np.ndarray]:
        """The side passage ``p`` serves now, the ids admitted to it (module docstring:
        batches) and who counts as inside (keeps going), from its users' ``ids``, exit
        sides, distances to the core and who is ``inside`` it (within ``radius``).

        While robots admitted to the served side are still to come, a robot of another side
        at the core's mouth (within ``radius`` of it, not in it) does not count as inside:
        it waits, and does not take the passage. The benchmark's doorway starts its front
        rows 0.3-0.4 m from the core, and a first step there took the passage from the
        side just admitted, whose first robot was already on its way in: both met head on
        in the door (seed 59 of 8: 71 s waiting).

        With ``now``, once another side has waited ``max_wait`` seconds the batch closes
        (module docstring: a bounded wait). ``keep``: a passage longer to drive than
        ``max_wait``, whose closing batch keeps its robots and which is taken by the
        robots in its core (module docstring)."""
        held, admitted = self._held[p], self._admitted[p]
        before = held
        if held >= 0 and admitted & {int(i) for i in ids[exits == held]}:
            inside = inside & ((near <= 0.0) | (exits == held))

        def nearest(candidates) -> int:  # the side of the user nearest the core (ties: id)
            order = np.lexsort((ids[candidates], near[candidates]))
            return int(exits[candidates][order[0]])

        if inside.any() and not (exits[inside] == held).any():
            # through a long passage the robots in the core itself decide, else those in
            # the mouth; robots of the other sides merely in the mouth then wait (module
            # docstring: taking a long passage)
            deep = inside & (near <= 0.0) if keep else inside
            values, counts = np.unique(exits[deep if deep.any() else inside],
                                       return_counts=True)
            held, admitted = int(values[np.argmax(counts)]), set()  # ties: the smallest side
            if keep:
                inside = inside & ((near <= 0.0) | (exits == held))
        elif not (exits == held).any():
            held, admitted = nearest(np.arange(len(ids))), set()
        others = exits != held
        mine = exits == held
        closed = self._wait_over(p, held != before, others.any(), now, max_wait,
                                 self._oldest(p, ids[others]))
        if closed and not keep:  # nobody more, and the admitted ones far from the core wait
            # but those of them a batch took out before keep their places (seniority: a
            # robot is taken out of a batch once at most)
            close = {int(i) for i in ids[mine & (near <= 2.0 * self.routes.radius)]}
            far = admitted - close
            out = self._out[p]
            admitted &= close | (far & out)
            out |= far - admitted
        admitted |= {int(i) for i in ids[mine & inside]}
        pending = admitted & {int(i) for i in ids[mine]}  # admitted, not through yet
        if ((len(admitted) >= self.batch or closed) and others.any() and not pending
                and not inside.any()):
            held, admitted = nearest(np.flatnonzero(others)), set()  # the batch is through
            others, mine = exits != held, exits == held
            closed = self._wait_over(p, True, others.any(), now, max_wait,
                                     self._oldest(p, ids[others]))
        # first come, first served: places go to the side's users nearest the core, up to
        # the batch while another side waits (all of them while none does)
        queue = np.flatnonzero(mine & ~np.isin(ids, list(admitted)))
        since = self._since[p]  # the longest waiting first, then the nearest
        queue = queue[np.lexsort((ids[queue], near[queue],
                                  [since.get(int(i), math.inf) for i in ids[queue]]))]
        places = len(queue) if not others.any() else max(self.batch - len(admitted), 0)
        admitted |= {int(i) for i in ids[queue[:0 if closed else places]]}
        self._held[p], self._admitted[p] = held, admitted
        return held, admitted, inside

    def _oldest(self, p, ids) -> float:
        """Since when the longest waiting of robots ``ids`` waits for passage ``p`` (inf:
        none is told to wait yet)."""
        since = self._since[p]
        return min((since[int(i)] for i in ids if int(i) in since), default=math.inf)

    def _wait_over(self, p, turned, waiting, now, max_wait, oldest=math.inf) -> bool:
        """Whether passage ``p``'s batch is closed: another side has been ``waiting`` since
        at least ``max_wait`` seconds before ``now`` (the clock starts again when the
        passage ``turned`` or nobody waits; a batch once closed stays so until it turns)."""
        if turned or not waiting:
            self._waited[p], self._closed[p] = math.nan, False
        if not waiting or now is None:
            return self._closed[p]
        if math.isnan(self._waited[p]):
            # seniority: robots waiting since before the turn (taken out of their batch when
            # it closed) count from then, but the turn stays open half the bound at least
            self._waited[p] = max(float(now) - 0.5 * max_wait, min(oldest, float(now)))
        if float(now) - self._waited[p] >= max_wait:
            self._closed[p] = True
        return self._closed[p]


def declared_passage(routes: RouteMap, polygon, zone: float) -> Passage | None:
    """A passage declared as a ``polygon`` (V, 2) in the global frame (fleet/zones.py): its
    core the cells inside it where the robot fits, its zone and sides as for one found on the
    map; None when no such cell lies inside it or nothing around it is free."""
    res, shape = routes.resolution, routes.fits.shape
    core = routes.fits & cells_inside(np.asarray(polygon, dtype=np.float64), shape,
                                      routes.to_world)
    if not core.any():
        return None
    distance = _dijkstra(np.argwhere(core).astype(np.int64), routes.fits, np.ones(shape),
                         zone / res) * res
    distance[distance > zone] = np.inf
    sides, n_sides = _label(np.isfinite(distance) & ~core)
    if n_sides < 1:
        return None
    rc = np.argwhere(core).mean(axis=0) + 0.5
    return Passage(core, sides, distance, tuple(float(v) for v in routes.to_world([rc])[0]))


def coordination_world(blocked, resolution: float, origin, radius: float, *,
                       passages: bool = True,
                       zone: float = 1.5,
                       declared=(),
                       min_radius: float | None = None) -> tuple[RouteMap, PassageMap | None]:
    """The route map and (``passages``) the passage map of a grid's ``blocked`` cells for
    robots of ``radius`` (their radius with every margin), with the kernels a control step
    uses run once, so that a node builds them off its control thread and its first step with
    them compiles nothing. ``declared``: polygons (global frame) of passages declared in
    the parameters, coordinated besides those found (fleet/zones.py). ``min_radius``: their
    radius with the safety margin only, what one-lane passages keep open (fleet/routes.py)."""
    routes = RouteMap(blocked, resolution, origin, radius=radius, min_radius=min_radius)
    found = PassageMap(routes, zone=zone, declared=declared) if passages else None
    here = routes.to_world([[0.5, 0.5]])
    routes.waypoints(here, here)
    if found is not None:
        found.coordinate(here, here, np.zeros((1, 2)), np.ones(1, dtype=bool))
        found.forget()
    return routes, found
