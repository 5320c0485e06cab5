"""warmup() and the public surface of planning_collision.grid."""

from __future__ import annotations

import ast
import importlib
import pathlib

import planning_collision.grid as grid_pkg


def test_warmup_runs_every_kernel():
    seconds = grid_pkg.warmup()
    assert isinstance(seconds, float) and seconds >= 0.0
    # Every kernel called from Python has a compiled (or cache-loaded) signature; helpers
    # are compiled into these.
    los = importlib.import_module("planning_collision.grid.line_of_sight")
    footprint = importlib.import_module("planning_collision.grid.footprint")
    contours = importlib.import_module("planning_collision.grid.contours")
    entry_points = [
        los._los_kernel, los._cells_kernel,
        footprint._footprint_batch, footprint._footprint_rows,
        contours._padded_mask, contours._trace_rings, contours._simplify,
    ]
    for kernel in entry_points:
        assert kernel.signatures, f"{kernel.__name__} not compiled by warmup"


def test_public_names_and_no_ros_imports():
    for name in grid_pkg.__all__:
        assert hasattr(grid_pkg, name)
    root = pathlib.Path(grid_pkg.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for n in names:
                assert n.split(".")[0] not in {"rclpy", "nav_msgs", "geometry_msgs", "shapely",
                                               "skimage", "scipy"}, (path.name, n)
