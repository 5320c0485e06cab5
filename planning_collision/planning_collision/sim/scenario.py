"""Fleet scenarios: a YAML file naming a map, static obstacles and robots with starts and goals.

Pure Python (PyYAML and the geometry core; no ROS). :func:`load_scenario` reads a file,
:func:`parse_scenario` a mapping already loaded; both return a frozen :class:`Scenario` or
raise ``ValueError`` naming the offending field, e.g. ``robots[3].goal``. Format::

    map: ../maps/swap_room.yaml     # optional: a Nav2 map_server YAML, relative to this file
    global_frame: map               # optional (default map): frame of every coordinate here
    timeout: 120.0                  # optional (default 120): seconds a run may take
    noise: {position: 0.0, yaw: 0.0}   # optional: odometry noise std, metres and radians
    # optional odometry drift: each robot's odometry misreads distance by drift_scale (a
    # fraction) and turns drift_heading radians per metre travelled; the sign of each is drawn
    # per robot. Localization (fleet_sim's simulated localizer) corrects it.
    # noise: {drift_scale: 0.05, drift_heading: 0.05}
    obstacles:                      # optional: static obstacles, each with a unique id
      - {id: l_wall, polygon: [[x, y], [x, y], [x, y], ...]}   # simple polygon, may be concave
      - {id: drum, circle: {center: [x, y], radius: 0.3}}
      - {id: crate, box: {center: [x, y], heading: 0.0, length: 1.2, width: 0.8}}
    robot_defaults: {radius: 0.25, max_speed: 0.6}   # optional: fields every robot inherits
    robots:                         # at least one
      - {name: robot1, start: [x, y, yaw], goal: [x, y], radius: 0.25, max_speed: 0.6,
         drive: holonomic, orca: true}
      # optional: a simulated 2D laser (sensor_msgs/LaserScan on <name>/scan), every key
      # optional (the defaults of sim.laser.LaserSpec: 360 beams over a full turn, 8 m,
      # range_min 0.05 m, 10 Hz, no noise, mounted at the centre)
      - {name: robot2, ..., scan: {beams: 360, range_max: 8.0, rate_hz: 10.0, noise: 0.01,
                                   range_min: 0.05, angle_min: -3.14, angle_max: 3.14,
                                   offset: [x, y, yaw]}}
      # optional: a simulated depth camera (sensor_msgs/PointCloud2 on <name>/points), every
      # key optional (the defaults of sim.depth_camera.CameraSpec)
      - {name: robot3, ..., cloud: {beams: 160, rows: 12, fov: 1.5, elevation_min: -0.6,
                                    elevation_max: 0.2, height: 0.4, range_min: 0.2,
                                    range_max: 6.0, rate_hz: 10.0, noise: 0.0,
                                    offset: [x, y, yaw]}}
      - {name: person1, ..., orca: false, odometry: false}   # publishes nothing at all

A robot's ``name`` is its ROS namespace (letters, digits and single underscores, starting with a
letter). ``drive`` is ``holonomic`` (the default) or ``unicycle``. ``orca: false`` (default
true) marks a non-ORCA agent, e.g. a person: the simulator walks it straight to its goal at
``max_speed`` and ignores its commands. Unknown keys are errors, so a misspelt field is never
silently ignored. ``odometry: false`` (default true) marks an agent invisible to odometry:
fleet_sim publishes nothing for it (people, other vendors' robots), so only sensors see it; an
ORCA robot needs its odometry. ``scan`` in ``robot_defaults`` is merged key by key with a
robot's own ``scan`` block; ``scan: false`` gives a robot no laser, ``scan: true`` the default
one; ``cloud`` (a depth camera) works the same way. Obstacle ids and robot names must differ
from each other and from ``map`` (collision reports use them as names). Whether robots start
clear of each other and of the obstacles is not checked here (that needs the map): see
:func:`planning_collision.sim.simulation.layout_problems`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from planning_collision.common.checks import finite_scalar

if TYPE_CHECKING:
    from planning_collision.sim.depth_camera import CameraSpec
    from planning_collision.sim.laser import LaserSpec

DRIVES = ("holonomic", "unicycle")
RESERVED_ID = "map"  # what collision reports call the map's blocked cells
DEFAULT_TIMEOUT = 120.0
NAME_PATTERN = re.compile(r"[A-Za-z](?:_?[A-Za-z0-9])*_?")

TOP_KEYS = ("map", "global_frame", "timeout", "noise", "obstacles", "robot_defaults", "robots")
ROBOT_KEYS = ("name", "start", "goal", "radius", "max_speed", "drive", "orca", "odometry", "scan",
              "cloud")
DEFAULTABLE_KEYS = ("radius", "max_speed", "drive", "orca", "odometry", "scan", "cloud")
SENSORS = ("scan", "cloud")  # blocks merged key by key with robot_defaults'
SCAN_KEYS = ("beams", "range_max", "range_min", "rate_hz", "noise", "angle_min", "angle_max",
             "offset")
CLOUD_KEYS = ("beams", "rows", "fov", "elevation_min", "elevation_max", "height", "range_min",
              "range_max", "rate_hz", "noise", "offset")
OBSTACLE_KINDS = ("polygon", "circle", "box")
_ABSENT = object()  # a robot's key that is not given


@dataclass(frozen=True)
class PolygonObstacle:
    """A simple polygon (concave allowed), vertices in order, first vertex not repeated."""

    id: str
    vertices: tuple[tuple[float, float], ...]

    kind = "polygon"


@dataclass(frozen=True)
class CircleObstacle:
    id: str
    center: tuple[float, float]
    radius: float

    kind = "circle"


@dataclass(frozen=True)
class BoxObstacle:
    """A rectangle, ``length`` along ``heading`` (radians) and ``width`` across it."""

    id: str
    center: tuple[float, float]
    heading: float
    length: float
    width: float

    kind = "box"


Obstacle = PolygonObstacle | CircleObstacle | BoxObstacle


@dataclass(frozen=True)
class Robot:
    name: str
    start: tuple[float, float, float]
    goal: tuple[float, float]
    radius: float
    max_speed: float
    drive: str = "holonomic"
    orca: bool = True
    #: False: fleet_sim publishes nothing for this agent (seen only through sensors).
    odometry: bool = True
    #: The robot's simulated laser, None for none.
    scan: LaserSpec | None = None
    #: The robot's simulated depth camera, None for none.
    cloud: CameraSpec | None = None


@dataclass(frozen=True)
class Noise:
    """Odometry errors: standard deviations of the white noise (``position`` in metres,
    ``yaw`` in radians) and the size of each robot's drift (``drift_scale``: the fraction by
    which its odometry misreads distance; ``drift_heading``: radians its odometry turns per
    metre travelled)."""

    position: float = 0.0
    yaw: float = 0.0
    drift_scale: float = 0.0
    drift_heading: float = 0.0


@dataclass(frozen=True)
class Scenario:
    robots: tuple[Robot, ...]
    obstacles: tuple[Obstacle, ...] = ()
    map: Path | None = None
    global_frame: str = "map"
    noise: Noise = Noise()
    timeout: float = DEFAULT_TIMEOUT
    source: Path | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.robots)

    def robot(self, name: str) -> Robot:
        for r in self.robots:
            if r.name == name:
                return r
        raise KeyError(name)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; ``map`` is resolved relative to the file."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read scenario file {path}: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"scenario file {path} is not valid YAML: {exc}") from exc
    try:
        return parse_scenario(data, path.parent, source=path)
    except ValueError as exc:
        raise ValueError(f"scenario {path}: {exc}") from exc


def parse_scenario(data, base_dir: str | Path = ".", source: Path | None = None) -> Scenario:
    """Validate a loaded YAML mapping; relative ``map`` paths are taken from ``base_dir``."""
    if not isinstance(data, dict):
        raise ValueError(f"a scenario must be a mapping of keys, got {_kind(data)}")
    _known_keys(data, TOP_KEYS, "")

    map_path = None
    if data.get("map") is not None:
        text = _string(data["map"], "map")
        map_path = Path(text)
        if not map_path.is_absolute():
            map_path = Path(base_dir) / map_path
        if not map_path.is_file():
            raise ValueError(f"map: no such file {map_path}")
    frame = _string(data.get("global_frame", "map"), "global_frame")
    timeout = _number(data.get("timeout", DEFAULT_TIMEOUT), "timeout", positive=True)
    noise = _noise(data.get("noise", {}))
    obstacles = _obstacles(data.get("obstacles", []))
    robots = _robots(data.get("robots"), data.get("robot_defaults", {}))
    names = {r.name for r in robots}
    for i, obstacle in enumerate(obstacles):
        if obstacle.id in names:
            raise ValueError(f"obstacles[{i}].id '{obstacle.id}' is also a robot's name: "
                             f"collision reports could not tell them apart")
    return Scenario(robots=robots, obstacles=obstacles, map=map_path, global_frame=frame,
                    noise=noise, timeout=timeout, source=source)


# ---------------------------------------------------------------------- sections
def _noise(value) -> Noise:
    if value is None:
        return Noise()
    _mapping(value, "noise")
    keys = ("position", "yaw", "drift_scale", "drift_heading")
    _known_keys(value, keys, "noise")
    values = {key: _number(value.get(key, 0.0), f"noise.{key}", nonnegative=True)
              for key in keys}
    if values["drift_scale"] >= 1.0:
        raise ValueError(f"noise.drift_scale must be < 1 (a fraction of the distance), got "
                         f"{values['drift_scale']}")
    return Noise(**values)


def _obstacles(value) -> tuple[Obstacle, ...]:
    if value is None:
        return ()
    _list(value, "obstacles")
    out: list[Obstacle] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        field = f"obstacles[{i}]"
        _mapping(item, field)
        _known_keys(item, ("id",) + OBSTACLE_KINDS, field)
        if "id" not in item:
            raise ValueError(f"{field}.id is missing")
        obstacle_id = _string(item["id"], f"{field}.id")
        if obstacle_id == RESERVED_ID:
            raise ValueError(f"{field}.id '{RESERVED_ID}' is reserved for the map's cells")
        if obstacle_id in seen:
            raise ValueError(f"{field}.id '{obstacle_id}' is used twice")
        seen.add(obstacle_id)
        kinds = [k for k in OBSTACLE_KINDS if k in item]
        if len(kinds) != 1:
            raise ValueError(f"{field} needs exactly one of polygon, circle, box; got "
                             f"{', '.join(kinds) or 'none'}")
        kind = kinds[0]
        if kind == "polygon":
            out.append(_polygon(obstacle_id, item["polygon"], f"{field}.polygon"))
        elif kind == "circle":
            spec = item["circle"]
            sub = f"{field}.circle"
            _mapping(spec, sub)
            _known_keys(spec, ("center", "radius"), sub)
            out.append(CircleObstacle(
                obstacle_id, _point(_required(spec, "center", sub), f"{sub}.center"),
                _number(_required(spec, "radius", sub), f"{sub}.radius", positive=True)))
        else:
            spec = item["box"]
            sub = f"{field}.box"
            _mapping(spec, sub)
            _known_keys(spec, ("center", "heading", "length", "width"), sub)
            out.append(BoxObstacle(
                obstacle_id, _point(_required(spec, "center", sub), f"{sub}.center"),
                _number(spec.get("heading", 0.0), f"{sub}.heading"),
                _number(_required(spec, "length", sub), f"{sub}.length", positive=True),
                _number(_required(spec, "width", sub), f"{sub}.width", positive=True)))
    return tuple(out)


def _polygon(obstacle_id: str, value, field: str) -> PolygonObstacle:
    from planning_collision.geometry import decompose

    _list(value, field)
    if len(value) < 3:
        raise ValueError(f"{field} needs at least 3 vertices, got {len(value)}")
    vertices = tuple(_point(p, f"{field}[{k}]") for k, p in enumerate(value))
    try:
        decompose(vertices)  # raises for self-intersecting or degenerate polygons
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from exc
    return PolygonObstacle(obstacle_id, vertices)


def _robots(value, defaults) -> tuple[Robot, ...]:
    if defaults is None:
        defaults = {}
    _mapping(defaults, "robot_defaults")
    _known_keys(defaults, DEFAULTABLE_KEYS, "robot_defaults")
    checked_defaults = {k: _robot_field(k, v, f"robot_defaults.{k}") for k, v in defaults.items()
                        if k not in SENSORS}
    for sensor in SENSORS:
        if defaults.get(sensor) is not None:
            _scan(defaults[sensor], f"robot_defaults.{sensor}", sensor)
    if value is None:
        raise ValueError("robots is missing: a scenario needs at least one robot")
    _list(value, "robots")
    if not value:
        raise ValueError("robots is empty: a scenario needs at least one robot")
    out: list[Robot] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        field = f"robots[{i}]"
        _mapping(item, field)
        _known_keys(item, ROBOT_KEYS, field)
        fields = dict(checked_defaults)
        for key in ROBOT_KEYS:
            if key in item and key not in SENSORS:
                fields[key] = _robot_field(key, item[key], f"{field}.{key}")
        for sensor in SENSORS:
            fields[sensor] = _robot_scan(defaults.get(sensor), item.get(sensor, _ABSENT),
                                         f"{field}.{sensor}", sensor)
        for key in ("name", "start", "goal", "radius", "max_speed"):
            if key not in fields:
                raise ValueError(f"{field}.{key} is missing")
        if fields.get("orca", True) and not fields.get("odometry", True):
            raise ValueError(f"{field}: an ORCA robot needs its odometry (odometry: false is "
                             f"for agents that only sensors see, with orca: false)")
        if fields["name"] in seen:
            raise ValueError(f"{field}.name '{fields['name']}' is used twice")
        seen.add(fields["name"])
        out.append(Robot(**fields))
    return tuple(out)


def _robot_field(key: str, value, field: str):
    if key == "name":
        name = _string(value, field)
        if not NAME_PATTERN.fullmatch(name):
            raise ValueError(f"{field} '{name}' is not a valid ROS namespace (letters, digits "
                             f"and single underscores, starting with a letter)")
        if name == RESERVED_ID:
            raise ValueError(f"{field} '{RESERVED_ID}' is reserved for the map's cells")
        return name
    if key == "start":
        _list(value, field)
        if len(value) != 3:
            raise ValueError(f"{field} must be [x, y, yaw], got {value!r}")
        return tuple(_number(v, f"{field}[{k}]") for k, v in enumerate(value))
    if key == "goal":
        return _point(value, field)
    if key in ("radius", "max_speed"):
        return _number(value, field, positive=True)
    if key == "drive":
        if value not in DRIVES:
            raise ValueError(f"{field} must be one of {', '.join(DRIVES)}, got {value!r}")
        return value
    if key in ("orca", "odometry"):
        if not isinstance(value, bool):
            raise ValueError(f"{field} must be true or false, got {value!r}")
        return value
    raise AssertionError(key)


def _robot_scan(default, own, field: str, kind: str = "scan"):
    """A robot's laser (``kind`` scan) or depth camera (cloud): its own block over
    ``robot_defaults``', key by key; ``false`` or null for none (``_ABSENT``: the robot says
    nothing, the default holds)."""
    if own is False or own is None:
        return None
    if own is True:
        own = {}
    if default is True:
        default = {}
    if not isinstance(default, dict):
        default = None
    if own is _ABSENT:
        return None if default is None else _scan(default, field, kind)
    if not isinstance(own, dict):
        raise ValueError(f"{field} must be a mapping of {kind} settings or false, got "
                         f"{_kind(own)}")
    return _scan({**(default or {}), **own}, field, kind)


def _scan(value, field: str, kind: str = "scan"):
    """A laser's settings (``kind`` scan: :class:`~planning_collision.sim.laser.LaserSpec`)
    or a depth camera's (cloud: :class:`~planning_collision.sim.depth_camera.CameraSpec`),
    None for false or null."""
    from planning_collision.sim.depth_camera import CameraSpec
    from planning_collision.sim.laser import LaserSpec

    spec, keys = (LaserSpec, SCAN_KEYS) if kind == "scan" else (CameraSpec, CLOUD_KEYS)
    if value is False or value is None:
        return None
    if value is True:
        value = {}
    _mapping(value, field)
    _known_keys(value, keys, field)
    fields = {}
    for key, item in value.items():
        if key == "offset":
            _list(item, f"{field}.offset")
            if len(item) != 3:
                raise ValueError(f"{field}.offset must be [x, y, yaw], got {item!r}")
            fields[key] = tuple(_number(v, f"{field}.offset[{k}]") for k, v in enumerate(item))
        elif key in ("beams", "rows"):
            fields[key] = int(finite_scalar(item, f"{field}.{key}", at_least=1, integer=True))
        else:
            fields[key] = _number(item, f"{field}.{key}")
    try:
        return spec(**fields)
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from exc


# ---------------------------------------------------------------------- value checks
def _kind(value) -> str:
    return "nothing" if value is None else type(value).__name__


def _mapping(value, field: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{field} must be a mapping, got {_kind(value)}")


def _list(value, field: str) -> None:
    if not isinstance(value, list):
        raise ValueError(f"{field} must be a list, got {_kind(value)}")


def _known_keys(mapping: dict, allowed: tuple[str, ...], field: str) -> None:
    for key in mapping:
        if key not in allowed:
            where = f"{field}.{key}" if field else str(key)
            raise ValueError(f"{where}: unknown key (expected one of {', '.join(allowed)})")


def _required(mapping: dict, key: str, field: str):
    if key not in mapping:
        raise ValueError(f"{field}.{key} is missing")
    return mapping[key]


def _string(value, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} must be a non-empty string, got {value!r}")
    return value


def _number(value, field: str, positive: bool = False, nonnegative: bool = False) -> float:
    return finite_scalar(value, field, above=0.0 if positive else None,
                         at_least=0.0 if nonnegative else None)


def _point(value, field: str) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f"{field} must be [x, y], got {value!r}")
    return (_number(value[0], f"{field}[0]"), _number(value[1], f"{field}[1]"))
