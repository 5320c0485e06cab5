"""Benchmark: OrcaSimulator.step() against pyrvo's RVOSimulator.do_step() (C++ RVO2).

Scenario: RVO2's Circle example (time step 0.25, neighbour distance 15, 10 neighbours, time
horizons 10, radius 1.5, max speed 2) with N agents on a ring whose radius keeps the
example's spacing (250 agents on radius 200, so R = 0.8 N).  A run of our simulator (with
RVO2-sized symmetry-breaking noise, as RVO2's examples use random noise) is recorded from
the start until the ring has compressed into a dense crowd; evenly spaced states of it are
then loaded into both simulators, and each step is timed on the same states, interleaved.
Only the step itself is timed (setting pyrvo's state agent by agent is not).

Also measures the numba compile time (cold, empty cache) and the cached load time, each in a
fresh interpreter (``planning_collision.orca.warmup``).

Prints the date, the CPU model and the core count first.  Exits with status 1 when a target
is missed: at N >= 1000 our median step must be at most pyrvo's (ratio <= 1.0).

Usage: .venv/bin/python bench/bench_orca.py [--sizes 100 1000 5000] [--states 16]
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from machine import machine_header  # bench/machine.py

TIME_STEP, NEIGHBOR_DIST, MAX_NEIGHBORS, HORIZON, HORIZON_OBST, RADIUS, MAX_SPEED = (
    0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)


def circle_start(n):
    radius = 0.8 * n
    angle = np.arange(n) * 2 * math.pi / n
    return radius * np.column_stack([np.cos(angle), np.sin(angle)])


def pref_velocities(pos, goals):
    g = goals - pos
    d = np.hypot(g[:, 0], g[:, 1])
    return np.where(d[:, None] > 1.0, g / np.maximum(d, 1e-300)[:, None], g)


def record_states(n, count):
    """Evenly spaced states of a run from the start until the ring is a dense crowd."""
    from planning_collision.orca import OrcaSimulator

    start = circle_start(n)
    ring_jam = n * 2 * RADIUS / (2 * math.pi)  # ring radius at which neighbours touch
    steps = int((0.8 * n - ring_jam) / TIME_STEP) + 1000
    record_at = set(np.linspace(0, steps, count).astype(int))
    sim = OrcaSimulator(TIME_STEP, NEIGHBOR_DIST, MAX_NEIGHBORS, HORIZON, HORIZON_OBST, RADIUS,
                        MAX_SPEED, symmetry_breaking=1e-4)
    for p in start:
        sim.add_agent(p)
    states = []
    for step in range(steps + 1):
        pos = sim.positions
        pref = pref_velocities(pos, -start)
        if step in record_at:
            # float32 values, so that pyrvo (float32) and we start from the same state
            states.append(tuple(np.asarray(a, np.float32).astype(np.float64)
                                for a in (pos, sim.velocities, pref)))
        sim.set_pref_velocities(pref)
        sim.step()
    return states, steps


def time_on_states(n, states, repeats):
    import pyrvo

    from planning_collision.orca import OrcaSimulator

    ours = OrcaSimulator(TIME_STEP, NEIGHBOR_DIST, MAX_NEIGHBORS, HORIZON, HORIZON_OBST, RADIUS,
                         MAX_SPEED)
    rvo = pyrvo.RVOSimulator(TIME_STEP, NEIGHBOR_DIST, MAX_NEIGHBORS, HORIZON, HORIZON_OBST,
                             RADIUS, MAX_SPEED)
    for _ in range(n):
        ours.add_agent((0.0, 0.0))
        rvo.add_agent((0.0, 0.0))
    ours_times, rvo_times, worst = [], [], 0.0
    for pos, vel, pref in states:
        for _ in range(repeats):
            ours.positions, ours.velocities = pos, vel
            ours.set_pref_velocities(pref)
            t0 = time.perf_counter()
            result = ours.step()
            ours_times.append(time.perf_counter() - t0)
            for i in range(n):
                rvo.set_agent_position(i, (pos[i, 0], pos[i, 1]))
                rvo.set_agent_velocity(i, (vel[i, 0], vel[i, 1]))
                rvo.set_agent_pref_velocity(i, (pref[i, 0], pref[i, 1]))
            t0 = time.perf_counter()
            rvo.do_step()
            rvo_times.append(time.perf_counter() - t0)
        rvo_vel = np.array([rvo.get_agent_velocity(i).to_tuple() for i in range(n)])
        worst = max(worst, float(np.quantile(np.abs(result.velocities - rvo_vel).max(axis=1),
                                             0.999)))
    return statistics.median(ours_times), statistics.median(rvo_times), worst


def compile_times():
    """(cold compile, cached load) seconds of warmup(), each in a fresh interpreter."""
    code = ("import time; t = time.perf_counter(); import planning_collision.orca as o; "
            "o.warmup(); print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = []
        for _ in range(2):
            run = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                 capture_output=True, text=True)
            out.append(float(run.stdout.strip().splitlines()[-1]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--states", type=int, default=16)
    parser.add_argument("--no-compile", action="store_true", help="skip the compile timing")
    args = parser.parse_args()

    from planning_collision.orca import warmup
    from planning_collision.orca.agent_threads import available_threads, resolve_threads

    print(machine_header())
    print(flush=True)
    warmup()
    rows = []
    for n in args.sizes:
        t0 = time.perf_counter()
        states, steps = record_states(n, args.states)
        recorded = time.perf_counter() - t0
        repeats = max(2, min(20, 20000 // n))
        ours, rvo, worst = time_on_states(n, states, repeats)
        rows.append((n, ours, rvo, worst, steps, recorded, resolve_threads(None, n)))
        print(f"N={n}: recorded {len(states)} states of a {steps}-step run in {recorded:.0f} s",
              file=sys.stderr, flush=True)

    print("| N | ours median ms | pyrvo median ms | ratio ours/pyrvo | target | pass |"
          " threads | 99.9 % of agents within |")
    print("|---:|---:|---:|---:|---|---|---:|---:|")
    missed = []
    for n, ours, rvo, worst, _, _, threads in rows:
        ratio = ours / rvo
        target = "report" if n < 1000 else "<= 1.0"
        verdict = "-" if n < 1000 else ("pass" if ratio <= 1.0 else "FAIL")
        if verdict == "FAIL":
            missed.append(f"N={n}: ratio {ratio:.2f} > 1.0")
        print(f"| {n} | {ours * 1e3:.3f} | {rvo * 1e3:.3f} | {ratio:.2f} | {target} | "
              f"{verdict} | {threads} | {worst:.1e} |")
    print()
    print(f"States: {args.states} per size, evenly spaced over a run from the start until "
          "1000 steps after the ring compresses; each step timed on the same states, "
          f"interleaved. Cores available: {available_threads()}; 1-min load average at the end: "
          f"{os.getloadavg()[0]:.2f}.")
    if not args.no_compile:
        cold, cached = compile_times()
        print()
        print("| numba kernels (warmup, fresh interpreter) | seconds |")
        print("|---|---:|")
        print(f"| cold compile (empty cache) | {cold:.1f} |")
        print(f"| cached load | {cached:.2f} |")
    if missed:
        print(f"\nFAIL: target missed ({'; '.join(missed)})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
