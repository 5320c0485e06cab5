"""Issue #24's DDS criterion: the 24-robot crossing with one orca_node process per robot.

Starts map_publisher (the pillars), fleet_sim (``crossing24.yaml``, 50 Hz, simulated time
starting once every robot has a command) and 24 orca_node processes, ``orca_robotK`` with
``agents: [robotK]`` and every other robot observed with responsibility 0.5 (each avoids its
share itself), in a ROS domain of the run's own on loopback (``planning_collision.ros.
processes``). After ``--seconds`` of wall time from the start of simulated time the nodes are
stopped; fleet_sim writes its trajectories, from which the run is judged: robots arrived,
contacts (fleet_sim's referee), smallest separation. One line per run, then a summary; the
machine's load average is printed with each run (this is a 2-core test of starvation).

    .venv/bin/python tools/crossing_per_robot.py [--runs 5] [--seconds 90]
        [--sim name=value ...] [--orca name=value ...]

``--sim`` and ``--orca`` add parameters, e.g. ``--sim command_latency=0.05 command_jitter=0.1
command_loss=0.05`` and ``--orca command_latency=0.15``. Exit status 0 when every run had every
robot arrived and no contact.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from planning_collision.resources import config_file
from planning_collision.ros import processes
from planning_collision.sim.scenario import load_scenario

SCENARIO = Path(config_file("scenarios/crossing24.yaml"))


def value(text: str):
    return yaml.safe_load(text)


def orca_parameters(scenario, extra: dict) -> dict:
    """One parameter block per robot's node (a params file keyed by node name)."""
    robots = [r for r in scenario.robots if r.orca]
    blocks = {}
    for robot in robots:
        others = [r for r in robots if r is not robot]
        params = {"agents": [robot.name], "observed": [r.name for r in others],
                  "global_frame": scenario.global_frame, "pref_speed": 0.5,
                  "radius": robot.radius, "max_speed": robot.max_speed,
                  robot.name: {"odom_origin": list(robot.start), "goal": list(robot.goal)},
                  **{r.name: {"odom_origin": list(r.start), "responsibility": 0.5}
                     for r in others}, **extra}
        blocks[f"/**/orca_{robot.name}"] = {"ros__parameters": params}
    return blocks


def one_run(index: int, args, scenario, workdir: Path) -> dict:
    domain = processes.pick_domain_id()
    trajectory = workdir / f"run{index}.npz"
    params_file = workdir / "orca_nodes.yaml"
    params_file.write_text(yaml.safe_dump(orca_parameters(scenario, args.orca)))
    logs = workdir / f"run{index}_logs"
    logs.mkdir(exist_ok=True)
    commands = {
        "map_publisher": processes.node_command(
            "planning_collision.ros.map_publisher", [config_file("map_publisher.yaml")],
            {"scenario": str(SCENARIO)}),
        "fleet_sim": processes.node_command(
            "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
            {"scenario": str(SCENARIO), "trajectory_file": str(trajectory),
             "start": "commands", "publish_markers": False, **args.sim}),
    }
    for robot in scenario.robots:
        commands[f"orca_{robot.name}"] = processes.node_command(
            "planning_collision.ros.orca_node", [config_file("orca.yaml"), params_file],
            {"publish_markers": False}, node_name=f"orca_{robot.name}")
    procs, files = {}, []
    started = time.monotonic()
    try:
        for name, command in commands.items():
            log = open(logs / f"{name}.log", "w")  # noqa: SIM115 (closed below)
            files.append(log)
            procs[name] = processes.RosProcess(name, command, domain, output=log)
        # "simulated time starts: <why>" (its announcement says "... starts once ...").
        if not procs["fleet_sim"].wait_for_line("simulated time starts:", args.start_timeout):
            return {"run": index, "error": "simulated time never started", "domain": domain}
        load_at_start = os.getloadavg()[0]
        time.sleep(args.seconds)
    finally:
        for name in reversed(list(procs)):
            procs[name].stop(timeout=15.0)
        for log in files:
            log.close()
    data = np.load(trajectory)
    if data["times"].size < 2:
        return {"run": index, "error": "no simulated step recorded", "domain": domain}
    x, y, radius = data["x"], data["y"], data["radius"]
    gaps = np.hypot(x[:, :, None] - x[:, None, :], y[:, :, None] - y[:, None, :]) \
        - (radius[:, None] + radius[None, :])
    n = radius.size
    gaps[:, np.arange(n), np.arange(n)] = np.inf
    return {"run": index, "arrived": int(np.isfinite(data["arrival_time"]).sum()), "robots": n,
            "makespan": float(np.nanmax(data["arrival_time"])),
            "contacts": [f"{t:.2f} s {a}-{b}" for t, a, b in zip(
                data["contact_time"], data["contact_robot"], data["contact_other"],
                strict=True)],
            "min_separation": float(gaps.min()), "load": load_at_start,
            "wall": time.monotonic() - started}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=90.0,
                        help="wall seconds from the start of simulated time")
    parser.add_argument("--start-timeout", type=float, default=300.0)
    parser.add_argument("--sim", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--orca", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--keep", type=Path, help="keep the logs and trajectories here")
    args = parser.parse_args(argv)
    args.sim = {k: value(v) for k, _, v in (s.partition("=") for s in args.sim)}
    args.orca = {k: value(v) for k, _, v in (s.partition("=") for s in args.orca)}
    scenario = load_scenario(SCENARIO)
    good = 0
    with tempfile.TemporaryDirectory(prefix="crossing24_") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for index in range(args.runs):
            result = one_run(index, args, scenario, workdir)
            print(result, flush=True)
            ok = ("error" not in result and result["arrived"] == result["robots"]
                  and not result["contacts"])
            good += ok
    print(f"{good} of {args.runs} runs: every robot arrived without a contact "
          f"(sim {args.sim}, orca {args.orca})")
    return 0 if good == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
