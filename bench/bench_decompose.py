"""Benchmark: geometry.decompose on large simple polygons, against shapely's triangulation.

Run: ``.venv/bin/python bench/bench_decompose.py`` (``make bench``).

Workloads (seeded): a star-shaped polygon (random angles and radii), a noisy circle and a
comb (rectilinear, long collinear runs), each with 1,000 and 10,000 vertices (issue #11
item 5: the former quadratic ear clipping took 0.12 s and 13.4 s).

Peer: ``shapely.constrained_delaunay_triangles`` (GEOS, C++), which triangulates the same
polygon: a fair peer for the triangulation, the part of the work that is not linear.  Our
``decompose`` does more (checks the polygon for self-intersection, triangulates, certifies
the triangles, merges them into convex pieces and builds a ``ConvexShape`` per piece), so
the target allows a ratio of up to 3.  Each call is repeated and the best run kept
(the machine is shared).  A second target is about scaling: 10,000 vertices may take at
most 25 times as long as 1,000 (O(n log n) gives about 13, O(n^2) 100).

Prints the machine line and a markdown table; exits 1 when a target is missed.
"""

import argparse
import sys
import time

import numpy as np
import shapely
from machine import machine_header  # bench/machine.py

from planning_collision.geometry import decompose
from planning_collision.geometry import warmup as geometry_warmup

PEER_RATIO = 3.0
SCALING = 25.0


def star(rng, n):
    angle = np.sort(rng.uniform(0.0, 2.0 * np.pi, n))
    radius = rng.uniform(0.2, 3.0, n)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def noisy_circle(rng, n):
    angle = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    radius = 1.0 + 0.05 * rng.standard_normal(n)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def comb(_rng, n):
    teeth = max(1, (n - 4) // 4)
    pts = [(0.0, 0.0), (2.0 * teeth + 1, 0.0)]
    for t in range(teeth, 0, -1):
        x = 2.0 * t
        pts += [(x + 1, 3.0), (x, 3.0), (x, 1.0), (x - 1, 1.0)]
    return np.array(pts + [(1.0, 3.0), (0.0, 3.0)])


SHAPES = {"star": star, "noisy circle": noisy_circle, "comb": comb}


def best_of(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(machine_header())
    print(flush=True)
    geometry_warmup()
    rng = np.random.default_rng(11)
    rows, missed, ours_at = [], [], {}
    for name, make in SHAPES.items():
        for n in (1000, 10_000):
            verts = make(rng, n)
            polygon = shapely.Polygon(verts)
            assert polygon.is_valid, name
            pieces = decompose(verts)
            area = sum(shapely.Polygon(p.points).area for p in pieces)
            assert abs(area - polygon.area) <= 1e-9 * polygon.area  # checked before timing
            ours = best_of(lambda v=verts: decompose(v), args.repeat)
            peer = best_of(lambda p=polygon: shapely.constrained_delaunay_triangles(p),
                           args.repeat)
            ours_at[name, n] = ours
            ratio = ours / peer
            verdict = "-"
            if n == 10_000:
                verdict = "pass" if ratio <= PEER_RATIO else "FAIL"
                if verdict == "FAIL":
                    missed.append(f"{name} {n}: ratio {ratio:.2f} > {PEER_RATIO}")
            rows.append((name, len(verts), len(pieces), ours, peer, ratio,
                         f"<= {PEER_RATIO:g}" if n == 10_000 else "report", verdict))
    print("| polygon | vertices | convex pieces | decompose ms | shapely CDT ms | ratio | "
          "target | pass |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name, n, k, ours, peer, ratio, target, verdict in rows:
        print(f"| {name} | {n:,} | {k:,} | {ours * 1e3:.1f} | {peer * 1e3:.1f} | "
              f"{ratio:.2f} | {target} | {verdict} |")
    print()
    print("| polygon | time 10,000 / time 1,000 vertices | target | pass |")
    print("|---|---:|---|---|")
    for name in SHAPES:
        growth = ours_at[name, 10_000] / ours_at[name, 1000]
        verdict = "pass" if growth <= SCALING else "FAIL"
        if verdict == "FAIL":
            missed.append(f"{name}: 10k/1k = {growth:.1f} > {SCALING}")
        print(f"| {name} | {growth:.1f} | <= {SCALING:g} | {verdict} |")
    if missed:
        print(f"\nFAIL: target missed ({'; '.join(missed)})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
