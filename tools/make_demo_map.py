"""Generate the fleet demo's room: the map_server map and the scenario that uses it.

Writes, under planning_collision/config/:

* ``maps/swap_room.pgm`` + ``maps/swap_room.yaml``: a trinary map_server map (free 254,
  occupied 0, unknown 205) of a 16 m x 12 m room at 0.05 m per cell, with 0.2 m walls around,
  four round pillars and a U-shaped wall inside (the cells that lie wholly inside their
  polygons), unknown outside the walls;
* ``scenarios/swap_room.yaml``: the same pillars and U wall as polygon obstacles, 16 robots on
  a circle that swap to the opposite side (every fourth one a unicycle) and one person who
  walks across the room, ignoring everyone.

The map and the obstacles come from the same numbers, so they cannot drift apart. Run from the
repository root: ``.venv/bin/python tools/make_demo_map.py``; it refuses to write a layout in
which a start or goal is not free.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from map_files import write_map  # tools/map_files.py

ROOT = Path(__file__).resolve().parents[1] / "planning_collision" / "config"
RESOLUTION = 0.05
ROOM = (8.0, 6.0)  # half extents of the free interior, metres
WALL = 0.2
MARGIN = 0.3  # unknown cells beyond the walls
PILLAR_RADIUS = 0.3  # circumradius of the 12-gon pillars
PILLAR_RING = 3.0
CIRCLE_RADIUS = 4.5
ROBOTS = 16
U_WALL = [(5.2, -5.0), (7.2, -5.0), (7.2, -3.4), (7.0, -3.4), (7.0, -4.8), (5.4, -4.8),
          (5.4, -3.4), (5.2, -3.4)]
# The person crosses the room 3.2 m off its centre, through the robots' flows near their
# starts and goals. Not through the centre: there the 16 robots form a dense crowd for about
# 20 s, and a walker that ignores everyone can pin a robot that the crowd hems in; no
# avoidance method can prevent that, so the demo does not stage it.
PERSON = {"start": (-7.3, 3.2), "goal": (7.3, 3.2), "radius": 0.3, "max_speed": 0.4}


def pillars() -> list[tuple[str, list[tuple[float, float]]]]:
    """Four 12-gons between the robots' straight paths (11.25 degrees off every diameter)."""
    out = []
    for k, degrees in enumerate((56.25, 146.25, 236.25, 326.25)):
        a = math.radians(degrees)
        cx, cy = PILLAR_RING * math.cos(a), PILLAR_RING * math.sin(a)
        ring = [(round(cx + PILLAR_RADIUS * math.cos(2 * math.pi * i / 12), 3),
                 round(cy + PILLAR_RADIUS * math.sin(2 * math.pi * i / 12), 3))
                for i in range(12)]
        out.append((f"pillar_{k + 1}", ring))
    return out


def robots() -> list[dict]:
    out = []
    for k in range(ROBOTS):
        a = 2 * math.pi * k / ROBOTS
        x, y = CIRCLE_RADIUS * math.cos(a), CIRCLE_RADIUS * math.sin(a)
        out.append({"name": f"robot{k + 1}", "start": (round(x, 3), round(y, 3),
                                                       round(math.remainder(a + math.pi,
                                                                            2 * math.pi), 4)),
                    "goal": (round(-x, 3), round(-y, 3)),
                    "drive": "unicycle" if k % 4 == 1 else "holonomic"})
    return out


