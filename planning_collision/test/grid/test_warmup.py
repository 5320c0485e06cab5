"""warmup() and the public surface of planning_collision.grid.

The warmup check runs in a fresh interpreter (see warmup_probe.py) with the inputs users
actually pass: tuples, lists, int32 and float cells, float32 poses, Fortran-ordered and
reversed views, every line-of-sight mode, both out-of-map policies, scalar and batch paths,
ConvexShape and plain-vertex footprints.
"""

from __future__ import annotations

import ast
import pathlib

from warmup_probe import check_warmup

import planning_collision.grid as grid_pkg

USE_THE_API = r'''
def use_the_api():
    from planning_collision.geometry import ConvexShape
    from planning_collision.grid import (
        MODES, GridMap, bresenham_cells, conservative_cells, footprint_cells,
        footprint_collides, line_of_sight, line_of_sight_batch, occupied_polygons,
        supercover_cells, traversed_cells,
    )

    rng = np.random.default_rng(0)
    data = np.where(rng.random((30, 40)) < 0.2, 100, 0).astype(np.int8)
    data[rng.random((30, 40)) < 0.05] = -1
    grids = [
        GridMap(data, 0.05, origin=(1, 2, 0.3)),
        GridMap(data.ravel(), 1, width=40, height=30, unknown_is_occupied=False),
        GridMap(np.asfortranarray(data), np.float32(0.1), origin=(0.0, 0.0),
                occupied_threshold=np.int64(50)),
        GridMap(data[::-1, ::2], 0.5),
    ]
    cells_in = [
        ((0, 0), (39, 29)),
        ([3, 4], [3, 4]),
        (np.array([5, 1], np.int32), np.array([-3, 40], np.int32)),
        (np.array([2.0, 7.0]), np.array([30.0, 7.0])),
        (np.array([1, 1], np.uint16), (np.int64(20), np.int8(9))),
    ]
    starts = rng.integers(-5, 45, (50, 2))
    goals = rng.integers(-5, 45, (50, 2))
    batches = [
        (starts, goals),
        (starts.astype(np.int32), goals.astype(np.int32)),
        (starts.astype(np.float64), goals.astype(np.float32)),
        (starts.tolist(), goals.tolist()),
        (np.asfortranarray(starts)[::-1], goals[::-1]),
        (np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64)),
    ]
    for mode in MODES:
        for s, g in cells_in:
            traversed_cells(s, g, mode)
            for grid in grids:
                for oob in ("blocked", "free"):
                    line_of_sight(grid, s, g, mode=mode, out_of_map=oob)
        for grid in grids:
            for s, g in batches:
                line_of_sight_batch(grid, s, g, mode=mode)
                line_of_sight_batch(grid, s, g, mode, "free")
            grid.line_of_sight((0.01, 0.02), [1, 1], mode=mode)
            grid.line_of_sight(np.array([0.3, 0.1], np.float32), (2.5, 0.4), mode, "free")
    bresenham_cells([0, 0], (5, 2))
    supercover_cells(np.array([0, 0], np.int32), [5, 5])
    conservative_cells((0, 0), np.array([4.0, 4.0]))

    footprints = [
        ConvexShape.box((0, 0), 0.2, 0.6, 0.4),
        ConvexShape.circle((0.1, 0), 0.3),
        ConvexShape.capsule((-0.2, 0), (0.2, 0), 0.1),
        ConvexShape.polygon([(-0.2, -0.1), (0.3, -0.1), (0.1, 0.2)], radius=0.05),
        ConvexShape.point((0, 0)),
        np.array([[-0.3, -0.2], [0.3, -0.2], [0.3, 0.2], [-0.3, 0.2]], np.float32),
        [[-0.3, -0.2], [0.3, -0.2], [0.0, 0.2]],
        np.array([[0, 0], [1, 0], [0, 1]], np.int32),
    ]
    poses = np.column_stack([rng.uniform(0, 2, 20), rng.uniform(0, 1.5, 20),
                             rng.uniform(-3, 3, 20)])
    for grid in grids:
        for fp in footprints:
            footprint_collides(grid, fp, poses)
            footprint_collides(grid, fp, poses.astype(np.float32), out_of_map="free")
            footprint_collides(grid, fp, np.asfortranarray(poses)[::-1])
            footprint_collides(grid, fp, [1, 1, 0])
            footprint_collides(grid, fp, np.zeros((0, 3)))
            footprint_cells(grid, fp, (1, 1, 0.5))
            footprint_cells(grid, fp, np.array([1.0, 1.0, 0.5], np.float32))
        occupied_polygons(grid, 0)
        occupied_polygons(grid, np.float32(0.1))
        grid.world_to_cell([[0.5, 0.5]])
        grid.cell_to_world(np.array([[1, 2]], np.int32))
        grid.is_blocked([[1, 2], [-1, 0]])
        grid.blocked_mask()
'''

# Kernels that Python code calls directly (the others are compiled into these).
ENTRY_POINTS = {
    "contours._padded_mask",
    "contours._simplify",
    "contours._trace_rings",
    "footprint._footprint_batch",
    "footprint._footprint_rows",
    "traversal._cells_kernel",
    "traversal._rays_kernel",
}


def test_warmup_compiles_everything_the_api_reaches_in_a_fresh_process():
    probe = check_warmup("planning_collision.grid", USE_THE_API, ENTRY_POINTS)
    assert all(len(probe["warm"][name]) == 1 for name in ENTRY_POINTS)


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
