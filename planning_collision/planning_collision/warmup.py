"""Compile (first run) or load (later runs) every numba kernel of the pure cores.

    python -m planning_collision.warmup         # the PyPI venv (make setup runs it)
    ros2 run planning_collision warmup          # a colcon workspace, after colcon build
    python -m planning_collision.warmup geometry grid    # only these cores

Run once after installing, so the first test, demo or node start does not pay the
compilation (about a minute of CPU time; the cores are compiled in one process each, at the
same time, since numba compiles on one thread). numba keeps the machine code in
``__pycache__`` next to the sources it compiled: for a colcon workspace that is the install
tree, so run it after each ``colcon build`` (kernels whose sources did not change are only
loaded). Each node also warms the kernels it uses at start-up, which then only loads them
from that cache.
"""

from __future__ import annotations

import sys
import time

CORES = ("geometry", "grid", "orca", "fleet", "sim")
# Cores whose warm-up also runs kernels of another core (orca's readies the geometry kernels
# orca_node's obstacle worker uses, sim's laser casts through the geometry core's segment
# cast): their cache is only complete with that core's.
USES = {"orca": ("geometry",), "sim": ("geometry",)}


def cached(names) -> bool:
    """Whether numba's cache holds the kernels of the cores ``names`` (then a warm-up only
    loads them, in well under a second; else it compiles them, for up to a minute). A
    heuristic: each core must have cache indexes (kernels only ever called from other kernels
    have none of their own); a stale one is still recompiled when loaded."""
    import importlib
    import os
    import pkgutil

    from numba.core.registry import CPUDispatcher

    for name in {used for core in names for used in (core, *USES.get(core, ()))}:
        package = importlib.import_module(f"planning_collision.{name}")
        indexes = []
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for obj in vars(module).values():
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                    indexes.append(getattr(getattr(getattr(obj, "_cache", None), "_cache_file",
                                                   None), "_index_path", None))
        if indexes and not any(i is not None and os.path.exists(i) for i in indexes):
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    import importlib

    names = (sys.argv[1:] if argv is None else argv) or list(CORES)
    unknown = sorted(set(names) - set(CORES))
    if unknown:
        print(f"unknown core {', '.join(unknown)}; choose from {', '.join(CORES)}",
              file=sys.stderr)
        return 2
    total = time.perf_counter()
    if len(names) > 1 and _cpu_count() > 1:
        status = _compile_in_parallel(names)
        print(f"all kernels ready in {time.perf_counter() - total:.1f} s")
        return status
    for name in names:
        module = importlib.import_module(f"planning_collision.{name}")
        started = time.perf_counter()
        module.warmup()
        print(f"{name}: kernels ready in {time.perf_counter() - started:.1f} s", flush=True)
    if len(names) > 1:
        print(f"all kernels ready in {time.perf_counter() - total:.1f} s")
    return 0


def _cpu_count() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _compile_in_parallel(names) -> int:
    """One process per core, all at once; the first non-zero exit status, else 0. The
    processes stay in this one's process group, so whoever ends this warm-up by its group
    (a node that stops while its kernels compile) ends them too."""
    import subprocess

    compilers = [subprocess.Popen([sys.executable, "-m", "planning_collision.warmup", name])
                 for name in names]
    try:
        codes = [compiler.wait() for compiler in compilers]
    finally:
        for compiler in compilers:
            if compiler.poll() is None:
                compiler.kill()
    return next((code for code in codes if code != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
