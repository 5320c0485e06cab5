"""What one per-robot orca_node costs in the 24-robot crossing: CPU per thread, from /proc.

Starts fleet_sim (``crossing24.yaml``, 50 Hz odometry of 24 standing robots: simulated time
waits for commands that never all come) and ONE orca_node, ``orca_robot1``, with the
parameters ``tools/crossing_per_robot.py`` gives it (robot1 its own, the 23 others observed),
in a ROS domain of its own on loopback. Once the node's kernels are ready and it has heard
every robot, it samples each process's threads (``/proc/<pid>/task/*/stat``, user + system
time) over ``--seconds`` and prints the CPU of each process and of its busiest threads, so the
Python thread (the executor, the callbacks, the control step) and Fast DDS's receive and
event threads are told apart. ``--observed none`` runs the same node observing no one (its
own odometry only: 50 messages a second instead of 1,200), to tell the per-message cost from
the per-step cost; ``--orca name=value`` adds parameters. Both processes run as nice as this
script (their scheduler groups too, see ``processes.set_nice``): under ``nice -n 19``
on a busy machine they are starved and the numbers mean little; measure on a quiet one.

    .venv/bin/python tools/orca_node_cpu.py [--seconds 20] [--observed none] [--orca ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossing_per_robot import (  # noqa: E402
    SCENARIO,
    one_node_arguments,
    one_node_parameters,
    stat_cpu,
)

from planning_collision.resources import config_file  # noqa: E402
from planning_collision.ros import processes  # noqa: E402


def thread_times(pid: int) -> dict[int, tuple[str, float]]:
    """tid -> (thread name, user + system CPU seconds) of every thread of ``pid``."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "stat").read_text()
        except OSError:  # the thread ended
            continue
        found[int(task.name)] = stat_cpu(text)
    return found


def cpu_by_thread(pid: int, seconds: float) -> tuple[float, Counter]:
    """(the process's CPU in percent of one core, percent per thread name) over ``seconds``."""
    before, started = thread_times(pid), time.monotonic()
    time.sleep(seconds)
    after, wall = thread_times(pid), time.monotonic() - started
    per_name: Counter = Counter()
    for tid, (name, spent) in after.items():
        per_name[name] += 100.0 * (spent - before.get(tid, (name, 0.0))[1]) / wall
    return sum(per_name.values()), per_name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    one_node_arguments(parser)
    args = parser.parse_args(argv)
    node, params, heard = one_node_parameters(args)
    domain = processes.pick_domain_id()
    with tempfile.TemporaryDirectory(prefix="orca_node_cpu_") as tmp:
        params_file = Path(tmp) / "orca_node.yaml"
        params_file.write_text(yaml.safe_dump({f"/**/{node}": {"ros__parameters": params}}))
        procs = {}
        try:
            procs["fleet_sim"] = processes.RosProcess("fleet_sim", processes.node_command(
                "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
                {"scenario": str(SCENARIO), "start": "commands", "publish_markers": False}),
                domain, echo=False)
            procs[node] = processes.RosProcess(node, processes.node_command(
                "planning_collision.ros.orca_node", [config_file("orca.yaml"), params_file],
                {"publish_markers": False}, node_name=node), domain, echo=False)
            if not procs[node].wait_for_line("kernels ready", 300.0):
                print(f"{node} never had its kernels ready:\n" + "\n".join(procs[node].lines))
                return 1
            deadline = time.monotonic() + 60.0
            while time.monotonic() < deadline and sum(
                    line.count("odometry received") for line in list(procs[node].lines)) < heard:
                time.sleep(0.2)
            time.sleep(3.0)  # the discovery traffic settles
            load = os.getloadavg()[0]
            samples = {}

            def sample(name, pid):
                samples[name] = cpu_by_thread(pid, args.seconds)

            threads = [threading.Thread(target=sample, args=(name, proc.pid))
                       for name, proc in procs.items()]  # the same window for both
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for proc in reversed(list(procs.values())):
                proc.stop(timeout=10.0)
    forgotten = sum(line.count("forgotten") for line in procs[node].lines)
    print(f"{node}: {heard} robots' odometry at 50 Hz, {args.seconds:g} s window, load "
          f"average {load:.1f} at the start, odometry forgotten {forgotten} times, "
          f"parameters {args.orca}")
    for name, (total, per_name) in samples.items():
        threads = ", ".join(f"{t} {c:.1f}" for t, c in per_name.most_common(6) if c >= 0.05)
        print(f"  {name}: {total:.1f} % of a core ({threads})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
