"""Scenario files: a complete file loads into the expected values, every kind of bad field is
a ValueError naming it, and the shipped demo scenario is free at every start and goal (checked
against shapely and the raw map cells, not only the project's own layout check)."""

from __future__ import annotations

import copy
import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
import yaml
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

from planning_collision.grid.map_file import load_map_file
from planning_collision.resources import share_directory
from planning_collision.sim.scenario import (
    BoxObstacle,
    CircleObstacle,
    Noise,
    PolygonObstacle,
    load_scenario,
    parse_scenario,
)
from planning_collision.sim.simulation import layout_problems

MAP_YAML = "image: tiny.pgm\nresolution: 0.1\norigin: [0.0, 0.0, 0.0]\n"
L_SHAPE = [[0.0, 0.0], [2.0, 0.0], [2.0, 0.5], [0.5, 0.5], [0.5, 2.0], [0.0, 2.0]]

GOOD = {
    "map": "maps/tiny.yaml",
    "global_frame": "world",
    "timeout": 30,
    "noise": {"position": 0.01, "yaw": 0.002},
    "obstacles": [
        {"id": "l_wall", "polygon": L_SHAPE},
        {"id": "drum", "circle": {"center": [3.0, 1.0], "radius": 0.4}},
        {"id": "crate", "box": {"center": [5.0, 1.0], "heading": 0.5, "length": 1.2,
                                "width": 0.6}},
    ],
    "robot_defaults": {"radius": 0.25, "max_speed": 0.6},
    "robots": [
        {"name": "robot1", "start": [1.0, 1.0, 0.0], "goal": [4.0, 3.0]},
        {"name": "robot_2", "start": [6.0, 3.0, math.pi], "goal": [1.0, 3.0], "radius": 0.3,
         "drive": "unicycle"},
        {"name": "walker", "start": [0.0, 4.0, 0.0], "goal": [6.0, 4.0], "max_speed": 1.2,
         "orca": False},
    ],
}


@pytest.fixture
def scenario_dir(tmp_path):
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "tiny.yaml").write_text(MAP_YAML)
    (tmp_path / "maps" / "tiny.pgm").write_bytes(b"P5\n2 2\n255\n" + bytes([254] * 4))
    return tmp_path


def write(path, data) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_complete_file_loads(scenario_dir):
    path = write(scenario_dir / "good.yaml", GOOD)
    s = load_scenario(path)
    assert s.map == scenario_dir / "maps" / "tiny.yaml"
    assert s.global_frame == "world" and s.timeout == 30.0
    assert s.noise == Noise(position=0.01, yaw=0.002)
    assert s.obstacles == (
        PolygonObstacle("l_wall", tuple(tuple(p) for p in L_SHAPE)),
        CircleObstacle("drum", (3.0, 1.0), 0.4),
        BoxObstacle("crate", (5.0, 1.0), 0.5, 1.2, 0.6),
    )
    assert [o.kind for o in s.obstacles] == ["polygon", "circle", "box"]
    assert s.names == ("robot1", "robot_2", "walker")
    r1, r2, walker = s.robots
    assert (r1.start, r1.goal, r1.radius, r1.max_speed, r1.drive, r1.orca) == \
        ((1.0, 1.0, 0.0), (4.0, 3.0), 0.25, 0.6, "holonomic", True)
    assert (r2.radius, r2.drive, r2.start[2]) == (0.3, "unicycle", math.pi)
    assert (walker.orca, walker.max_speed) == (False, 1.2)
    assert s.robot("walker") is walker
    with pytest.raises(FrozenInstanceError):
        r1.radius = 1.0


def test_optional_sections_have_defaults(tmp_path):
    s = parse_scenario({"robots": [{"name": "r", "start": [0, 0, 0], "goal": [1, 1],
                                    "radius": 0.2, "max_speed": 1}]}, tmp_path)
    assert s.map is None and s.obstacles == () and s.global_frame == "map"
    assert s.noise == Noise(0.0, 0.0) and s.timeout == 120.0


def mutate(path_and_value):
    """GOOD with one field replaced (value DELETE removes it)."""
    path, value = path_and_value
    data = copy.deepcopy(GOOD)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


DELETE = object()

