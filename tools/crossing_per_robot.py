"""Issue #24's DDS criterion: the 24-robot crossing with one orca_node process per robot.

Starts map_publisher (the pillars), fleet_sim (``crossing24.yaml``, 50 Hz, simulated time
starting once every robot has a command) and 24 orca_node processes, ``orca_robotK`` with
``agents: [robotK]`` and every other robot observed with responsibility 0.5 (each avoids its
share itself), in a ROS domain of the run's own on loopback (``planning_collision.ros.
processes``). After ``--seconds`` of wall time from the start of simulated time the nodes are
stopped; fleet_sim writes its trajectories, from which the run is judged: robots arrived,
contacts (fleet_sim's referee), smallest separation. One line per run, then a summary; the
machine's load average is printed with each run (this is a 2-core test of starvation), with
each node's control rate (its ``/diagnostics``, heard by a listener of this script's: the
median and the worst of each node, then over the nodes) and CPU (``/proc``, over the run).

    .venv/bin/python tools/crossing_per_robot.py [--runs 5] [--seconds 90]
        [--sim name=value ...] [--orca name=value ...]

``--sim`` and ``--orca`` add parameters, e.g. ``--sim command_latency=0.05 command_jitter=0.1
command_loss=0.05`` and ``--orca command_latency=0.15``. Exit status 0 when every run had every
robot arrived and no contact.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml

from planning_collision.resources import config_file
from planning_collision.ros import processes
from planning_collision.sim.scenario import load_scenario
from planning_collision.sim.trajectory_contacts import contact_lines, smallest_separation

SCENARIO = Path(config_file("scenarios/crossing24.yaml"))
TICKS = os.sysconf("SC_CLK_TCK")


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


def one_node_arguments(parser) -> None:
    """The options of the tools that measure one robot's node beside fleet_sim's crossing
    (orca_node_cpu.py, orca_step_profile.py); :func:`one_node_parameters` reads them."""
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--observed", choices=("all", "none"), default="all")
    parser.add_argument("--orca", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--robot", default="robot1")


def one_node_parameters(args) -> tuple[str, dict, int]:
    """For ``args`` of :func:`one_node_arguments`: the node's name, its parameters in the
    crossing (observing no one with ``--observed none``), and how many agents it hears."""
    extra = {k: yaml.safe_load(v) for k, _, v in (s.partition("=") for s in args.orca)}
    node = f"orca_{args.robot}"
    params = orca_parameters(load_scenario(SCENARIO), extra)[f"/**/{node}"]["ros__parameters"]
    if args.observed == "none":
        for name in params.pop("observed"):
            params.pop(name)
    return node, params, 1 + len(params.get("observed", []))


class RateListener:
    """Each orca_node's achieved control rate, from the "control loop" entries of
    /diagnostics (one a second per node), heard in the run's domain by a node of this
    process, spun in a thread; :meth:`summary` counts those after :meth:`start_counting`
    (all of them when it was never called: simulated time never started)."""

    def __init__(self, domain: int):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        processes.apply_network_rule(domain)  # this process's own node: the same rule
        self.rates: dict[str, list[tuple[float, float]]] = defaultdict(list)  # (time, Hz)
        self.since, self.until = -float("inf"), float("inf")
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("crossing_rates", context=self.context)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 50)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.1)

    def _on_diagnostics(self, msg) -> None:
        now = time.monotonic()
        for status in msg.status:
            label, _, what = status.name.rpartition(": ")
            if what == "control loop":
                values = {kv.key: kv.value for kv in status.values}
                if values.get("state") == "active" and "achieved_rate" in values:
                    self.rates[label].append((now, float(values["achieved_rate"])))

    def start_counting(self) -> None:
        self.since = time.monotonic()

    def stop_counting(self) -> None:
        """Before the nodes are stopped (a stopping node reports 0 Hz)."""
        self.until = time.monotonic()

    def summary(self, nodes: int) -> dict:
        """Over the nodes: the median of their median rates, the lowest median and the
        lowest rate any node reported (its name), nodes heard."""
        heard = {label: [(t, hz) for t, hz in r if self.since <= t <= self.until]
                 for label, r in list(self.rates.items())}
        heard = {label: r for label, r in heard.items() if r}
        if not heard:
            return {"rate_nodes_heard": f"0/{nodes}"}
        medians = {label: statistics.median(hz for _, hz in r) for label, r in heard.items()}
        label, (t, hz) = min(((label, min(r, key=lambda e: e[1])) for label, r in heard.items()),
                             key=lambda item: item[1][1])
        start = self.since if self.since > -float("inf") else min(
            r[0][0] for r in heard.values())
        return {"rate_nodes_heard": f"{len(heard)}/{nodes}",
                "rate_median_hz": round(statistics.median(medians.values()), 1),
                "rate_lowest_median_hz": round(min(medians.values()), 1),
                "rate_worst_hz": f"{hz:.1f} ({label}, {t - start:.0f} s in)"}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.context.try_shutdown()


def stat_cpu(text: str) -> tuple[str, float]:
    """(name, user + system CPU seconds) from a ``/proc/<pid>[/task/<tid>]/stat`` line."""
    fields = text[text.rindex(")") + 2:].split()
    return text[text.index("(") + 1:text.rindex(")")], (int(fields[11]) + int(fields[12])) / TICKS


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (nan once it has ended)."""
    try:
        return stat_cpu(Path(f"/proc/{pid}/stat").read_text())[1]
    except OSError:
        return float("nan")


