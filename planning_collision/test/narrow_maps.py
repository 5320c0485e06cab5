"""Maps and scenes the narrow-space tests share (issue #22; test/fleet/): two rooms split by a
wall with a door, as a blocked-cell grid, and the shipped narrow scenario files. A helper
next to conftest.py (on sys.path), as warmup_probe.py is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import planning_collision.fleet.controller as controller_module
from planning_collision.sim.scenario import load_scenario

RES = 0.05
SPEED = 0.5  # the benchmark's pref_speed (m/s), as the controller gives it to coordinate
MAX_WAIT = 6.0  # the benchmark's passage_max_wait (s)
SCENARIOS = Path(controller_module.__file__).resolve().parents[2] / "config" / "scenarios"


def rooms(door: float = 0.8, wall: float = 0.2, size=(8.0, 4.0)) -> np.ndarray:
    """Blocked cells (row = y) of two rooms split by a wall at x = size/2 with a door of
    ``door`` metres centred at y = size/2 (0: no door)."""
    w, h = (int(round(v / RES)) for v in size)
    blocked = np.zeros((h, w), dtype=bool)
    blocked[:2, :] = blocked[-2:, :] = blocked[:, :2] = blocked[:, -2:] = True
    x0, x1 = int(round((size[0] - wall) / 2 / RES)), int(round((size[0] + wall) / 2 / RES))
    blocked[:, x0:x1] = True
    if door > 0.0:
        y0, y1 = (int(round((size[1] / 2 + s * door / 2) / RES)) for s in (-1, 1))
        blocked[y0:y1, x0:x1] = False
    return blocked


def scene(name: str):
    """A shipped scenario (config/scenarios/<name>.yaml)."""
    return load_scenario(SCENARIOS / f"{name}.yaml")


def shipped_settings(time_step: float):
    """FleetSettings from the shipped orca.yaml at ``time_step``, as bench/bench_narrow.py
    runs them."""
    from dataclasses import fields

    import yaml

    from planning_collision.fleet.controller import FleetSettings

    params = yaml.safe_load((SCENARIOS.parent / "orca.yaml").read_text())
    params = params["/**/orca_node"]["ros__parameters"]
    names = {f.name for f in fields(FleetSettings)} - {"time_step"}
    return FleetSettings(**{k: v for k, v in params.items() if k in names},
                         time_step=time_step)


def corridor_positions(robots: int, seed: int, timeout: float):
    """corridor_1.5d of ``robots`` (seed ``seed``) in the pure loop as bench/bench_narrow.py
    runs it, cut at ``timeout`` seconds: the robot contacts and wall contacts seen, which
    robots started east of the corridor (x > 0), and every robot's x at the end."""
    from planning_collision.sim.fleet_loop import run_scenario
    from planning_collision.sim.scenes import make_scene

    scene = make_scene("corridor_1.5d", robots, seed)
    result = run_scenario(scene.scenario, shipped_settings(scene.time_step),
                          control_period=scene.time_step, timeout=timeout, grid=scene.grid())
    starts = np.array([robot.start for robot in scene.scenario.robots])
    return result.contacts, starts[:, 0] > 0.0, result.simulation.poses[:, 0]


def told_at_once(passages, positions, goals, given):
    """What ``passages.coordinate`` tells robots at ``positions`` going to ``goals`` (NaN:
    cmd_vel mode), all wanting to move with the preferred velocity ``given``, at the
    control time 0 with the benchmark's ``MAX_WAIT`` and ``SPEED`` (so a passage longer to
    drive than ``MAX_WAIT`` counts as long): the :class:`Coordination`."""
    n = len(positions)
    return passages.coordinate(np.asarray(positions, float), np.asarray(goals, float),
                               np.tile(given, (n, 1)), np.ones(n, bool), now=0.0,
                               max_wait=MAX_WAIT, speed=SPEED)


def core_span(passages) -> tuple[float, float]:
    """The x of the westmost and of the eastmost cell centre of the first passage's core
    (corridor_1.5d's core reaches past the walls' ends)."""
    cells = np.argwhere(passages.passages[0].core)
    x = passages.routes.to_world(cells + 0.5)[:, 0]
    return float(x.min()), float(x.max())


def corridor_passages():
    """The passages of the benchmark's one-lane corridor, corridor_1.5d (x from -3 to 3,
    0.75 m wide), as the pure loop gives them to the controller."""
    from planning_collision.sim.fleet_loop import world_routes
    from planning_collision.sim.scenes import make_scene

    corridor = make_scene("corridor_1.5d", 2)
    return world_routes(corridor.grid(), corridor.scenario,
                        shipped_settings(corridor.time_step))[1]


