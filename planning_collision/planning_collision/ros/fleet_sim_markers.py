"""fleet_sim's ``~/markers``: a disc and a name per robot (red while in contact, blue for ORCA
robots, orange for people), one line list of headings and one of goal circles. The messages are
built once and moved in place at each publication."""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from planning_collision.sim.simulation import FleetSimulation

from . import markers

ORCA_COLOR = markers.BLUE
PERSON_COLOR = markers.ORANGE


class FleetMarkers:
    def __init__(self, sim: FleetSimulation, frame: str, goal_tolerance: float):
        self.sim = sim
        self.frame = frame
        self.goal_tolerance = goal_tolerance
        self._batch: MarkerArray | None = None

    def _build(self, stamp) -> MarkerArray:
        sim, frame = self.sim, self.frame
        self._discs, self._labels = [], []
        for i, name in enumerate(sim.names):
            disc = markers.marker(Marker.CYLINDER, "robots", i, frame, stamp, ORCA_COLOR,
                                  2.0 * float(sim.radii[i]))
            disc.scale.z = 0.1
            disc.pose.position.z = 0.05
            label = markers.marker(Marker.TEXT_VIEW_FACING, "names", i, frame, stamp,
                                   markers.GREY, 0.25)
            label.text = name
            label.pose.position.z = 0.5
            self._discs.append(disc)
            self._labels.append(label)
        self._headings = markers.marker(Marker.LINE_LIST, "headings", 0, frame, stamp,
                                        markers.GREY, 0.04)
        goals = markers.marker(Marker.LINE_LIST, "goals", 0, frame, stamp, markers.GREEN, 0.03)
        goals.points = self._goal_rings()
        batch = MarkerArray()
        batch.markers = self._discs + self._labels + [self._headings, goals]
        return batch

    def _goal_rings(self) -> list[Point]:
        """A 16-sided circle of radius goal_tolerance around each goal, as line-list points."""
        points = []
        angles = np.linspace(0.0, 2.0 * math.pi, 17)
        for gx, gy in self.sim.goals:
            ring = np.column_stack([gx + self.goal_tolerance * np.cos(angles),
                                    gy + self.goal_tolerance * np.sin(angles)])
            for a, b in zip(ring[:-1], ring[1:], strict=True):
                points += [Point(x=float(a[0]), y=float(a[1])),
                           Point(x=float(b[0]), y=float(b[1]))]
        return points

    def message(self, stamp) -> MarkerArray:
        """The markers where the robots are now, stamped ``stamp``."""
        if self._batch is None:
            self._batch = self._build(stamp)
        sim = self.sim
        in_contact = {name for pair in sim.current_contacts for name in pair}
        xs, ys, yaws = (sim.poses[:, k].tolist() for k in range(3))
        heading_points = []
        for i, name in enumerate(sim.names):
            x, y, r = xs[i], ys[i], float(sim.radii[i])
            disc, label = self._discs[i], self._labels[i]
            disc.pose.position.x, disc.pose.position.y = x, y
            disc.color = (markers.RED if name in in_contact
                          else ORCA_COLOR if sim.orca[i] else PERSON_COLOR)
            label.pose.position.x, label.pose.position.y = x, y
            heading_points += [Point(x=x, y=y, z=0.12),
                               Point(x=x + r * math.cos(yaws[i]), y=y + r * math.sin(yaws[i]),
                                     z=0.12)]
        self._headings.points = heading_points
        for m in self._batch.markers:
            m.header.stamp = stamp
        return self._batch
