"""Every contact of a recorded run (fleet_sim's trajectory file, ``FleetSimulation.trajectory``)
with how fast each agent in it moved just before: passive safety (issue #25) allows a person
to walk into a standing robot, never a robot to drive into someone.

A contact's pair is (robot, other) in scenario order, so a person listed before a robot is the
pair's first name: both agents' speeds are read, and the contact counts against the robots
when an ORCA-driven agent of the pair moved faster than ``MOVING`` over the recorded step
before the contact.
"""

from __future__ import annotations

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
