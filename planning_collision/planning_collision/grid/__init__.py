"""Occupancy grid and line of sight: pure numpy + numba, no ROS imports.

Public names:

* :class:`GridMap` - immutable nav_msgs/OccupancyGrid-style map (world/cell conversions,
  world-coordinate line of sight).
* :func:`line_of_sight`, :func:`line_of_sight_batch`, :class:`LosResult` and the traversed
  cell sets :func:`bresenham_cells`, :func:`supercover_cells`, :func:`conservative_cells`,
  :func:`traversed_cells` (modes ``"bresenham"``, ``"supercover"``, ``"conservative"``).
* :func:`footprint_collides`, :func:`footprint_cells` - exact rasterised convex (optionally
  rounded) footprints, batched over poses.
* :func:`occupied_polygons` - blocked regions as simple polygons for ORCA.
* :func:`warmup` - compile or load every kernel.
"""

from .contours import occupied_polygons
from .footprint import convex_hull_ccw, footprint_cells, footprint_collides
from .gridmap import GridMap, WorldLosResult
from .line_of_sight import (
    LosResult,
    bresenham_cells,
    conservative_cells,
    line_of_sight,
    line_of_sight_batch,
    supercover_cells,
    traversed_cells,
)
from .validation import MAX_CELL_COORD, MODES, OUT_OF_MAP_CHOICES
from .warmup import warmup

__all__ = [
    "MAX_CELL_COORD",
    "MODES",
    "OUT_OF_MAP_CHOICES",
    "GridMap",
    "LosResult",
    "WorldLosResult",
    "bresenham_cells",
    "conservative_cells",
    "convex_hull_ccw",
    "footprint_cells",
    "footprint_collides",
    "line_of_sight",
    "line_of_sight_batch",
    "occupied_polygons",
    "supercover_cells",
    "traversed_cells",
    "warmup",
]
