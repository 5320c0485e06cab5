"""Every contact of a recorded run (fleet_sim's trajectory file, ``FleetSimulation.trajectory``)
with how fast each agent in it moved just before: passive safety (issue #25) allows a person
to walk into a standing robot, never a robot to drive into someone.

A contact's pair is (robot, other) in scenario order, so a person listed before a robot is the
pair's first name: both agents' speeds are read, and the contact counts against the robots
when an ORCA-driven agent of the pair moved faster than ``MOVING`` over the recorded step
before the contact. :func:`smallest_separation` and :func:`contact_lines` summarise a run for
the scripts that judge runs (tools/crossing_per_robot.py, tools/demo_with_network.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .sensed_crossings import MOVING


class Contact(NamedTuple):
    time: float
    robot: str
    other: str  # an agent, an obstacle id or "map"
    robot_speed: float  # m/s over the recorded step before the contact
    other_speed: float  # nan when ``other`` is not an agent
    moving: bool  # an ORCA-driven agent of the pair moved faster than MOVING


def speed_before(trajectory: Mapping[str, np.ndarray], agent: int, when: float) -> float:
    """Agent ``agent``'s speed over the last recorded step that ends at or before ``when``
    (nan when there is none)."""
    times = np.asarray(trajectory["times"], dtype=np.float64)
    k = int(np.searchsorted(times, when, side="right")) - 1  # the last sample at or before
    if k < 1:
        return float("nan")
    dt = times[k] - times[k - 1]
    if dt <= 0.0:
        return float("nan")
    x, y = trajectory["x"][:, agent], trajectory["y"][:, agent]
    return float(np.hypot(x[k] - x[k - 1], y[k] - y[k - 1]) / dt)


def contacts_of(trajectory: Mapping[str, np.ndarray], moving: float = MOVING) -> list[Contact]:
    """Every recorded contact with both agents' speeds before it (see the module docstring)."""
    names = [str(n) for n in np.asarray(trajectory["names"]).tolist()]
    orca = np.asarray(trajectory["orca"], dtype=bool)
    found = []
    for when, robot, other in zip(trajectory["contact_time"], trajectory["contact_robot"],
                                  trajectory["contact_other"], strict=True):
        when, robot, other = float(when), str(robot), str(other)
        i = names.index(robot)
        j = names.index(other) if other in names else None
        robot_speed = speed_before(trajectory, i, when)
        other_speed = float("nan") if j is None else speed_before(trajectory, j, when)
        driven = (bool(orca[i]) and robot_speed > moving) or (
            j is not None and bool(orca[j]) and other_speed > moving)
        found.append(Contact(when, robot, other, robot_speed, other_speed, driven))
    return found


def smallest_separation(trajectory: Mapping[str, np.ndarray]) -> float:
    """The smallest gap between two agents' discs over the recorded run, in metres (negative:
    they overlapped; inf with fewer than two agents or no step)."""
    x = np.asarray(trajectory["x"], dtype=np.float64)
    y = np.asarray(trajectory["y"], dtype=np.float64)
    radius = np.asarray(trajectory["radius"], dtype=np.float64)
    n = radius.size
    if n < 2 or x.shape[0] == 0:
        return math.inf
    a, b = np.triu_indices(n, k=1)
    gaps = np.hypot(x[:, a] - x[:, b], y[:, a] - y[:, b]) - (radius[a] + radius[b])
    return float(gaps.min())


def contact_lines(trajectory: Mapping[str, np.ndarray]) -> list[str]:
    """Each recorded contact as ``"<time> s <robot>-<other>"``, in the order recorded."""
    return [f"{float(t):.2f} s {a}-{b}" for t, a, b in zip(
        trajectory["contact_time"], trajectory["contact_robot"], trajectory["contact_other"],
        strict=True)]
