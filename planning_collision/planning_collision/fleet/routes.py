"""Routes to the goal around the map and the obstacles, for goal mode (issue #22 item 2).

ORCA steers each robot towards its preferred velocity and only avoids what is near; a wall
between a robot and its goal is a dead end for a preferred velocity that points straight at
the goal. :class:`RouteMap` plans on the occupancy grid instead, as a navigation function:

* the *clearance* of every cell (the exact Euclidean distance from its centre to the
  nearest blocked cell, less half a cell);
* where the robot's disc *fits* (the cells routes use): where ``clearance >= radius``, and,
  in a passage narrower than that, on its centre line (its *lane*, below) where
  ``clearance >= min_radius``;
* per goal, the *cost to go* of every cell (Dijkstra from the goal over the cells where a
  robot's disc fits; cells closer than ``radius + comfort`` to a wall cost more, so routes
  keep to the middle of a passage when they can), computed once per goal and kept until the
  world changes (a new :class:`RouteMap`);
* per robot and step, a *waypoint*: following the steepest descent of the cost to go from
  the robot's cell for at most ``lookahead`` metres, the farthest point on it the robot sees
  (its disc fits all along the straight segment); the goal itself when it is in sight.

When the goal is out of sight, the waypoint moves ``keep_right`` metres to the right of
the way ahead where the robot still fits (half that where only that fits): oncoming robots
in a passage wide enough for two take different lanes instead of meeting head-on. The
preferred velocity heads for the waypoint, so in open space it is exactly the straight line
to the goal, as before. Kernels in numba (cached); a 340 x 260 map takes a few
milliseconds per goal.

**Two radii: what a robot needs and what it is given where there is room.** ``min_radius``
is what ORCA needs of a wall: the robot's radius plus its safety margin (its obstacle
half-planes stay feasible as long as the robot's centre keeps that far from every wall).
``radius`` adds a slack (the controller's allowance for latency and tracking error) that
keeps routes farther off the walls where the free space allows it. The slack must not close
a passage the robot fits through with its safety margin: the bench's one-lane corridor,
0.75 m wide, leaves 0.325 m of clearance on its centre line at 0.05 m a cell (a wall's
boundary cells count as blocked, and the clearance is taken half a cell short), less than
0.25 + 0.05 + 0.05 m but more than 0.25 + 0.05 m, and every robot was routed 20 m round the
blocks instead. So where the free space is narrower than ``2 * radius`` the route map keeps
its *lane*: the ridge of the clearance (its medial axis, :func:`ridge`) with its 8
neighbours, wherever their clearance is at least ``min_radius``. Elsewhere nothing changes
(a cell off the centre line closer than ``radius`` to a wall has room farther off it), so
routes through passages already open are the same. A lane cell costs its length (weight 1):
on the centre line of a one-lane passage there is no middle to keep to, and weighting it as
a cell beside a wall (5x) made a 6 m corridor cost 30 m, more than the detour. (The centre
line of a passage between ``2 * radius`` and ``2 * (radius + comfort)`` wide still costs
more than 1x; left as it was so that the routes already driven do not change.)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

SQRT2 = math.sqrt(2.0)
# metres the route map adds to a robot's radius and safety margin where there is room: the
# controller's allowance for latency and tracking error (module docstring: two radii)
LATENCY_SLACK = 0.05
_DI = np.array([1, -1, 0, 0, 1, 1, -1, -1], dtype=np.int64)
_DJ = np.array([0, 0, 1, -1, 1, -1, 1, -1], dtype=np.int64)


@numba.njit(cache=True)
def descend(cost, r, c):  # pragma: no cover - numba
    """The step of steepest descent from cell (r, c): its 8-neighbour lowest in ``cost`` if
    that is lower than the cell itself, else (r, c) (a minimum: the goal, or a dead end)."""
    h, w = cost.shape
    nr, nc, low = r, c, cost[r, c]
    for d in range(8):
        rr, cc = r + _DI[d], c + _DJ[d]
        if 0 <= rr < h and 0 <= cc < w and cost[rr, cc] < low:
            nr, nc, low = rr, cc, cost[rr, cc]
    return nr, nc
_STEP = np.array([1.0, 1.0, 1.0, 1.0, SQRT2, SQRT2, SQRT2, SQRT2])


@numba.njit(cache=True)
def _dijkstra(sources, passable, weight, limit):  # pragma: no cover - numba
    """Costs (h, w) from the source cells (k, 2: row, col) over 8-connected passable cells,
    a step costing its length times the mean weight of its two cells; inf where unreached
    or beyond ``limit``."""
    h, w = passable.shape
    cost = np.full((h, w), np.inf)
    heap_c = np.empty(h * w * 8 + 16)
    heap_i = np.empty(h * w * 8 + 16, dtype=np.int64)
    size = 0
    for k in range(sources.shape[0]):
        r, c = sources[k, 0], sources[k, 1]
        if 0 <= r < h and 0 <= c < w and cost[r, c] > 0.0:
            cost[r, c] = 0.0
            # push
            pos = size
            size += 1
            heap_c[pos] = 0.0
            heap_i[pos] = r * w + c
    # heapify (all zero: already a heap)
    while size > 0:
        top_c, top_i = heap_c[0], heap_i[0]
        size -= 1
        if size > 0:
            lc, li = heap_c[size], heap_i[size]
            pos = 0
            while True:
                child = 2 * pos + 1
                if child >= size:
                    break
                if child + 1 < size and heap_c[child + 1] < heap_c[child]:
                    child += 1
                if heap_c[child] >= lc:
                    break
                heap_c[pos], heap_i[pos] = heap_c[child], heap_i[child]
                pos = child
            heap_c[pos], heap_i[pos] = lc, li
        r, c = top_i // w, top_i % w
        if top_c > cost[r, c] or top_c > limit:
            continue
        for d in range(8):
            rr, cc = r + _DI[d], c + _DJ[d]
            if rr < 0 or rr >= h or cc < 0 or cc >= w or not passable[rr, cc]:
                continue
            new = top_c + _STEP[d] * 0.5 * (weight[r, c] + weight[rr, cc])
            if new < cost[rr, cc]:
                cost[rr, cc] = new
                pos = size
                size += 1
                if size > heap_c.shape[0]:
                    return cost  # cannot happen: each cell is pushed at most 8 times
                while pos > 0:
                    parent = (pos - 1) // 2
                    if heap_c[parent] <= new:
                        break
                    heap_c[pos], heap_i[pos] = heap_c[parent], heap_i[parent]
                    pos = parent
                heap_c[pos], heap_i[pos] = new, rr * w + cc
    return cost


@numba.njit(cache=True)
def _edt_line(f, out, v, z):  # pragma: no cover - numba
    """Squared distance transform of one line (Felzenszwalb and Huttenlocher's lower
    envelope of parabolas): out[q] = min over p of (q - p)^2 + f[p]."""
    n = f.shape[0]
    k = 0
    v[0] = 0
    z[0], z[1] = -np.inf, np.inf
    for q in range(1, n):
        while True:
            p = v[k]
            s = ((f[q] + q * q) - (f[p] + p * p)) / (2.0 * (q - p))
            if s <= z[k] and k > 0:
                k -= 1
                continue
            if s <= z[k]:  # k == 0: replace the first parabola
                v[0] = q
                z[0], z[1] = -np.inf, np.inf
                break
            k += 1
            v[k] = q
            z[k], z[k + 1] = s, np.inf
            break
    k = 0
    for q in range(n):
        while z[k + 1] < q:
            k += 1
        out[q] = (q - v[k]) ** 2 + f[v[k]]


@numba.njit(cache=True)
def edt(mask):  # pragma: no cover - numba
    """Exact Euclidean distance (in cells) from each cell's centre to the nearest centre of
    a ``mask`` cell (inf when there is none)."""
    h, w = mask.shape
    big = 1e30
    grid = np.empty((h, w))
    n = max(h, w)
    f, out = np.empty(n), np.empty(n)
    v, z = np.empty(n, dtype=np.int64), np.empty(n + 1)
    for c in range(w):
        for r in range(h):
            f[r] = 0.0 if mask[r, c] else big
        _edt_line(f[:h], out[:h], v, z)
        for r in range(h):
            grid[r, c] = out[r]
    for r in range(h):
        for c in range(w):
            f[c] = grid[r, c]
        _edt_line(f[:w], out[:w], v, z)
        for c in range(w):
            grid[r, c] = math.sqrt(out[c]) if out[c] < big * 0.5 else np.inf
    return grid


def ridge(clearance: np.ndarray) -> np.ndarray:
    """The ridge of a clearance map (its medial axis, (h, w) bool): cells that are a local
    maximum in x or in y, higher than one of the two neighbours (a flat run along a wall is
    no ridge)."""
    pad = np.pad(clearance, 1, constant_values=-np.inf)
    left, right, down, up = pad[1:-1, :-2], pad[1:-1, 2:], pad[:-2, 1:-1], pad[2:, 1:-1]
    return (((clearance >= left) & (clearance >= right)
             & ((clearance > left) | (clearance > right)))
            | ((clearance >= down) & (clearance >= up) & ((clearance > down) | (clearance > up))))


def lanes(clearance: np.ndarray, min_radius: float, radius: float) -> np.ndarray:
    """The centre lines of the passages narrower than ``2 * radius`` where a disc of
    ``min_radius`` fits ((h, w) bool): ridge cells whose clearance is in [min_radius,
    radius), with their 8 neighbours in the same range (a ridge drawn in cells can step
    diagonally or break by a cell where the walls are not along the grid)."""
    band = (clearance >= min_radius) & (clearance < radius)
    core = band & ridge(clearance)
    if not core.any():
        return core
    pad = np.pad(core, 1)
    grown = np.zeros_like(core)
    h, w = core.shape
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            grown |= pad[1 + dr:1 + dr + h, 1 + dc:1 + dc + w]
    return band & grown


@numba.njit(cache=True)
def _segment_clear(fits, r0, c0, r1, c1):  # pragma: no cover - numba
    """Whether every cell the segment between two points (fractional cell coordinates)
    passes near (sampled at a third of a cell) is one where the robot's disc fits."""
    h, w = fits.shape
    n = int(max(abs(r1 - r0), abs(c1 - c0)) * 3.0) + 1
    for k in range(n + 1):
        t = k / n
        r = int(math.floor(r0 + (r1 - r0) * t))
        c = int(math.floor(c0 + (c1 - c0) * t))
        if r < 0 or r >= h or c < 0 or c >= w or not fits[r, c]:
            return False
    return True


