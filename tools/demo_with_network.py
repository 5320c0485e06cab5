"""Issue #24's demo criterion over DDS: the demo with a lossy, jittery network, seeded runs.

Runs ``planning_collision.demo`` (the swap_room scenario, all four nodes as processes, a ROS
domain of each run's own on loopback) ``--runs`` times, one after the other, with fleet_sim's
network set on odometry and commands (by default the issue's: 50 ms delay, 100 ms jitter,
5 % loss on each) and ``noise_seed`` = the run's seed, and orca_node told ``command_latency``
(by default 0.15 s, the largest command delay: doc/delays.md). Each run is judged from
fleet_sim's trajectories: contacts (fleet_sim's referee), smallest separation between
robots, robots arrived (the person among them), simulated time until the last ORCA robot
arrived (the person's straight walk takes 36 s whatever the robots do). One line per run, then a
table in Markdown; the machine's load average is printed with each run.

    .venv/bin/python tools/demo_with_network.py [--runs 10] [--first-seed 0]
        [--sim name=value ...] [--orca name=value ...] [--output DIR]

``--sim`` and ``--orca`` replace single parameters (``--sim command_loss=0.1``), ``--plain``
drops the network and the allowance (the undelayed demo, for comparison). Exit status 0 when
every run had every robot arrived and no contact.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

NETWORK = {"odom_latency": 0.05, "odom_jitter": 0.1, "odom_loss": 0.05,
           "command_latency": 0.05, "command_jitter": 0.1, "command_loss": 0.05}
ALLOWANCE = {"command_latency": 0.15}


def one_demo(output: Path, sim: dict, orca: dict) -> int:
    """One demo run in this process (the child of :func:`main`)."""
    from planning_collision.demo import Demo
    from planning_collision.resources import config_file
    from planning_collision.ros import processes

    domain_id = processes.pick_domain_id()
    processes.apply_network_rule(domain_id)
    demo = Demo(Path(config_file("scenarios/swap_room.yaml")), output, "robot1", domain_id,
                None)
    demo.fleet_sim_overrides = sim
    demo.orca_overrides = orca
    code = demo.run()
    if demo.teardown_hung:
        sys.stdout.flush()
        os._exit(code)
    return code


def judge(trajectory: Path) -> dict:
    """Contacts, smallest separation between robots, arrivals from fleet_sim's file."""
    from planning_collision.sim.trajectory_contacts import contact_lines, smallest_separation

    data = np.load(trajectory)
    arrival = data["arrival_time"]
    robots = arrival[data["orca"].astype(bool)]  # the person's walk is not the fleet's time
    return {"arrived": int(np.isfinite(arrival).sum()), "robots": arrival.size,
            "all_arrived_s": float(np.max(robots)) if np.isfinite(robots).all()
            else float("nan"),
            "contacts": contact_lines(data), "min_separation": smallest_separation(data)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--sim", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--orca", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--plain", action="store_true",
                        help="no network and no allowance: the undelayed demo")
    parser.add_argument("--output", type=Path, default=Path("output/demo_with_network"))
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    plain = args.plain or args.child is not None  # a child is given every parameter
    sim = {} if plain else dict(NETWORK)
    orca = {} if plain else dict(ALLOWANCE)
    sim.update({k: yaml.safe_load(v) for k, _, v in (s.partition("=") for s in args.sim)})
    orca.update({k: yaml.safe_load(v) for k, _, v in (s.partition("=") for s in args.orca)})
    if args.child is not None:  # one run, in a process of its own (rclpy inits once)
        return one_demo(args.child, sim, orca)
    rows, good = [], 0
    for seed in range(args.first_seed, args.first_seed + args.runs):
        output = (args.output / f"seed{seed}").resolve()
        output.mkdir(parents=True, exist_ok=True)
        trajectory = output / "trajectories.npz"
        trajectory.unlink(missing_ok=True)
        child = [sys.executable, str(Path(__file__).resolve()), "--child", str(output),
                 "--sim", *(f"{k}={v}" for k, v in {**sim, "noise_seed": seed}.items())]
        if orca:
            child += ["--orca", *(f"{k}={v}" for k, v in orca.items())]
        load = os.getloadavg()[0]
        started = time.monotonic()
        with open(output / "demo.log", "w") as log:
            code = subprocess.run(child, stdout=log, stderr=subprocess.STDOUT,
                                  check=False).returncode
        result = {"seed": seed, "exit": code, "load": load,
                  "wall_s": time.monotonic() - started}
        if trajectory.exists():
            result.update(judge(trajectory))
        else:
            result["error"] = f"no trajectory file; see {output / 'demo.log'}"
        print(result, flush=True)
        good += ("error" not in result and result["arrived"] == result["robots"]
                 and not result["contacts"])
        rows.append(result)
    print(f"\n{good} of {args.runs} runs: every robot arrived without a contact "
          f"(fleet_sim {sim}, orca_node {orca})\n")
    print("| seed | contacts | smallest separation (m) | arrived | robots all arrived (s) | "
          "load average |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['seed']} | {r['error']} | | | | {r['load']:.1f} |")
            continue
        print(f"| {r['seed']} | {len(r['contacts'])} | {r['min_separation']:.3f} | "
              f"{r['arrived']}/{r['robots']} | {r['all_arrived_s']:.1f} | {r['load']:.1f} |")
    return 0 if good == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
