"""Packaging: console scripts, launch and config files, package.xml dependencies, parameter
tables against their YAML files, and a colcon build of both packages against the ROS wheels."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import distribution, version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "planning_collision"

# Third-party imports of the package's code and the rosdep key each needs in package.xml.
ROSDEP_KEYS = {
    "rclpy": "rclpy", "rcl_interfaces": "rcl_interfaces",
    "builtin_interfaces": "builtin_interfaces",
    "std_msgs": "std_msgs", "std_srvs": "std_srvs", "geometry_msgs": "geometry_msgs",
    "nav_msgs": "nav_msgs",
    "visualization_msgs": "visualization_msgs", "diagnostic_msgs": "diagnostic_msgs",
    "tf2_msgs": "tf2_msgs", "lifecycle_msgs": "lifecycle_msgs",
    "planning_collision_interfaces": "planning_collision_interfaces",
    "ament_index_python": "ament_index_python", "launch": "launch", "launch_ros": "launch_ros",
    "numpy": "python3-numpy", "numba": "python3-numba", "yaml": "python3-yaml",
    "matplotlib": "python3-matplotlib", "PIL": "python3-pil",
}
# Imported only where the package that brings them is installed, and never declared: the
# example nav2_fleet.launch.py reads nav2_common only when nav2_bringup (which depends on it)
# is there, and says how to install it otherwise.
OPTIONAL_IMPORTS = {"nav2_common"}


def console_scripts() -> dict[str, str]:
    return {ep.name: ep.value for ep in distribution("planning_collision").entry_points
            if ep.group == "console_scripts"}


def test_every_console_script_resolves_to_a_main_function():
    scripts = console_scripts()
    assert {"collision_server", "fleet_sim", "map_publisher"} <= set(scripts)
    for name, target in scripts.items():
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name)
        assert callable(getattr(module, attr)), f"{name} -> {target} is not callable"


def test_package_xml_declares_every_third_party_import():
    manifest = ET.parse(PACKAGE / "package.xml").getroot()
    assert manifest.get("format") == "3"
    declared = {e.text for e in manifest if e.tag.endswith("depend")}
    used = set()
    for path in list((PACKAGE / "planning_collision").rglob("*.py")) + \
            list((PACKAGE / "launch").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                used |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                used.add(node.module.split(".")[0])
    third_party = {m for m in used if m in ROSDEP_KEYS}
    unknown = {m for m in used - set(ROSDEP_KEYS) - set(sys.stdlib_module_names)
               - OPTIONAL_IMPORTS if m not in ("planning_collision",)}
    assert not unknown, f"imports with no rosdep key in this test's table: {unknown}"
    missing = {ROSDEP_KEYS[m] for m in third_party} - declared
    assert not missing, f"package.xml lacks: {missing}"


NODES = {
    "collision_server": ("planning_collision.ros.collision_server", "collision_server.yaml"),
    "fleet_sim": ("planning_collision.ros.fleet_sim", "fleet_sim.yaml"),
    "map_publisher": ("planning_collision.ros.map_publisher", "map_publisher.yaml"),
    "orca_node": ("planning_collision.ros.orca_node", "orca.yaml"),
}


def readme_default(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@pytest.mark.parametrize("node", sorted(NODES))
def test_readme_documents_every_parameter_with_its_default(node):
    """Each node's parameter table in the README has a row per declared parameter, and the
    row shows the node's default."""
    readme = (REPO / "README.md").read_text()
    module = importlib.import_module(NODES[node][0])
    for p in module.PARAMETERS:
        rows = [line for line in readme.splitlines() if line.startswith(f"| `{p.name}` |")]
        assert rows, f"README has no row for {node}'s parameter {p.name}"
        expected = readme_default(p.default)
        shown = []
        for row in rows:
            value = row.split("|")[2].strip().strip("`")
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            shown.append(value)
        assert expected in shown, f"{p.name}: README shows {shown}, the default is {expected!r}"

@pytest.mark.parametrize("node", sorted(NODES))
def test_config_yaml_lists_exactly_the_declared_parameters(node):
    module_name, config = NODES[node]
    module = importlib.import_module(module_name)
    declared = {p.name: p.default for p in module.PARAMETERS}
    data = yaml.safe_load((PACKAGE / "config" / config).read_text())
    (key, section), = data.items()
    assert key.endswith(node)
    values = section["ros__parameters"]
    assert set(values) == set(declared)
    for name, default in declared.items():
        assert values[name] == default, f"{config}: {name} differs from the node's default"
    for p in module.PARAMETERS:
        assert len(p.description) > 20, f"{p.name} needs a real description"


