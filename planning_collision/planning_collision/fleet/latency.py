"""The whole control loop's latency, and the margin it costs (no ROS).

A command acts on the world later than the odometry it was computed from was measured, by the
sum of three delays:

* the odometry's age at the control step (``now - stamp``: measurement, transport, waiting for
  the step);
* how long the command stands: one control period when the node keeps its rate, longer when
  it is starved (a step that comes late leaves the previous command in force until then). The
  next period is not known when a command is computed, so the longest period achieved over
  the last ``window`` seconds stands for it (:class:`StepPeriods`);
* command delivery: from publishing to the base applying it (``command_latency``, a
  configured allowance).

Extrapolating the odometry with its measured velocity covers a robot that keeps its velocity;
what it cannot cover is a change of velocity meanwhile, by at most ``max_speed`` times the
delay. So each agent's radius in the ORCA problem grows by ``max_speed x (loop latency -
latency_allowance)`` (:func:`latency_growth`): ``safety_margin`` pays for the first
``latency_allowance`` seconds, and a late or starved loop makes robots more cautious, never
less safe.

A robot's own step periods are known only to the node that commands it: observed agents
(robots run by another node, people) grow by their odometry age and the command allowance.

An acceleration limit is a delay of its own: a base that cannot change speed at once keeps
moving while it slows down. :func:`braking_growth` is the distance a robot moving at speed
``s`` covers while braking at ``a`` (``s^2 / (2 a)``), which ORCA, assuming the new velocity
within a step, does not see; :func:`reachable_lines` are the velocities the base can reach
within the time the command stands, at least :data:`REACH_TIME` (a polygon inside that disc,
as hard half-planes).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from scipy.spatial import cKDTree

from planning_collision.orca import ConstraintLines

# A polygon of this many sides stands for the disc of reachable velocities (inscribed: every
# velocity it allows is reachable).
REACHABLE_SIDES = 12
# The reachable velocities are those the base reaches within the time a command stands, but
# at least within this many seconds: the next steps ask for about the same velocity, and a
# set as small as one step's change left ORCA no way around a crowd (12 robots on a 3 m
# circle at 0.5 m/s^2 never arrived; with 0.25 s they did, without a contact).
REACH_TIME = 0.25


class StepPeriods:
    """The control periods a node achieved: one :meth:`step` per control step, then
    :meth:`longest` is the longest period of the last ``window`` seconds (0 before two
    steps)."""

    def __init__(self, window: float = 2.0):
        self.window = float(window)
        self._times: deque[float] = deque()
        self._periods: deque[tuple[float, float]] = deque()  # (time, period)

    def step(self, now: float) -> None:
        if self._times and now > self._times[-1]:
            self._periods.append((now, now - self._times[-1]))
        self._times.append(now)
        while len(self._times) > 1:
            self._times.popleft()
        while self._periods and self._periods[0][0] < now - self.window:
            self._periods.popleft()

    def longest(self, now: float | None = None) -> float:
        """The longest period of the window; with ``now`` (a step under way), its own period
        (since the previous step) counts too."""
        current = now - self._times[-1] if now is not None and self._times else 0.0
        return max(max((p for _, p in self._periods), default=0.0), current)

    def lateness(self, time_step: float, now: float | None = None) -> float:
        """How much longer than ``time_step`` a command may stand, by the recent periods
        (and the current one, with ``now``)."""
        return max(0.0, self.longest(now) - time_step)


def loop_latency(ages: np.ndarray, odom_timeout: float, command_latency: float,
                 step_lateness: np.ndarray | float) -> np.ndarray:
    """(n,) each agent's loop latency: its odometry age (clipped to [0, odom_timeout]; a stale
    agent is stopped anyway), the command delivery allowance and its step lateness."""
    age = np.clip(np.where(np.isfinite(ages), ages, 0.0), 0.0, odom_timeout)
    return age + command_latency + step_lateness


def latency_growth(latency: np.ndarray, max_speed: np.ndarray,
                   latency_allowance: float) -> np.ndarray:
    """(n,) how far each agent may have gone from where the model puts it, beyond what
    ``safety_margin`` covers: ``max_speed x (latency - latency_allowance)``, at least 0."""
    return max_speed * np.clip(latency - latency_allowance, 0.0, None)


def clip_growth(positions: np.ndarray, radii: np.ndarray, growth: np.ndarray,
                present: np.ndarray, fixed: tuple | None = None) -> np.ndarray:
    """(n,) ``growth`` scaled down, agent by agent, so that no two ``present`` agents' discs
    of ``radii + growth`` overlap where their discs of ``radii`` do not (and grow no deeper
    into each other where they do): the growth of a pair is at most the gap between its
    ``radii`` discs. ``fixed``: more discs, (positions (d, 2), radii (d,)), that do not grow
    (e.g. tracked people), which the agents' growth stays out of as well.

    A margin is a planning allowance, not a body. Grown discs that overlap put ORCA in its
    overlap case, whose hard separation asked the pair to part within one step, faster than
    either can move; the program then failed and the robot's velocity was scaled down to
    zero: a robot stood still while a person who avoids nobody walked into it (issue #24, a
    starved controller's step lateness grew its disc past the person's). ORCA now asks at
    most the max speed of an overlapped agent (``orca_lines.separation_line``), but a margin
    that makes a pair overlap would still send the robot fleeing at full speed from a
    person it is not touching. Clipped, the pair
    is just touching in the model: ORCA lets neither approach the other, and the robot moves
    away as fast as the person approaches."""
    n = len(growth)
    if fixed is not None and len(fixed[1]):
        positions = np.concatenate([positions, np.reshape(fixed[0], (-1, 2))])
        radii = np.concatenate([radii, fixed[1]])
        growth = np.concatenate([growth, np.zeros(len(fixed[1]))])
        present = np.concatenate([present, np.ones(len(fixed[1]), dtype=bool)])
    grown = present & (growth > 0.0)
    if not grown.any() or present.sum() < 2:
        return growth[:n]
    idx = np.flatnonzero(present)
    p, r, g = positions[idx], radii[idx], growth[idx]
    # Only pairs closer than the largest radii and growths can touch: a k-d tree finds them
    # (500 agents: 20 ms for every pair, 0.2 ms for these; measured).
    pairs = cKDTree(p).query_pairs(2.0 * (r.max() + g.max()), output_type="ndarray")
    a, b = pairs[:, 0], pairs[:, 1]
    gap = np.maximum(np.hypot(*(p[a] - p[b]).T) - r[a] - r[b], 0.0)
    need = g[a] + g[b]
    over = need > gap
    factor = np.ones(len(idx))
    pair_factor = gap[over] / need[over]
    np.minimum.at(factor, a[over], pair_factor)
    np.minimum.at(factor, b[over], pair_factor)
    clipped = growth.copy()
    clipped[idx] = g * factor
    return clipped[:n]


def braking_growth(speeds: np.ndarray, max_accel: np.ndarray) -> np.ndarray:
    """(n,) the distance ``s^2 / (2 a)`` each agent covers while braking from its speed at
    its acceleration limit (0 where the limit is 0: none)."""
    limited = max_accel > 0.0
    return np.where(limited, speeds * speeds / (2.0 * np.where(limited, max_accel, 1.0)), 0.0)


def reachable_polygon(center: tuple[float, float], radius: float,
                      sides: int = REACHABLE_SIDES) -> np.ndarray:
    """(sides, 2) a counter-clockwise polygon inside the disc ``radius`` around ``center``."""
    angles = np.arange(sides) * (2.0 * math.pi / sides)
    return np.column_stack([center[0] + radius * np.cos(angles),
                            center[1] + radius * np.sin(angles)])


def reachable_lines(centers: np.ndarray, radii: np.ndarray, limited: np.ndarray,
                    sides: int = REACHABLE_SIDES) -> tuple[list, np.ndarray]:
    """Per agent (rows of ``centers`` (m, 2)) the half-planes (points, directions) of
    :func:`reachable_polygon` where ``limited``, else None; and how many each has."""
    lines = []
    for (cx, cy), r, on in zip(centers.tolist(), radii.tolist(), limited.tolist(),
                               strict=True):
        if not on:
            lines.append(None)
            continue
        vertices = reachable_polygon((cx, cy), r, sides)
        edges = np.roll(vertices, -1, axis=0) - vertices
        directions = edges / np.hypot(edges[:, 0], edges[:, 1])[:, None]
        lines.append((vertices, directions))
    return lines, np.array([0 if x is None else len(x[0]) for x in lines], np.int64)


def per_agent_lines(lines: ConstraintLines) -> list:
    """A :class:`~planning_collision.orca.ConstraintLines` as a per-agent list of (points,
    directions), None where an agent has none."""
    o = lines.offsets
    return [(lines.points[o[i]:o[i + 1]], lines.directions[o[i]:o[i + 1]])
            if o[i + 1] > o[i] else None for i in range(len(o) - 1)]


def merge_lines(*per_agent: list) -> ConstraintLines:
    """Several per-agent lists of half-planes ((points, directions) or None) as one
    :class:`~planning_collision.orca.ConstraintLines`, agent by agent, in the order given."""
    n = len(per_agent[0])
    points, directions, counts = [], [], np.zeros(n, np.int64)
    for i in range(n):
        for lines in per_agent:
            if lines[i] is not None:
                points.append(lines[i][0])
                directions.append(lines[i][1])
                counts[i] += len(lines[i][0])
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    return ConstraintLines(offsets, np.concatenate(points) if points else np.zeros((0, 2)),
                           np.concatenate(directions) if directions else np.zeros((0, 2)))
