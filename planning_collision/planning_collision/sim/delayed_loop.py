"""The control loop over a bad network, in one process: FleetController commanding
FleetSimulation through seeded :class:`~planning_collision.sim.network.Channel` s (no ROS).

What orca_node and fleet_sim do over DDS, with every delay under control: every simulation
tick each robot's odometry (its pose in its odometry frame, whose origin is its start, and
its body twist, stamped with the tick's time) goes through its odometry channel; the
controller steps every ``step_period`` (plus a uniform ``step_jitter``, and with probability
``stall_probability`` a stall of ``stall_time``, as a starved node); each command it publishes
(stamped) goes through the robot's command channel, and the base applies it when it arrives
unless it is older than ``cmd_vel_timeout`` by its stamp (fleet_sim's and ros2_control's
rule); a base with no fresh command stops. Robots with ``orca: false`` (people) are observed
agents. The scenario's polygon and circle obstacles are ORCA's obstacles (its map is not used:
run scenes whose robots stay clear of the map's walls).

Used by the tests of the latency model and by ``bench/bench_delays.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet.controller import AgentSpec, FleetController, FleetSettings
from planning_collision.sim.fleet_loop import scenario_polygons
from planning_collision.sim.network import Channel, NetworkSettings, stream_rng
from planning_collision.sim.scenario import Scenario
from planning_collision.sim.simulation import FleetSimulation

ODOMETRY, COMMANDS, STEPS = 0, 1, 2  # the streams of a run's seed


@dataclass(frozen=True)
class LoopConditions:
    """How bad the loop is: each stream's network, the controller's timing, the bases."""

    odometry: NetworkSettings = NetworkSettings()
    commands: NetworkSettings = NetworkSettings()
    in_order: bool = True
    step_period: float = 0.05
    step_jitter: float = 0.0
    stall_probability: float = 0.0
    stall_time: float = 0.0
    sim_dt: float = 0.02
    cmd_vel_timeout: float = 0.5
    max_linear_accel: float = 0.0  # the bases' (fleet_sim's) limit
    seed: int = 0


@dataclass(frozen=True)
class LoopModel:
    """What the controller is told: its settings (``command_latency`` among them) and the
    acceleration limit it assumes for each robot (0: none)."""

    settings: FleetSettings = field(default_factory=FleetSettings)
    max_linear_accel: float = 0.0


@dataclass
class LoopResult:
    arrived: int
    robots: int
    time: float  # when the last robot arrived (inf: not all did)
    min_separation: float  # robot against robot, metres (negative: overlap)
    contacts: list  # (time, robot, other), robot-robot and robot-obstacle
    steps: int

    @property
    def all_arrived(self) -> bool:
        return self.arrived == self.robots


def orca_obstacles(scenario: Scenario):
    """The scenario's obstacles as an ORCA obstacle set (:func:`.fleet_loop.scenario_polygons`,
    boxes among them), or None."""
    polygons = scenario_polygons(scenario)
    return orca.build_obstacles(polygons) if polygons else None


def run_loop(scenario: Scenario, conditions: LoopConditions = LoopConditions(),
             model: LoopModel = LoopModel(), timeout: float | None = None) -> LoopResult:
    """One run of ``scenario`` under ``conditions`` with the controller told ``model``."""
    c = conditions
    sim = FleetSimulation(scenario, c.sim_dt, cmd_vel_timeout=c.cmd_vel_timeout,
                          max_linear_accel=c.max_linear_accel, record=False)
    robots = scenario.robots
    controlled = [i for i, r in enumerate(robots) if r.orca]
    observed = [i for i, r in enumerate(robots) if not r.orca]
    specs = [AgentSpec(robots[i].name, radius=robots[i].radius, max_speed=robots[i].max_speed,
                       holonomic=robots[i].drive == "holonomic", goal=tuple(robots[i].goal),
                       odom_origin=tuple(robots[i].start),
                       max_linear_accel=model.max_linear_accel) for i in controlled]
    people = [AgentSpec(robots[i].name, radius=robots[i].radius,
                        max_speed=robots[i].max_speed, odom_origin=tuple(robots[i].start))
              for i in observed]
    settings = replace(model.settings, time_step=c.step_period)
    fleet = FleetController(specs, people, settings)
    order = controlled + observed  # agent index -> robot index
    odom = [Channel(c.odometry, in_order=c.in_order, rng=stream_rng(c.seed, ODOMETRY, i))
            for i in order]
    commands = [Channel(c.commands, in_order=c.in_order, rng=stream_rng(c.seed, COMMANDS, i))
                for i in range(len(controlled))]
    step_rng = stream_rng(c.seed, STEPS)
    obstacles = orca_obstacles(scenario)
    limit = scenario.timeout if timeout is None else timeout
    next_step, steps = 0.0, 0
    while sim.time < limit and not sim.arrived[controlled].all():
        now = sim.time
        poses, twists = sim.odometry_poses(), sim.velocities
        for agent, i in enumerate(order):
            odom[agent].send(now, (now, poses[i].copy(), twists[i].copy()))
            for stamp, pose, twist in odom[agent].receive(now):
                _, _, qz, qw = se2.quaternion_from_yaw(float(pose[2]))
                fleet.odometry(agent, now, stamp, float(pose[0]), float(pose[1]), 0.0, 0.0,
                               qz, qw, float(twist[0]), float(twist[1]), float(twist[2]))
        if now + 1e-9 >= next_step:
            step = fleet.step(now, obstacles)
            steps += 1
            for k in np.flatnonzero(step.publish):
                commands[k].send(now, (now, step.commands[k].copy()))
            period = c.step_period + c.step_jitter * step_rng.random()
            if c.stall_probability > 0.0 and step_rng.random() < c.stall_probability:
                period += c.stall_time
            next_step = now + period
        for k, i in enumerate(controlled):
            for stamp, command in commands[k].receive(now):
                if now - stamp <= c.cmd_vel_timeout:
                    sim.command(robots[i].name, command)
        sim.step()
    arrived = int(sim.arrived[controlled].sum())
    return LoopResult(
        arrived=arrived, robots=len(controlled),
        time=float(np.nanmax(sim.arrival_times[controlled])) if arrived == len(controlled)
        else math.inf,
        min_separation=sim.min_separation,
        contacts=[(e.time, e.robot, e.other) for e in sim.events], steps=steps)