def drive(passages, starts, goals, seconds: float, *, speed=None, max_wait: float = 6.0,
          pref_speed: float = 0.5, dt: float = 0.1):
    """The passage rule alone: robots at ``starts`` drive to ``goals`` at ``pref_speed``
    kinematically, along the velocities ``passages.coordinate`` gives them (nobody avoids
    anybody), with ``speed`` and ``max_wait`` passed to it. Returns, per step, who was told
    to wait and every robot's position after the step."""
    positions, goals = np.array(starts, dtype=float), np.array(goals, dtype=float)
    told_wait, track = [], []
    for step in range(int(round(seconds / dt))):
        to_goal = goals - positions
        moving = np.hypot(to_goal[:, 0], to_goal[:, 1]) > 0.1
        ahead = passages.routes.waypoints(positions, goals)
        heading = np.where(ahead.routed[:, None], ahead.points, goals) - positions
        length = np.maximum(np.hypot(heading[:, 0], heading[:, 1]), 1e-9)
        pref = np.where(moving[:, None], heading / length[:, None] * pref_speed, 0.0)
        told = passages.coordinate(positions, goals, pref, moving, now=step * dt,
                                   max_wait=max_wait, speed=speed)
        told_wait.append(told.waiting)
        positions = positions + told.velocities * dt
        track.append(positions.copy())
    return np.array(told_wait), np.array(track)


def scripted(passages, scene, goals, until: float, *, dt: float = 0.1, max_wait: float = 6.0,
             order=None, after=None, speed: float = 0.3) -> dict:
    """The passage rule alone on scripted positions: ``scene(t)`` gives where the robots
    stand at time ``t`` and which want to move (the rule's velocities are not followed, so
    only its decisions are tested), each with the preferred velocity (``speed``, ``speed``).
    Returns who was told to wait at every step up to ``until`` (time -> (N,) bool, agent
    order); ``order`` lists the agents to the rule in another order; ``after(t)`` is called
    after each step."""
    goals = np.asarray(goals, dtype=float)
    n = len(goals)
    order = np.arange(n) if order is None else np.asarray(order)
    told = {}
    for k in range(int(round(until / dt)) + 1):
        t = round(k * dt, 6)
        positions, moving = scene(t)
        result = passages.coordinate(positions[order], goals[order], np.full((n, 2), speed),
                                     moving[order], ids=order, now=t, max_wait=max_wait)
        waiting = np.empty(n, dtype=bool)
        waiting[order] = result.waiting & moving[order]
        told[t] = waiting
        if after is not None:
            after(t)
    return told


def door_script(scene, goals, until: float, *, radius: float = 0.35, order=None):
    """:func:`scripted` at the benchmark's doorway (:func:`door_passages` for robots of
    ``radius``, 0.1 s steps, a 6 s ``max_wait``): who was told to wait at every step up to
    ``until``, and the passage map."""
    passages = door_passages(radius)
    return scripted(passages, scene, goals, until, order=order), passages


def door_passages(radius: float, **options):
    """The passages of the benchmark's doorway (a wall along x = 0, a 0.8 m door at y = 0)
    for robots of ``radius``; ``options`` go to PassageMap (``batch``, ``holding``...)."""
    from planning_collision.fleet.passages import PassageMap
    from planning_collision.fleet.routes import RouteMap
    from planning_collision.sim.scenes import doorway

    grid = doorway(2).grid()
    return PassageMap(RouteMap(grid.blocked_mask(), grid.resolution, grid.origin,
                               radius=radius), **options)


def stall(monitor, positions, pref, until: float = 3.0, wants=None, **given):
    """Step a :class:`~planning_collision.fleet.progress.ProgressMonitor` every 0.05 s for
    ``until`` seconds with the robots held at ``positions`` (N, 2) wanting ``pref`` (N, 2),
    each 5 m from its goal, so that every robot that wants to move stalls; ``wants``
    (default: a preferred velocity that is not zero) and ``given`` (``parked``, ``mouth``,
    ``plain``, ``wall``) as :meth:`~planning_collision.fleet.progress.ProgressMonitor.resolve`
    takes them. The last step's (told velocities, who yields)."""
    positions, pref = np.asarray(positions, float), np.asarray(pref, float)
    wants = np.abs(pref).max(axis=1) > 0.0 if wants is None else wants
    told = yielding = None
    for step in range(int(round(until / 0.05))):
        told, yielding = monitor.resolve(step * 0.05, positions, pref,
                                         np.full(len(pref), 5.0), wants, **given)
    return told, yielding
