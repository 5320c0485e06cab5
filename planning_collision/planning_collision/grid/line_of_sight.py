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

import numba
import numpy as np

from .gridmap import GridMap
from .validation import cell_points, mode_code, out_of_map_blocked

BRESENHAM, SUPERCOVER, CONSERVATIVE = 0, 1, 2


class LosResult(NamedTuple):
    """Result of :func:`line_of_sight` (cell coordinates)."""

    clear: bool
    #: First blocked cell (mx, my) in traversal order, None when clear.
    first_blocked: tuple[int, int] | None
    #: Cells examined, up to and including the first blocked one. With out_of_map="free",
    #: cells outside the map before the ray first can enter it, or after it has left for
    #: good, are skipped and not counted.
    cells_checked: int


# ---------------------------------------------------------------------- kernels
# The traversals are written once and serve both the checks (check=True) and the cell
# listings (a non-empty buf records every visited cell). Steps are branchless (a mask from
# the sign bit of an int64) because their direction is data dependent and mispredicted
# branches dominated the per-cell cost. inline="always" keeps numba from emitting a call
# per visited cell and lets each entry kernel specialise on its constant check / buf
# (a runtime check flag made the walk several times slower); the price is compile time,
# paid once thanks to cache=True.
@numba.njit(cache=True, inline="always")
def _visit(occ, lo, hi, oob_blocked, inside, check, buf, n, x, y):
    """Record cell n = (x, y) if buf has room, and return whether it blocks (when check)."""
    if buf.shape[0] > 0:
        buf[n, 0] = x
        buf[n, 1] = y
    if not check:
        return False
    if not inside and (x < 0 or y < 0 or x >= occ.shape[1] or y >= occ.shape[0]):
        return oob_blocked
    u = occ[y, x]
    return u >= lo and u <= hi