def launch_calls(path: Path):
    """(function name, keyword arguments as AST) of every call in a launch file."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            yield name, {k.arg: k.value for k in node.keywords if k.arg}


# Executables of other packages that launch files may start, only under a condition (e.g.
# rviz:=false), since package.xml does not depend on them.
OPTIONAL_EXECUTABLES = {("rviz2", "rviz2"), ("tf2_ros", "static_transform_publisher")}


def test_launch_files_name_only_executables_parameters_and_files_that_exist():
    """launch_ros has no wheel here, so the launch files are checked statically."""
    scripts = console_scripts()
    files = sorted((PACKAGE / "launch").glob("*.launch.py"))
    assert files
    checked_parameters = 0
    for path in files:
        compile(path.read_text(), str(path), "exec")
        nodes = params = 0
        for name, kwargs in launch_calls(path):
            if name == "Node":
                nodes += 1
                package = ast.literal_eval(kwargs["package"])
                executable = ast.literal_eval(kwargs["executable"])
                if package != "planning_collision":
                    assert (package, executable) in OPTIONAL_EXECUTABLES, \
                        f"{path.name}: {package}/{executable} is not a known optional node"
                    assert "condition" in kwargs, f"{path.name}: {executable} is not optional"
                    continue
                assert executable in scripts, f"{path.name}: unknown executable {executable}"
                declared = {p.name for p in importlib.import_module(
                    NODES[executable][0]).PARAMETERS}
                for entry in getattr(kwargs.get("parameters"), "elts", []):
                    if isinstance(entry, ast.Dict):  # inline parameters: names must exist
                        for key in entry.keys:
                            if key is None:  # a ** spread (use_sim_time: rclpy's own)
                                continue
                            name_ = ast.literal_eval(key)
                            assert name_ in declared, \
                                f"{path.name}: {executable} has no parameter {name_!r}"
                        params += len(entry.keys)
        text = path.read_text()
        for folder, filename in re.findall(r'\bshare,\s*"(config|launch)",\s*"([^"]+)"', text):
            assert (PACKAGE / folder / filename).is_file(), f"{path.name}: {filename} missing"
        assert nodes or "IncludeLaunchDescription" in text
        checked_parameters += params
    assert checked_parameters  # the inline-parameter check above did run


@pytest.mark.timeout(660)  # the build's own limit below governs, not the suite's 300 s
def test_colcon_builds_both_packages_and_they_import_from_install(tmp_path):
    # colcon runs make with -l<cores> unless MAKEFLAGS names the jobs: on a shared machine
    # whose load average stays above its core count, make then compiles one file at a time
    # and waits between them (a 5-minute build instead of about one).
    env = dict(os.environ, MAKEFLAGS=f"-j{os.cpu_count() or 1}")
    result = subprocess.run([sys.executable, str(REPO / "tools" / "colcon_check.py"),
                             str(tmp_path / "ws")], capture_output=True, text=True,
                            timeout=600, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "colcon build OK" in result.stdout


# Runtime dependencies whose supported range setup.py and package.xml declare (pip name: rosdep
# key), and the requirement files of the two environments CI tests them in.
RANGED = {"numpy": "python3-numpy", "numba": "python3-numba", "PyYAML": "python3-yaml",
          "matplotlib": "python3-matplotlib", "pillow": "python3-pil", "scipy": "python3-scipy"}
ENVIRONMENTS = {"main (.venv)": REPO / "requirements",
                "Ubuntu 24.04 + Jazzy (.venv-jazzy)": REPO / "requirements" / "jazzy"}


def declared_ranges() -> dict[str, SpecifierSet]:
    """install_requires of setup.py, by name."""
    for node in ast.walk(ast.parse((PACKAGE / "setup.py").read_text())):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            return {r.name: r.specifier for r in map(Requirement, ast.literal_eval(node.value))}
    raise AssertionError("setup.py has no install_requires")


def pins(path: Path) -> dict[str, Version]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            assert pinned, f"{path}: {line!r} is not pinned"
            out[name.strip().lower()] = Version(pinned)
    return out


def test_setup_py_and_package_xml_declare_the_same_ranges():
    ranges = declared_ranges()
    manifest = ET.parse(PACKAGE / "package.xml").getroot()
    for name, key in RANGED.items():
        spec = ranges[name]
        assert any(s.operator == ">=" for s in spec), f"setup.py: {name} has no lower bound"
        (element,) = [e for e in manifest if e.tag == "exec_depend" and e.text == key]
        xml = SpecifierSet(",".join(f"{op}{element.get(attr)}" for attr, op in
                                    (("version_gte", ">="), ("version_lt", "<"))
                                    if element.get(attr)))
        assert xml == spec, f"package.xml says {key} {xml}, setup.py says {name} {spec}"


def test_both_environments_pin_inside_the_ranges_and_the_lowest_numpy_and_numba_are_tested():
    ranges = declared_ranges()
    pinned = {env: pins(folder / "runtime.txt") for env, folder in ENVIRONMENTS.items()}
    for env, versions in pinned.items():
        for name in RANGED:
            assert versions[name.lower()] in ranges[name], \
                f"{env} tests {name} {versions[name.lower()]}, outside {ranges[name]}"
    oldest = pinned["Ubuntu 24.04 + Jazzy (.venv-jazzy)"]
    for name in ("numpy", "numba"):
        (low,) = [Version(s.version) for s in ranges[name] if s.operator == ">="]
        assert oldest[name].release[:2] == low.release[:2], \
            f"the lower bound {name} {low} is not what .venv-jazzy tests ({oldest[name]})"


def test_this_environment_holds_versions_inside_the_ranges():
    for name, spec in declared_ranges().items():
        assert version(name) in spec, f"installed {name} {version(name)} is outside {spec}"


def test_readme_names_the_numpy_and_numba_each_environment_tests():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Supported ROS 2 distributions", 1)[1].split("\n## ", 1)[0]
    for env, folder in ENVIRONMENTS.items():
        versions = pins(folder / "runtime.txt")
        for name in ("numpy", "numba"):
            assert f"{name} {versions[name]}" in section, \
                f"README's supported distributions do not name {name} {versions[name]} ({env})"
