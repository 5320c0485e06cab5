"""The launch files, run without launch: there is no launch or launch_ros wheel, so each file's
generate_launch_description() runs against small stand-ins of those modules that record what
the file builds. Checked: every node is a console script of this package (or an optional
package's node, started only when that package is installed and asked for), every file and
inline parameter it names exists, every LaunchConfiguration it reads is declared, and no
keyword argument is one the real classes lack."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from importlib.metadata import distribution
from pathlib import Path

import pytest
from ament_index_python import packages as ament_packages

PACKAGE = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((PACKAGE / "launch").glob("*.launch.py"))
NODE_MODULES = {
    "collision_server": "planning_collision.ros.collision_server",
    "fleet_sim": "planning_collision.ros.fleet_sim",
    "map_publisher": "planning_collision.ros.map_publisher",
    "orca_node": "planning_collision.ros.orca_node",
}
OPTIONAL = {"rviz2": "rviz2", "tf2_ros": "static_transform_publisher",
            "nav2_lifecycle_manager": "lifecycle_manager"}  # package: executable

# Keyword arguments of the real classes (launch 3.x, launch_ros 0.2x: Node, its ExecuteLocal
# base and the Action base; DeclareLaunchArgument; LogInfo; LaunchConfiguration).
_ACTION = {"condition"}
ALLOWED = {
    "Node": _ACTION | {
        "executable", "package", "name", "namespace", "exec_name", "parameters", "remappings",
        "ros_arguments", "arguments", "shell", "sigterm_timeout", "sigkill_timeout",
        "emulate_tty", "output", "output_format", "cached_output", "log_cmd", "on_exit",
        "respawn", "respawn_delay", "respawn_max_retries", "cwd", "env", "additional_env",
        "prefix"},
    "DeclareLaunchArgument": _ACTION | {"default_value", "description", "choices"},
    "LogInfo": _ACTION | {"msg"},
    "IfCondition": set(),
    "UnlessCondition": set(),
    "LaunchConfiguration": {"default"},
    "NotSubstitution": set(),
    "LaunchDescription": set(),
}


class Recorded:
    """A stand-in of a launch class: keeps its arguments; every instance is listed."""

    made: list[Recorded] = []

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        Recorded.made.append(self)

    @property
    def kind(self) -> str:
        return type(self).__name__


def stand_in_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    classes: dict[str, type] = {}

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr not in ALLOWED:
            raise ImportError(f"the test's stand-in of {name} has no {attr}: add it to "
                              f"ALLOWED with the real class's keyword arguments")
        return classes.setdefault(attr, type(attr, (Recorded,), {}))

    module.__getattr__ = __getattr__
    module.__path__ = []  # a package, so that "launch.actions" imports
    return module


@pytest.fixture
def load(monkeypatch):
    """load(path, missing=()) runs a launch file's generate_launch_description() with the
    stand-ins, as if the packages in ``missing`` were not installed; returns every object
    the file built and the LaunchDescription."""
    for name in ("launch", "launch.actions", "launch.conditions", "launch.substitutions",
                 "launch_ros", "launch_ros.actions"):
        monkeypatch.setitem(sys.modules, name, stand_in_module(name))

    def share(package):
        if package != "planning_collision":
            raise ament_packages.PackageNotFoundError(package)
        return str(PACKAGE)

    def load_file(path: Path, missing=()):
        def prefix(package):
            if package in missing:
                raise ament_packages.PackageNotFoundError(package)
            return "/opt/ros/test"

        monkeypatch.setattr(ament_packages, "get_package_share_directory", share)
        monkeypatch.setattr(ament_packages, "get_package_prefix", prefix)
        spec = importlib.util.spec_from_file_location(f"launch_file_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        Recorded.made = []
        description = module.generate_launch_description()
        assert description.kind == "LaunchDescription"
        return list(Recorded.made), description

    return load_file


def console_scripts() -> set[str]:
    return {ep.name for ep in distribution("planning_collision").entry_points
            if ep.group == "console_scripts"}


def entities(description) -> list[Recorded]:
    (items,) = description.args
    return list(items)


def literal(value) -> str | None:
    return value if isinstance(value, str) else None


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("missing", [(), tuple(OPTIONAL)], ids=["all installed", "no rviz"])
def test_a_launch_file_builds_only_what_exists(load, path, missing):
    made, description = load(path, missing)
    scripts = console_scripts()
    declared = [a.args[0] for a in made if a.kind == "DeclareLaunchArgument"]
    assert len(declared) == len(set(declared)), declared
    for item in made:
        unknown = set(item.kwargs) - ALLOWED[item.kind]
        assert not unknown, f"{path.name}: {item.kind} has no argument {unknown}"
        if item.kind == "LaunchConfiguration":
            assert item.args[0] in declared, f"{path.name}: {item.args[0]!r} is not declared"
    nodes = [e for e in entities(description) if e.kind == "Node"]
    assert nodes
    for node in nodes:
        package, executable = node.kwargs.get("package"), node.kwargs["executable"]
        if package != "planning_collision":
            assert OPTIONAL.get(package) == executable, f"{path.name}: {package}/{executable}"
            assert package not in missing, f"{path.name} starts {package}, not installed"
            condition = node.kwargs.get("condition")
            assert condition is not None and condition.kind == "IfCondition", \
                f"{path.name}: {executable} is not optional"
            continue
        assert executable in scripts, f"{path.name}: no console script {executable}"
        names = {p.name for p in importlib.import_module(NODE_MODULES[executable]).PARAMETERS}
        for entry in node.kwargs.get("parameters", []):
            if isinstance(entry, dict):
                assert set(entry) <= names, f"{path.name}: {executable} lacks {set(entry)}"
            elif literal(entry) is not None:
                assert os.path.isfile(entry), f"{path.name}: {entry} does not exist"
    for argument in (a for a in made if a.kind == "DeclareLaunchArgument"):
        default = literal(argument.kwargs.get("default_value"))
        if default is not None and default.startswith(str(PACKAGE)):
            assert os.path.isfile(default), f"{path.name}: {default} does not exist"


def demo_nodes(description) -> dict[str, Recorded]:
    return {n.kwargs["executable"]: n for n in entities(description) if n.kind == "Node"}


def test_the_demo_starts_rviz_and_its_transform_only_when_installed_and_asked_for(load):
    path = PACKAGE / "launch" / "demo.launch.py"
    _, description = load(path)
    nodes = demo_nodes(description)
    for package, executable in OPTIONAL.items():
        if package == "nav2_lifecycle_manager":
            continue  # started by use_lifecycle_manager (test below)
        condition = nodes[executable].kwargs["condition"]
        (predicate,) = condition.args
        assert predicate.kind == "LaunchConfiguration" and predicate.args == ("rviz",)
        assert nodes[executable].kwargs["package"] == package

    for missing in (("rviz2",), ("tf2_ros",), ("rviz2", "tf2_ros")):
        _, description = load(path, missing)
        nodes = demo_nodes(description)
        assert set(nodes) == {"map_publisher", "collision_server", "fleet_sim", "orca_node",
                              "lifecycle_manager"}
        notes = [e for e in entities(description) if e.kind == "LogInfo"
                 and e.kwargs["condition"].args[0].args == ("rviz",)]
        assert len(notes) == 1
        assert all(package in notes[0].kwargs["msg"] for package in missing)
        assert notes[0].kwargs["condition"].args[0].args == ("rviz",)


def test_the_demo_starts_the_simulated_clock_once_the_robots_are_commanded(load):
    _, description = load(PACKAGE / "launch" / "demo.launch.py")
    fleet_sim = demo_nodes(description)["fleet_sim"]
    inline = [p for p in fleet_sim.kwargs["parameters"] if isinstance(p, dict)]
    assert any(p.get("start") == "commands" for p in inline)


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_managed_nodes_wait_for_the_lifecycle_manager_when_one_is_asked_for(load, path):
    """use_lifecycle_manager: the managed nodes' autostart is its negation, and
    nav2_lifecycle_manager (only with the argument) drives them, with the bond off."""
    made, description = load(path)
    nodes = [e for e in entities(description) if e.kind == "Node"]
    managed = [n for n in nodes if n.kwargs["executable"] in ("collision_server", "orca_node")]
    assert managed
    for node in managed:
        (flag,) = [p["autostart"] for p in node.kwargs["parameters"] if isinstance(p, dict)]
        assert flag.kind == "NotSubstitution"
        assert flag.args[0].args == ("use_lifecycle_manager",)
    (manager,) = [n for n in nodes if n.kwargs["executable"] == "lifecycle_manager"]
    assert manager.kwargs["condition"].args[0].args == ("use_lifecycle_manager",)
    (settings,) = manager.kwargs["parameters"]
    assert settings["bond_timeout"] == 0.0 and settings["autostart"] is True
    names = [n if isinstance(n, str) else n.args[0] for n in settings["node_names"]]
    expected = ["collision_server" if n.kwargs["executable"] == "collision_server"
                else n.kwargs["name"] for n in managed]
    assert [n if isinstance(n, str) else n.args[0] for n in expected] == names
    _, without = load(path, ("nav2_lifecycle_manager",))
    assert not [e for e in entities(without) if e.kind == "Node"
                and e.kwargs["executable"] == "lifecycle_manager"]

