"""What one control step of a per-robot orca_node costs in the 24-robot crossing, from inside.

The same setup as ``tools/orca_node_cpu.py`` (fleet_sim with the crossing's 24 standing
robots at 50 Hz in a process, in a ROS domain of its own on loopback; ``orca_robot1`` with
the crossing's parameters: robot1 its own, the 23 others observed), but the node runs in this
process, on the EventsExecutor orca_node uses, so its steps can be timed one by one: the CPU
time of this thread (``time.thread_time``, which a loaded machine inflates far less than wall
time) spent in each ``_step``, and in each of its phases (the node's own ``PhaseTimes``
marks). ``--profile FILE`` also runs cProfile over the steps only and writes its stats.

``--pure``: the node's controller alone, no ROS and no other process: the FleetController the
node builds (its robot controlled, the others observed at responsibility 0.5, the crossing's
pillars as ORCA obstacles, the node's default settings) fed the standing robots' odometry
(0.02 s old) before each of ``--steps`` steps, and each ``FleetController.step`` timed (CPU of
this thread; median and quartiles) with the mean of each of its phases (the controller's own
methods, timed from outside). Quick (seconds), and unaffected by DDS and fleet_sim, so a change
of the controller is measured in alternation with the tree before it.

    .venv/bin/python tools/orca_step_profile.py [--seconds 20] [--observed none]
        [--orca name=value ...] [--profile step.prof]
    .venv/bin/python tools/orca_step_profile.py --pure [--steps 4000] [--observed none]
        [--profile step.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossing_per_robot import SCENARIO, one_node_arguments, one_node_parameters  # noqa: E402

from planning_collision.resources import config_file  # noqa: E402
from planning_collision.ros import processes  # noqa: E402
from planning_collision.sim.scenario import load_scenario  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    one_node_arguments(parser)
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--pure", action="store_true",
                        help="the controller alone, without ROS (see the module docstring)")
    parser.add_argument("--steps", type=int, default=4000, help="--pure: steps timed")
    args = parser.parse_args(argv)
    if args.pure:
        return pure_steps(args)
    node_name, params, heard = one_node_parameters(args)
    domain = processes.pick_domain_id()
    processes.apply_network_rule(domain)  # this process's node: the same rule

    import rclpy

    from planning_collision.ros.node_executor import events_executor
    from planning_collision.ros.orca_node import OrcaNode
    from planning_collision.ros.type_registration import register_types_early

    with tempfile.TemporaryDirectory(prefix="orca_step_profile_") as tmp:
        params_file = Path(tmp) / "orca_node.yaml"
        params_file.write_text(yaml.safe_dump({f"/**/{node_name}": {"ros__parameters": params}}))
        sim = processes.RosProcess("fleet_sim", processes.node_command(
            "planning_collision.ros.fleet_sim", [config_file("fleet_sim.yaml")],
            {"scenario": str(SCENARIO), "start": "commands", "publish_markers": False}),
            domain, echo=False)
        node = executor = None
        profile = cProfile.Profile() if args.profile else None
        measuring = {"on": False}
        step = OrcaNode._step

        def timed_step(self):  # the step, its CPU time and its phases' (PhaseTimes.mark)
            if not measuring["on"]:
                return step(self)
            marks = {}
            mark = self._phases.mark

            def timed_mark(phase):
                marks[phase] = time.thread_time()
                mark(phase)

            self._phases.mark = timed_mark
            c0, w0 = time.thread_time(), time.perf_counter()
            if profile is not None:
                profile.enable()
            try:
                step(self)
            finally:
                if profile is not None:
                    profile.disable()
                del self._phases.mark
            measuring["cpu"].append(time.thread_time() - c0)
            measuring["wall"].append(time.perf_counter() - w0)
            last = c0
            for phase, at in marks.items():
                measuring["phases"][phase].append(at - last)
                last = at

        OrcaNode._step = timed_step  # before the node's timer binds it
        rclpy.init(args=["orca_step_profile", "--ros-args", "--params-file",
                         str(config_file("orca.yaml")), "--params-file", str(params_file),
                         "-p", "publish_markers:=false", "-r", f"__node:={node_name}"])
        try:
            register_types_early()
            node = OrcaNode()
            executor = events_executor(node)
            executor.add_node(node)
            deadline = time.monotonic() + 300.0
            while time.monotonic() < deadline and not (
                    node.kernels_ready.is_set() and node.fleet is not None
                    and node._last_step is not None
                    and int(node._last_step.fresh.sum()) >= heard):
                executor.spin_once(timeout_sec=0.1)
            if node._last_step is None or int(node._last_step.fresh.sum()) < heard:
                print("the node never heard every robot")
                return 1
            take = node._polled.take

            def timed_take(now):  # the odometry taken: how many, and its CPU time
                c0 = time.thread_time()
                delivered = take(now)
                if measuring["on"]:
                    measuring["take"].append(time.thread_time() - c0)
                    measuring["taken"].append(delivered)
                return delivered

            node._polled.take = timed_take
            measuring.update(on=True, cpu=[], wall=[], phases=defaultdict(list), take=[],
                             taken=[])
            load = os.getloadavg()[0]
            thread0, until = time.thread_time(), time.monotonic() + args.seconds
            while time.monotonic() < until:
                executor.spin_once(timeout_sec=0.1)
            thread_total = time.thread_time() - thread0
            measuring["on"] = False
        finally:
            if executor is not None:
                executor.shutdown()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
            sim.stop(timeout=10.0)
    if profile is not None:
        profile.dump_stats(args.profile)
    cpu, wall, phases = measuring["cpu"], measuring["wall"], measuring["phases"]
    ms = 1e3
    print(f"{node_name}: {heard} robots' odometry, {len(cpu)} steps in {args.seconds:g} s, "
          f"load average {load:.1f} at the start, parameters {args.orca}")
    print(f"  step CPU ms: median {statistics.median(cpu) * ms:.3f}, mean "
          f"{statistics.fmean(cpu) * ms:.3f}; wall ms median {statistics.median(wall) * ms:.3f}")
    print("  phases, CPU ms (mean): " + ", ".join(
        f"{p} {statistics.fmean(v) * ms:.3f}" for p, v in phases.items()))
    print(f"  odometry take: {statistics.fmean(measuring['taken']):.1f} messages per step, "
          f"CPU ms mean {statistics.fmean(measuring['take']) * ms:.3f}")
    print(f"  this thread: {100 * thread_total / args.seconds:.1f} % of a core, steps "
          f"{100 * sum(cpu) / args.seconds:.1f} %")
    return 0


# The controller's phases, in the order a step calls them (FleetController's methods).
PHASES = ("_place", "_activity", "_preferred", "_route", "_problem", "_solve", "_commands",
          "_guard_walls", "_events", "_remember")


def pure_steps(args) -> int:
    """``--pure``: time ``FleetController.step`` of the node's controller alone."""
    from planning_collision.fleet.controller import AgentSpec, FleetController, FleetSettings
    from planning_collision.orca.warmup import warmup
    from planning_collision.sim.fleet_loop import scenario_world

    if args.orca:
        print("--pure takes the default settings (no --orca)")
        return 2
    scenario = load_scenario(SCENARIO)
    robots = {r.name: r for r in scenario.robots}
    own = robots[args.robot]
    others = [] if args.observed == "none" else [r for r in scenario.robots if r is not own]
    controlled = [AgentSpec(own.name, radius=own.radius, max_speed=own.max_speed,
                            goal=tuple(own.goal), odom_origin=tuple(own.start))]
    observed = [AgentSpec(r.name, radius=r.radius, max_speed=r.max_speed, responsibility=0.5,
                          odom_origin=tuple(r.start)) for r in others]
    fleet = FleetController(controlled, observed, FleetSettings())
    obstacles, _ = scenario_world(scenario)
    warmup()
    period, age = fleet.settings.time_step, 0.02
    phases: dict[str, list[float]] = defaultdict(list)
    timing = {"on": False}

    def timed(name):
        method = getattr(fleet, name)

        def call(*a, **kw):
            if not timing["on"]:
                return method(*a, **kw)
            c0 = time.thread_time()
            try:
                return method(*a, **kw)
            finally:
                phases[name].append(time.thread_time() - c0)
        return call

    for name in PHASES:
        setattr(fleet, name, timed(name))
    profile = cProfile.Profile() if args.profile else None
    cpu = []
    warm = 200
    for s in range(warm + args.steps):
        now = 100.0 + s * period
        for i in range(len(fleet.names)):  # standing at the start: the odometry frame's origin
            fleet.odometry(i, now - age / 2, now - age, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                           0.0)
        timing["on"] = s >= warm
        if profile is not None and timing["on"]:
            profile.enable()
        c0 = time.thread_time()
        step = fleet.step(now, obstacles)
        if timing["on"]:
            cpu.append(time.thread_time() - c0)
        if profile is not None:
            profile.disable()
    if profile is not None:
        profile.dump_stats(args.profile)
    ms = 1e3
    q = statistics.quantiles(cpu, n=4)
    print(f"pure controller, {args.robot} controlled, {len(others)} observed, {len(cpu)} steps, "
          f"load average {os.getloadavg()[0]:.1f}, active {bool(step.active[0])}")
    print(f"  step CPU ms: median {statistics.median(cpu) * ms:.4f} (quartiles "
          f"{q[0] * ms:.4f}-{q[2] * ms:.4f}), mean {statistics.fmean(cpu) * ms:.4f}")
    print("  phases, CPU ms (median): " + ", ".join(
        f"{p.lstrip('_')} {statistics.median(v) * ms:.4f}" for p, v in phases.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
