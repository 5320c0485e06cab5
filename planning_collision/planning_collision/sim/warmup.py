"""Compile (first run) or load from numba's cache (later runs) the simulator's own kernel: the
simulated laser's disc test (laser.py), which fleet_sim runs for every robot with a scan."""

import time


def warmup() -> float:
    """One scan of a robot beside another disc, in an empty world; returns the seconds it
    took (the segment casts it also runs are the geometry core's, warmed there)."""
    from .laser import LaserSpec, simulate_scan

    start = time.perf_counter()
    simulate_scan((0.0, 0.0, 0.0), LaserSpec(beams=8, range_max=2.0), None,
                  centres=[[0.0, 0.0], [1.0, 0.0]], radii=[0.2, 0.2], exclude=0)
    return time.perf_counter() - start
