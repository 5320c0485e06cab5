"""The ``warmup`` console script (``ros2 run planning_collision warmup`` after colcon build)
compiles, or loads, every numba kernel, caching them beside the package it runs from.

The colcon build of test_packaging.py checks that the script lands in the install tree with
every other console script; compiling there from cold would take minutes, so this runs the
venv's copy, whose kernels ``make setup`` already compiled (it only loads them)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import planning_collision
from planning_collision.warmup import CORES


def test_the_warmup_console_script_readies_every_kernel_beside_its_package():
    scripts = {ep.name: ep.value for ep in distribution("planning_collision").entry_points
               if ep.group == "console_scripts"}
    assert scripts["warmup"] == "planning_collision.warmup:main"
    script = Path(sys.executable).parent / "warmup"
    assert script.is_file(), f"{script} is not installed (make setup installs it)"
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(CORES) == {"geometry", "grid", "orca", "fleet", "sim"}  # every core with kernels
    for core in CORES:
        assert f"{core}: kernels ready" in result.stdout, result.stdout
        cache = Path(planning_collision.__file__).parent / core / "__pycache__"
        assert list(cache.glob("*.nbi")), f"no numba cache index in {cache}"
    assert "all kernels ready" in result.stdout


def test_orca_is_not_cached_while_the_geometry_kernels_its_warm_up_runs_are_not(monkeypatch):
    """orca's warm-up readies geometry kernels too (orca_node's obstacle worker): with only
    orca's cache present, orca_node must compile in a separate process, not in its own."""
    import os

    from planning_collision.warmup import cached

    exists = os.path.exists
    if not (cached(["orca"]) and cached(["geometry"])):
        raise AssertionError("make setup warms every kernel: run it first")
    # The geometry kernels' cache indexes gone: beside the sources (geometry/__pycache__) or
    # under NUMBA_CACHE_DIR (geometry_<hash>/).
    monkeypatch.setattr(os.path, "exists",
                        lambda p: not re.search(r"/geometry[/_]", str(p)) and exists(p))
    assert not cached(["geometry"])
    assert not cached(["orca"])
    assert cached(["grid"])


def test_every_package_with_kernels_is_a_core_the_warm_up_readies():
    """A package whose kernels the warm-up leaves out compiles them in a node, on its first
    use (fleet's route maps and sim's laser did, until they were cores)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    with_kernels = set()
    for package in pkgutil.iter_modules(planning_collision.__path__):
        # ros has no kernels; common's are helpers the cores' kernels call, compiled by the
        # cores' warm-ups.
        if not package.ispkg or package.name in ("ros", "common"):
            continue
        root = importlib.import_module(f"planning_collision.{package.name}")
        for info in pkgutil.iter_modules(root.__path__):
            module = importlib.import_module(f"{root.__name__}.{info.name}")
            if any(isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__
                   for obj in vars(module).values()):
                with_kernels.add(package.name)
    assert with_kernels <= set(CORES), sorted(with_kernels - set(CORES))
    assert {"geometry", "grid", "orca", "fleet", "sim"} <= with_kernels
