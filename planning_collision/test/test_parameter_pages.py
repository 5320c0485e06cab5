"""The parameter tables in doc/nodes/ are what the code declares (tools/parameter_pages.py
writes them from each node's PARAMETERS), and every PARAMETERS table of the nodes has a page.

No DDS: the tables are read from the modules, the pages from the files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROS = REPO / "planning_collision" / "planning_collision" / "ros"


def load_tool():
    spec = importlib.util.spec_from_file_location("parameter_pages",
                                                  REPO / "tools" / "parameter_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = load_tool()


@pytest.mark.parametrize("page", sorted(TOOL.TABLES))
def test_each_generated_table_is_what_the_code_declares(page):
    text = (TOOL.PAGES / page).read_text()
    assert TOOL.page_text(page, text) == text, (
        f"doc/nodes/{page} differs from the code: run python tools/parameter_pages.py")


def test_the_check_fails_on_a_page_that_drifted(tmp_path, monkeypatch):
    """--check notices a default changed by hand on a page, and rewriting restores it."""
    pages = tmp_path / "nodes"
    pages.mkdir()
    for page in TOOL.TABLES:
        (pages / page).write_text((TOOL.PAGES / page).read_text())
    monkeypatch.setattr(TOOL, "PAGES", pages)
    monkeypatch.setattr(TOOL, "REPO", tmp_path)
    assert TOOL.main([]) == 0  # the copies made current, whatever the repository's pages hold
    assert TOOL.main(["--check"]) == 0
    page = pages / "map_publisher.md"
    good = page.read_text()
    page.write_text(good.replace("| `map_topic` | `map` |", "| `map_topic` | `the_map` |"))
    assert TOOL.main(["--check"]) == 1
    assert TOOL.main([]) == 0
    assert page.read_text() == good


def test_a_page_without_its_markers_is_refused():
    with pytest.raises(ValueError, match="BEGIN GENERATED: map_publisher"):
        TOOL.page_text("map_publisher.md", "# map_publisher\n\nno table here\n")


def declared_tables() -> set[str]:
    """Modules of planning_collision.ros with a module-level PARAMETERS, read from the
    source (so a new node's table cannot be missed)."""
    found = set()
    for path in ROS.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "PARAMETERS" for t in targets):
                found.add(path.stem)
    return found


def test_every_parameter_of_every_node_is_on_a_page():
    shown = set()
    for tables in TOOL.TABLES.values():
        for _, loader in tables:
            shown |= {param.name for param, _, _ in loader()}
    for module in sorted(declared_tables()):
        parameters = importlib.import_module(f"planning_collision.ros.{module}").PARAMETERS
        missing = [p.name for p in parameters if p.name not in shown]
        assert not missing, f"ros/{module}.py declares {missing}, which no page in doc/nodes shows"


def test_each_row_shows_the_default_and_the_bounds_in_words():
    """An independent reading of one page: the row of a bounded number has its default and
    its rule as ros2 param describe shows them."""
    from planning_collision.ros.collision_server_parameters import BY_NAME

    text = (TOOL.PAGES / "collision_server.md").read_text()
    (row,) = [line for line in text.splitlines() if line.startswith("| `occupied_threshold` |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"`{BY_NAME['occupied_threshold'].default}`"
    assert cells[2] == "integer"
    assert cells[3] == BY_NAME["occupied_threshold"].rule()
