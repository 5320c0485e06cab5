"""Narrow-space scenes, generated: corridors, doorways, 4-way intersections, antipodal circles.

Pure Python and numpy (no ROS). Each generator returns a :class:`Scene`: a
:class:`~planning_collision.sim.scenario.Scenario` (robots with starts, goals and drives; the
walls as axis-aligned rectangles, :class:`~planning_collision.sim.scenario.PolygonObstacle`,
counter-clockwise, none touching another), the control time step the scene is run with, and
for each robot a route (waypoints through the passage, ending at its goal) for controllers
that follow waypoints instead of planning. The same ``(family, robots, seed)`` always gives
the same scene; the seed jitters the starts (``jitter`` metres, ``yaw_jitter`` radians) and
picks which robots are differential drives (``unicycle_fraction`` of them, rounded).

Families (:data:`FAMILIES`, :func:`make_scene`):

* ``corridor`` (:func:`corridor`): two open rooms joined by a corridor ``width`` wide and
  ``length`` long between two solid blocks; the robots wait in a block of rows in front of
  either end and each goes to the mirror image of its start (x -> -x) on the other side;
* ``doorway`` (:func:`doorway`): a wall ``thickness`` thick with one door ``door`` wide; the
  robots swap sides as in the corridor;
* ``intersection`` (:func:`intersection`): a 4-way crossing of corridors ``width`` wide
  with arms ``arm`` long between four solid corner blocks; the robots queue in the arms (round
  robin, on the arm's centre line) and each crosses to the point opposite its start;
* ``circle`` (:func:`antipodal_circle`): robots evenly on a circle, each going to the
  antipodal point, no walls.

Robots are named ``robot1``, ``robot2``, ...; their radius and top speed default to the
issue's warehouse robots (0.25 m, 0.6 m/s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planning_collision.common.checks import finite_scalar
from planning_collision.grid import GridMap
from planning_collision.sim.scenario import PolygonObstacle, Robot, Scenario

RADIUS = 0.25
MAX_SPEED = 0.6
SPACING = 0.75  # centre to centre of neighbouring robots at the start (> 2 RADIUS + jitter)
TIME_STEP = 0.05  # orca.yaml's rate_hz: 20
CIRCLE_TIME_STEP = 0.02  # the antipodal circles: a small time step
BLOCK = 6.0  # how far the solid blocks reach away from a passage (going round is far)


@dataclass(frozen=True)
class Scene:
    """A generated scene: see the module docstring."""

    family: str
    scenario: Scenario
    routes: tuple[tuple[tuple[float, float], ...], ...]
    time_step: float

    @property
    def size(self) -> int:
        return len(self.scenario.robots)

    def polygons(self) -> list[np.ndarray]:
        """The walls as counter-clockwise polygons (K, 2), ORCA's obstacle convention."""
        return [np.array(o.vertices, dtype=np.float64) for o in self.scenario.obstacles]

    def segments(self) -> np.ndarray:
        """Every edge of every wall, (M, 2, 2): start and end points."""
        edges = [np.stack([p, np.roll(p, -1, axis=0)], axis=1) for p in self.polygons()]
        return np.concatenate(edges) if edges else np.zeros((0, 2, 2))

    def grid(self, resolution: float = 0.05, margin: float = 2.0) -> GridMap:
        """The scene as an occupancy grid (100: a cell whose centre is inside a wall, else 0)
        covering every start, goal and wall corner with ``margin`` metres around them."""
        finite_scalar(resolution, "resolution", above=0.0)
        finite_scalar(margin, "margin", at_least=0.0)
        points = [np.array([r.start[:2] for r in self.scenario.robots]),
                  np.array([r.goal for r in self.scenario.robots])]
        points += self.polygons()
        allp = np.concatenate(points)
        lo = np.floor((allp.min(axis=0) - margin) / resolution) * resolution
        hi = allp.max(axis=0) + margin
        width, height = (int(v) for v in np.ceil((hi - lo) / resolution))
        cx = lo[0] + (np.arange(width) + 0.5) * resolution
        cy = lo[1] + (np.arange(height) + 0.5) * resolution
        blocked = np.zeros((height, width), dtype=bool)
        for p in self.polygons():  # axis-aligned rectangles
            (x0, y0), (x1, y1) = p.min(axis=0), p.max(axis=0)
            blocked |= (((cy >= y0) & (cy <= y1))[:, None] & ((cx >= x0) & (cx <= x1))[None, :])
        data = np.where(blocked, 100, 0).astype(np.int8)
        return GridMap(data, resolution, (float(lo[0]), float(lo[1]), 0.0))


