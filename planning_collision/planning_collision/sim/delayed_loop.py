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

One controller for the fleet (one orca_node for every robot), or with ``LoopModel.per_robot``
one per robot (an orca_node per robot, as ``tools/crossing_per_robot.py`` runs them): each
commands its robot and observes the others, the other robots at responsibility 0.5 (each
avoids its share itself), the people at 1; each steps on its own clock (a phase of its own
within the first period) and, when the odometry stream is not ideal, hears each robot through
a channel of its own, taking the newest sample at its step as orca_node's polled odometry
does. A :class:`Silence` stops one robot's controller for a while (a node starved or stalled:
its last command stands until the base's ``cmd_vel_timeout`` stops the robot), and with one
fleet controller it stops that robot's commands.

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
class Silence:
    """``robot``'s controller makes no step from ``start`` for ``duration`` seconds (simulated
    time); the base keeps the last command until its ``cmd_vel_timeout``."""

    robot: str
    start: float
    duration: float

    def covers(self, name: str, now: float) -> bool:
        return name == self.robot and self.start <= now < self.start + self.duration


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
    silences: tuple[Silence, ...] = ()
    # The base times a command out cmd_vel_timeout after its stamp (ros2_control's
    # diff_drive_controller, fleet_sim), or after its arrival (a watchdog on reception: a
    # command that arrived late stands a whole cmd_vel_timeout more).
    timeout_from_stamp: bool = False

    def silent(self, name: str, now: float) -> float | None:
        """When ``name``'s controller speaks again, if it is silent at ``now`` (else None)."""
        ends = [s.start + s.duration for s in self.silences if s.covers(name, now)]
        return max(ends) if ends else None


@dataclass(frozen=True)
class LoopModel:
    """What the controller is told: its settings (``command_latency`` among them) and the
    acceleration limit it assumes for each robot (0: none)."""

    settings: FleetSettings = field(default_factory=FleetSettings)
    max_linear_accel: float = 0.0
    per_robot: bool = False  # one controller per robot, the others observed at 0.5


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


@dataclass
class _Setup:
    """What both loops set up alike: the scenario's roles, its ORCA robots and people as the
    controller's agents (scenario order), the controller's settings, each robot's command
    channel and the ORCA obstacles."""

    robots: list
    controlled: list[int]  # robot indices of the ORCA robots
    observed: list[int]  # robot indices of the people
    specs: list[AgentSpec]
    people: list[AgentSpec]
    settings: FleetSettings
    commands: list[Channel]  # per ORCA robot
    obstacles: object

    @property
    def names(self) -> list[str]:
        return [self.robots[i].name for i in self.controlled]


def _set_up(scenario: Scenario, c: LoopConditions, model: LoopModel) -> _Setup:
    robots = scenario.robots
    controlled = [i for i, r in enumerate(robots) if r.orca]
    specs = [AgentSpec(r.name, radius=r.radius, max_speed=r.max_speed,
                       holonomic=r.drive == "holonomic", goal=tuple(r.goal),
                       odom_origin=tuple(r.start), max_linear_accel=model.max_linear_accel)
             for r in robots if r.orca]
    people = [AgentSpec(r.name, radius=r.radius, max_speed=r.max_speed,
                        odom_origin=tuple(r.start)) for r in robots if not r.orca]
    commands = [Channel(c.commands, in_order=c.in_order, rng=stream_rng(c.seed, COMMANDS, i))
                for i in range(len(controlled))]
    return _Setup(robots, controlled, [i for i, r in enumerate(robots) if not r.orca], specs,
                  people, replace(model.settings, time_step=c.step_period), commands,
                  orca_obstacles(scenario))


def _ticks(sim: FleetSimulation, setup: _Setup, c: LoopConditions, limit: float):
    """The simulation's times until ``limit`` or until every ORCA robot arrived; after each,
    the commands that arrived by then go to the bases and the simulation steps."""
    names = setup.names
    while sim.time < limit and not sim.arrived[setup.controlled].all():
        now = sim.time
        yield now
        _deliver(sim, c, names, setup.commands, now)
        sim.step()


def _feed(fleet: FleetController, agent: int, arrival: float, sample) -> None:
    stamp, pose, twist = sample
    _, _, qz, qw = se2.quaternion_from_yaw(float(pose[2]))
    fleet.odometry(agent, arrival, stamp, float(pose[0]), float(pose[1]), 0.0, 0.0, qz, qw,
                   float(twist[0]), float(twist[1]), float(twist[2]))


def _result(sim: FleetSimulation, controlled: list[int], steps: int) -> LoopResult:
    arrived = int(sim.arrived[controlled].sum())
    return LoopResult(
        arrived=arrived, robots=len(controlled),
        time=float(np.nanmax(sim.arrival_times[controlled])) if arrived == len(controlled)
        else math.inf,
        min_separation=sim.min_separation,
        contacts=[(e.time, e.robot, e.other) for e in sim.events], steps=steps)


