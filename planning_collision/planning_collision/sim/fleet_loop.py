"""A scenario run with no ROS at all: FleetController commanding FleetSimulation.

:func:`run_scenario` closes the loop orca_node and fleet_sim close over DDS, in one process
and in lock-step: each control period the simulator's true poses go to the controller as
odometry (fixed odometry origins at the start poses, no latency), the controller's commands go
back to the simulator, and the simulator advances. The static world is what orca_node builds
from the map (``use_map_obstacles``) and the scenario's obstacles: ORCA's polygons, and for
route planning the map's grid with the obstacles drawn in. Returns what the referee saw.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from planning_collision import orca
from planning_collision.fleet.controller import AgentSpec, FleetController, FleetSettings
from planning_collision.fleet.passages import coordination_world
from planning_collision.fleet.routes import LATENCY_SLACK
from planning_collision.grid import GridMap, occupied_polygons
from planning_collision.grid.map_file import load_map_file
from planning_collision.sim.scenario import CircleObstacle, PolygonObstacle, Scenario
from planning_collision.sim.simulation import FleetSimulation, obstacle_shapes

MAP_SIMPLIFY = 0.05  # orca.yaml's map_simplify_tolerance


class LoopResult(NamedTuple):
    """What one run showed: per ORCA robot (scenario order) when it arrived (NaN: never), and
    the contacts as (time, robot, other) (other: a robot, a person, an obstacle id or
    "map")."""

    arrival_times: np.ndarray
    contacts: list[tuple[float, str, str]]
    min_separation: float
    min_obstacle_clearance: float
    time: float
    longest_wait: float  # the longest time a robot that had not arrived stood (< 0.05 m/s)
    simulation: FleetSimulation

    @property
    def all_arrived(self) -> bool:
        return bool(np.isfinite(self.arrival_times).all())

    @property
    def makespan(self) -> float:
        return float(np.max(self.arrival_times)) if self.all_arrived else math.inf


def scenario_polygons(scenario: Scenario) -> list[np.ndarray]:
    """The scenario's obstacles as ORCA polygons (counter-clockwise)."""
    polygons = []
    for obstacle in scenario.obstacles:
        if isinstance(obstacle, PolygonObstacle):
            polygon = np.array(obstacle.vertices, dtype=np.float64)
        elif isinstance(obstacle, CircleObstacle):
            # A 16-gon around the circle (its edges outside it).
            a = np.arange(16) * (2 * math.pi / 16)
            r = obstacle.radius / math.cos(math.pi / 16)
            polygon = np.column_stack([obstacle.center[0] + r * np.cos(a),
                                       obstacle.center[1] + r * np.sin(a)])
        else:
            polygon = np.array(obstacle_shapes((obstacle,))[0][0].points, dtype=np.float64)
        x, y = polygon[:, 0], polygon[:, 1]
        if np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y) < 0.0:
            polygon = polygon[::-1].copy()
        polygons.append(polygon)
    return polygons


def scenario_world(scenario: Scenario, grid: GridMap | None = None):
    """(ORCA obstacle set or None, the map's grid or None) for a scenario: the map's blocked
    regions, less the scenario's obstacles it also draws, plus those obstacles."""
    if grid is None and scenario.map is not None:
        grid = load_map_file(scenario.map).to_grid(unknown_is_occupied=False)
    polygons = scenario_polygons(scenario)
    if grid is not None:
        map_polygons = occupied_polygons(grid, MAP_SIMPLIFY)
        if polygons:
            # Leave out the map's copies of the obstacles (orca_node's covered_polygons).
            from planning_collision.geometry import ConvexShape, ObstacleSet, decompose

            parts = []
            for polygon in polygons:
                parts += decompose(polygon) if len(polygon) >= 3 else [ConvexShape(polygon)]
            kept = []
            for polygon in map_polygons:
                near = ObstacleSet.from_shapes(parts).nearest(
                    polygon[:, None, :], np.ones(len(polygon), np.int64),
                    np.zeros(len(polygon)), max_distance=2 * grid.resolution)
                if not (near.index >= 0).all():
                    kept.append(polygon)
            map_polygons = kept
        polygons = map_polygons + polygons
    obstacles = orca.build_obstacles(polygons) if polygons else None
    return obstacles, grid


