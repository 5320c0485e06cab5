"""Holding places for the robots a passage tells to wait (issue #22, goal mode).

A robot told to wait for a passage used to stand where it was, or back away from the core's
mouth. In a doorway between two rooms that is often right on the goal of a robot coming
through the other way (two groups swapping sides stand on each other's goals), and a robot
that cannot reach its goal cannot finish its side's batch: the passage cannot turn, and the
waiters wait on (over 30 s in 4 of 100 runs of the 8-robot doorway, 20 of 100 with 16).

:class:`HoldingPlaces` picks, for a waiting robot, a place on its own side of the passage to
wait at, chosen from the map and the goals alone: a free cell (the disc fits with a little
room to spare) that is

- on the robot's own side: reachable from it without crossing the core (within ``reach``);
- off the mouth: at least ``mouth`` metres from the core through free space, and at most
  ``reach`` metres (so that it is close when its turn comes);
- clear of goals: at least ``clear`` metres from every robot's goal (the robots coming
  through park there) and from every other waiter's holding place.

Among those it takes the one with the least ``distance from the robot + distance to the
core`` (near the robot and near the mouth; ties by cell order), so every node that sees the
same fleet picks the same. Candidates lie on a lattice of ``spacing`` metres, computed once
per passage.
"""

from __future__ import annotations

import numpy as np

from .routes import RouteMap, _dijkstra


class HoldingPlaces:
    """The candidate holding places around one passage (see the module docstring).

    ``core`` (h, w) bool: the passage's core on ``routes``' grid."""

    def __init__(self, routes: RouteMap, core: np.ndarray, *, mouth: float = 1.0,
                 reach: float = 4.5, clear: float = 0.8, spacing: float = 0.25,
                 room: float = 0.1):
        from .passages import _label  # one labelling kernel for both

        self.routes, self.clear = routes, float(clear)
        res = routes.resolution
        # metres from the core through free space, out to ``reach``
        self.distance = _dijkstra(np.argwhere(core).astype(np.int64), routes.fits,
                                  np.ones(core.shape), reach / res) * res
        self.distance[self.distance > reach] = np.inf
        # the free space within reach, without the core: its parts are the passage's sides
        # (a way round the walls farther than ``reach`` does not join them)
        self.parts, _ = _label(np.isfinite(self.distance) & ~core)
        step = max(1, int(round(spacing / res)))
        grid = np.zeros(core.shape, dtype=bool)
        grid[step // 2::step, step // 2::step] = True
        ok = (grid & np.isfinite(self.distance) & (self.distance >= mouth)
              & (routes.clearance >= routes.radius + room) & (self.parts >= 0))
        cells = np.argwhere(ok)
        self.cells = cells
        self.points = routes.to_world(cells + 0.5)
        self.part = self.parts[cells[:, 0], cells[:, 1]]
        self.to_core = self.distance[cells[:, 0], cells[:, 1]]

    def part_of(self, position) -> int:
        """The side part a robot at ``position`` stands in (-1: the core or off the map)."""
        r, c = np.floor(self.routes.to_cells([position])[0]).astype(np.int64)
        h, w = self.parts.shape
        return int(self.parts[r, c]) if 0 <= r < h and 0 <= c < w else -1

    def pick(self, position, keep_clear) -> np.ndarray | None:
        """The holding place (global frame) for a robot at ``position``: on its side, clear
        of every point of ``keep_clear`` (M, 2: goals and the places taken) by ``clear``;
        None when there is none."""
        part = self.part_of(position)
        if part < 0:
            return None
        mine = self.part == part
        keep_clear = np.asarray(keep_clear, dtype=np.float64).reshape(-1, 2)
        if keep_clear.size:
            gaps = self.points[:, None, :] - keep_clear[None, :, :]
            mine &= (np.einsum("mki,mki->mk", gaps, gaps) >= self.clear ** 2).all(axis=1)
        if not mine.any():
            return None
        options = np.flatnonzero(mine)
        there = self.points[options] - np.asarray(position, dtype=np.float64)
        score = np.hypot(there[:, 0], there[:, 1]) + self.to_core[options]
        return self.points[options[int(np.argmin(score))]].copy()
