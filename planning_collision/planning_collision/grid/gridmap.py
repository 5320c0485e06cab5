"""GridMap: an immutable occupancy grid with nav_msgs/OccupancyGrid semantics.

Layout: ``data`` is an int8 array of shape (height, width), row-major, so the flat index of
cell (mx, my) = (column, row) is ``mx + my * width``. Values are -1 (unknown) or 0..100
(occupancy probability in percent). Cell (mx, my) covers the square
``[mx, mx + 1) x [my, my + 1)`` in the map frame scaled by ``resolution``; the map frame
is placed in the world by ``origin = (x, y, yaw)`` (the pose of the lower-left corner of
cell (0, 0)). Nav2 ignores the origin yaw; GridMap honours it.

A cell is *blocked* when its value is >= ``occupied_threshold`` or, with
``unknown_is_occupied`` (the default), when it is unknown (any negative value).

Memory: the int8 buffer is held once, without a copy when it is already a C-contiguous
int8 array (a non-contiguous one is copied once). No occupancy array is precomputed: the
kernels read the int8 buffer through a read-only uint8 view (a view, zero bytes) and test
``lo <= value <= hi``, which is as cheap as reading a precomputed bool array. A
10,000 x 10,000 map therefore costs 100 MB. GridMap does not copy the caller's buffer, so
the caller must not mutate that buffer afterwards (the ROS adapter builds a new GridMap for
each received map and swaps it in).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from planning_collision.common.checks import finite_scalar

from .traversal import Occupancy, trace_rays
from .validation import (
    MAX_CELL_COORD,
    cell_points,
    float_points,
    mode_code,
    out_of_map_blocked,
)


class WorldLosResult(NamedTuple):
    """Result of :meth:`GridMap.line_of_sight` (world coordinates)."""

    clear: bool
    #: Centre of the first blocked cell in world coordinates, None when clear.
    first_blocked_point: tuple[float, float] | None
    #: The first blocked cell (mx, my), None when clear.
    first_blocked_cell: tuple[int, int] | None
    cells_checked: int


class GridMap:
    """Immutable occupancy grid; see the module docstring for the conventions."""

    __slots__ = (
        "_data",
        "_resolution",
        "_origin",
        "_cos",
        "_sin",
        "_threshold",
        "_unknown_is_occupied",
        "_occupancy",
    )

    def __init__(
        self,
        data,
        resolution: float,
        origin=(0.0, 0.0, 0.0),
        *,
        width: int | None = None,
        height: int | None = None,
        occupied_threshold: int = 65,
        unknown_is_occupied: bool = True,
    ) -> None:
        arr = np.asarray(data)
        if arr.dtype != np.int8:
            raise ValueError(f"data must have dtype int8 (OccupancyGrid), got dtype {arr.dtype}")
        if width is not None or height is not None:
            if width is None or height is None:
                raise ValueError("give both width and height, or neither")
            width, height = _positive_int(width, "width"), _positive_int(height, "height")
            if arr.size != width * height:
                raise ValueError(
                    f"data size {arr.size} is not width * height = {width} * {height}"
                )
            if arr.ndim == 2 and arr.shape != (height, width):
                raise ValueError(
                    f"data shape {arr.shape} does not match (height, width) = {(height, width)}"
                )
            if arr.ndim not in (1, 2):
                raise ValueError(f"data must be 1-D or 2-D, got {arr.ndim}-D")
        elif arr.ndim != 2:
            raise ValueError(
                f"data must be a (height, width) array, or 1-D with width and height given; "
                f"got shape {arr.shape}"
            )
        else:
            height, width = arr.shape
        if width < 1 or height < 1:
            raise ValueError(f"map must have at least one cell, got width {width}, height {height}")
        arr = np.ascontiguousarray(arr).reshape(height, width)  # a view when already C-contiguous
        view = arr.view()
        view.flags.writeable = False
        u8 = view.view(np.uint8)
        u8.flags.writeable = False

        res = finite_scalar(resolution, "resolution", above=0.0)
        try:
            origin_vals = tuple(origin)
        except TypeError as exc:
            raise ValueError(f"origin must be (x, y) or (x, y, yaw), got {origin!r}") from exc
        if len(origin_vals) not in (2, 3):
            raise ValueError(f"origin must be (x, y) or (x, y, yaw), got {origin!r}")
        ox = finite_scalar(origin_vals[0], "origin x")
        oy = finite_scalar(origin_vals[1], "origin y")
        oyaw = finite_scalar(origin_vals[2], "origin yaw") if len(origin_vals) == 3 else 0.0

        if isinstance(occupied_threshold, float | np.floating):  # whole or not: no count
            raise ValueError(f"occupied_threshold must be an integer, got {occupied_threshold!r}")
        thr = finite_scalar(occupied_threshold, "occupied_threshold", at_least=1, at_most=100,
                            integer=True)
        if not isinstance(unknown_is_occupied, (bool, np.bool_)):
            raise ValueError(f"unknown_is_occupied must be a bool, got {unknown_is_occupied!r}")

        s = object.__setattr__
        s(self, "_data", view)
        s(self, "_resolution", res)
        s(self, "_origin", (ox, oy, oyaw))
        s(self, "_cos", math.cos(oyaw))
        s(self, "_sin", math.sin(oyaw))
        s(self, "_threshold", thr)
        s(self, "_unknown_is_occupied", bool(unknown_is_occupied))
        # Blocked test on the uint8 view: negative int8 (unknown) maps to 128..255.
        s(self, "_occupancy", Occupancy(u8, thr, 255 if unknown_is_occupied else 127))

    def __setattr__(self, name, value):
        raise AttributeError("GridMap is immutable; build a new one instead")

    def __delattr__(self, name):
        raise AttributeError("GridMap is immutable; build a new one instead")

    def __repr__(self) -> str:
        return (
            f"GridMap(width={self.width}, height={self.height}, resolution={self._resolution}, "
            f"origin={self._origin}, occupied_threshold={self._threshold}, "
            f"unknown_is_occupied={self._unknown_is_occupied})"
        )

    # ------------------------------------------------------------------ properties
    @property
    def data(self) -> np.ndarray:
        """Read-only int8 view of shape (height, width) (no copy)."""
        return self._data

    @property
    def width(self) -> int:
        return self._data.shape[1]

    @property
    def height(self) -> int:
        return self._data.shape[0]

    @property
    def shape(self) -> tuple[int, int]:
        """(height, width), numpy order."""
        return self._data.shape

    @property
    def resolution(self) -> float:
        return self._resolution

    @property
    def origin(self) -> tuple[float, float, float]:
        return self._origin

    @property
    def occupied_threshold(self) -> int:
        return self._threshold

    @property
    def unknown_is_occupied(self) -> bool:
        return self._unknown_is_occupied

    @property
    def kernel_args(self) -> Occupancy:
        """:class:`~.traversal.Occupancy` ``(cells, lo, hi)``: the read-only uint8 view and the
        bounds of the blocked test ``lo <= cells[my, mx] <= hi`` that the kernels apply."""
        return self._occupancy

    # ------------------------------------------------------------------ conversions
    # One copy of each formula, written for floats and numpy arrays alike, so the vectorised
    # methods and the scalar line-of-sight path compute the same bits.
    def _map_coords(self, x, y):
        """World coordinates to map-frame coordinates in cell units (floats or arrays)."""
        dx = x - self._origin[0]
        dy = y - self._origin[1]
        return ((self._cos * dx + self._sin * dy) / self._resolution,
                (-self._sin * dx + self._cos * dy) / self._resolution)

    def _centre_of(self, mx, my):
        """World coordinates of the centre of cell (mx, my) (ints, floats or arrays)."""
        lx = (mx + 0.5) * self._resolution
        ly = (my + 0.5) * self._resolution
        return (self._origin[0] + self._cos * lx - self._sin * ly,
                self._origin[1] + self._sin * lx + self._cos * ly)

    def world_to_cell(self, points) -> np.ndarray:
        """World points (..., 2) to the int64 cells (..., 2) containing them (floor).

        Points on a cell's lower or left edge belong to that cell; negative map
        coordinates floor correctly (x = -0.01 m is cell -1). Points farther than
        2**29 cells from the origin raise ValueError.
        """
        pts = float_points(points, "points")
        fx, fy = self._map_coords(pts[..., 0], pts[..., 1])
        out = np.stack([np.floor(fx), np.floor(fy)], axis=-1)
        if out.size:
            _check_cell_range(np.max(np.abs(out)))
        return out.astype(np.int64)

    def cell_to_world(self, cells) -> np.ndarray:
        """Cells (..., 2) to the world coordinates (..., 2) of their centres."""
        c = cell_points(cells, "cells").astype(np.float64)
        return np.stack(self._centre_of(c[..., 0], c[..., 1]), axis=-1)

    def in_bounds(self, cells) -> np.ndarray:
        """Whether cells (..., 2) lie inside the map."""
        c = cell_points(cells, "cells")
        return (
            (c[..., 0] >= 0) & (c[..., 0] < self.width) & (c[..., 1] >= 0)
            & (c[..., 1] < self.height)
        )

    def is_blocked(self, cells, out_of_map: str = "blocked") -> np.ndarray:
        """Whether cells (..., 2) are blocked (occupied, or unknown per the flag)."""
        oob = out_of_map_blocked(out_of_map)
        c = cell_points(cells, "cells")
        inside = self.in_bounds(c)
        out = np.full(c.shape[:-1], oob, dtype=bool)
        u8, lo, hi = self._occupancy
        u = u8[c[..., 1][inside], c[..., 0][inside]]
        out[inside] = (u >= lo) & (u <= hi)
        return out

    def blocked_mask(self) -> np.ndarray:
        """A new (height, width) bool array of blocked cells (allocates width*height bytes)."""
        u8, lo, hi = self._occupancy
        return (u8 >= lo) & (u8 <= hi)

    # ------------------------------------------------------------------ queries
    def line_of_sight(
        self, start_xy, goal_xy, mode: str = "bresenham", out_of_map: str = "blocked"
    ) -> WorldLosResult:
        """Line of sight between two world points, decided on the cells that contain them.

        What is checked, exactly:

        1. Both world points are snapped to the cells that contain them, with the same
           arithmetic as :meth:`world_to_cell` (floor in the map frame, origin yaw
           honoured). Nothing of the points' position inside their cells is kept.
        2. The cell walk of :func:`planning_collision.grid.line_of_sight` runs from the start
           cell to the goal cell in ``mode``, i.e. along the segment between the two cell
           *centres*; both end cells are checked. Cells outside the map follow
           ``out_of_map`` (``"blocked"`` by default, so a point outside the map, or a walk
           leaving it, is never clear).
        3. The result: ``clear``; ``first_blocked_cell``, the first blocked cell in walk
           order from the start; ``first_blocked_point``, that cell's *centre* in world
           coordinates (not the point where the world segment enters the cell: it need not
           even lie on the segment between the given points); ``cells_checked``.

        With endpoints off their cell centres the walked segment differs from the segment
        between the given points by up to half a cell diagonal (``resolution / sqrt(2)``)
        at each end, so no mode is exact for the world segment:

        * ``"supercover"`` lists every cell whose open interior the *centre-to-centre*
          segment crosses. The world segment can cross cells it misses (for example a
          diagonal neighbour of the start cell when the start point sits in a corner of its
          cell), and can miss cells it lists.
        * ``"conservative"`` also takes both side cells at every lattice corner the
          centre-to-centre segment passes, so that segment cannot slip diagonally between two
          blocked cells; it is conservative for that segment only, not for the world
          segment, which can still clip a blocked cell next to the walk.
        * ``"bresenham"`` visits one cell per major-axis step of the cell walk.

        When the world segment itself must be guaranteed free, check a thin capsule around
        it instead: ``footprint_collides(grid, ConvexShape.capsule(start_xy, goal_xy, r),
        [(0, 0, 0)])`` reports every cell within ``r`` of the segment (exact rasterisation),
        or snap the endpoints to cell centres before calling this method, which makes the
        walk exact for the given points.
        """
        code = mode_code(mode)
        oob = out_of_map_blocked(out_of_map)
        # Scalar path in plain Python: a single query must not pay numpy's per-call overhead.
        cells = np.array([self._cell_of(*_xy(start_xy, "start_xy")),
                          self._cell_of(*_xy(goal_xy, "goal_xy"))], dtype=np.int64)
        clear, first, count = trace_rays(code, cells[:1], cells[1:], self._occupancy, oob,
                                         threads=1)
        if clear[0]:
            return WorldLosResult(True, None, None, int(count[0]))
        mx, my = int(first[0, 0]), int(first[0, 1])
        return WorldLosResult(False, self._centre_of(mx, my), (mx, my), int(count[0]))

    def _cell_of(self, x: float, y: float) -> tuple[int, int]:
        """The cell containing one world point (Python ints), as :meth:`world_to_cell`."""
        fx, fy = self._map_coords(x, y)
        mx, my = math.floor(fx), math.floor(fy)
        _check_cell_range(max(abs(mx), abs(my)))
        return mx, my


def _check_cell_range(largest) -> None:
    if largest > MAX_CELL_COORD:
        raise ValueError(f"points lie more than {MAX_CELL_COORD} cells from the map origin")


def _xy(point, name: str) -> tuple[float, float]:
    """One finite (x, y) pair as Python floats."""
    try:
        x, y = (float(v) for v in point)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an (x, y) pair of numbers, got {point!r}") from exc
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ValueError(f"{name} contains NaN or inf")
    return x, y


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)