@numba.njit(cache=True)
def _waypoint(cost, fits, r0, c0, goal_r, goal_c, max_cells):  # pragma: no cover - numba
    """The farthest visible point (fractional cell coordinates) on the steepest descent of
    ``cost`` from the cell of (r0, c0), at most ``max_cells`` steps; the goal when it is
    in sight. Returns (r, c, found)."""
    h, w = cost.shape
    if _segment_clear(fits, r0, c0, goal_r, goal_c):
        return goal_r, goal_c, True
    r, c = int(math.floor(r0)), int(math.floor(c0))
    if r < 0 or r >= h or c < 0 or c >= w:
        return r0, c0, False
    if not np.isfinite(cost[r, c]):
        # Outside the reachable cells (against a wall): head for the best neighbour cell.
        best, br, bc = np.inf, -1, -1
        for d in range(8):
            rr, cc = r + _DI[d], c + _DJ[d]
            if 0 <= rr < h and 0 <= cc < w and cost[rr, cc] < best:
                best, br, bc = cost[rr, cc], rr, cc
        if br < 0:
            return r0, c0, False
        return br + 0.5, bc + 0.5, True
    best_r, best_c = r + 0.5, c + 0.5
    found = False
    for _ in range(max_cells):
        nr, nc = descend(cost, r, c)
        if nr == r and nc == c:
            break
        r, c = nr, nc
        if _segment_clear(fits, r0, c0, r + 0.5, c + 0.5):
            best_r, best_c, found = r + 0.5, c + 0.5, True
    return best_r, best_c, found


