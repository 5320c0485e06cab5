"""The grid's cell walks: Bresenham, supercover and conservative traversals (numba kernels).

This module holds the kernels only; :mod:`.line_of_sight` documents the three modes and is
the public API, and :class:`.GridMap` calls :func:`trace_rays` for its world-coordinate
query. It imports nothing else of the grid package, so neither of them imports the other.

A walk reads the map through :class:`Occupancy` (``GridMap.kernel_args``): a cell (mx, my)
inside the map is blocked when ``lo <= cells[my, mx] <= hi``; cells outside follow
``out_of_map``. Batches of rays are shared among threads
(:mod:`planning_collision.common.work_sharing`); every ray is walked the same way on any
thread, so the answers do not depend on the thread count.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from planning_collision.common.work_sharing import share_rows, threads_for

BRESENHAM, SUPERCOVER, CONSERVATIVE = 0, 1, 2

#: Fewest rays worth a thread of their own: about 60 us of walking (a ray of a few hundred
#: cells takes 0.1-0.2 us); batches under twice as many are walked on the calling thread.
RAYS_PER_THREAD = 512


class Occupancy(NamedTuple):
    """What the kernels read of a map: cell (mx, my) is blocked when ``lo <= cells[my, mx]
    <= hi`` (``cells``: the map's read-only uint8 view, negative int8 values as 128..255)."""

    cells: np.ndarray
    lo: int
    hi: int


class RayAnswers(NamedTuple):
    """Per ray: ``clear`` (N,) bool, ``first_blocked`` (N, 2) int64 ((-1, -1) when clear),
    ``cells_checked`` (N,) int64."""

    clear: np.ndarray
    first_blocked: np.ndarray
    cells_checked: np.ndarray


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
def _rays_kernel(mode, starts, goals, occ, lo, hi, oob_blocked, clear, first, count, begin, end):
    """Rays ``begin <= k < end`` from starts[k] to goals[k], each stopping at its first
    blocked cell; writes clear[k], first[k] and count[k].

    The loop runs over slices from 0: a loop from ``begin`` measured 11 % slower (numba
    cannot drop the negative-index wrap-around of ``starts[k]`` there).
    """
    _walk_rays(mode, starts[begin:end], goals[begin:end], occ, lo, hi, oob_blocked,
               clear[begin:end], first[begin:end], count[begin:end])


@numba.njit(cache=True, nogil=True)
def _walk_rays(mode, starts, goals, occ, lo, hi, oob_blocked, clear, first, count):
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


@numba.njit(cache=True, nogil=True)
def _cells_kernel(mode, x0, y0, x1, y1, buf):
    """Record the cells of one ray into buf (the same traversal, nothing checked)."""
    occ = np.zeros((1, 1), np.uint8)
    _, _, _, n = _trace(mode, x0, y0, x1, y1, occ, 1, 0, False, False, buf)
    return n


def trace_rays(mode: int, starts: np.ndarray, goals: np.ndarray, occupancy: Occupancy,
               out_of_map_blocked: bool, threads=None) -> RayAnswers:
    """Walk every ray from ``starts[k]`` to ``goals[k]`` (int64 (N, 2) cells, C-contiguous,
    already validated) in ``mode`` (0, 1, 2), stopping at its first blocked cell.

    ``threads``: None (every core) or an upper bound; batches under ``2 *``
    :data:`RAYS_PER_THREAD` rays stay on the calling thread.
    """
    n = starts.shape[0]
    clear = np.empty(n, dtype=np.bool_)
    first = np.empty((n, 2), dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    occ, lo, hi = occupancy

    def process(begin, end):
        _rays_kernel(mode, starts, goals, occ, lo, hi, out_of_map_blocked, clear, first, count,
                     begin, end)

    share_rows(process, n, threads_for(threads, n, RAYS_PER_THREAD))
    return RayAnswers(clear, first, count)


def cells_of_ray(mode: int, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
    """The cells (M, 2) that ``mode`` visits from (x0, y0) to (x1, y1), in walk order."""
    nx, ny = abs(x1 - x0), abs(y1 - y0)
    size = (max(nx, ny), nx + ny, nx + ny + min(nx, ny))[mode] + 1
    buf = np.empty((size, 2), dtype=np.int64)
    n = _cells_kernel(mode, x0, y0, x1, y1, buf)
    return buf[:n]