def inside(polygon, px, py) -> np.ndarray:
    """Even-odd point-in-polygon test for arrays of points."""
    result = np.zeros(px.shape, dtype=bool)
    n = len(polygon)
    for i in range(n):
        (x0, y0), (x1, y1) = polygon[i], polygon[(i + 1) % n]
        crosses = (y0 > py) != (y1 > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_at = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
        result ^= crosses & (px < x_at)
    return result


def occupancy() -> tuple[np.ndarray, tuple[float, float]]:
    """Image rows top-down (as written to the PGM) and the origin of the lower-left corner."""
    hx, hy = ROOM[0] + WALL + MARGIN, ROOM[1] + WALL + MARGIN
    width, height = round(2 * hx / RESOLUTION), round(2 * hy / RESOLUTION)
    origin = (-hx, -hy)
    cx = origin[0] + (np.arange(width) + 0.5) * RESOLUTION
    cy = origin[1] + (np.arange(height) + 0.5) * RESOLUTION
    px, py = np.meshgrid(cx, cy)  # row j = y index from the bottom
    free = np.full(px.shape, 254, dtype=np.uint8)
    outside_room = (np.abs(px) > ROOM[0]) | (np.abs(py) > ROOM[1])
    outside_walls = (np.abs(px) > ROOM[0] + WALL) | (np.abs(py) > ROOM[1] + WALL)
    free[outside_room] = 0
    free[outside_walls] = 205
    for ring in [ring for _, ring in pillars()] + [U_WALL]:
        free[cell_inside(ring, px, py)] = 0
    return np.flipud(free), origin


def cell_inside(polygon, px, py) -> np.ndarray:
    """Cells (centres px, py) whose whole square lies in the polygon: its four corners, pulled
    in by a hair so that corners on a grid-aligned edge count as inside. The drawn obstacle is
    then never larger than the polygon, and a robot clear of the polygons is clear of them in
    the map too."""
    h = 0.5 * RESOLUTION - 1e-6
    result = np.ones(px.shape, dtype=bool)
    for sx, sy in ((-h, -h), (h, -h), (h, h), (-h, h)):
        result &= inside(polygon, px + sx, py + sy)
    return result


def point_text(p) -> str:
    return "[" + ", ".join(f"{v + 0.0:g}" for v in p) + "]"  # + 0.0: no "-0"


def polygon_lines(ring, indent: str) -> list[str]:
    """A flow-style list of points, four to a line."""
    chunks = [", ".join(point_text(p) for p in ring[i:i + 4]) for i in range(0, len(ring), 4)]
    first = f"{indent}polygon: ["
    pad = " " * len(first)
    body = [(first if k == 0 else pad) + chunk for k, chunk in enumerate(chunks)]
    return [line + ("," if k < len(body) - 1 else "]") for k, line in enumerate(body)]


def scenario_text() -> str:
    lines = [
        "# The fleet demo: 16 robots on a 4.5 m circle swap to the opposite side while a person",
        "# walks across the room. Generated by tools/make_demo_map.py, with the map.",
        "map: ../maps/swap_room.yaml",
        "global_frame: map",
        "timeout: 120.0",
        "noise: {position: 0.0, yaw: 0.0}",
        "",
        "# The pillars and the U wall are also drawn in the map; the outer walls are only in",
        "# the map.",
        "obstacles:",
    ]
    for name, ring in pillars():
        lines.append(f"  - id: {name}")
        lines += polygon_lines(ring, "    ")
    lines.append("  - id: u_wall")
    lines += polygon_lines(U_WALL, "    ")
    lines += ["", "robot_defaults: {radius: 0.25, max_speed: 0.6, drive: holonomic, orca: true}",
              "", "robots:"]
    for r in robots():
        lines.append(f"  - {{name: {r['name']}, start: {point_text(r['start'])}, "
                     f"goal: {point_text(r['goal'])}, drive: {r['drive']}}}")
    lines.append("  # Not ORCA-driven: fleet_sim walks it straight to its goal, whatever is in "
                 "the way.")
    (sx, sy), (gx, gy) = PERSON["start"], PERSON["goal"]
    heading = round(math.atan2(gy - sy, gx - sx), 4)
    lines.append(f"  - {{name: person1, start: {point_text((sx, sy, heading))}, "
                 f"goal: {point_text((gx, gy))},")
    lines.append(f"     radius: {PERSON['radius']}, max_speed: {PERSON['max_speed']}, "
                 f"orca: false}}")
    return "\n".join(lines) + "\n"


def main() -> int:
    from planning_collision.grid.map_file import load_map_file
    from planning_collision.sim.scenario import load_scenario
    from planning_collision.sim.simulation import layout_problems, obstacle_shapes

    image, origin = occupancy()
    maps, scenarios = ROOT / "maps", ROOT / "scenarios"
    maps.mkdir(exist_ok=True)
    scenarios.mkdir(exist_ok=True)
    write_map(maps, "swap_room", image, RESOLUTION, origin, "tools/make_demo_map.py")
    (scenarios / "swap_room.yaml").write_text(scenario_text())

    scenario = load_scenario(scenarios / "swap_room.yaml")
    grid = load_map_file(scenario.map).to_grid()
    problems = layout_problems(scenario, grid)
    # The person ignores everything: its whole straight walk must miss every obstacle.
    from planning_collision.geometry import ConvexShape, ObstacleSet

    person = scenario.robot("person1")
    walk = ConvexShape.capsule(person.start[:2], person.goal, person.radius)
    parts, ids = obstacle_shapes(scenario.obstacles)
    k, distance, _, _ = ObstacleSet.from_shapes(parts).nearest_shape(walk)
    if distance <= 0.0:
        problems.append(f"the person's walk crosses {ids[k]}")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"wrote {maps / 'swap_room.pgm'} ({image.shape[1]} x {image.shape[0]}), the map YAML "
          f"and {scenarios / 'swap_room.yaml'}; person clearance {distance:.3f} m")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