@numba.njit(cache=True)
def _ceil_div(num, den):
    """ceil(num / den) for den > 0, exact on int64."""
    return -((-num) // den)


@numba.njit(cache=True)
def _step_range(c0, s, size):
    """Steps i >= 0 for which c0 + s * i lies in [0, size): (first, last), empty if first > last."""
    if s > 0:
        return -c0, size - 1 - c0
    return c0 - (size - 1), c0


@numba.njit(cache=True, inline="always")
def _trace_bresenham(x0, y0, x1, y1, occ, lo, hi, oob_blocked, inside, check, buf):
    # Generic major (p) / minor (q) form; the minor offset of major step i is
    # k_i = floor((2 * i * m + n) / (2 * n)) and the decision variable before the step is
    # d_i = 2m - n + 2m * i - 2n * k_i, so the walk can start at any step.
    steep = abs(y1 - y0) > abs(x1 - x0)
    if steep:
        p0, q0, p1, q1, size_p, size_q = y0, x0, y1, x1, occ.shape[0], occ.shape[1]
    else:
        p0, q0, p1, q1, size_p, size_q = x0, y0, x1, y1, occ.shape[1], occ.shape[0]
    n = abs(p1 - p0)
    m = abs(q1 - q0)
    sp = 1 if p1 - p0 > 0 else -1
    sq = 1 if q1 - q0 > 0 else -1
    i_first = 0
    i_last = n
    if check and not inside and not oob_blocked:
        # Cells outside a map whose outside is free cannot block: walk only the steps whose
        # cell can be inside (major coordinate in range, then minor offset in range).
        a, b = _step_range(p0, sp, size_p)
        i_first = max(i_first, a)
        i_last = min(i_last, b)
        k_lo, k_hi = _step_range(q0, sq, size_q)
        if k_hi < 0:
            return False, -1, -1, 0
        if m == 0:
            if k_lo > 0:
                return False, -1, -1, 0
        else:
            if k_lo > 0:
                i_first = max(i_first, _ceil_div(2 * n * k_lo - n, 2 * m))
            i_last = min(i_last, _ceil_div(2 * n * (k_hi + 1) - n, 2 * m) - 1)
        if i_first > i_last:
            return False, -1, -1, 0
    k = (2 * i_first * m + n) // (2 * n) if n > 0 else 0
    p = p0 + sp * i_first
    q = q0 + sq * k
    d = 2 * m - n + 2 * m * i_first - 2 * n * k
    cnt = 0
    for _ in range(i_first, i_last + 1):
        x = q if steep else p
        y = p if steep else q
        if _visit(occ, lo, hi, oob_blocked, inside, check, buf, cnt, x, y):
            return True, x, y, cnt + 1
        cnt += 1
        # skimage's "while d >= 0" runs at most once: d < 2n before it.
        st = 1 + (d >> 63)  # 1 when d >= 0
        q += sq * st
        d -= 2 * n * st
        p += sp
        d += 2 * m
    return False, -1, -1, cnt


@numba.njit(cache=True, inline="always")
def _trace_cover(conservative, x0, y0, x1, y1, occ, lo, hi, oob_blocked, inside, check, buf):
    # In half-cell units the segment runs between odd coordinates and the lattice lines are
    # even. The i-th x-line crossing (i = 0..nx-1) happens at t = (2i+1) / (2nx), the j-th
    # y-line crossing at t = (2j+1) / (2ny). Comparing a = (2i+1) * ny with b = (2j+1) * nx
    # orders them exactly, so corner crossings (a == b) are found exactly. Once all x
    # crossings are done a > b holds for the remaining y crossings, and vice versa.
    h, w = occ.shape
    nx = abs(x1 - x0)
    ny = abs(y1 - y0)
    sx = 1 if x1 > x0 else -1
    sy = 1 if y1 > y0 else -1
    ix = 0
    iy = 0
    skip = check and not inside and not oob_blocked
    if skip:
        # Free outside: start just before the crossing that brings both coordinates into
        # range (the later of the two), counting the crossings of the other axis that come
        # strictly earlier; leave once outside and moving away.
        ex, _ = _step_range(x0, sx, w)
        ey, _ = _step_range(y0, sy, h)
        if ex > nx or ey > ny:
            return False, -1, -1, 0
        if ex > 0 and (ey <= 0 or (2 * ex - 1) * ny >= (2 * ey - 1) * nx):
            ix = ex - 1
            iy = min(ny, max(0, _ceil_div((2 * ex - 1) * ny - nx, 2 * nx)))
        elif ey > 0:
            iy = ey - 1
            ix = min(nx, max(0, _ceil_div((2 * ey - 1) * nx - ny, 2 * ny)))
    # Once outside and moving away a free-outside walk can stop: that is when x reaches
    # x_stop (the first column past the map in the walk's direction) or y reaches y_stop.
    # Without skipping they are set where the walk never goes.
    x_stop = (w if sx > 0 else -1) if skip else x1 + sx
    y_stop = (h if sy > 0 else -1) if skip else y1 + sy
    if skip and ((x0 - x_stop) * sx > 0 or (y0 - y_stop) * sy > 0):
        return False, -1, -1, 0
    x = x0 + sx * ix
    y = y0 + sy * iy
    a = (2 * ix + 1) * ny
    b = (2 * iy + 1) * nx
    n = 0
    if _visit(occ, lo, hi, oob_blocked, inside, check, buf, n, x, y):
        return True, x, y, n + 1
    n += 1
    while x != x1 or y != y1:
        if x == x_stop or y == y_stop:
            return False, -1, -1, n
        mx = 1 + ((b - a) >> 63)  # x crossing next (or together with y)
        my = 1 + ((a - b) >> 63)  # y crossing next (or together with x)
        if conservative and a == b:
            if _visit(occ, lo, hi, oob_blocked, inside, check, buf, n, x + sx, y):
                return True, x + sx, y, n + 1
            n += 1
            if _visit(occ, lo, hi, oob_blocked, inside, check, buf, n, x, y + sy):
                return True, x, y + sy, n + 1
            n += 1
        x += sx * mx
        a += 2 * ny * mx
        y += sy * my
        b += 2 * nx * my
        if _visit(occ, lo, hi, oob_blocked, inside, check, buf, n, x, y):
            return True, x, y, n + 1
        n += 1
    return False, -1, -1, n


@numba.njit(cache=True, inline="always")
def _trace(mode, x0, y0, x1, y1, occ, lo, hi, oob_blocked, check, buf):
    # Every mode's cells lie in the bounding box of the two end cells.
    h, w = occ.shape
    inside = (
        0 <= x0 < w and 0 <= x1 < w and 0 <= y0 < h and 0 <= y1 < h
    )
    if mode == 0:
        return _trace_bresenham(x0, y0, x1, y1, occ, lo, hi, oob_blocked, inside, check, buf)
    return _trace_cover(
        mode == 2, x0, y0, x1, y1, occ, lo, hi, oob_blocked, inside, check, buf
    )


@numba.njit(cache=True, nogil=True)
def _los_kernel(mode, starts, goals, occ, lo, hi, oob_blocked, clear, first, count):
    """Every ray k from starts[k] to goals[k], stopping at its first blocked cell.

    Writes clear (N,), first (N, 2) and count (N,).
    """
    no_buf = np.empty((0, 2), np.int64)
    for k in range(starts.shape[0]):
        blocked, bx, by, n = _trace(
            mode, starts[k, 0], starts[k, 1], goals[k, 0], goals[k, 1],
            occ, lo, hi, oob_blocked, True, no_buf,
        )
        clear[k] = not blocked
        first[k, 0] = bx
        first[k, 1] = by
        count[k] = n


@numba.njit(cache=True)
def _cells_kernel(mode, x0, y0, x1, y1, buf):
    """Record the cells of one ray into buf (the same traversal, nothing checked)."""
    occ = np.zeros((1, 1), np.uint8)
    _, _, _, n = _trace(mode, x0, y0, x1, y1, occ, 1, 0, False, False, buf)
    return n


def _run(code, starts, goals, occ, lo, hi, oob):
    n = starts.shape[0]
    clear = np.empty(n, dtype=np.bool_)
    first = np.empty((n, 2), dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    _los_kernel(code, starts, goals, occ, lo, hi, oob, clear, first, count)
    return clear, first, count


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
    occ, lo, hi = grid.kernel_args
    clear, first, count = _run(code, np.array([[x0, y0]]), np.array([[x1, y1]]), occ, lo, hi, oob)
    if not clear[0]:
        return LosResult(False, (int(first[0, 0]), int(first[0, 1])), int(count[0]))
    return LosResult(True, None, int(count[0]))


def line_of_sight_batch(
    grid: GridMap, starts, goals, mode: str = "bresenham", out_of_map: str = "blocked",
    cells_checked: bool = False,
):
    """Line of sight for N rays in one compiled loop (early exit per ray).

    starts, goals: (N, 2) integer cells. Returns ``clear`` (N,) bool and ``first_blocked``
    (N, 2) int64, which is (-1, -1) where the ray is clear. Use ``clear`` to tell the cases
    apart: with ``out_of_map="blocked"`` the cell (-1, -1) can itself be a first blocked cell.
    With ``cells_checked=True`` a third array (N,) int64 follows: the cells each ray visited
    before its answer was known, as :class:`LosResult` has them.
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
    occ, lo, hi = grid.kernel_args
    clear, first, count = _run(code, s, g, occ, lo, hi, oob)
    return (clear, first, count) if cells_checked else (clear, first)


def traversed_cells(start, goal, mode: str = "bresenham") -> np.ndarray:
    """The cells (M, 2) that ``mode`` visits from start to goal, in traversal order."""
    code = mode_code(mode)
    x0, y0, x1, y1 = _cell_pair(start, goal)
    nx, ny = abs(x1 - x0), abs(y1 - y0)
    size = (max(nx, ny), nx + ny, nx + ny + min(nx, ny))[code] + 1
    buf = np.empty((size, 2), dtype=np.int64)
    n = _cells_kernel(code, x0, y0, x1, y1, buf)
    return buf[:n]


def bresenham_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) of the ``"bresenham"`` mode, in order (equals skimage.draw.line)."""
    return traversed_cells(start, goal, "bresenham")


def supercover_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) whose open interior the centre-to-centre segment crosses, in order."""
    return traversed_cells(start, goal, "supercover")


def conservative_cells(start, goal) -> np.ndarray:
    """Cells (M, 2) whose closed square the centre-to-centre segment touches, in order."""
    return traversed_cells(start, goal, "conservative")
