"""Benchmark: safety against delay (issue #24). Where does safety end, and what margin buys it
back?

The pure closed loop (``planning_collision.sim.delayed_loop``: FleetController commanding
FleetSimulation through seeded network channels, no ROS) on two scenes: the demo room
(``swap_room.yaml`` without its map: 16 robots, 4 of them differential drive, a person, the
pillars and the U wall) and the crossing (``crossing24.yaml``: 24 robots on a 5 m circle past
two pillars). One axis at a time is swept from an undelayed loop:

* ``command``: commands ``d`` to ``2 d`` late (latency ``d``, jitter ``d``);
* ``odometry``: odometry ``d`` to ``2 d`` late;
* ``jitter``: 50 ms delay plus ``d`` jitter on both streams;
* ``loss``: 50 ms delay, 100 ms jitter on both, and a loss probability ``d`` on both;
* ``step``: the controller's steps ``0.05 + U(0, d)`` apart, one in fifty stalled by ``2 d``;
* ``accel``: the bases limited to ``d`` m/s^2 (``max_linear_accel``).

Each point runs twice: *unaware* (orca_node's defaults: only the odometry age is modelled) and
*aware* (``command_latency`` = the largest command delay; for ``accel`` the controller is told
the limit; the achieved step periods are always measured). Reported per point: contacts
(robot-robot and robot-obstacle, summed over the seeds), the smallest separation, and the time
until every robot arrived (the worst seed; ``-`` if one did not within the scenario's timeout).

Writes a markdown table to stdout and to ``doc/bench/delays_table.txt`` (doc/delays.md quotes
it), and the plot to
``doc/bench/delays.png``. Exits with status 1 when an *aware* run has a contact at a point
the issue's criteria name (commands 0.1-0.5 s with odometry 0.05-0.2 s late; 5 % loss and
100 ms jitter on 50 ms; 0.5 m/s^2).

``--silent N`` runs instead the silent neighbour of issue #24's 24-process crossing over N
seeds: from where its robots stood at 51.0 s of the run that touched
(``crossing24_at_51s.yaml``), one controller per robot stepping at 10 Hz and starved now and
then, commands 0.2-0.5 s late, odometry 0.15-0.45 s late, robot24's controller silent for 1.5
s; each seed with a base that holds a late command ``cmd_vel_timeout`` from its arrival and
one that times it out from its stamp (ros2_control's rule, fleet_sim's), the controller told
``command_latency`` 0 and 0.5 (doc/delays.md, "The contact traced").

Usage: .venv/bin/python bench/bench_delays.py [--seeds 1] [--scenes demo crossing] [--quick]
       .venv/bin/python bench/bench_delays.py --silent 50
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

from machine import machine_header  # bench/machine.py

from planning_collision.fleet.controller import FleetSettings
from planning_collision.sim.delayed_loop import LoopConditions, LoopModel, Silence, run_loop
from planning_collision.sim.network import NetworkSettings as Net
from planning_collision.sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "planning_collision" / "config" / "scenarios"
OUT = ROOT / "doc" / "bench"
# The crossing is a perfectly symmetric ring: a larger perturbation than orca.yaml's lets the
# single-process loop (which has none of a real fleet's timing noise) unlock it.
SETTINGS = {"demo": FleetSettings(), "crossing": FleetSettings(symmetry_breaking=0.01)}

AXES = {
    "command": [0.0, 0.1, 0.2, 0.3, 0.5],
    "odometry": [0.0, 0.1, 0.2, 0.3],
    "jitter": [0.0, 0.1, 0.2, 0.3],
    "loss": [0.0, 0.05, 0.1, 0.2],
    "step": [0.0, 0.1, 0.25, 0.5],
    "accel": [0.0, 1.0, 0.5, 0.25],
}
QUICK = {"command": [0.0, 0.25], "odometry": [0.2], "jitter": [0.1], "loss": [0.05],
         "step": [0.25], "accel": [0.5]}


def conditions(axis: str, d: float) -> tuple[LoopConditions, float, float]:
    """The loop at point ``d`` of ``axis``: (conditions, command allowance, accel limit)."""
    if axis == "command":
        return LoopConditions(commands=Net(d, d)), 2 * d, 0.0
    if axis == "odometry":
        return LoopConditions(odometry=Net(d, d)), 0.0, 0.0
    if axis == "jitter":
        return LoopConditions(odometry=Net(0.05, d), commands=Net(0.05, d)), 0.05 + d, 0.0
    if axis == "loss":
        return (LoopConditions(odometry=Net(0.05, 0.1, d), commands=Net(0.05, 0.1, d)), 0.15,
                0.0)
    if axis == "step":
        return (LoopConditions(step_jitter=d, stall_probability=0.02 if d else 0.0,
                               stall_time=2 * d), 0.0, 0.0)
    if axis == "accel":
        return LoopConditions(max_linear_accel=d), 0.0, d
    raise ValueError(axis)


def issue_points(scene: str) -> list[tuple[str, LoopConditions, float]]:
    """The issue's done-when cases for the offline loop (scene, conditions, allowance)."""
    late = LoopConditions(odometry=Net(0.05, 0.15), commands=Net(0.1, 0.4), in_order=False)
    wifi = LoopConditions(odometry=Net(0.05, 0.1, 0.05), commands=Net(0.05, 0.1, 0.05))
    return [("commands 0.1-0.5 s, odometry 0.05-0.2 s late", late, 0.5),
            ("5 % loss, 100 ms jitter on 50 ms", wifi, 0.15)]


