"""Generate the narrow-space scenes of issue #22: maps and the scenarios that use them.

Writes, under planning_collision/config/, for each scene a trinary map_server map
(``maps/<scene>.pgm`` + ``.yaml``, 0.05 m per cell, every cell outside the free space
occupied) and ``scenarios/<scene>.yaml`` (robots of radius 0.25 m at 0.6 m/s, holonomic and
differential drive mixed, each swapping to the mirrored place on the other side):

* ``corridor``: two 4 m x 4 m rooms joined by a corridor 1.4 m wide and 8 m long, 4 robots in
  each room;
* ``doorway``: two 4 m x 4 m rooms on either side of a 0.2 m wall with a 0.8 m doorway, 4
  robots in each room;
* ``single_lane``: two 3 m x 3 m rooms joined by a corridor 0.8 m wide and 6 m long, 2 robots
  in each room;
* ``intersection``: a 4-way crossing of 1.4 m corridors, arms 6 m long, 2 robots in each arm,
  each crossing to the opposite arm.

and ``narrow_<scene>_orca.yaml``, orca_node's parameters for it (the demo's
``--orca-params``). Free space is a union of axis-aligned rectangles, so the map is exact at
0.05 m. Run from the repository root: ``.venv/bin/python tools/make_narrow_scenes.py``; it
refuses to write a layout in which a start or goal is not free.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from map_files import write_map  # tools/map_files.py

ROOT = Path(__file__).resolve().parents[1] / "planning_collision" / "config"
RESOLUTION = 0.05
BORDER = 0.5  # occupied cells around the free space

# Each scene: free rectangles (xmin, ymin, xmax, ymax), robots (start x, y, yaw; goal x, y;
# drive), timeout.
U, H = "unicycle", "holonomic"


def _swap(left: list[tuple[float, float]], drives: list[str]) -> list[tuple]:
    """Robots at ``left`` (facing +x) and at their mirror images (facing -x), each going to
    its mirror image."""
    robots = []
    for (x, y), drive in zip(left, drives, strict=True):
        robots.append(((x, y, 0.0), (-x, -y), drive))
    for (x, y), drive in zip(left, drives, strict=True):
        robots.append(((-x, -y, math.pi), (x, y), drive))
    return robots


SCENES = {
    "corridor": {
        "about": "Two 4 m x 4 m rooms joined by a corridor 1.4 m wide and 8 m long; 4 robots in "
                 "each room swap sides.",
        "free": [(-8.0, -2.0, -4.0, 2.0), (-4.0, -0.7, 4.0, 0.7), (4.0, -2.0, 8.0, 2.0)],
        "robots": _swap([(-6.8, 0.8), (-6.8, -0.8), (-5.4, 0.8), (-5.4, -0.8)], [H, U, U, H]),
        "timeout": 120.0,
    },
    "doorway": {
        "about": "Two 4 m x 4 m rooms on either side of a 0.2 m wall with a 0.8 m doorway; 4 "
                 "robots in each room swap sides.",
        "free": [(-4.1, -2.0, -0.1, 2.0), (-0.1, -0.4, 0.1, 0.4), (0.1, -2.0, 4.1, 2.0)],
        "robots": _swap([(-2.6, 0.8), (-2.6, -0.8), (-1.2, 0.8), (-1.2, -0.8)], [H, U, U, H]),
        "timeout": 120.0,
    },
    "single_lane": {
        "about": "Two 3 m x 3 m rooms joined by a corridor 0.8 m wide and 6 m long; 2 robots "
                 "in each room swap sides.",
        "free": [(-6.0, -1.5, -3.0, 1.5), (-3.0, -0.4, 3.0, 0.4), (3.0, -1.5, 6.0, 1.5)],
        "robots": _swap([(-4.5, 0.7), (-4.5, -0.7)], [H, U]),
        "timeout": 120.0,
    },
    "intersection": {
        "about": "A 4-way crossing of 1.4 m corridors, arms 6 m long; 2 robots in each arm "
                 "cross to the opposite arm.",
        "free": [(-6.0, -0.7, 6.0, 0.7), (-0.7, -6.0, 0.7, 6.0)],
        "robots": [],
        "timeout": 120.0,
    },
}
for _k, _a in enumerate((0.0, 0.5 * math.pi, math.pi, 1.5 * math.pi)):
    for _d, _side, _drive in ((4.0, 0.35, H), (5.3, -0.35, U if _k % 2 else H)):
        _c, _s = math.cos(_a), math.sin(_a)
        # An arm along -direction a: start on it, facing the crossing; goal on the opposite arm.
        _x, _y = -_d * _c - _side * _s, -_d * _s + _side * _c
        SCENES["intersection"]["robots"].append(
            ((round(_x, 3), round(_y, 3), round(_a, 4)),
             (round(_d * _c - _side * _s, 3), round(_d * _s + _side * _c, 3)), _drive))


def occupancy(free_rects) -> tuple[np.ndarray, tuple[float, float]]:
    """Image rows top-down (as written to the PGM) and the origin of the lower-left corner."""
    rects = np.array(free_rects, dtype=np.float64)
    lo = rects[:, :2].min(axis=0) - BORDER
    hi = rects[:, 2:].max(axis=0) + BORDER
    width, height = (int(round(v)) for v in (hi - lo) / RESOLUTION)
    cx = lo[0] + (np.arange(width) + 0.5) * RESOLUTION
    cy = lo[1] + (np.arange(height) + 0.5) * RESOLUTION
    px, py = np.meshgrid(cx, cy)
    image = np.zeros(px.shape, dtype=np.uint8)  # occupied
    for x0, y0, x1, y1 in rects:
        image[(px > x0) & (px < x1) & (py > y0) & (py < y1)] = 254
    return np.flipud(image), (round(float(lo[0]), 3), round(float(lo[1]), 3))


def point_text(p) -> str:
    return "[" + ", ".join(f"{v + 0.0:g}" for v in p) + "]"


def scenario_text(name: str, scene: dict) -> str:
    lines = [f"# {scene['about']}",
             "# Issue #22's narrow-space scene; generated by tools/make_narrow_scenes.py.",
             f"map: ../maps/{name}.yaml", "global_frame: map",
             f"timeout: {scene['timeout']}", "",
             "robot_defaults: {radius: 0.25, max_speed: 0.6, drive: holonomic, orca: true}",
             "", "robots:"]
    for k, (start, goal, drive) in enumerate(scene["robots"]):
        lines.append(f"  - {{name: robot{k + 1}, start: {point_text(start)}, "
                     f"goal: {point_text(goal)}, drive: {drive}}}")
    return "\n".join(lines) + "\n"


def double_text(p) -> str:
    """A list of doubles as ROS parameters need them (never an integer: 0.0, not 0)."""
    return "[" + ", ".join(repr(round(float(v), 5) + 0.0) for v in p) + "]"


def orca_text(name: str, scene: dict) -> str:
    """orca_node's parameters for the scene (the demo's --orca-params): the robots, each with
    its start as its odometry origin and its goal, and the map's walls as obstacles."""
    names = [f"robot{k + 1}" for k in range(len(scene["robots"]))]
    lines = [f"# orca_node for config/scenarios/{name}.yaml (issue #22's scene); generated by",
             "# tools/make_narrow_scenes.py. Run over DDS with:",
             f"#   python -m planning_collision.demo --scenario "
             f"planning_collision/config/scenarios/{name}.yaml \\",
             f"#       --orca-params planning_collision/config/narrow_{name}_orca.yaml",
             "# Parameters not set here keep config/orca.yaml's defaults.",
             "/**/orca_node:", "  ros__parameters:",
             f"    agents: [{', '.join(names)}]", "    global_frame: map",
             "    pref_speed: 0.5", "    radius: 0.25", "    max_speed: 0.6",
             "    use_map_obstacles: true                # the walls are only in the map"]
    for robot, (start, goal, drive) in zip(names, scene["robots"], strict=True):
        lines += [f"    {robot}:", f"      odom_origin: {double_text(start)}",
                  f"      goal: {double_text(goal)}"]
        if drive == U:
            lines.append("      holonomic: false")
    return "\n".join(lines) + "\n"


def main() -> int:
    from planning_collision.grid.map_file import load_map_file
    from planning_collision.sim.scenario import load_scenario
    from planning_collision.sim.simulation import layout_problems

    maps, scenarios = ROOT / "maps", ROOT / "scenarios"
    problems = []
    for name, scene in SCENES.items():
        image, origin = occupancy(scene["free"])
        write_map(maps, name, image, RESOLUTION, origin, "tools/make_narrow_scenes.py")
        (scenarios / f"{name}.yaml").write_text(scenario_text(name, scene))
        (ROOT / f"narrow_{name}_orca.yaml").write_text(orca_text(name, scene))
        scenario = load_scenario(scenarios / f"{name}.yaml")
        grid = load_map_file(scenario.map).to_grid()
        problems += [f"{name}: {p}" for p in layout_problems(scenario, grid)]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