def rectangle(name: str, x0: float, y0: float, x1: float, y1: float) -> PolygonObstacle:
    """An axis-aligned wall block, counter-clockwise."""
    if not (x1 > x0 and y1 > y0):
        raise ValueError(f"{name}: empty rectangle ({x0}, {y0}) - ({x1}, {y1})")
    return PolygonObstacle(name, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


def _count(robots, name="robots", least=1) -> int:
    return int(finite_scalar(robots, name, at_least=least, integer=True))


def _drives(n: int, fraction: float, rng: np.random.Generator) -> list[str]:
    finite_scalar(fraction, "unicycle_fraction", at_least=0.0, at_most=1.0)
    drives = ["holonomic"] * n
    for i in rng.permutation(n)[:int(round(fraction * n))]:
        drives[i] = "unicycle"
    return drives


def _robots(starts: np.ndarray, goals: np.ndarray, rng: np.random.Generator, jitter: float,
            yaw_jitter: float, unicycle_fraction: float, radius: float,
            max_speed: float) -> tuple[Robot, ...]:
    """Robots at ``starts`` (N, 2) jittered, facing their goals (N, 2) give or take
    ``yaw_jitter``."""
    finite_scalar(jitter, "jitter", at_least=0.0)
    finite_scalar(yaw_jitter, "yaw_jitter", at_least=0.0)
    finite_scalar(radius, "radius", above=0.0)
    finite_scalar(max_speed, "max_speed", above=0.0)
    n = len(starts)
    xy = starts + rng.uniform(-jitter, jitter, (n, 2))
    heading = np.arctan2(goals[:, 1] - starts[:, 1], goals[:, 0] - starts[:, 0])
    yaw = heading + rng.uniform(-yaw_jitter, yaw_jitter, n)
    drives = _drives(n, unicycle_fraction, rng)
    return tuple(Robot(f"robot{i + 1}", (float(xy[i, 0]), float(xy[i, 1]), float(yaw[i])),
                       (float(goals[i, 0]), float(goals[i, 1])), radius, max_speed, drives[i])
                 for i in range(n))


def _block(count: int, front: float, direction: float) -> np.ndarray:
    """``count`` places in rows of at most ``ceil(sqrt(count))`` across the x axis, the first
    row at x = ``front``, further rows away from the passage (``direction`` -1: towards -x)."""
    if count == 0:
        return np.zeros((0, 2))
    across = math.ceil(math.sqrt(count))
    k = np.arange(count)
    column, row = k // across, k % across
    lanes = across if count >= across else count
    y = (row - (lanes - 1) / 2.0) * SPACING
    x = front + direction * column * SPACING
    return np.column_stack([x, y])


def _swap_sides(n: int, front: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts, goals and sides (-1 left, +1 right) of ``n`` robots in two blocks facing each
    other across x = 0, each going to the mirror image of its (unjittered) start."""
    left = (n + 1) // 2
    mirror = np.array([-1.0, 1.0])
    starts = np.concatenate([_block(left, -front, -1.0), _block(n - left, -front, -1.0) * mirror])
    side = np.concatenate([-np.ones(left), np.ones(n - left)])
    goals = starts * mirror
    return starts, goals, side


def corridor(robots: int, width: float, length: float = 6.0, seed: int = 0, *,
             jitter: float = 0.05, yaw_jitter: float = 0.2, unicycle_fraction: float = 0.5,
             radius: float = RADIUS, max_speed: float = MAX_SPEED,
             timeout: float | None = None) -> Scene:
    """A corridor along x, centred on the origin; see the module docstring."""
    n = _count(robots)
    finite_scalar(width, "width", above=0.0)
    finite_scalar(length, "length", above=0.0)
    rng = np.random.default_rng(seed)
    half, w = length / 2.0, width / 2.0
    walls = (rectangle("wall_north", -half, w, half, w + BLOCK),
             rectangle("wall_south", -half, -w - BLOCK, half, -w))
    starts, goals, side = _swap_sides(n, half + 1.0)
    # In at the corridor's end on the robot's side (x = side * half), out at the other.
    routes = tuple(((float(s * half), 0.0), (float(-s * half), 0.0), (float(g[0]), float(g[1])))
                   for s, g in zip(side, goals, strict=True))
    bots = _robots(starts, goals, rng, jitter, yaw_jitter, unicycle_fraction, radius, max_speed)
    return Scene("corridor", Scenario(bots, walls, timeout=timeout or _timeout(n)), routes,
                 TIME_STEP)


def doorway(robots: int, door: float = 0.8, thickness: float = 0.2, seed: int = 0, *,
            jitter: float = 0.05, yaw_jitter: float = 0.2, unicycle_fraction: float = 0.5,
            radius: float = RADIUS, max_speed: float = MAX_SPEED,
            timeout: float | None = None) -> Scene:
    """A wall along y through the origin with a door at y = 0; see the module docstring."""
    n = _count(robots)
    finite_scalar(door, "door", above=0.0)
    finite_scalar(thickness, "thickness", above=0.0)
    rng = np.random.default_rng(seed)
    t, d = thickness / 2.0, door / 2.0
    reach = d + 2.0 * BLOCK
    walls = (rectangle("wall_north", -t, d, t, reach), rectangle("wall_south", -t, -reach, t, -d))
    starts, goals, side = _swap_sides(n, t + 1.2)
    routes = tuple(((float(s * (t + 0.4)), 0.0), (float(-s * (t + 0.4)), 0.0),
                    (float(g[0]), float(g[1]))) for s, g in zip(side, goals, strict=True))
    bots = _robots(starts, goals, rng, jitter, yaw_jitter, unicycle_fraction, radius, max_speed)
    return Scene("doorway", Scenario(bots, walls, timeout=timeout or _timeout(n)), routes,
                 TIME_STEP)


def intersection(robots: int, width: float, arm: float = 5.0, seed: int = 0, *,
                 jitter: float = 0.05, yaw_jitter: float = 0.2, unicycle_fraction: float = 0.5,
                 radius: float = RADIUS, max_speed: float = MAX_SPEED,
                 timeout: float | None = None) -> Scene:
    """A crossing of two corridors along x and y at the origin; see the module docstring."""
    n = _count(robots)
    finite_scalar(width, "width", above=0.0)
    w = width / 2.0
    per_arm = math.ceil(n / 4)
    finite_scalar(arm, "arm", at_least=0.8 + SPACING * per_arm)  # every queue fits its arm
    rng = np.random.default_rng(seed)
    e = w + arm
    walls = tuple(rectangle(f"block_{name}", *box) for name, box in (
        ("ne", (w, w, e, e)), ("nw", (-e, w, -w, e)), ("sw", (-e, -e, -w, -w)),
        ("se", (w, -e, e, -w))))
    k = np.arange(n)
    directions = np.array([(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)])[k % 4]
    distance = w + 0.8 + SPACING * (k // 4)
    starts = directions * distance[:, None]
    goals = -starts
    routes = tuple(((float(g[0]), float(g[1])),) for g in goals)
    bots = _robots(starts, goals, rng, jitter, yaw_jitter, unicycle_fraction, radius, max_speed)
    return Scene("intersection", Scenario(bots, walls, timeout=timeout or _timeout(n)), routes,
                 TIME_STEP)


def antipodal_circle(robots: int, seed: int = 0, *, circle_radius: float | None = None,
                     jitter: float = 0.05, yaw_jitter: float = 0.2,
                     unicycle_fraction: float = 0.5, radius: float = RADIUS,
                     max_speed: float = MAX_SPEED, timeout: float | None = None) -> Scene:
    """Robots evenly on a circle (default radius: at least 3 m and 1 m of arc per robot),
    each going to the antipodal point; no walls."""
    n = _count(robots)
    big = circle_radius if circle_radius is not None else max(3.0, n / (2.0 * math.pi))
    finite_scalar(big, "circle_radius", above=0.0)
    rng = np.random.default_rng(seed)
    angle = np.arange(n) * 2.0 * math.pi / n
    starts = big * np.column_stack([np.cos(angle), np.sin(angle)])
    goals = -starts
    routes = tuple(((float(g[0]), float(g[1])),) for g in goals)
    bots = _robots(starts, goals, rng, jitter, yaw_jitter, unicycle_fraction, radius, max_speed)
    return Scene("circle", Scenario(bots, (), timeout=timeout or _timeout(n)), routes,
                 CIRCLE_TIME_STEP)


def _timeout(n: int) -> float:
    """Generous: letting the robots through one at a time fits in it."""
    return 60.0 + 15.0 * n


#: The benchmark's scene families by label: (generator of (robots, seed), description).
FAMILIES: dict[str, tuple[Callable[[int, int], Scene], str]] = {
    "corridor_1.5d": (lambda n, seed: corridor(n, 3.0 * RADIUS, seed=seed),
                      "corridor 1.5 robot diameters wide (0.75 m: one lane), 6 m long"),
    "corridor_3d": (lambda n, seed: corridor(n, 6.0 * RADIUS, seed=seed),
                    "corridor 3 robot diameters wide (1.5 m: two lanes), 6 m long"),
    "doorway": (lambda n, seed: doorway(n, seed=seed), "0.8 m door in a 0.2 m wall"),
    "intersection": (lambda n, seed: intersection(n, 6.0 * RADIUS, seed=seed),
                     "4-way crossing of 1.5 m (3 diameter) corridors"),
    "circle": (lambda n, seed: antipodal_circle(n, seed=seed),
               "antipodal circle, no walls, time step 0.02 s"),
}


def make_scene(family: str, robots: int, seed: int = 0) -> Scene:
    """The scene of ``family`` (a key of :data:`FAMILIES`) with ``robots`` robots."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    return FAMILIES[family][0](robots, seed)