def summary(results) -> tuple[int, float, float]:
    contacts = sum(len(r.contacts) for r in results)
    separation = min(r.min_separation for r in results)
    makespan = max(r.time for r in results)
    return contacts, separation, makespan


def cell(result) -> str:
    contacts, separation, makespan = result
    arrived = f"{makespan:.1f}" if math.isfinite(makespan) else "-"
    return f"{contacts} / {separation:.3f} / {arrived}"


def plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenes = sorted({r[0] for r in rows})
    axes_names = [a for a in AXES if any(r[1] == a for r in rows)]
    fig, grid = plt.subplots(len(scenes), len(axes_names), figsize=(3.2 * len(axes_names),
                             3.0 * len(scenes)), squeeze=False, sharey=True)
    for i, scene in enumerate(scenes):
        for j, axis in enumerate(axes_names):
            ax = grid[i][j]
            points = [r for r in rows if r[0] == scene and r[1] == axis]
            xs = [r[2] for r in points]
            for k, (label, style) in enumerate((("unaware", "o--"), ("aware", "s-"))):
                ys = [r[3 + k][1] for r in points]
                ax.plot(xs, ys, style, label=label)
                for x, r in zip(xs, points, strict=True):
                    if r[3 + k][0]:
                        ax.plot([x], [r[3 + k][1]], "rx", markersize=10)
            ax.axhline(0.0, color="grey", linewidth=0.8)
            ax.set_title(f"{scene}: {axis}", fontsize=9)
            ax.set_xlabel({"accel": "m/s^2", "loss": "probability"}.get(axis, "s"))
            if j == 0:
                ax.set_ylabel("min separation (m)")
    grid[0][0].legend(fontsize=8)
    fig.suptitle("closest pass against delay (red x: a contact)", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


# The silent neighbour (--silent): the crossing's nodes as loaded as in its 24-process run.
SILENT = LoopConditions(step_period=0.1, step_jitter=0.1, stall_probability=0.1, stall_time=0.4,
                        commands=Net(0.2, 0.3), odometry=Net(0.15, 0.3),
                        silences=(Silence("robot24", 0.15, 1.5),))


def silent_neighbour(seeds: int) -> int:
    """Contacts over ``seeds`` runs of the silent neighbour, per base rule and allowance."""
    scene = load_scenario(SCENARIOS / "crossing24_at_51s.yaml")
    print("| base times a command out from | command_latency | runs with a contact | "
          "contacts | closest (m) | closest of the runs without a contact (m) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for from_stamp in (False, True):
        for allowance in (0.0, 0.5):
            results = [run_loop(scene, replace(SILENT, seed=s, timeout_from_stamp=from_stamp),
                                LoopModel(FleetSettings(command_latency=allowance),
                                          per_robot=True), timeout=3.0)
                       for s in range(seeds)]
            clean = [r.min_separation for r in results if not r.contacts]
            print(f"| {'its stamp' if from_stamp else 'its arrival'} | {allowance:g} | "
                  f"{sum(1 for r in results if r.contacts)} of {seeds} | "
                  f"{sum(len(r.contacts) for r in results)} | "
                  f"{min(r.min_separation for r in results):.3f} | "
                  f"{f'{min(clean):.3f}' if clean else '-'} |", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--scenes", nargs="+", default=["demo", "crossing"])
    parser.add_argument("--quick", action="store_true", help="one point per axis")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--silent", type=int, metavar="SEEDS",
                        help="only the crossing's silent neighbour, over this many seeds")
    args = parser.parse_args()
    print(machine_header())
    if args.silent:
        return silent_neighbour(args.silent)
    scenes = {"demo": replace(load_scenario(SCENARIOS / "swap_room.yaml"), map=None),
              "crossing": load_scenario(SCENARIOS / "crossing24.yaml")}
    seeds = range(args.seeds)
    rows, failed = [], []
    started = time.perf_counter()
    for scene in args.scenes:
        settings = SETTINGS[scene]
        for axis, points in (QUICK if args.quick else AXES).items():
            for d in points:
                c, allowance, accel = conditions(axis, d)
                unaware = [run_loop(scenes[scene], replace(c, seed=s), LoopModel(settings))
                           for s in seeds]
                aware = [run_loop(scenes[scene], replace(c, seed=s), LoopModel(
                    replace(settings, command_latency=allowance), max_linear_accel=accel))
                    for s in seeds]
                rows.append((scene, axis, d, summary(unaware), summary(aware)))
                print(f"{scene:8s} {axis:8s} {d:5.2f}  unaware {cell(rows[-1][3]):24s} "
                      f"aware {cell(rows[-1][4])}", flush=True)
                if axis == "accel" and d == 0.5 and rows[-1][4][0]:
                    failed.append(f"{scene}: accel 0.5 m/s^2")
        for label, c, allowance in issue_points(scene):
            aware = [run_loop(scenes[scene], replace(c, seed=s), LoopModel(
                replace(settings, command_latency=allowance))) for s in seeds]
            result = summary(aware)
            print(f"{scene:8s} issue: {label}: aware {cell(result)}", flush=True)
            rows.append((scene, f"issue: {label}", allowance, None, result))
            if result[0] or not math.isfinite(result[2]):
                failed.append(f"{scene}: {label}")
    lines = [f"Seeds per point: {args.seeds}. Each cell: contacts (summed over the seeds) / "
             f"smallest separation (m) / time until every robot arrived (s, worst seed; -: "
             f"not all within the timeout).", "",
             "| scene | axis | value | unaware (defaults) | aware (model told) |",
             "| --- | --- | --- | --- | --- |"]
    for scene, axis, d, unaware, aware in rows:
        lines.append(f"| {scene} | {axis} | {d:g} | {cell(unaware) if unaware else ''} | "
                     f"{cell(aware)} |")
    table = "\n".join(lines)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "delays_table.txt").write_text(table + "\n")
    plot([r for r in rows if r[3] is not None], args.out / "delays.png")
    print(f"{time.perf_counter() - started:.0f} s; wrote {args.out / 'delays_table.txt'} and "
          f"{args.out / 'delays.png'}")
    if failed:
        print("missed:", "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
