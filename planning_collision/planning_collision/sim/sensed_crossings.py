"""Robots among people they see only through their lasers: the pure closed loop of issue #25's
safety target (no ROS).

:func:`random_run` draws one seeded scene: 1 or 2 robots (0.6-1.0 m/s, holonomic or
differential drive) crossing a 14 m x 8 m hall, and 1-10 people (0.5-1.5 m/s) walking straight
at constant velocity, never avoiding anyone: crossing a robot's path timed to meet it,
head-on, overtaking it from behind, or stepping out from behind a box 1.5 m ahead of it.
:func:`run` closes the loop orca_node closes over DDS: each robot's laser
(:mod:`planning_collision.sim.laser`, ``rate_hz`` with range noise) sees the box, the other
robots and the people; each scan is placed with the robot's pose at its stamp, stripped of the
box (the known static world) and of the robots (known from odometry), clustered and fed to
one shared :class:`~planning_collision.tracking.Tracker`, whose discs the
:class:`~planning_collision.fleet.FleetController` avoids (``tracking=False``: the people are
not avoided at all, to show a scene needs the sensors).

A *contact* is a robot closer to a person than their radii allow; it counts against the
robots only while the robot moves (faster than ``MOVING`` m/s): a robot standing still may be
run into (passive safety). Every contact is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.geometry import ConvexShape
from planning_collision.sim.laser import LaserSpec, StaticScene, simulate_scan
from planning_collision.tracking import (
    Discs,
    StaticMask,
    Tracker,
    TrackerSettings,
    cluster_scan,
    drop_known,
    scan_to_points,
)
from planning_collision.tracking.brake import must_stop, touched

MOVING = 0.05  # m/s: a robot faster than this at a contact ran into someone
HALF_LENGTH, HALF_WIDTH = 7.0, 4.0  # the hall
KINDS = ("crossing", "head-on", "overtaking", "stepping out")


@dataclass
class Scene:
    """One run's robots and people (global frame; people walk straight from ``t0``)."""

    robot_starts: np.ndarray  # (r, 3) x, y, yaw
    robot_goals: np.ndarray  # (r, 2)
    robot_speeds: np.ndarray  # (r,)
    holonomic: np.ndarray  # (r,) bool
    people_starts: np.ndarray  # (p, 2)
    people_velocities: np.ndarray  # (p, 2)
    people_t0: np.ndarray  # (p,) s: standing at the start until then
    kinds: list[str] = field(default_factory=list)
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)  # cx cy l w
    robot_radius: float = 0.3
    person_radius: float = 0.25

    def people_at(self, t: float) -> np.ndarray:
        walked = np.clip(t - self.people_t0, 0.0, None)[:, None]
        return self.people_starts + self.people_velocities * walked


class RunResult(NamedTuple):
    contacts: list[tuple[float, int, int, float]]  # (time, robot, person, robot speed)
    moving_contacts: int
    arrived: bool  # every robot
    time: float
    min_gap: float  # smallest robot-person clearance (negative: overlap)


