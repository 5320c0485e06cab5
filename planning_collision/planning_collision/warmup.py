"""Compile (first run) or load (later runs) every numba kernel of the pure cores.

    python -m planning_collision.warmup         # the PyPI venv (make setup runs it)
    ros2 run planning_collision warmup          # a colcon workspace, after colcon build

Run once after installing, so the first test, demo or node start does not pay the
compilation (about a minute on two cores). numba keeps the machine code in ``__pycache__``
next to the sources it compiled: for a colcon workspace that is the install tree, so run it
after each ``colcon build`` (kernels whose sources did not change are only loaded). Each node
also warms the kernels it uses at start-up, which then only loads them from that cache.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    from planning_collision import geometry, grid, orca

    total = time.perf_counter()
    for name, module in (("geometry", geometry), ("grid", grid), ("orca", orca)):
        started = time.perf_counter()
        module.warmup()
        print(f"{name}: kernels ready in {time.perf_counter() - started:.1f} s", flush=True)
    print(f"all kernels ready in {time.perf_counter() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
