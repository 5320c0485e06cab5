"""Which way a robot without a goal travels through a passage (issue #22, cmd_vel mode).

In goal mode a passage's users and their directions come from their routes
(:mod:`~planning_collision.fleet.passages`). In cmd_vel mode orca_node knows no goal: the
navigation stack plans, and what orca_node has is each robot's navigation command, its
preferred velocity. Its direction says where the robot wants to go: a robot in a passage's
zone or core travels towards the side its preferred velocity brings nearest, measured through
the passage (a geodesic distance to each side over the core and the zone, so a bent corridor
reads as well as a straight one). A robot on one side whose preferred velocity leads to
another side uses the passage and leaves by that side; one that heads away from the core, or
along its own side, does not use it. Like the route rule, it needs only positions, preferred
velocities and the agent order: every node that sees the same fleet decides the same.
"""

from __future__ import annotations

import numpy as np

from .routes import RouteMap, _dijkstra

# How far ahead along the preferred velocity the distances to the sides are compared
# (metres; a nearer cell is tried when a wall stands there).
LOOKAHEAD = (0.3, 0.15)


class PassageTravel:
    """Per side of one passage, the distance (metres, through its core and zone) from every
    cell of them to that side; :meth:`exit_side` reads a preferred velocity with it."""

    def __init__(self, core: np.ndarray, sides: np.ndarray, routes: RouteMap):
        self.routes = routes
        self.sides = sides
        passable = core | (sides >= 0)
        weight = np.ones(sides.shape)
        count = int(sides.max()) + 1 if (sides >= 0).any() else 0
        self.to_side = np.stack([
            _dijkstra(np.argwhere(sides == s).astype(np.int64), passable, weight, np.inf)
            for s in range(count)]) * routes.resolution if count else np.zeros((0,) + sides.shape)

    def exit_side(self, position, velocity) -> int:
        """The side a robot at ``position`` (global frame, in the passage's core or zone)
        heads for with its preferred ``velocity``: the side, other than the one it stands
        on, whose distance falls fastest ahead of it; -1 when it heads for none (away from
        the core, along its side, or at a standstill)."""
        speed = float(np.hypot(velocity[0], velocity[1]))
        if speed <= 0.0 or not len(self.to_side):
            return -1
        h, w = self.sides.shape
        here = np.floor(self.routes.to_cells([position])[0]).astype(np.int64)
        if not (0 <= here[0] < h and 0 <= here[1] < w):
            return -1
        now = self.to_side[:, here[0], here[1]]
        if not np.isfinite(now).all():
            return -1  # not in the passage's core or zone
        unit = np.asarray(velocity, dtype=np.float64) / speed
        for step in LOOKAHEAD + (1.5 * self.routes.resolution,):
            ahead = np.floor(self.routes.to_cells([np.asarray(position) + unit * step])[0])
            r, c = int(ahead[0]), int(ahead[1])
            if (r, c) == (here[0], here[1]) or not (0 <= r < h and 0 <= c < w):
                continue
            change = self.to_side[:, r, c] - now
            if not np.isfinite(change).all():
                continue  # a wall (or beyond the zone) there: look nearer
            own = self.sides[here[0], here[1]]
            if own >= 0:
                change[own] = np.inf
            best = int(np.argmin(change))
            return best if change[best] < 0.0 else -1
        return -1