BAD_FIELDS = [
    ((("robots", 1, "goal"), [1.0]), "robots[1].goal"),
    ((("robots", 1, "goal"), DELETE), "robots[1].goal is missing"),
    ((("robots", 0, "start"), [0.0, 0.0]), "robots[0].start"),
    ((("robots", 0, "start"), [float("nan"), 0.0, 0.0]), "robots[0].start[0] must be finite"),
    ((("robots", 0, "start"), [0.0, "a", 0.0]), "robots[0].start[1] must be a number"),
    ((("robots", 2, "radius"), -0.1), "robots[2].radius must be finite and > 0"),
    ((("robots", 0, "max_speed"), "fast"), "robots[0].max_speed must be a number"),
    ((("robots", 0, "max_speed"), True), "robots[0].max_speed must be a number"),
    ((("robots", 0, "drive"), "tank"), "robots[0].drive must be one of"),
    ((("robots", 0, "orca"), "yes"), "robots[0].orca must be true or false"),
    ((("robots", 0, "name"), "1robot"), "robots[0].name '1robot' is not a valid ROS namespace"),
    ((("robots", 0, "name"), "a__b"), "robots[0].name"),
    ((("robots", 1, "name"), "robot1"), "robots[1].name 'robot1' is used twice"),
    ((("robots", 0, "colour"), "red"), "robots[0].colour: unknown key"),
    ((("robots", 0, "name"), "map"), "robots[0].name 'map' is reserved"),
    ((("robots", 0, "name"), "drum"), "obstacles[1].id 'drum' is also a robot's name"),
    ((("obstacles", 0, "id"), "map"), "obstacles[0].id 'map' is reserved"),
    ((("robots", 0), "robot1"), "robots[0] must be a mapping"),
    ((("robots",), []), "robots is empty"),
    ((("robots",), DELETE), "robots is missing"),
    ((("robot_defaults", "radius"), 0), "robot_defaults.radius must be finite and > 0"),
    ((("robot_defaults", "name"), "x"), "robot_defaults.name: unknown key"),
    ((("obstacles", 0, "polygon"), [[0, 0], [1, 1], [1, 0], [0, 1]]),
     "obstacles[0].polygon: polygon is self-intersecting"),
    ((("obstacles", 0, "polygon"), [[0, 0], [1, 1]]), "obstacles[0].polygon needs at least 3"),
    ((("obstacles", 0, "polygon"), [[0, 0], [1, 1], [2, 2]]), "obstacles[0].polygon: "),
    ((("obstacles", 0, "polygon"), [[0, 0], [1, 0], [1]]), "obstacles[0].polygon[2]"),
    ((("obstacles", 1, "circle", "radius"), 0.0),
     "obstacles[1].circle.radius must be finite and > 0"),
    ((("obstacles", 1, "circle", "center"), [1.0, float("inf")]),
     "obstacles[1].circle.center[1] must be finite"),
    ((("obstacles", 2, "box", "width"), DELETE), "obstacles[2].box.width is missing"),
    ((("obstacles", 2, "box", "depth"), 1.0), "obstacles[2].box.depth: unknown key"),
    ((("obstacles", 1, "box"), {"center": [0, 0], "length": 1, "width": 1}),
     "obstacles[1] needs exactly one of polygon, circle, box; got circle, box"),
    ((("obstacles", 1, "circle"), DELETE), "obstacles[1] needs exactly one"),
    ((("obstacles", 1, "id"), "l_wall"), "obstacles[1].id 'l_wall' is used twice"),
    ((("obstacles", 1, "id"), DELETE), "obstacles[1].id is missing"),
    ((("obstacles",), {"id": "x"}), "obstacles must be a list"),
    ((("map",), "maps/none.yaml"), "map: no such file"),
    ((("map",), 3), "map must be a non-empty string"),
    ((("global_frame",), ""), "global_frame must be a non-empty string"),
    ((("noise", "position"), -0.1), "noise.position must be finite and >= 0"),
    ((("noise", "pos"), 0.1), "noise.pos: unknown key"),
    ((("timeout",), 0), "timeout must be finite and > 0"),
    ((("robts",), []), "robts: unknown key"),
]


