"""Line of sight between two cells of a GridMap: Bresenham, supercover and conservative.

Cells are (mx, my) = (column, row). Every mode checks the start and the goal cell, walks
the cells in order from start to goal and stops at the first blocked one.

Modes (segment = the straight segment between the centres of the start and goal cells):

``"bresenham"``
    Classic integer Bresenham, exactly the cells of ``skimage.draw.line(my0, mx0, my1, mx1)``.
    With ``dx = |mx1 - mx0|``, ``dy = |my1 - my0|``, the major axis is x when ``dx >= dy``
    (y when ``dy > dx``); for step ``i = 0..n`` along the major axis (``n`` its length) the
    minor offset is ``floor((2 * i * minor + n) / (2 * n))``, i.e. ``i * minor / n`` rounded
    half-way cases away from the start. One cell per major step: ``max(dx, dy) + 1`` cells.
    Ties make it direction dependent (reversing a ray can change the cells).
``"supercover"``
    Every cell whose open interior the segment crosses (Amanatides-Woo traversal, done in
    exact integer arithmetic). Where the segment passes exactly through a lattice corner it
    steps diagonally, touching only the corner of the two side cells, which are not included.
    ``dx + dy + 1 - corners`` cells; symmetric under reversal.
``"conservative"``
    Every cell whose closed square the segment touches: the supercover cells plus, at each
    lattice-corner crossing, both side cells (x-side first, then y-side, then the diagonal
    cell). A ray can never squeeze diagonally between two blocked cells. Symmetric under
    reversal.

``out_of_map="blocked"`` (default) counts every cell outside ``0 <= mx < width,
0 <= my < height`` as blocked, so a ray leaving the map is not clear; ``"free"`` counts them
as free, so only cells inside the map can block. With ``"free"`` the walk starts where the
ray can first enter the map and ends where it leaves for good, so a ray from far outside
costs no more than its part over the map.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .gridmap import GridMap
from .traversal import cells_of_ray, trace_rays
from .validation import cell_points, mode_code, out_of_map_blocked


class LosResult(NamedTuple):
    """Result of :func:`line_of_sight` (cell coordinates)."""

    clear: bool
    #: First blocked cell (mx, my) in traversal order, None when clear.
    first_blocked: tuple[int, int] | None
    #: Cells examined, up to and including the first blocked one. With out_of_map="free",
    #: cells outside the map before the ray first can enter it, or after it has left for
    #: good, are skipped and not counted.
    cells_checked: int


# ---------------------------------------------------------------------- public API
def _check_grid(grid) -> None:
    if not isinstance(grid, GridMap):
        raise ValueError(f"grid must be a GridMap, got {type(grid).__name__}")


def _cell_pair(start, goal) -> tuple[int, int, int, int]:
    s = cell_points(start, "start_cell")
    g = cell_points(goal, "goal_cell")
    if s.shape != (2,) or g.shape != (2,):
        raise ValueError(f"start and goal cells must have shape (2,), got {s.shape}, {g.shape}")
    return int(s[0]), int(s[1]), int(g[0]), int(g[1])


def line_of_sight(
    grid: GridMap, start_cell, goal_cell, mode: str = "bresenham", out_of_map: str = "blocked"
) -> LosResult:
    """Whether the cells from start_cell to goal_cell (both included) are all free.

    See the module docstring for the exact cell set of each mode and for ``out_of_map``.
    """
    _check_grid(grid)
    code = mode_code(mode)
    oob = out_of_map_blocked(out_of_map)
    x0, y0, x1, y1 = _cell_pair(start_cell, goal_cell)
    clear, first, count = trace_rays(code, np.array([[x0, y0]]), np.array([[x1, y1]]),
                                     grid.kernel_args, oob, threads=1)
    if not clear[0]:
        return LosResult(False, (int(first[0, 0]), int(first[0, 1])), int(count[0]))
    return LosResult(True, None, int(count[0]))


class LosBatch(NamedTuple):
    """Result of :func:`line_of_sight_batch` (unpacks like a 2-tuple)."""

    clear: np.ndarray
    #: (N, 2) int64: the first blocked cell, (-1, -1) where the ray is clear.
    first_blocked: np.ndarray


class LosBatchCounted(NamedTuple):
    """Result of :func:`line_of_sight_batch` with ``cells_checked=True`` (a 3-tuple)."""

    clear: np.ndarray
    first_blocked: np.ndarray
    #: (N,) int64: the cells each ray visited before its answer was known.
    cells_checked: np.ndarray


def line_of_sight_batch(
    grid: GridMap, starts, goals, mode: str = "bresenham", out_of_map: str = "blocked",
    cells_checked: bool = False, threads=None,
):
    """Line of sight for N rays in compiled loops (early exit per ray).

    starts, goals: (N, 2) integer cells. Returns :class:`LosBatch` ``(clear (N,) bool,
    first_blocked (N, 2) int64)``; ``first_blocked`` is (-1, -1) where the ray is clear. Use
    ``clear`` to tell the cases apart: with ``out_of_map="blocked"`` the cell (-1, -1) can
    itself be a first blocked cell. With ``cells_checked=True`` it returns
    :class:`LosBatchCounted`, whose third array (N,) int64 holds the cells each ray visited
    before its answer was known, as :class:`LosResult` has them.

    ``threads``: None (the default) shares the rays among every core, an integer caps the
    threads; batches under ``2 * RAYS_PER_THREAD`` (1,024) rays stay on the calling thread.
    The answers are identical for every thread count. The kernel releases the GIL, so
    concurrent calls from several Python threads run in parallel too.
    """
    _check_grid(grid)
    code = mode_code(mode)
    oob = out_of_map_blocked(out_of_map)
    s = cell_points(starts, "starts")
    g = cell_points(goals, "goals")
    if s.ndim != 2 or g.shape != s.shape:
        raise ValueError(
            f"starts and goals must both have shape (N, 2), got {s.shape} and {g.shape}"
        )
    clear, first, count = trace_rays(code, s, g, grid.kernel_args, oob, threads)
    if cells_checked:
        return LosBatchCounted(clear, first, count)
    return LosBatch(clear, first)


def traversed_cells(start, goal, mode: str = "bresenham") -> np.ndarray:
    """The cells (M, 2) that ``mode`` visits from start to goal, in traversal order."""
    code = mode_code(mode)
    return cells_of_ray(code, *_cell_pair(start, goal))


def bresenham_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) of the ``"bresenham"`` mode, in order (equals skimage.draw.line)."""
    return traversed_cells(start, goal, "bresenham")


def supercover_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) whose open interior the centre-to-centre segment crosses, in order."""
    return traversed_cells(start, goal, "supercover")


def conservative_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) whose closed square the centre-to-centre segment touches, in order."""
    return traversed_cells(start, goal, "conservative")
