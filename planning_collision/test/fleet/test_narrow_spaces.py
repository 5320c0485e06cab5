"""Issue #22's narrow-space scenes in the pure closed loop (sim/fleet_loop.py): the shipped
scenario files (config/scenarios/{corridor,doorway,single_lane,intersection}.yaml), run by
FleetController commanding FleetSimulation with orca.yaml's defaults."""

from __future__ import annotations

from pathlib import Path


import planning_collision.fleet.controller as controller_module
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenario import load_scenario

SCENARIOS = Path(controller_module.__file__).resolve().parents[2] / "config" / "scenarios"


def scene(name: str):
    return load_scenario(SCENARIOS / f"{name}.yaml")


def test_differential_drives_touched_the_corridor_wall_without_the_heading_guard(monkeypatch):
    """The issue's contact, reproduced: in the 1.4 m corridor two differential-drive robots,
    squeezed by the oncoming ones, slid into the wall (clearance about -0.002 m) while ORCA's
    chosen velocity ran along it; with the guard on their forward speed, none touches."""
    corridor = scene("corridor")
    guarded = run_scenario(corridor, timeout=24.0)
    assert [c for c in guarded.contacts if c[2] == "map"] == []
    monkeypatch.setattr(controller_module, "guarded_forward_speeds",
                        lambda positions, headings, speeds, *rest: speeds)
    unguarded = run_scenario(corridor, timeout=24.0)
    touched = {robot for _, robot, other in unguarded.contacts if other == "map"}
    drives = {r.name: r.drive for r in corridor.robots}
    assert touched and {drives[name] for name in touched} == {"unicycle"}