def random_run(seed: int) -> Scene:
    """A seeded scene (see the module docstring)."""
    rng = np.random.default_rng(seed)
    robots = int(rng.integers(1, 3))
    lanes = [0.0] if robots == 1 else [-1.0, 1.0]
    starts, goals = [], []
    for i, y in enumerate(lanes):
        sign = 1.0 if i == 0 else -1.0  # two robots cross the hall in opposite directions
        starts.append((-sign * 6.0, y, 0.0 if sign > 0 else math.pi))
        goals.append((sign * 6.0, y))
    speeds = rng.uniform(0.6, 1.0, robots)
    holonomic = rng.random(robots) < 0.5
    people, velocities, t0, kinds, boxes = [], [], [], [], []
    for _ in range(int(rng.integers(1, 11))):
        kind = KINDS[int(rng.integers(len(KINDS)))]
        if kind == "stepping out" and boxes:
            kind = "crossing"  # one box per scene
        r = int(rng.integers(robots))
        (sx, sy, yaw), (gx, gy) = starts[r], goals[r]
        ahead = np.array([math.cos(yaw), math.sin(yaw)])
        side = np.array([-ahead[1], ahead[0]]) * (1.0 if rng.random() < 0.5 else -1.0)
        speed = rng.uniform(0.5, 1.5)
        meet = rng.uniform(2.5, 9.5)  # how far along its route the robot meets the person
        where = np.array([sx, sy]) + ahead * meet
        if kind == "crossing":
            arrive = meet / speeds[r] + rng.uniform(-1.0, 1.0)
            start = where + side * 3.5
            velocity = -side * speed
            t_start = max(0.0, arrive - 3.5 / speed)
        elif kind == "head-on":
            start = np.array([gx, gy]) + side * rng.uniform(0.0, 0.3) + ahead * 0.5
            velocity = -ahead * speed
            t_start = rng.uniform(0.0, 3.0)
        elif kind == "overtaking":
            speed = max(speed, speeds[r] + 0.3)
            start = np.array([sx, sy]) - ahead * rng.uniform(2.0, 3.0) + side * rng.uniform(
                0.0, 0.3)
            velocity = ahead * speed
            t_start = rng.uniform(0.0, 2.0)
        else:  # stepping out from behind a 1 m x 1.6 m box beside the route
            if lanes[r] != 0.0 and side[1] * lanes[r] < 0.0:
                side = -side  # on the outer side: the box must not close the other lane
            box_centre = where + side * 1.4
            boxes.append((*box_centre, 1.0, 1.6))
            start = where + side * 1.0 + ahead * 0.8  # hidden behind the box's corner
            velocity = -side * speed
            # Out of the box's shadow when the robot is 1.5 m away.
            t_start = max(0.0, (meet - 1.5) / speeds[r] - 0.5 / speed)
        people.append(start)
        velocities.append(velocity)
        t0.append(t_start)
        kinds.append(kind)
    return Scene(np.array(starts, float), np.array(goals, float), speeds, holonomic,
                 np.array(people, float).reshape(-1, 2), np.array(velocities, float).reshape(
                     -1, 2), np.array(t0, float), kinds, boxes)


def _box_mask(boxes, margin: float) -> StaticMask | None:
    if not boxes:
        return None
    res = 0.05
    nx, ny = int(2 * (HALF_LENGTH + 2) / res), int(2 * (HALF_WIDTH + 4) / res)
    grid = np.zeros((ny, nx), dtype=bool)
    xs = -(HALF_LENGTH + 2) + res * (np.arange(nx) + 0.5)
    ys = -(HALF_WIDTH + 4) + res * (np.arange(ny) + 0.5)
    for cx, cy, length, width in boxes:
        grid |= ((np.abs(ys[:, None] - cy) <= width / 2) & (np.abs(xs[None, :] - cx)
                                                           <= length / 2))
    return StaticMask(grid, res, -(HALF_LENGTH + 2), -(HALF_WIDTH + 4), margin=margin)


