"""Benchmark: narrow spaces (issue #22 item 4): our FleetController beside navground's ORCA.

Scenes (``planning_collision.sim.scenes``): corridors 1.5 and 3 robot diameters wide, a
0.8 m doorway, a 4-way intersection of 1.5 m corridors, with 2-16 robots swapping sides; and
antipodal circles of 2-30 robots at a 0.02 s time step. Robots: radius 0.25 m, 0.6 m/s, half
of them differential drives; each seed jitters the starts and picks the drives.

Ours: ``FleetController`` (goal mode, the settings of the shipped ``config/orca.yaml``, time
step = the scene's) commanding ``FleetSimulation`` in lock-step, true poses as odometry,
walls as ORCA polygons. Only the goal is given: finding the way through the passage is the
controller's job (when the controller takes a world, ``set_world``, it gets the routes and
passages ``sim.fleet_loop.world_routes`` builds from the scene's occupancy grid, as orca_node
does from a map).

navground 0.7.0 (PyPI ``navground``, C++): its ``ORCA`` behavior with the same radius,
safety margin, speeds (optimal 0.5, max 0.6), neighbour range (3 m), neighbour count,
time horizons (2 s agents, 1 s walls) and time step; the walls as line segments (every edge of
ours); holonomic robots with ``Omni`` kinematics, differential drives with ``2WDiff`` (wheel
axis so that the top turn rate is orca.yaml's max_angular_speed; ORCA's effective centre off, as
it would stop the robot's centre short of its goal).
navground plans nothing, so each of its robots follows waypoints through the passage (in at
its near end, out at the far end, then its goal): a route we do not give ours.

Per run: success (every robot within 0.15 m of its goal before the timeout, 60 s + 15 s per
robot); contacts, counted once as each begins: robot-robot and robot-wall (the simulator's
contact monitor on the poses after each step, and for navground also the collisions its world
records, which it resolves by pushing agents apart); makespan (the last arrival); the longest
wait (``sim.progress``: time a robot that has not arrived went without moving 0.1 m). A run
in which every robot still out has waited 60 s is stopped as a deadlock. Baseline "one at a
time": the robots strictly one after another, each alone along its route (start, waypoints,
goal) at the preferred speed, 0.5 m/s: the sum of the route lengths / 0.5 (seed 0; no
turning or slowing, so lower than any real run of it: the ratio is strict).

Targets (ours; the issue's "done when"): per family and robot count >= 99 % success, 0
contacts, median makespan <= 1.5 x the one-at-a-time baseline, no wait longer than 30 s, and
no deadlock in the circles. Exits with status 1 if one is missed.

Writes a markdown table to stdout and to ``doc/bench/narrow_table.txt``, the per-run results
to ``doc/bench/narrow_runs.csv`` and the plots to ``doc/bench/narrow.png``. Each run's row
names the tree it measured (``tree``: the commit, "+uncommitted" when tracked files had
changes) and when its invocation started (``started``), since one CSV can gather several
invocations (``--resume``); the table ends with them per row.

Usage: .venv/bin/python bench/bench_narrow.py [--quick] [--seeds 100] [--families ...]
       [--sizes 2 4 8 16] [--circle-sizes 2 4 8 16 30] [--no-navground | --no-ours]
       [--jobs 1] [--output DIR] [--resume]
       .venv/bin/python bench/bench_narrow.py --summarize doc/bench/narrow_runs.csv
       [--plot doc/bench/narrow.png]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import multiprocessing
import os
import statistics
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
from machine import machine_header  # bench/machine.py

REPO = Path(__file__).resolve().parents[1]
ORCA_YAML = REPO / "planning_collision" / "config" / "orca.yaml"
OUTPUT = REPO / "doc" / "bench"
GOAL_TOLERANCE = 0.15  # the simulator's arrival (a little more than the controller's 0.1)
DEADLOCK_WAIT = 60.0  # every robot still out has waited this long: stop, a deadlock
TARGET_SUCCESS, TARGET_RATIO, TARGET_WAIT = 0.99, 1.5, 30.0
OURS, NAVGROUND = "ours", "navground ORCA"


@dataclass
class Outcome:
    family: str
    robots: int
    seed: int
    controller: str
    success: bool
    deadlock: bool
    arrived: int
    makespan: float  # nan unless success
    robot_contacts: int
    wall_contacts: int
    min_separation: float
    min_wall_clearance: float
    longest_wait: float
    sim_time: float
    wall_seconds: float
    # what the run measured: the commit (with "+uncommitted" when the tree had changes to
    # tracked files) and when its invocation started (UTC); empty in CSVs written before
    tree: str = ""
    started: str = ""


def orca_settings(time_step: float):
    """FleetSettings from the shipped orca.yaml (every key FleetSettings has), at
    ``time_step``."""
    import yaml

    from planning_collision.fleet import FleetSettings

    params = yaml.safe_load(ORCA_YAML.read_text())["/**/orca_node"]["ros__parameters"]
    names = {f.name for f in fields(FleetSettings)}
    return FleetSettings(**{k: v for k, v in params.items() if k in names and k != "time_step"},
                         time_step=time_step)


class Referee:
    """Contacts (counted as they begin), separations, wall clearance, waits and arrivals."""

    def __init__(self, scene, start_xy: np.ndarray):
        from planning_collision.sim.progress import ProgressWatch
        from planning_collision.sim.simulation import ContactMonitor, obstacle_shapes

        scenario = scene.scenario
        parts, ids = obstacle_shapes(scenario.obstacles)
        self.names = scenario.names
        self.monitor = ContactMonitor(self.names, [r.radius for r in scenario.robots], parts,
                                      ids)
        self.goals = np.array([r.goal for r in scenario.robots])
        self.arrival = np.full(len(self.names), np.nan)
        self.watch = ProgressWatch(start_xy)
        self.current: set = set()
        self.robot_contacts = self.wall_contacts = 0
        self.min_separation = math.inf
        self.min_clearance = math.inf

    def observe(self, now: float, poses: np.ndarray, extra: set | None = None) -> None:
        contacts = {tuple(sorted(c)) if c[1] in self.names else c
                    for c in self.monitor.contacts(poses) | (extra or set())}
        for _, other in contacts - self.current:
            if other in self.names:
                self.robot_contacts += 1
            else:
                self.wall_contacts += 1
        self.current = contacts
        if len(self.names) > 1:
            self.min_separation = min(self.min_separation,
                                      float(self.monitor.separations(poses[:, :2]).min()))
        clearance = self.monitor.obstacle_clearance(poses)
        if clearance.size:
            self.min_clearance = min(self.min_clearance, float(clearance.min()))
        near = np.hypot(*(poses[:, :2] - self.goals).T) <= GOAL_TOLERANCE
        self.arrival[near & np.isnan(self.arrival)] = now
        self.watch.update(now, poses[:, :2], self.done)

    @property
    def done(self) -> np.ndarray:
        return ~np.isnan(self.arrival)

    def deadlocked(self) -> bool:
        out = ~self.done
        return bool(out.any() and (self.watch.waiting()[out] >= DEADLOCK_WAIT).all())

    def outcome(self, scene, family, seed, controller, now, wall_seconds) -> Outcome:
        success = bool(self.done.all())
        return Outcome(family, scene.size, seed, controller, success,
                       not success and self.deadlocked(), int(self.done.sum()),
                       float(np.max(self.arrival)) if success else math.nan,
                       self.robot_contacts, self.wall_contacts, self.min_separation,
                       self.min_clearance, float(self.watch.longest.max()), now, wall_seconds)


def run_ours(scene, family: str, seed: int, label: str) -> Outcome:
    from planning_collision import orca
    from planning_collision.fleet import AgentSpec, FleetController
    from planning_collision.sim.simulation import FleetSimulation

    started = time.perf_counter()
    scenario, dt = scene.scenario, scene.time_step
    settings = orca_settings(dt)
    specs = [AgentSpec(r.name, radius=r.radius, max_speed=r.max_speed,
                       holonomic=r.drive == "holonomic", goal=tuple(r.goal))
             for r in scenario.robots]  # odom_origin (0, 0, 0): odometry = the true poses
    controller = FleetController(specs, (), settings)
    polygons = scene.polygons()
    from planning_collision.sim import fleet_loop

    if polygons and hasattr(controller, "set_world") and hasattr(fleet_loop, "world_routes"):
        # routes and passages from the scene's map, as orca_node builds them from a map
        controller.set_world(*fleet_loop.world_routes(scene.grid(), scenario, settings))
    obstacles = orca.build_obstacles(polygons) if polygons else None
    sim = FleetSimulation(scenario, dt, record=False, goal_tolerance=GOAL_TOLERANCE)
    referee = Referee(scene, sim.poses[:, :2])
    n = len(specs)
    for _ in range(int(round(scenario.timeout / dt))):
        now = sim.time
        poses, twists = sim.poses, sim.velocities
        for i in range(n):
            x, y, yaw = poses[i]
            controller.odometry(i, now, now, x, y, 0.0, 0.0, math.sin(yaw / 2),
                                math.cos(yaw / 2), *twists[i])
        step = controller.step(now, obstacles)
        for i in np.flatnonzero(step.publish):
            sim.command(specs[i].name, step.commands[i])
        sim.step()
        referee.observe(sim.time, sim.poses)
        if referee.done.all() or referee.deadlocked():
            break
    return referee.outcome(scene, family, seed, label, sim.time, time.perf_counter() - started)


def run_navground(scene, family: str, seed: int, label: str) -> Outcome:
    import navground.core as core
    import navground.sim as ngsim

    started = time.perf_counter()
    scenario, dt = scene.scenario, scene.time_step
    settings = orca_settings(dt)
    world = ngsim.World()
    for a, b in scene.segments():
        world.add_wall(ngsim.Wall(a.astype(np.float32), b.astype(np.float32)))
    agents = []
    for k, (robot, route) in enumerate(zip(scenario.robots, scene.routes, strict=True)):
        behavior = core.Behavior.make_type("ORCA")
        behavior.time_horizon = settings.time_horizon
        behavior.static_time_horizon = settings.time_horizon_obst
        behavior.horizon = settings.neighbor_dist
        behavior.max_neighbors = settings.max_neighbors
        behavior.optimal_speed = settings.pref_speed
        behavior.safety_margin = settings.safety_margin
        if robot.drive == "holonomic":
            kinematics = core.Kinematics.make_type("Omni")
        else:
            kinematics = core.Kinematics.make_type("2WDiff")
            kinematics.wheel_axis = 2.0 * robot.max_speed / settings.max_angular_speed
        kinematics.max_speed = robot.max_speed
        task = ngsim.Task.make_type("Waypoints")
        task.waypoints = [tuple(p) for p in route]
        task.tolerances = [0.3] * (len(route) - 1) + [settings.goal_tolerance]
        estimation = ngsim.StateEstimation.make_type("Bounded")
        estimation.range = settings.neighbor_dist
        estimation.update_static_obstacles = True
        agent = ngsim.Agent(radius=robot.radius, behavior=behavior, kinematics=kinematics,
                            task=task, state_estimations=[estimation], control_period=dt,
                            id=k)
        agent.pose = core.Pose2(tuple(robot.start[:2]), robot.start[2])
        world.add_agent(agent)
        agents.append(agent)

    def name(entity) -> str:
        return scenario.robots[entity.id].name if isinstance(entity, ngsim.Agent) else "wall"

    def poses() -> np.ndarray:
        return np.array([(*a.position, a.orientation) for a in agents], dtype=np.float64)

    referee = Referee(scene, poses()[:, :2])
    now = 0.0
    for step in range(int(round(scenario.timeout / dt))):
        world.update(dt)
        now = (step + 1) * dt
        recorded = set()
        for pair in world.collisions:  # navground pushes colliding agents apart at once
            one, two = sorted(map(name, pair))  # "robotN" < "wall"
            recorded.add((one, two))
        referee.observe(now, poses(), recorded)
        if referee.done.all() or referee.deadlocked():
            break
    return referee.outcome(scene, family, seed, label, now, time.perf_counter() - started)


RUNNERS = {OURS: run_ours, NAVGROUND: run_navground}


def one_at_a_time(scene, pref_speed: float) -> float:
    """The makespan of letting the robots through strictly one after another, each alone at
    its preferred speed along its route (start, the scene's waypoints, goal): the sum of the
    route lengths over the speed (no turning, no slowing: a lower bound of the real one)."""
    total = 0.0
    for robot, route in zip(scene.scenario.robots, scene.routes, strict=True):
        points = np.array([robot.start[:2], *route])
        total += float(np.hypot(*np.diff(points, axis=0).T).sum())
    return total / pref_speed


def job(task):
    family, n, seed, controller = task
    from planning_collision.sim.scenes import make_scene

    return RUNNERS[controller](make_scene(family, n, seed), family, seed, controller)


def summarize(outcomes: list[Outcome], baselines: dict) -> list[dict]:
    groups: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.family, o.robots, o.controller), []).append(o)
    rows = []
    for (family, n, controller), runs in groups.items():
        ok = [o for o in runs if o.success]
        makespan = statistics.median([o.makespan for o in ok]) if ok else math.nan
        baseline = baselines.get((family, n), math.nan)
        rows.append({
            "family": family, "robots": n, "controller": controller, "runs": len(runs),
            "success": len(ok) / len(runs),
            "deadlocks": sum(o.deadlock for o in runs),
            "robot_contacts": sum(o.robot_contacts for o in runs),
            "wall_contacts": sum(o.wall_contacts for o in runs),
            "runs_with_contact": sum((o.robot_contacts + o.wall_contacts) > 0 for o in runs),
            "min_wall_clearance": min(o.min_wall_clearance for o in runs),
            "makespan": makespan, "baseline": baseline, "ratio": makespan / baseline,
            "longest_wait": max(o.longest_wait for o in runs),
            "seconds_per_run": statistics.mean(o.wall_seconds for o in runs),
        })
    return rows


def targets_missed(row: dict) -> list[str]:
    missed = []
    if row["success"] < TARGET_SUCCESS:
        missed.append(f"success {row['success']:.0%}")
    if row["robot_contacts"] or row["wall_contacts"]:
        missed.append("contacts")
    if not row["ratio"] <= TARGET_RATIO:
        missed.append("makespan")
    if row["longest_wait"] > TARGET_WAIT:
        missed.append("wait")
    if row["family"] == "circle" and row["deadlocks"]:
        missed.append("deadlock")
    return missed


def fmt(value: float, spec: str = ".1f") -> str:
    return "-" if not math.isfinite(value) else format(value, spec)


def table(rows: list[dict]) -> str:
    lines = ["| scene | robots | controller | runs | success | deadlocks | contacts robot / wall "
             "(runs with any) | min wall clearance m | makespan s (median) | one at a time s |"
             " ratio | longest wait s | s per run | targets |",
             "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    order = {OURS: 0, NAVGROUND: 1}
    for r in sorted(rows, key=lambda r: (r["family"], r["robots"], order[r["controller"]])):
        missed = targets_missed(r) if r["controller"] == OURS else []
        verdict = ("met" if not missed else "missed: " + ", ".join(missed)) \
            if r["controller"] == OURS else ""
        clearance = r["min_wall_clearance"]
        lines.append(
            f"| {r['family']} | {r['robots']} | {r['controller']} | {r['runs']} | "
            f"{r['success']:.0%} | {r['deadlocks']} | {r['robot_contacts']} / "
            f"{r['wall_contacts']} ({r['runs_with_contact']}) | "
            f"{fmt(clearance, '.3f') if math.isfinite(clearance) else 'no walls'} | "
            f"{fmt(r['makespan'])} | {fmt(r['baseline'])} | {fmt(r['ratio'], '.2f')} | "
            f"{fmt(r['longest_wait'])} | {r['seconds_per_run']:.2f} | {verdict} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = sorted({r["family"] for r in rows})
    fig, axes = plt.subplots(4, len(families), figsize=(3.2 * len(families), 11.0),
                             squeeze=False, sharex="col")
    styles = {OURS: dict(color="tab:blue", marker="o", markersize=8),
              NAVGROUND: dict(color="tab:orange", marker="s", markersize=5, fillstyle="none")}
    for c, family in enumerate(families):
        for controller, style in styles.items():
            mine = sorted((r for r in rows if r["family"] == family
                           and r["controller"] == controller), key=lambda r: r["robots"])
            if not mine:
                continue
            x = [r["robots"] for r in mine]
            axes[0, c].plot(x, [100 * r["success"] for r in mine], label=controller, **style)
            axes[1, c].plot(x, [r["runs_with_contact"] / r["runs"] * 100 for r in mine],
                            **style)
            axes[2, c].plot(x, [r["ratio"] for r in mine], **style)
            axes[3, c].plot(x, [r["longest_wait"] for r in mine], **style)
        axes[0, c].set_title(family)
        axes[0, c].set_ylim(-5, 105)
        axes[1, c].set_ylim(-5, 105)
        axes[2, c].axhline(TARGET_RATIO, color="grey", linestyle=":")
        axes[2, c].set_ylim(bottom=0.0)
        axes[3, c].axhline(TARGET_WAIT, color="grey", linestyle=":")
        axes[3, c].set_yscale("log")  # ours within seconds of 30 s, navground's up to minutes
        axes[3, c].set_ylim(0.1, 1000.0)
        axes[3, c].xaxis.get_major_locator().set_params(integer=True)
        axes[3, c].set_xlabel("robots")
    axes[0, 0].set_ylabel("success %")
    axes[1, 0].set_ylabel("runs with a contact %")
    axes[2, 0].set_ylabel("makespan / one at a time")
    axes[3, 0].set_ylabel("longest wait s (any run)")
    axes[0, 0].legend(fontsize="small")
    fig.suptitle("Narrow spaces: FleetController vs navground ORCA (pure simulator)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def tree_id() -> str:
    """The tree an invocation measures, short: the commit, "+uncommitted" when tracked files
    had changes (the controller is imported once per process, so this is the tree then)."""
    version = source_version()
    return version.removeprefix("commit ").replace(" with uncommitted changes", "+uncommitted")


def provenance(outcomes: list[Outcome]) -> str:
    """Per scene, robot count and controller: the trees its runs measured and when their
    invocations started (rows of CSVs written before these columns say nothing)."""
    measured: dict[tuple, dict[tuple, int]] = {}
    for o in outcomes:
        key = (o.family, o.robots, o.controller)
        stamp = (o.tree or "tree not recorded", o.started)
        measured.setdefault(key, {}).setdefault(stamp, 0)
        measured[key][stamp] += 1
    order = {OURS: 0, NAVGROUND: 1}
    lines = []
    for key in sorted(measured, key=lambda k: (k[0], k[1], order[k[2]])):
        stamps = "; ".join(f"{tree}" + (f" from {started}" if started else "") + f" ({runs})"
                           for (tree, started), runs in sorted(measured[key].items()))
        lines.append(f"- {key[0]} {key[1]} {key[2]}: {stamps}")
    return "\n".join(lines)


def source_version() -> str:
    """The commit measured, and whether the tree had uncommitted changes."""
    import subprocess

    def git(*args) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=False).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "an unknown commit"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"commit {commit}" + (" with uncommitted changes" if dirty else "")


def read_runs(path: Path) -> list[Outcome]:
    """The outcomes of a runs CSV (what :func:`main` writes)."""
    types = {fld.name: fld.type for fld in fields(Outcome)}
    parse = {"int": int, "float": float, "str": str, "bool": lambda v: v == "True"}
    with open(path, newline="") as f:
        return [Outcome(**{k: parse[types[k]](v) for k, v in row.items()})
                for row in csv.DictReader(f)]


def summarize_csv(path: Path, plot_path: Path | None = None) -> int:
    """Print the table of a runs CSV, baselines from seed 0's scenes (and plot it into
    ``plot_path``, as a run does); status 1 when one of our rows misses a target."""
    from planning_collision.sim.scenes import make_scene

    outcomes = read_runs(path)
    pref_speed = orca_settings(0.05).pref_speed
    baselines = {(o.family, o.robots): one_at_a_time(make_scene(o.family, o.robots, 0),
                                                      pref_speed) for o in outcomes}
    rows = summarize(outcomes, baselines)
    print(table(rows))
    print(f"\nMeasured on (runs):\n{provenance(outcomes)}")
    if plot_path is not None:
        plot(rows, plot_path)
    return 1 if any(r["controller"] == OURS and targets_missed(r) for r in rows) else 0


def main(argv: list[str] | None = None) -> int:
    from planning_collision.sim.scenes import FAMILIES, make_scene

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, 4 robots (circles: 8); a smoke test")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--circle-sizes", type=int, nargs="+", default=[2, 4, 8, 16, 30])
    parser.add_argument("--no-navground", action="store_true")
    parser.add_argument("--no-ours", action="store_true",
                        help="only navground's runs (they do not depend on our controller)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="worker processes (default: one per usable core)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--resume", action="store_true",
                        help="append to the output's runs CSV, running only the runs it does "
                             "not hold yet (family, robots, seed, controller); the table "
                             "covers every row of it")
    parser.add_argument("--summarize", type=Path, metavar="CSV",
                        help="only print the table of a runs CSV (also one a run stopped "
                             "early wrote: each run is written as it finishes)")
    parser.add_argument("--plot", type=Path, metavar="PNG",
                        help="with --summarize: also draw the table's plot (narrow.png's)")
    args = parser.parse_args(argv)
    if args.no_ours and args.no_navground:
        parser.error("--no-ours and --no-navground together leave nothing to run")
    if args.plot and not args.summarize:
        parser.error("--plot goes with --summarize (a run plots into --output)")
    if args.summarize:
        return summarize_csv(args.summarize, args.plot)
    if args.quick:
        args.seeds, args.sizes, args.circle_sizes = 2, [4], [8]
    controllers = ([] if args.no_ours else [OURS]) + ([] if args.no_navground else [NAVGROUND])

    from planning_collision.orca import warmup

    header = machine_header()
    version = source_version()  # what the runs measure: the tree as it is now
    stamp = {"tree": tree_id(),
             "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(header, flush=True)
    warmup()
    configs = [(f, n) for f in args.families
               for n in (args.circle_sizes if f == "circle" else args.sizes)]
    tasks = [(f, n, seed, c) for f, n in configs for c in controllers
             for seed in range(args.seeds)]
    runs_csv = args.output / "narrow_runs.csv"
    # --resume: the rows already in the CSV stay as they are and count in the table
    outcomes: list[Outcome] = read_runs(runs_csv) if args.resume and runs_csv.exists() else []
    held = {(o.family, o.robots, o.seed, o.controller) for o in outcomes}
    tasks = [t for t in tasks if t not in held]
    started = time.perf_counter()
    pref_speed = orca_settings(0.05).pref_speed
    baselines = {(f, n): one_at_a_time(make_scene(f, n, 0), pref_speed)
                 for f, n in {*configs, *((o.family, o.robots) for o in outcomes)}}
    print(f"{len(tasks)} runs" + (f" ({len(outcomes)} already in {runs_csv})" if outcomes
                                  else ""), file=sys.stderr, flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    # each run is written as it finishes, so that a run stopped early leaves its rows
    # (--summarize tables them, --resume goes on from them)
    columns = [fld.name for fld in fields(Outcome)]
    if outcomes:  # a CSV written before a column was added keeps its columns
        with open(runs_csv, newline="") as f:
            columns = next(csv.reader(f))
    with open(runs_csv, "a" if outcomes else "w", newline="") as f:
        writer = csv.writer(f)
        if not outcomes:
            writer.writerow(columns)
        with multiprocessing.get_context("spawn").Pool(args.jobs) if args.jobs > 1 \
                else contextlib.nullcontext() as pool:
            runs = pool.imap_unordered(job, tasks) if pool is not None else map(job, tasks)
            for k, outcome in enumerate(runs):
                outcome = replace(outcome, **stamp)
                outcomes.append(outcome)
                writer.writerow([getattr(outcome, name) for name in columns])
                f.flush()
                if (k + 1) % 50 == 0:
                    print(f"{k + 1}/{len(tasks)} runs, {time.perf_counter() - started:.0f} s",
                          file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    rows = summarize(outcomes, baselines)
    text = table(rows)
    given = sys.argv[1:] if argv is None else argv
    command = "make bench" if not given else \
        ".venv/bin/python bench/bench_narrow.py " + " ".join(given)
    print(text)
    ran = f"{len(tasks)} runs in {elapsed:.0f} s" + \
        (f", {len(outcomes) - len(tasks)} rows already in the CSV" if args.resume else "")
    print(f"\n{ran}")
    (args.output / "narrow_table.txt").write_text(
        f"{header}\n\nCommand: `{command}` at {version} ({args.seeds} seeds per row, "
        f"{ran})\n\n{text}\n\nMeasured on (runs):\n{provenance(outcomes)}\n")
    plot(rows, args.output / "narrow.png")
    missed = [(r["family"], r["robots"], targets_missed(r)) for r in rows
              if r["controller"] == OURS and targets_missed(r)]
    for family, n, what in missed:
        print(f"missed: {family} with {n} robots: {', '.join(what)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
