"""What fleet_sim reports on ``~/status``, built from the simulation's state (no ROS).

One :class:`StatusEntry` for the fleet (contacts, separation, arrivals, the clock) and one per
robot (pose, speed, command, progress, contacts), each a level, a one-line message and
key-value strings: the content of a ``diagnostic_msgs/DiagnosticStatus``, which the node
fills from it. Numbers are written with 4 decimals (``inf`` and ``nan`` as such).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from planning_collision.sim.pacing import PacingReport
from planning_collision.sim.simulation import MAP_ID, FleetSimulation

# Levels as diagnostic_msgs/DiagnosticStatus numbers them.
OK, WARN, ERROR = 0, 1, 2
FLEET_ID = "fleet"


@dataclass(frozen=True)
class StatusEntry:
    hardware_id: str  # "fleet", or the robot's name
    level: int
    message: str
    values: dict[str, str]


@dataclass(frozen=True)
class RunState:
    """What the node knows beyond the simulation: its settings and its clock."""

    scenario_path: str
    rate_hz: float
    started: bool
    pacing: PacingReport
    map_problem: str = ""  # why the scenario's map is not refereed; empty when it is


def number(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else str(value)


def problem_entry(problem: str) -> StatusEntry:
    """The fleet entry when nothing is simulated, and why."""
    return StatusEntry(FLEET_ID, ERROR, problem, {"problem": problem})


def fleet_entry(sim: FleetSimulation, run: RunState) -> StatusEntry:
    events = sim.events
    robot_names = set(sim.names)
    robot_hits = sum(1 for e in events if e.other in robot_names)
    map_hits = sum(1 for e in events if e.other == MAP_ID)
    arrived = int(sim.arrived.sum())
    pacing = run.pacing
    values = {
        "collisions": str(len(events)),
        "robot_collisions": str(robot_hits),
        "obstacle_collisions": str(len(events) - robot_hits - map_hits),
        "map_collisions": str(map_hits),
        "collision_pairs": json.dumps([[e.robot, e.other, round(e.time, 3)] for e in events]),
        "min_separation": number(sim.min_separation),
        "min_separation_pair": "-".join(sim.min_separation_pair),
        "min_obstacle_clearance": number(sim.min_obstacle_clearance),
        "arrived": str(arrived),
        "robots": str(len(sim.names)),
        "all_arrived": str(arrived == len(sim.names)).lower(),
        "orca_arrived": str(int((sim.arrived & sim.orca).sum())),
        "orca_robots": str(int(sim.orca.sum())),
        "started": str(run.started).lower(),
        "sim_time": number(sim.time),
        "steps": str(sim.steps),
        "achieved_rate": f"{pacing.achieved_rate:.2f}",
        "rate_hz": f"{run.rate_hz:g}",
        "real_time_factor": f"{pacing.real_time_factor:.3f}",
        "late_ticks": str(pacing.late_ticks),
        "dropped_time": number(pacing.dropped_seconds),
        "step_load": f"{pacing.load:.3f}",
        "timeout": number(sim.scenario.timeout),
        "timed_out": str(sim.time > sim.scenario.timeout).lower(),
        "scenario": run.scenario_path,
    }
    if run.map_problem:
        values["map_problem"] = run.map_problem
    level = WARN if events or run.map_problem else OK
    message = f"{arrived}/{len(sim.names)} arrived, {len(events)} collisions, t = {sim.time:.1f} s"
    return StatusEntry(FLEET_ID, level, message, values)


def touching(sim: FleetSimulation) -> dict[str, list[str]]:
    """Per robot, what it is in contact with now (robots, obstacle ids, the map)."""
    out: dict[str, list[str]] = {name: [] for name in sim.names}
    for robot, other in sorted(sim.current_contacts):
        out[robot].append(other)
        if other in out:
            out[other].append(robot)
    return out


def command_state(sim: FleetSimulation, fresh: np.ndarray, i: int) -> str:
    if not sim.orca[i]:
        return "none (walks by itself)"
    if np.isneginf(sim.command_times[i]):
        return "none yet"
    return "fresh" if fresh[i] else "stale"


def robot_entries(sim: FleetSimulation) -> list[StatusEntry]:
    """One entry per robot, in the scenario's order."""
    distances = sim.distances_to_goal
    fresh = sim.command_fresh()
    counts = sim.contact_counts()
    contacts = touching(sim)
    out = []
    for i, name in enumerate(sim.names):
        x, y, yaw = sim.poses[i]
        vx, vy, wz = sim.velocities[i]
        arrived = bool(sim.arrived[i])
        values = {
            "arrived": str(arrived).lower(),
            "arrival_time": number(sim.arrival_times[i]) if arrived else "",
            "distance_to_goal": number(distances[i]),
            "x": number(x), "y": number(y), "yaw": number(yaw),
            "speed": number(math.hypot(vx, vy)),
            "angular_speed": number(wz),
            "command": command_state(sim, fresh, i),
            "orca": str(bool(sim.orca[i])).lower(),
            "drive": sim.scenario.robots[i].drive,
            "collisions": str(counts[name]),
            "in_contact_with": ",".join(contacts[name]),
        }
        message = ("in contact with " + ", ".join(contacts[name]) if contacts[name]
                   else "arrived" if arrived else f"{distances[i]:.2f} m to goal")
        out.append(StatusEntry(name, WARN if contacts[name] else OK, message, values))
    return out