def run(scene: Scene, *, tracking: bool = True, seed: int = 0, rate_hz: float = 10.0,
        noise: float = 0.015, beams: int = 360, time_step: float = 0.05,
        timeout: float = 40.0, tracker_settings: TrackerSettings | None = None,
        brake_time: float = 0.3) -> RunResult:
    """One closed-loop run of ``scene`` (see the module docstring); ``brake_time``: the
    passive-safety stop's horizon (:func:`~planning_collision.tracking.brake.must_stop`; 0:
    none)."""
    rng = np.random.default_rng(seed)
    r, rr, pr = len(scene.robot_speeds), scene.robot_radius, scene.person_radius
    settings = FleetSettings(time_step=time_step, pref_speed=float(scene.robot_speeds.max()),
                             neighbor_dist=6.0, time_horizon=2.5, goal_tolerance=0.2)
    fleet = FleetController([AgentSpec(f"robot{i}", radius=rr,
                                       max_speed=float(scene.robot_speeds[i]),
                                       holonomic=bool(scene.holonomic[i]),
                                       goal=tuple(scene.robot_goals[i])) for i in range(r)],
                            settings=settings)
    shapes = [ConvexShape.box((cx, cy), 0.0, length, width)
              for cx, cy, length, width in scene.boxes]
    static = StaticScene(None, shapes) if shapes else None
    obstacles = (orca.build_obstacles([np.array(
        [(cx - length / 2, cy - width / 2), (cx + length / 2, cy - width / 2),
         (cx + length / 2, cy + width / 2), (cx - length / 2, cy + width / 2)])
        for cx, cy, length, width in scene.boxes]) if scene.boxes else None)
    mask = _box_mask(scene.boxes, margin=0.1)
    laser = LaserSpec(beams=beams, range_max=8.0, rate_hz=rate_hz, noise=noise)
    tracker = Tracker(tracker_settings)
    poses = scene.robot_starts.copy()
    velocities = np.zeros((r, 2))
    omegas = np.zeros(r)
    contacts, moving_contacts, min_gap = [], 0, np.inf
    touching = set()
    blind = np.zeros(r, dtype=bool)  # the latest scan saw someone on or in the robot
    period = 1.0 / rate_hz
    next_scan = np.arange(r) * period / max(r, 1)  # the lasers' phases spread over a period
    t, arrived = 0.0, False
    while t <= timeout:
        people = scene.people_at(t)
        for i in range(r):
            qx, qy, qz, qw = se2.quaternion_from_yaw(poses[i, 2])
            body = se2.to_body(velocities[i, 0], velocities[i, 1], poses[i, 2])
            fleet.odometry(i, t, t, poses[i, 0], poses[i, 1], qx, qy, qz, qw, body[0],
                           body[1], omegas[i])
        for i in range(r):
            if t + 1e-9 < next_scan[i]:
                continue
            next_scan[i] += period
            if not tracking:
                continue
            centres = np.concatenate((poses[:, :2], people))
            radii = np.concatenate((np.full(r, rr), np.full(len(people), pr)))
            ranges = simulate_scan(poses[i], laser, static, centres, radii, exclude=i, rng=rng)
            pose = fleet.pose_at(i, t)
            scan = scan_to_points(ranges, laser.angle_min, laser.angle_increment,
                                  laser.range_min, laser.range_max, pose)
            blind[i] = touched(ranges, scan.points, pose, rr)
            scan = drop_known(scan, i, poses[:, :2], np.full(r, rr), margin=0.1)
            if mask is not None:
                scan = mask.drop(scan)
            tracker.update(t, cluster_scan(scan, laser.angle_increment))
        discs = tracker.discs(t) if tracking else Discs.empty()
        step = fleet.step(t, obstacles, discs=discs)
        cmd = step.commands.copy()
        if brake_time > 0.0 and discs.count:
            ahead = np.where(scene.holonomic[:, None],
                             np.column_stack(se2.rotate(cmd[:, 0], cmd[:, 1], poses[:, 2])),
                             cmd[:, :1] * np.column_stack((np.cos(poses[:, 2]),
                                                           np.sin(poses[:, 2]))))
            cmd[must_stop(poses[:, :2], ahead, np.full(r, rr), discs, brake_time)] = 0.0
        if brake_time > 0.0:
            cmd[blind] = 0.0  # someone on or in the robot: it stands until they are gone
        for i in range(r):
            if scene.holonomic[i]:
                velocities[i] = se2.rotate(cmd[i, 0], cmd[i, 1], poses[i, 2])
                omegas[i] = 0.0
                poses[i, :2] += velocities[i] * time_step
            else:
                moved = orca.integrate_unicycle(poses[i:i + 1, :2], poses[i:i + 1, 2],
                                                cmd[i:i + 1, 0], cmd[i:i + 1, 2], time_step)
                poses[i, :2], poses[i, 2] = moved.positions[0], moved.headings[0]
                velocities[i] = cmd[i, 0] * np.array([math.cos(poses[i, 2]),
                                                      math.sin(poses[i, 2])])
                omegas[i] = cmd[i, 2]
        t += time_step
        people = scene.people_at(t)
        if len(people):
            gaps = np.hypot(*(poses[:, None, :2] - people[None]).transpose(2, 0, 1)) - rr - pr
            min_gap = min(min_gap, float(gaps.min()))
            for i, j in zip(*np.nonzero(gaps < 0.0), strict=True):
                speed = float(np.hypot(*velocities[i]))
                if (i, j) not in touching:
                    contacts.append((t, int(i), int(j), speed))
                if speed > MOVING:
                    moving_contacts += 1 if (i, j) not in touching else 0
                touching.add((i, j))
            touching = {(i, j) for i, j in touching if gaps[i, j] < 0.0}
        if np.all(np.hypot(*(poses[:, :2] - scene.robot_goals).T) <= 0.3):
            arrived = True
            break
    return RunResult(contacts, moving_contacts, arrived, t, min_gap)
