"""Maps and scenes the narrow-space tests share (issue #22; test/fleet/): two rooms split by a
wall with a door, as a blocked-cell grid, and the shipped narrow scenario files. A helper
next to conftest.py (on sys.path), as warmup_probe.py is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import planning_collision.fleet.controller as controller_module
from planning_collision.sim.scenario import load_scenario

RES = 0.05
SCENARIOS = Path(controller_module.__file__).resolve().parents[2] / "config" / "scenarios"


def rooms(door: float = 0.8, wall: float = 0.2, size=(8.0, 4.0)) -> np.ndarray:
    """Blocked cells (row = y) of two rooms split by a wall at x = size/2 with a door of
    ``door`` metres centred at y = size/2 (0: no door)."""
    w, h = (int(round(v / RES)) for v in size)
    blocked = np.zeros((h, w), dtype=bool)
    blocked[:2, :] = blocked[-2:, :] = blocked[:, :2] = blocked[:, -2:] = True
    x0, x1 = int(round((size[0] - wall) / 2 / RES)), int(round((size[0] + wall) / 2 / RES))
    blocked[:, x0:x1] = True
    if door > 0.0:
        y0, y1 = (int(round((size[1] / 2 + s * door / 2) / RES)) for s in (-1, 1))
        blocked[y0:y1, x0:x1] = False
    return blocked


def scene(name: str):
    """A shipped scenario (config/scenarios/<name>.yaml)."""
    return load_scenario(SCENARIOS / f"{name}.yaml")


def shipped_settings(time_step: float):
    """FleetSettings from the shipped orca.yaml at ``time_step``, as bench/bench_narrow.py
    runs them."""
    from dataclasses import fields

    import yaml

    from planning_collision.fleet.controller import FleetSettings

    params = yaml.safe_load((SCENARIOS.parent / "orca.yaml").read_text())
    params = params["/**/orca_node"]["ros__parameters"]
    names = {f.name for f in fields(FleetSettings)} - {"time_step"}
    return FleetSettings(**{k: v for k, v in params.items() if k in names},
                         time_step=time_step)