class Waypoints(NamedTuple):
    """Per robot: where to head (global frame) and whether a route was found."""

    points: np.ndarray  # (N, 2)
    routed: np.ndarray  # (N,) False: no route (the goal is unreachable or off the map)


class RouteMap:
    """Routes over one occupancy grid for robots of one ``radius`` (see the module docstring).

    ``blocked`` (h, w) bool (row = y index, as :meth:`GridMap.blocked_mask`), ``resolution``
    metres per cell, ``origin`` (x, y, yaw) of cell (0, 0)'s corner. ``min_radius`` (at most
    ``radius``; default: ``radius``, no lanes): what a robot needs of a wall, down to which
    the centre lines of passages narrower than ``2 * radius`` stay open (module docstring).
    Immutable: when the world changes, build a new one (the costs to go are cached per goal
    cell)."""

    def __init__(self, blocked: np.ndarray, resolution: float, origin=(0.0, 0.0, 0.0), *,
                 radius: float = 0.3, comfort: float = 0.15, lookahead: float = 3.0,
                 keep_right: float = 0.0, min_radius: float | None = None):
        blocked = np.ascontiguousarray(blocked, dtype=np.bool_)
        if blocked.ndim != 2 or not blocked.size:
            raise ValueError("blocked must be a non-empty (height, width) array")
        for name, value in (("resolution", resolution), ("radius", radius),
                            ("lookahead", lookahead)):
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        if not (math.isfinite(comfort) and comfort >= 0.0):
            raise ValueError(f"comfort must be a finite number >= 0, got {comfort!r}")
        min_radius = radius if min_radius is None else min_radius
        if not (math.isfinite(min_radius) and 0.0 < min_radius <= radius):
            raise ValueError(f"min_radius must be a finite number in (0, radius = {radius!r}], "
                             f"got {min_radius!r}")
        self.resolution = float(resolution)
        self.origin = tuple(float(v) for v in origin) + (0.0,) * (3 - len(origin))
        self.radius, self.lookahead = float(radius), float(lookahead)
        self.min_radius = float(min_radius)
        self.keep_right = float(keep_right)
        # From a cell's centre to the nearest blocked cell's edge (half a cell short of its
        # centre: never more than the true distance).
        self.clearance = np.maximum(edt(blocked) - 0.5, 0.0) * self.resolution
        self.lanes = lanes(self.clearance, self.min_radius, self.radius)
        self.fits = (self.clearance >= self.radius) | self.lanes
        near = np.clip((self.radius + comfort - self.clearance) / max(comfort, 1e-9), 0.0, 1.0)
        self.weight = 1.0 + 4.0 * near  # up to 5x the cost right at the wall
        self.weight[self.lanes] = 1.0  # a one-lane passage's centre line: no middle to keep to
        self._costs: dict[tuple[int, int], np.ndarray] = {}

    @classmethod
    def from_grid(cls, grid, **options) -> RouteMap:
        """From a :class:`~planning_collision.grid.GridMap` (its blocked cells)."""
        return cls(grid.blocked_mask(), grid.resolution, grid.origin, **options)

    # ------------------------------------------------------------------ frames
    def to_cells(self, points) -> np.ndarray:
        """World points (N, 2) to fractional (row, col) coordinates."""
        ox, oy, yaw = self.origin
        p = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        dx, dy = p[:, 0] - ox, p[:, 1] - oy
        c, s = math.cos(yaw), math.sin(yaw)
        return np.column_stack([(-s * dx + c * dy), (c * dx + s * dy)]) / self.resolution

    def on_grid(self, cells) -> np.ndarray:
        """(N,) whether each integer cell (N, 2: row, col) lies on the grid."""
        h, w = self.fits.shape
        return (cells[:, 0] >= 0) & (cells[:, 0] < h) & (cells[:, 1] >= 0) & (cells[:, 1] < w)

    def grid_cells(self, points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells of world points (N, 2): (N,) which lie on the grid, and the rows and
        the columns of those that do."""
        cells = np.floor(self.to_cells(points)).astype(np.int64)
        on = self.on_grid(cells)
        return on, cells[on, 0], cells[on, 1]

    def to_world(self, cells) -> np.ndarray:
        ox, oy, yaw = self.origin
        rc = np.asarray(cells, dtype=np.float64).reshape(-1, 2) * self.resolution
        c, s = math.cos(yaw), math.sin(yaw)
        return np.column_stack([ox + c * rc[:, 1] - s * rc[:, 0],
                                oy + s * rc[:, 1] + c * rc[:, 0]])

    # ------------------------------------------------------------------ routes
    def cost_to_go(self, goal) -> np.ndarray:
        """(h, w) metres (weighted) from each cell to ``goal`` (cached per goal cell)."""
        r, c = (int(math.floor(v)) for v in self.to_cells([goal])[0])
        key = (r, c)
        if key not in self._costs:
            h, w = self.fits.shape
            if not (0 <= r < h and 0 <= c < w):
                cost = np.full((h, w), np.inf)
            else:
                # The goal cell may be too close to a wall for the disc: start from it anyway.
                passable = self.fits.copy()
                passable[r, c] = True
                cost = _dijkstra(np.array([[r, c]], np.int64), passable, self.weight,
                                 np.inf) * self.resolution
            if len(self._costs) > 256:  # goals change; keep the memory bounded
                self._costs.pop(next(iter(self._costs)))
            self._costs[key] = cost
        return self._costs[key]

    def snap(self, cells: np.ndarray, reach: float = 0.25) -> np.ndarray:
        """Integer cells (N, 2) where the disc does not fit (ORCA lets a robot come nearer a
        wall than the route map's margins, e.g. squeezed beside a door's mouth) moved to the
        nearest cell within ``reach`` metres where it fits (ties: the first in row order);
        the others as they are. Without it a robot there had no route (the cost to go is
        only defined where the disc fits) and drove straight at its goal, into the wall."""
        fits = self.fits
        h, w = fits.shape
        k = int(math.ceil(reach / self.resolution))
        out = np.array(cells, dtype=np.int64).reshape(-1, 2)
        for i, (r, c) in enumerate(out.copy()):
            if not (0 <= r < h and 0 <= c < w) or fits[r, c]:
                continue
            r0, c0 = max(r - k, 0), max(c - k, 0)
            rr, cc = np.nonzero(fits[r0:r + k + 1, c0:c + k + 1])
            if rr.size:
                best = int(np.argmin((rr + r0 - r) ** 2 + (cc + c0 - c) ** 2))
                out[i] = (rr[best] + r0, cc[best] + c0)
        return out

    def waypoints(self, positions, goals) -> Waypoints:
        """Per robot (positions and goals (N, 2), global frame): where to head now."""
        positions = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
        goals = np.asarray(goals, dtype=np.float64).reshape(-1, 2)
        here, there = self.to_cells(positions), self.to_cells(goals)
        cells = np.floor(here).astype(np.int64)
        snapped = self.snap(cells)
        moved = (snapped != cells).any(axis=1)
        here[moved] = snapped[moved] + 0.5  # from the nearest cell where the disc fits
        out = positions.copy()
        routed = np.zeros(len(positions), dtype=bool)
        steps = max(1, int(self.lookahead / self.resolution))
        for i in range(len(positions)):
            if not np.isfinite(goals[i]).all():
                continue
            cost = self.cost_to_go(goals[i])
            r, c, found = _waypoint(cost, self.fits, here[i, 0], here[i, 1], there[i, 0],
                                    there[i, 1], steps)
            if not found:
                continue
            routed[i] = True
            if (r, c) == (there[i, 0], there[i, 1]):
                out[i] = goals[i]
                continue
            out[i] = self.to_world([[r, c]])[0]
            # Keep right where the passage leaves room: oncoming robots take the other lane.
            ahead = np.array([r - here[i, 0], c - here[i, 1]])
            length = math.hypot(ahead[0], ahead[1])
            if self.keep_right > 0.0 and length > 1e-9:
                # (row, col) is (y, x): the right of (dy, dx) is (-dx, dy).
                right = np.array([-ahead[1], ahead[0]]) / length
                for share in (1.0, 0.5):
                    rr, cc = np.array([r, c]) + right * share * self.keep_right / self.resolution
                    if _segment_clear(self.fits, here[i, 0], here[i, 1], rr, cc):
                        out[i] = self.to_world([[rr, cc]])[0]
                        break
        return Waypoints(out, routed)

    def wall_normal(self, points, within: float = 0.1) -> np.ndarray:
        """(N, 2) per world point (N, 2): the unit vector pointing away from the nearest
        wall (the clearance's gradient, global frame) where that wall is less than
        ``radius + within`` metres from the point, so that a robot there touches it or
        nearly; zero elsewhere, off the map, and where the clearance has no slope (fleet/
        progress.py: a robot yielding there does not back off into the wall)."""
        out = np.zeros((len(np.reshape(points, (-1, 2))), 2))
        on, r, c = self.grid_cells(points)
        near = self.clearance[r, c] < self.radius + within
        # the gradient at those cells only, as np.gradient takes it: central differences
        # inside the grid, one-sided on its border (per cell; row and column are y and x)
        h, w = self.clearance.shape
        r0, r1 = np.maximum(r - 1, 0), np.minimum(r + 1, h - 1)
        c0, c1 = np.maximum(c - 1, 0), np.minimum(c + 1, w - 1)
        dr = (self.clearance[r1, c] - self.clearance[r0, c]) / np.maximum(r1 - r0, 1)
        dc = (self.clearance[r, c1] - self.clearance[r, c0]) / np.maximum(c1 - c0, 1)
        yaw = self.origin[2]
        gx = math.cos(yaw) * dc - math.sin(yaw) * dr  # (row, col) is (y, x) before the yaw
        gy = math.sin(yaw) * dc + math.cos(yaw) * dr
        length = np.hypot(gx, gy)
        near &= length > 1e-9
        normal = np.zeros((r.size, 2))
        normal[near] = np.column_stack([gx[near], gy[near]]) / length[near][:, None]
        out[on] = normal
        return out

    def route_length(self, position, goal) -> float:
        """The cost to go from ``position`` to ``goal`` (metres, weighted; inf: no route)."""
        r, c = self.snap(np.floor(self.to_cells([position])).astype(np.int64))[0]
        cost = self.cost_to_go(goal)
        h, w = cost.shape
        return float(cost[r, c]) if 0 <= r < h and 0 <= c < w else math.inf