def run_loop(scenario: Scenario, conditions: LoopConditions = LoopConditions(),
             model: LoopModel = LoopModel(), timeout: float | None = None) -> LoopResult:
    """One run of ``scenario`` under ``conditions`` with the controller told ``model``."""
    c = conditions
    sim = FleetSimulation(scenario, c.sim_dt, cmd_vel_timeout=c.cmd_vel_timeout,
                          max_linear_accel=c.max_linear_accel, record=False)
    limit = scenario.timeout if timeout is None else timeout
    setup = _set_up(scenario, c, model)
    if model.per_robot:
        return _run_per_robot(sim, setup, c, limit)
    fleet = FleetController(setup.specs, setup.people, setup.settings)
    order = setup.controlled + setup.observed  # agent index -> robot index
    odom = [Channel(c.odometry, in_order=c.in_order, rng=stream_rng(c.seed, ODOMETRY, i))
            for i in order]
    step_rng = stream_rng(c.seed, STEPS)
    next_step, steps = 0.0, 0
    for now in _ticks(sim, setup, c, limit):
        poses, twists = sim.odometry_poses(), sim.velocities
        for agent, i in enumerate(order):
            odom[agent].send(now, (now, poses[i].copy(), twists[i].copy()))
            for sample in odom[agent].receive(now):
                _feed(fleet, agent, now, sample)
        if now + 1e-9 >= next_step:
            step = fleet.step(now, setup.obstacles)
            steps += 1
            for k in np.flatnonzero(step.publish):
                if c.silent(setup.specs[k].name, now) is None:
                    setup.commands[k].send(now, (now, step.commands[k].copy()))
            next_step = now + _period(c, step_rng)
    return _result(sim, setup.controlled, steps)


def _run_per_robot(sim: FleetSimulation, setup: _Setup, c: LoopConditions,
                   limit: float) -> LoopResult:
    """:func:`run_loop` with one controller per ORCA robot (``model.per_robot``)."""
    controlled, specs = setup.controlled, setup.specs
    fleets, orders = [], []
    for k, i in enumerate(controlled):
        others = [replace(s, responsibility=0.5) for m, s in enumerate(specs) if m != k]
        fleets.append(FleetController([specs[k]], others + setup.people, setup.settings))
        orders.append([i] + [m for m in controlled if m != i] + setup.observed)
    ideal = c.odometry.ideal
    odom = None if ideal else [
        [Channel(c.odometry, in_order=c.in_order, rng=stream_rng(c.seed, ODOMETRY, k, i))
         for i in order] for k, order in enumerate(orders)]
    step_rngs = [stream_rng(c.seed, STEPS, k) for k in range(len(controlled))]
    # Nodes are not in step with each other: each starts within the first period.
    next_step = [c.step_period * rng.random() for rng in step_rngs]
    steps = 0
    for now in _ticks(sim, setup, c, limit):
        poses, twists = sim.odometry_poses(), sim.velocities
        if not ideal:
            for k, order in enumerate(orders):
                for agent, i in enumerate(order):
                    odom[k][agent].send(now, (now, poses[i].copy(), twists[i].copy()))
        for k, i in enumerate(controlled):
            if now + 1e-9 < next_step[k]:
                continue
            resumes = c.silent(setup.robots[i].name, now)
            if resumes is not None:
                next_step[k] = resumes
                continue
            fleet = fleets[k]
            for agent, j in enumerate(orders[k]):
                if ideal:
                    _feed(fleet, agent, now, (now, poses[j], twists[j]))
                elif samples := odom[k][agent].receive(now):
                    _feed(fleet, agent, now, max(samples, key=lambda m: m[0]))
            step = fleet.step(now, setup.obstacles)
            steps += 1
            if step.publish[0]:
                setup.commands[k].send(now, (now, step.commands[0].copy()))
            next_step[k] = now + _period(c, step_rngs[k])
    return _result(sim, controlled, steps)


def _period(c: LoopConditions, rng) -> float:
    """The time to a controller's next step: the period, its jitter, now and then a stall."""
    period = c.step_period + c.step_jitter * rng.random()
    if c.stall_probability > 0.0 and rng.random() < c.stall_probability:
        period += c.stall_time
    return period


def _deliver(sim: FleetSimulation, c: LoopConditions, names, commands, now: float) -> None:
    """Each robot's commands that arrive by ``now`` to its base; one older than the base's
    ``cmd_vel_timeout`` is dropped, and a late one stands what is left of it when the base
    times commands out from their stamp."""
    for name, link in zip(names, commands, strict=True):
        for stamp, command in link.receive(now):
            if now - stamp <= c.cmd_vel_timeout:
                sim.command(name, command, age=now - stamp if c.timeout_from_stamp else 0.0)