def cpu_of(procs: dict, before: dict[str, float], seconds: float) -> dict:
    """The mean CPU of the orca_nodes and fleet_sim's, in percent of a core, since
    ``before`` (CPU seconds of each process) over ``seconds``."""
    cpu = {name: 100.0 * (cpu_seconds(proc.pid) - before[name]) / seconds
           for name, proc in procs.items()}
    return {"node_cpu_percent": round(statistics.mean(
                c for name, c in cpu.items() if name.startswith("orca_")), 1),
            "fleet_sim_cpu_percent": round(cpu["fleet_sim"], 1)}


def forgotten_count(procs: dict) -> int:
    """How many times the orca_nodes logged an observed robot's odometry as forgotten."""
    return sum(sum(line.count("forgotten") for line in list(proc.lines))
               for name, proc in procs.items() if name.startswith("orca_"))


def command_ages(data) -> dict:
    """How late the commands fleet_sim applied were (its trajectory's record: the age of each
    command's stamp on arrival), in seconds: median, 95th percentile, largest."""
    ages = np.asarray(data["command_age"]) if "command_age" in data else np.zeros(0)
    if not ages.size:
        return {}
    return {"command_age_median": round(float(np.median(ages)), 3),
            "command_age_p95": round(float(np.percentile(ages, 95)), 3),
            "command_age_max": round(float(ages.max()), 3)}


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
            {"scenario": str(args.scenario)}),
        "fleet_sim": processes.node_command(
            "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
            {"scenario": str(args.scenario), "trajectory_file": str(trajectory),
             "start": "commands", "publish_markers": False, **args.sim}),
    }
    for robot in scenario.robots:
        commands[f"orca_{robot.name}"] = processes.node_command(
            "planning_collision.ros.orca_node", [config_file("orca.yaml"), params_file],
            {"publish_markers": False}, node_name=f"orca_{robot.name}")
    procs, files = {}, []
    started = time.monotonic()
    rates = RateListener(domain)
    try:
        for name, command in commands.items():
            log = open(logs / f"{name}.log", "w")  # noqa: SIM115 (closed below)
            files.append(log)
            procs[name] = processes.RosProcess(
                name, command, domain, output=log,
                nice=os.nice(0) + args.node_nice * name.startswith("orca_"))
        # "simulated time starts: <why>" (its announcement says "... starts once ...").
        if not procs["fleet_sim"].wait_for_line("simulated time starts:", args.start_timeout):
            rates.stop_counting()
            wall = time.monotonic() - started
            return {"run": index, "error": "simulated time never started", "domain": domain,
                    "load": os.getloadavg()[0], **rates.summary(len(scenario.robots)),
                    **cpu_of(procs, dict.fromkeys(procs, 0.0), wall),
                    "odometry_forgotten": forgotten_count(procs)}
        load_at_start = os.getloadavg()[0]
        rates.start_counting()
        cpu_before = {name: cpu_seconds(proc.pid) for name, proc in procs.items()}
        time.sleep(args.seconds)
        rates.stop_counting()
        cpu = cpu_of(procs, cpu_before, args.seconds)
    finally:
        for name in reversed(list(procs)):
            procs[name].stop(timeout=15.0)
        for log in files:
            log.close()
        rates.close()
    data = np.load(trajectory)
    if data["times"].size < 2:
        return {"run": index, "error": "no simulated step recorded", "domain": domain}
    return {"run": index, "arrived": int(np.isfinite(data["arrival_time"]).sum()),
            "robots": int(data["radius"].size),
            "makespan": float(np.nanmax(data["arrival_time"])),
            "contacts": contact_lines(data), "min_separation": smallest_separation(data),
            "load": load_at_start, "wall": time.monotonic() - started,
            **rates.summary(len(scenario.robots)), **cpu,
            "odometry_forgotten": forgotten_count(procs), **command_ages(data)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=90.0,
                        help="wall seconds from the start of simulated time")
    parser.add_argument("--start-timeout", type=float, default=300.0)
    parser.add_argument("--sim", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--orca", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--keep", type=Path, help="keep the logs and trajectories here")
    parser.add_argument("--node-nice", type=int, default=0, metavar="N",
                        help="run the orca_nodes N steps nicer than fleet_sim (the simulated "
                        "robots and referee), which then is not starved by them")
    parser.add_argument("--scenario", type=Path, default=SCENARIO,
                        help="another scenario (e.g. a smaller one to try the script)")
    args = parser.parse_args(argv)
    args.sim = {k: value(v) for k, _, v in (s.partition("=") for s in args.sim)}
    args.orca = {k: value(v) for k, _, v in (s.partition("=") for s in args.orca)}
    scenario = load_scenario(args.scenario)
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