def world_routes(grid: GridMap, scenario: Scenario, settings: FleetSettings, *,
                 slack: float = LATENCY_SLACK):
    """The route map and passages for a scenario's robots on ``grid`` with the scenario's
    obstacles drawn in, for the largest radius plus the safety margin plus ``slack`` (what
    the controller adds for latency and tracking) where there is room, and the radius plus
    the safety margin on the centre line of a one-lane passage (fleet/routes.py)."""
    blocked = grid.blocked_mask()
    if scenario.obstacles:
        from planning_collision.grid import footprint_cells

        for shape in obstacle_shapes(scenario.obstacles)[0]:
            cells = footprint_cells(grid, shape, (0.0, 0.0, 0.0))
            inside = ((cells[:, 0] >= 0) & (cells[:, 0] < grid.width)
                      & (cells[:, 1] >= 0) & (cells[:, 1] < grid.height))
            blocked[cells[inside, 1], cells[inside, 0]] = True
    needed = max(r.radius for r in scenario.robots if r.orca) + settings.safety_margin
    return coordination_world(blocked, grid.resolution, grid.origin, needed + slack,
                              min_radius=needed)


def run_scenario(scenario: Scenario, settings: FleetSettings | None = None, *,
                 control_period: float = 0.05, substeps: int = 1, timeout: float | None = None,
                 grid: GridMap | None = None, controller_hook=None,
                 coordinate: bool = True) -> LoopResult:
    """Run ``scenario`` until every robot arrived or ``timeout`` (default: the scenario's)
    simulated seconds passed. The controller steps every ``control_period``; the simulator
    ``substeps`` times per period. ``controller_hook(controller, grid, obstacles)`` may
    configure the controller before the run. ``coordinate``: give the controller routes
    and passages from the map (:func:`world_routes`), as orca_node does with a map."""
    settings = settings or FleetSettings(time_step=control_period)
    obstacles, grid = scenario_world(scenario, grid)
    robots = [r for r in scenario.robots if r.orca]
    people = [r for r in scenario.robots if not r.orca]
    specs = [AgentSpec(r.name, radius=r.radius, max_speed=r.max_speed,
                       holonomic=r.drive == "holonomic", goal=tuple(r.goal),
                       odom_origin=tuple(r.start)) for r in robots]
    observed = [AgentSpec(p.name, radius=p.radius, max_speed=p.max_speed,
                          odom_origin=tuple(p.start)) for p in people]
    controller = FleetController(specs, observed, replace(settings))
    if grid is not None and coordinate:
        controller.set_world(*world_routes(grid, scenario, settings))
    if controller_hook is not None:
        controller_hook(controller, grid, obstacles)
    sim = FleetSimulation(scenario, control_period / substeps, grid, record=False,
                          goal_tolerance=max(0.15, settings.goal_tolerance + 0.01))
    order = [sim.index[r.name] for r in robots] + [sim.index[p.name] for p in people]
    horizon = scenario.timeout if timeout is None else timeout
    still = np.zeros(len(robots))
    longest = 0.0
    steps = int(round(horizon / control_period))
    for _ in range(steps):
        now = sim.time
        odometry = sim.odometry_poses()
        for i, s in enumerate(order):
            x, y, yaw = odometry[s]
            vx, vy, wz = sim.velocities[s]
            controller.odometry(i, now, now, x, y, 0.0, 0.0, math.sin(yaw / 2),
                                math.cos(yaw / 2), vx, vy, wz)
        step = controller.step(now, obstacles)
        for i, r in enumerate(robots):
            if step.publish[i]:
                sim.command(r.name, step.commands[i])
        for _ in range(substeps):
            sim.step()
        rows = order[:len(robots)]
        speed = np.hypot(sim.velocities[rows, 0], sim.velocities[rows, 1])
        waiting = (speed < 0.05) & ~sim.arrived[rows]
        still = np.where(waiting, still + control_period, 0.0)
        longest = max(longest, float(still.max(initial=0.0)))
        if sim.arrived[rows].all():
            break
    contacts = [(e.time, e.robot, e.other) for e in sim.events]
    return LoopResult(sim.arrival_times[order[:len(robots)]], contacts, sim.min_separation,
                      sim.min_obstacle_clearance, sim.time, longest, sim)
