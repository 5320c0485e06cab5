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

Obstacle processing (issue #11 item 4): ``build_obstacles`` against pyrvo's
``process_obstacles`` (RVO2's k-d tree build, O(n^2) per node) on a 10,000-vertex polygon (a
noisy circle) and on 4,000 unit squares; ours must take at most 5 % of RVO2's time (ratio
<= 0.05; RVO2 itself takes seconds).  Noisy occupancy maps (200 x 200 and 500 x 500 cells,
12 % occupied, traced with ``grid.occupied_polygons``) are reported for ours alone.

Prints the date, the CPU model and the core count first.  Exits with status 1 when a target
is missed: at N >= 1000 our median step must be at most pyrvo's (ratio <= 1.0), and the
obstacle builds must meet their ratio.

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
#: Obstacle builds: ours may take at most this fraction of RVO2's time.
OBSTACLE_RATIO = 0.05


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


def noisy_circle(n, rng):
    angle = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    radius = 50.0 * (1.0 + 0.05 * rng.standard_normal(n))
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def unit_squares(count):
    side = math.ceil(math.sqrt(count))
    return [np.array([(x, y), (x + 1.0, y), (x + 1.0, y + 1.0), (x, y + 1.0)])
            for x, y in ((3.0 * (i % side), 3.0 * (i // side)) for i in range(count))]


def noisy_map_polygons(cells, rng):
    from planning_collision.grid import GridMap, occupied_polygons

    data = np.where(rng.random((cells, cells)) < 0.12, 100, 0).astype(np.int8)
    polygons = occupied_polygons(GridMap(data, 0.05), 0.0)
    return [q for q in polygons  # outer boundaries (counter-clockwise) only
            if np.sum(q[:, 0] * np.roll(q[:, 1], -1) - np.roll(q[:, 0], -1) * q[:, 1]) > 0]


def best_seconds(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def obstacle_rows():
    """(workload, vertices, ours s, pyrvo s or None) for the obstacle builds."""
    import pyrvo

    from planning_collision.orca import build_obstacles

    rng = np.random.default_rng(3)
    rows = []
    for name, polygons, with_peer in (
            ("one polygon, 10,000 vertices (noisy circle)", [noisy_circle(10_000, rng)], True),
            ("4,000 unit squares", unit_squares(4000), True),
            ("noisy map 200 x 200 cells", noisy_map_polygons(200, rng), False),
            ("noisy map 500 x 500 cells", noisy_map_polygons(500, rng), False)):
        ours = best_seconds(lambda p=polygons: build_obstacles(p), 3)
        peer = None
        if with_peer:
            sim = pyrvo.RVOSimulator(TIME_STEP, NEIGHBOR_DIST, MAX_NEIGHBORS, HORIZON,
                                     HORIZON_OBST, RADIUS, MAX_SPEED)
            for polygon in polygons:
                sim.add_obstacle([tuple(v) for v in polygon])
            peer = best_seconds(sim.process_obstacles, 1)
        rows.append((name, sum(len(q) for q in polygons), ours, peer))
        print(f"obstacles: {name} done", file=sys.stderr, flush=True)
    return rows


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
    parser.add_argument("--no-obstacles", action="store_true",
                        help="skip the obstacle build rows")
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
    if not args.no_obstacles:
        print()
        print("| obstacles | vertices | build_obstacles ms | pyrvo process_obstacles ms | "
              "ratio ours/pyrvo | target | pass |")
        print("|---|---:|---:|---:|---:|---|---|")
        for name, vertices, ours, peer in obstacle_rows():
            if peer is None:
                print(f"| {name} | {vertices:,} | {ours * 1e3:.1f} | - | - | report | - |")
                continue
            ratio = ours / peer
            verdict = "pass" if ratio <= OBSTACLE_RATIO else "FAIL"
            if verdict == "FAIL":
                missed.append(f"{name}: ratio {ratio:.3f} > {OBSTACLE_RATIO}")
            print(f"| {name} | {vertices:,} | {ours * 1e3:.1f} | {peer * 1e3:.0f} | "
                  f"{ratio:.4f} | <= {OBSTACLE_RATIO} | {verdict} |")
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
