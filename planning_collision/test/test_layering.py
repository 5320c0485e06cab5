"""The package's layers, read from the source (issue #23): the pure cores and the simulator
import nothing from ``ros/``, no two parts of the package import each other (directly or round
a longer loop), and rclpy is imported only where nodes are (``ros/``) and by the demo, the ROS
client application above them. Every import counts: module-level ones and those inside
functions (``ast``, so nothing is imported to check)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

TEST = Path(__file__).resolve().parent
SOURCE = TEST.parent / "planning_collision"
ROOT = "planning_collision"

# Parts of the package that must not import planning_collision.ros, and the tests that run
# as the pure tests (the Makefile's PURE_TESTS, with pytest-xdist).
PURE_PARTS = ("common", "geometry", "grid", "orca", "fleet", "sim", "tracking",
              "collision_world")
PURE_TESTS = ("common", "geometry", "grid", "orca", "fleet", "sim", "tracking",
              "test_collision_world.py")
# Where rclpy may be imported.
RCLPY_PARTS = ("ros", "demo")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def imports(path: Path, name: str) -> list[tuple[str, int]]:
    """Every module ``path`` (the module ``name``) imports, at any depth of its code, with the
    line: absolute names as written, relative ones resolved, and for ``from package import x``
    also ``package.x`` (x may be a module)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.append((module, node.lineno))
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]
    return sorted(set(found))


def part_of(module: str) -> str | None:
    """The part of the package ``module`` is in (``ros``, ``sim``, ``demo``, ...), ``""`` for
    the package's own ``__init__``, None outside the package."""
    parts = module.split(".")
    if parts[0] != ROOT:
        return None
    return parts[1] if len(parts) > 1 else ""


def package_modules() -> dict[str, Path]:
    modules = {module_name(path, SOURCE): path for path in sorted(SOURCE.rglob("*.py"))}
    assert f"{ROOT}.ros.orca_node" in modules and f"{ROOT}.sim.scenario" in modules
    return modules


@functools.cache
def part_graph() -> dict[str, dict[str, list[str]]]:
    """part -> part it imports -> where (``module:line``), read once per test session."""
    graph: dict[str, dict[str, list[str]]] = {}
    for name, path in package_modules().items():
        source = part_of(name)
        graph.setdefault(source, {})
        for target, line in imports(path, name):
            part = part_of(target)
            if part is None or part == source or part == "":
                continue
            if part not in graph and not (SOURCE / part).is_dir() \
                    and not (SOURCE / f"{part}.py").is_file():
                continue  # ``from planning_collision import x`` where x is a name, not a module
            where = graph[source].setdefault(part, [])
            if f"{name}:{line}" not in where:
                where.append(f"{name}:{line}")
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components with more than one part (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_reader_sees_imports_inside_functions_and_relative_ones(tmp_path):
    package = tmp_path / ROOT / "sim"
    package.mkdir(parents=True)
    (package / "x.py").write_text(
        "import os\n"
        "def f():\n"
        "    from ..ros import processes\n"
        "    from . import scenario\n"
        "    import rclpy.node\n")
    assert imports(package / "x.py", f"{ROOT}.sim.x") == [
        ("os", 1), (f"{ROOT}.ros", 3), (f"{ROOT}.ros.processes", 3), (f"{ROOT}.sim", 4),
        (f"{ROOT}.sim.scenario", 4), ("rclpy.node", 5)]
    assert cycles({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}}) == [
        ["a", "b", "c"]]
    assert cycles({"a": {"b": []}, "b": {}}) == []


@pytest.mark.parametrize("part", PURE_PARTS)
def test_the_pure_parts_import_nothing_from_ros(part):
    offenders = part_graph().get(part, {}).get("ros", [])
    assert not offenders, f"{part} imports planning_collision.ros at {offenders}"


def test_no_import_cycle_between_the_parts_of_the_package():
    graph = part_graph()
    assert "sim" in graph["ros"] and "geometry" in graph["sim"]  # the reader sees the edges
    found = cycles(graph)
    detail = {tuple(c): {a: {b: graph[a][b] for b in c if b in graph[a]} for a in c}
              for c in found}
    assert not found, f"import cycles: {detail}"


def test_rclpy_is_imported_only_by_the_nodes_and_the_demo():
    offenders = sorted({f"{name}:{line}" for name, path in package_modules().items()
                        if part_of(name) not in RCLPY_PARTS
                        for target, line in imports(path, name)
                        if target.split(".")[0] == "rclpy"})
    assert not offenders, f"rclpy imported outside {RCLPY_PARTS}: {offenders}"


def embedded_programs(path: Path, tmp_path: Path) -> list[Path]:
    """The Python programs ``path`` holds as strings (run in a subprocess, ``python -c``),
    each written to a file of its own."""
    programs = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "import " in node.value:
            try:
                ast.parse(node.value)
            except SyntaxError:
                continue
            program = tmp_path / f"{path.stem}_{node.lineno}.py"
            program.write_text(node.value)
            programs.append(program)
    return programs


def test_the_pure_tests_import_nothing_from_ros(tmp_path):
    paths = []
    for entry in PURE_TESTS:
        path = TEST / entry
        assert path.exists(), path
        paths += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    offenders = sorted({f"{path.relative_to(TEST)}:{line}" for path in paths
                        for target, line in imports(path, module_name(path, TEST))
                        if part_of(target) == "ros"})
    offenders += sorted({f"{path.relative_to(TEST)}: the program in {program.stem}'s string, "
                         f"its line {line}"
                         for path in paths for program in embedded_programs(path, tmp_path)
                         for target, line in imports(program, ROOT + ".test_program")
                         if part_of(target) == "ros"})
    assert not offenders, f"pure tests import planning_collision.ros: {offenders}"


def test_the_pure_tests_are_the_makefiles():
    """PURE_TESTS above is the Makefile's list (run with pytest-xdist), so a pure test folder
    added there is checked here too. The Makefile is in the source checkout, not a colcon
    install."""
    makefile = TEST.parents[1] / "Makefile"
    if not makefile.is_file():
        pytest.skip("no Makefile beside the package (an installed copy)")
    text = makefile.read_text().replace("\\\n", " ")
    (listed,) = re.findall(r"^PURE_TESTS\s*:=\s*(.+)$", text, flags=re.M)
    prefix = "planning_collision/test/"
    assert sorted(entry.removeprefix(prefix) for entry in listed.split()) == sorted(PURE_TESTS)


def long_methods(path: Path, class_name: str, most: int) -> dict[str, int]:
    """The methods of ``class_name`` in ``path`` longer than ``most`` lines (with their
    docstrings and decorators' line), and their lengths."""
    tree = ast.parse(path.read_text(), str(path))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    return {f.name: f.end_lineno - f.lineno + 1 for f in cls.body
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            and f.end_lineno - f.lineno + 1 > most}


@pytest.mark.parametrize("path, class_name", [
    ("fleet/controller.py", "FleetController"), ("ros/fleet_sim.py", "FleetSim")])
def test_the_orchestrators_stay_short(path, class_name):
    """Issue #23: FleetController.step and fleet_sim are short orchestrations over named
    parts; features added since go into parts of their own, not into these classes."""
    assert long_methods(SOURCE / path, class_name, 40) == {}
    if path == "ros/fleet_sim.py":
        assert len((SOURCE / path).read_text().splitlines()) <= 300
