"""Run a range of seeded sensed-crossing scenes (issue #25's safety target) and log each run.

    nice -n 19 .venv/bin/python tools/sensed_crossings_runs.py --first 0 --last 500 > log

One line per seed (seed, robots, people, kinds, holonomic, contacts with a moving robot, all
contacts with the robot's speed, arrived, time, smallest gap), and a summary line last, so
that two processes over two seed ranges can share the 1,000 runs and their logs be summed
(``--summarise log1 log2``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from planning_collision.sim.sensed_crossings import random_run, run


def one(seed: int, tracking: bool) -> dict:
    scene = random_run(seed)
    started = time.perf_counter()
    result = run(scene, seed=seed, tracking=tracking)
    return {"seed": seed, "robots": len(scene.robot_speeds),
            "people": len(scene.people_starts), "kinds": sorted(set(scene.kinds)),
            "holonomic": scene.holonomic.tolist(), "moving": result.moving_contacts,
            "contacts": [[round(c[0], 2), c[1], c[2], round(c[3], 3)]
                         for c in result.contacts],
            "arrived": bool(result.arrived), "time": round(result.time, 2),
            "min_gap": round(float(result.min_gap), 3),
            "wall": round(time.perf_counter() - started, 2)}


def summarise(paths: list[str]) -> dict:
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.startswith('{"seed"')]
    return {"runs": len(rows), "moving_contacts": sum(r["moving"] for r in rows),
            "moving_seeds": [r["seed"] for r in rows if r["moving"]],
            "contacts": sum(len(r["contacts"]) for r in rows),
            "arrived": sum(r["arrived"] for r in rows),
            "not_arrived_seeds": [r["seed"] for r in rows if not r["arrived"]],
            "wall": round(sum(r["wall"] for r in rows), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--last", type=int, default=1000, help="exclusive")
    parser.add_argument("--blind", action="store_true", help="the people unseen")
    parser.add_argument("--summarise", nargs="+", metavar="LOG")
    args = parser.parse_args()
    if args.summarise:
        print(json.dumps(summarise(args.summarise)))
        return 0
    for seed in range(args.first, args.last):
        print(json.dumps(one(seed, not args.blind)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
