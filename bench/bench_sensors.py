"""Cost of the simulated lasers (fleet_sim) and of collision_server's sensor layer (#25).

Run: ``.venv/bin/python bench/bench_sensors.py``. One core (every kernel on the calling
thread). Prints the machine, then a markdown table: per workload the median and p99 of many
repetitions (wall clock), the target and pass/fail.

Workloads, in the shipped demo room (16 m x 12 m map at 0.05 m, its pillars and U wall as
obstacles, the 16 robots as discs):

* one simulated scan of 360 and of 1,080 beams from robot1's start (``simulate_scan`` with
  noise), and what 16 robots' 360-beam scans at 10 Hz cost fleet_sim per second;
* the sensor layer (40 m x 40 m at 0.05 m, 800 x 800 cells): marking one 360-beam scan with
  clearing along its beams (``scan_rays`` + ``add_rays``), and one snapshot (the GridMap the
  queries read).

Exit status: 0 when every target is met, 2 when one is missed.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from machine import machine_header  # bench/machine.py

from planning_collision.grid.map_file import load_map_file
from planning_collision.grid.sensor_layer import SensorLayer, scan_rays
from planning_collision.resources import config_file
from planning_collision.sim.laser import LaserSpec, StaticScene, simulate_scan
from planning_collision.sim.scenario import load_scenario
from planning_collision.sim.simulation import obstacle_shapes

REPEATS = 300


def timed(fn, repeats=REPEATS) -> np.ndarray:
    fn()  # compiled or loaded before timing
    out = np.empty(repeats)
    for k in range(repeats):
        started = time.perf_counter()
        fn()
        out[k] = time.perf_counter() - started
    return out


def main() -> int:
    print(machine_header())
    scenario = load_scenario(config_file("scenarios/swap_room.yaml"))
    grid = load_map_file(scenario.map).to_grid()
    started = time.perf_counter()
    scene = StaticScene(grid, obstacle_shapes(scenario.obstacles)[0])
    built = time.perf_counter() - started
    centres = np.array([r.start[:2] for r in scenario.robots])
    radii = np.array([r.radius for r in scenario.robots])
    pose = scenario.robots[0].start
    rng = np.random.default_rng(25)
    rows = []
    scans = {}
    for beams, target in ((360, 2e-3), (1080, 5e-3)):
        spec = LaserSpec(beams=beams, noise=0.01)
        t = timed(lambda spec=spec: simulate_scan(pose, spec, scene, centres, radii, 0, rng))
        scans[beams] = t
        rows.append((f"simulated scan, {beams} beams (p99)", t, np.percentile(t, 99), target))
    load = 16 * 10 * np.median(scans[360])
    rows.append(("fleet_sim: 16 robots x 10 Hz x 360 beams (share of one core)", None, load,
                 0.10))
    spec = LaserSpec(beams=360)
    layer = SensorLayer(40.0, 40.0, 0.05, (-20.0, -20.0), decay=0.5)
    ranges = simulate_scan(pose, spec, scene, centres, radii, 0)
    stamp = [0.0]

    def mark():
        stamp[0] += 0.1
        origin, ends, hit = scan_rays(pose, spec.angle_min, spec.angle_increment, ranges,
                                      spec.range_min, spec.range_max)
        layer.add_rays(origin, ends, hit, stamp[0])

    t = timed(mark)
    rows.append(("sensor layer: mark a 360-beam scan (p99)", t, np.percentile(t, 99), 1e-3))
    t = timed(lambda: layer.snapshot(stamp[0]))
    rows.append(("sensor layer: snapshot of 800 x 800 cells (p99)", t, np.percentile(t, 99),
                 3e-3))
    print(f"\nstatic scene (map boundary + obstacle parts, {len(scene.obstacles)} entries) "
          f"built in {built * 1e3:.1f} ms\n")
    print("| workload | median | p99 / value | target | |")
    print("| --- | --- | --- | --- | --- |")
    missed = 0
    for name, times, value, target in rows:
        ok = value <= target
        missed += not ok
        if times is None:
            print(f"| {name} | | {value * 100:.1f} % | <= {target * 100:.0f} % | "
                  f"{'pass' if ok else 'FAIL'} |")
        else:
            print(f"| {name} | {np.median(times) * 1e3:.3f} ms | {value * 1e3:.3f} ms | "
                  f"<= {target * 1e3:.1f} ms | {'pass' if ok else 'FAIL'} |")
    return 2 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