@pytest.mark.parametrize("change,message", BAD_FIELDS, ids=[m for _, m in BAD_FIELDS])
def test_bad_fields_are_named(scenario_dir, change, message):
    path = write(scenario_dir / "bad.yaml", mutate(change))
    with pytest.raises(ValueError) as info:
        load_scenario(path)
    assert message in str(info.value)
    assert "bad.yaml" in str(info.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read scenario file"):
        load_scenario(tmp_path / "missing.yaml")
    (tmp_path / "broken.yaml").write_text("robots: [\n")
    with pytest.raises(ValueError, match="is not valid YAML"):
        load_scenario(tmp_path / "broken.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must be a mapping of keys, got list"):
        load_scenario(tmp_path / "list.yaml")


# ---------------------------------------------------------------------- the shipped demo
@pytest.fixture(scope="module")
def swap_room():
    path = share_directory() / "config" / "scenarios" / "swap_room.yaml"
    return load_scenario(path)


def test_shipped_scenario_loads(swap_room):
    s = swap_room
    assert s.map is not None and s.map.name == "swap_room.yaml"
    orca = [r for r in s.robots if r.orca]
    people = [r for r in s.robots if not r.orca]
    assert len(orca) == 16 and len(people) == 1
    assert {r.radius for r in orca} == {0.25} and {r.max_speed for r in orca} == {0.6}
    assert {r.drive for r in orca} == {"holonomic", "unicycle"}
    assert any(isinstance(o, PolygonObstacle) and not Polygon(o.vertices).equals(
        Polygon(o.vertices).convex_hull) for o in s.obstacles), "no concave wall"
    gmap = load_map_file(s.map)
    height, width = gmap.data.shape
    assert (width * gmap.resolution, height * gmap.resolution) == pytest.approx((17.0, 13.0))


def blocked_cell_distances(gmap, x, y):
    """Distance from (x, y) to every blocked cell's square (unknown counts as blocked)."""
    rows, cols = np.nonzero((gmap.data >= 65) | (gmap.data < 0))
    res = gmap.resolution
    cx = gmap.origin[0] + (cols + 0.5) * res
    cy = gmap.origin[1] + (rows + 0.5) * res
    gap_x = np.maximum(np.abs(cx - x) - res / 2, 0.0)
    gap_y = np.maximum(np.abs(cy - y) - res / 2, 0.0)
    return np.hypot(gap_x, gap_y)


def test_shipped_scenario_starts_and_goals_are_free(swap_room):
    s = swap_room
    gmap = load_map_file(s.map)
    assert gmap.origin[2] == 0.0
    polygons = [Polygon(o.vertices) for o in s.obstacles]
    assert all(p.is_valid for p in polygons)
    for label in ("start", "goal"):
        discs = [Point(getattr(r, label)[:2]).buffer(r.radius, 256) for r in s.robots]
        for i, r in enumerate(s.robots):
            centre = getattr(r, label)[:2]
            for j in range(i + 1, len(s.robots)):
                other = getattr(s.robots[j], label)[:2]
                assert math.dist(centre, other) > r.radius + s.robots[j].radius, \
                    f"{r.name} and {s.robots[j].name} overlap at their {label}s"
            for o, p in zip(s.obstacles, polygons, strict=True):
                assert not discs[i].intersects(p), f"{r.name}'s {label} is inside {o.id}"
            assert blocked_cell_distances(gmap, *centre).min() > r.radius, \
                f"{r.name}'s {label} overlaps the map's walls"
    # The person walks straight, ignoring everything: its whole path must be clear.
    person = s.robot("person1")
    walk = LineString([person.start[:2], person.goal]).buffer(person.radius)
    assert not any(walk.intersects(p) for p in polygons)
    samples = np.linspace(person.start[:2], person.goal, 200)
    assert min(blocked_cell_distances(gmap, *xy).min() for xy in samples) > person.radius
    # The project's own check agrees.
    assert layout_problems(s, gmap.to_grid()) == []


def test_shipped_map_draws_the_obstacles_inside_their_polygons(swap_room):
    """Inside the room, every blocked cell lies within an obstacle polygon (so a robot clear
    of the polygons is clear of the map), and the polygons are drawn, not left out."""
    gmap = load_map_file(swap_room.map)
    res = gmap.resolution
    rows, cols = np.nonzero(gmap.data != 0)
    cx = gmap.origin[0] + (cols + 0.5) * res
    cy = gmap.origin[1] + (rows + 0.5) * res
    interior = (np.abs(cx) < 8.0) & (np.abs(cy) < 6.0)
    polygons = [Polygon(o.vertices) for o in swap_room.obstacles]
    union = unary_union(polygons).buffer(1e-9)
    cells = [box(x - res / 2, y - res / 2, x + res / 2, y + res / 2)
             for x, y in zip(cx[interior], cy[interior], strict=True)]
    assert cells and all(cell.within(union) for cell in cells)
    assert gmap.data[rows[interior], cols[interior]].tolist() == [100] * len(cells)
    drawn = unary_union(cells)
    for o, polygon in zip(swap_room.obstacles, polygons, strict=True):
        assert drawn.intersection(polygon).area > 0.7 * polygon.area, o.id


def test_layout_problems_reports_overlaps(scenario_dir):
    data = copy.deepcopy(GOOD)
    data["robots"][1]["start"] = [1.3, 1.2, 0.0]  # overlaps robot1's start
    data["robots"][2]["goal"] = [0.2, 1.0]  # inside the L wall's vertical arm
    s = parse_scenario(data, scenario_dir)
    assert layout_problems(s) == ["robot1 overlaps robot_2 at its start",
                                  "walker overlaps l_wall at its goal"]
