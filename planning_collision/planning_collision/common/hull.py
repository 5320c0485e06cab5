"""Convex hull of a 2D point set (Andrew's monotone chain), compiled with numba.

The hull is returned counter-clockwise, starting at the lexicographically smallest point
(smallest x, then smallest y), with duplicate and collinear points removed. Degenerate sets
give degenerate hulls: all points equal -> that single point; all points on one line -> the
two extreme points (a segment). Orientation tests are exact float64 cross products of
coordinate differences, with no tolerance, so the hull is that of the given floats.
"""

import numpy as np
from numba import njit

from .sorting import argsort_into

_INSERTION_SORT_MAX = 32


@njit(cache=True)
def _insertion_order(p, n, order):
    for i in range(n):
        order[i] = i
    for i in range(1, n):
        k = order[i]
        kx = p[k, 0]
        ky = p[k, 1]
        j = i - 1
        while j >= 0:
            o = order[j]
            ox = p[o, 0]
            if kx < ox or (kx == ox and ky < p[o, 1]):
                order[j + 1] = o
                j -= 1
            else:
                break
        order[j + 1] = k


@njit(cache=True)
def _argsort_order(p, n, order):
    """Lexicographic order for large n: stable sort by y, then stable sort by x."""
    tmp = np.empty(n, np.int64)
    keys = np.empty(n)
    for i in range(n):
        order[i] = i
        keys[i] = p[i, 1]
    argsort_into(keys, order, n, tmp)
    for i in range(n):
        keys[i] = p[i, 0]
    argsort_into(keys, order, n, tmp)


@njit(cache=True)
def _lex_order_into(p, n, order):
    """Fill ``order[:n]`` with the indices of ``p[:n]`` sorted by (x, y)."""
    if n <= _INSERTION_SORT_MAX:
        _insertion_order(p, n, order)
    else:
        _argsort_order(p, n, order)


@njit(cache=True)
def _turn(p, o, a, b):
    """Cross product (p[a] - p[o]) x (p[b] - p[o]); > 0 for a left turn."""
    ax = p[a, 0] - p[o, 0]
    ay = p[a, 1] - p[o, 1]
    bx = p[b, 0] - p[o, 0]
    by = p[b, 1] - p[o, 1]
    return ax * by - ay * bx


@njit(cache=True)
def convex_hull_into(p, n, out, order, stack):
    """Write the CCW hull of ``p[:n]`` into ``out`` and return its vertex count.

    ``order`` (length >= n) and ``stack`` (length >= 2 n + 2) are int64 scratch arrays;
    ``out`` must have at least ``n`` rows. ``n`` must be >= 1.
    """
    _lex_order_into(p, n, order)
    first = order[0]
    last = order[n - 1]
    if p[first, 0] == p[last, 0] and p[first, 1] == p[last, 1]:
        out[0, 0] = p[first, 0]
        out[0, 1] = p[first, 1]
        return 1
    k = 0
    for s in range(n):
        i = order[s]
        while k >= 2 and _turn(p, stack[k - 2], stack[k - 1], i) <= 0.0:
            k -= 1
        stack[k] = i
        k += 1
    lower = k + 1
    for s in range(n - 2, -1, -1):
        i = order[s]
        while k >= lower and _turn(p, stack[k - 2], stack[k - 1], i) <= 0.0:
            k -= 1
        stack[k] = i
        k += 1
    m = k - 1  # the last point repeats the first
    for s in range(m):
        out[s, 0] = p[stack[s], 0]
        out[s, 1] = p[stack[s], 1]
    return m


@njit(cache=True)
def is_convex_ccw(p, n):
    """True if ``p[:n]`` (n >= 3) is a strictly convex polygon in CCW order.

    Every turn must be strictly to the left and the edge directions must wind exactly once
    (counted as the crossings of the +x direction), which rules out star polygons.
    """
    if n < 3:
        return False
    wraps = 0
    ex = p[0, 0] - p[n - 1, 0]
    ey = p[0, 1] - p[n - 1, 1]
    for i in range(n):
        j = i + 1 if i + 1 < n else 0
        fx = p[j, 0] - p[i, 0]
        fy = p[j, 1] - p[i, 1]
        # same turn formula as the hull construction: (a - o) x (b - o)
        if ex * (fy + ey) - ey * (fx + ex) <= 0.0:
            return False
        lower = ey < 0.0 or (ey == 0.0 and ex < 0.0)
        upper = fy > 0.0 or (fy == 0.0 and fx > 0.0)
        if lower and upper:
            wraps += 1
        ex = fx
        ey = fy
    return wraps == 1


@njit(cache=True, nogil=True)
def convex_hull(p):
    """Return the CCW convex hull of the (K, 2) array ``p`` (K >= 1) as a new (M, 2) array."""
    n = p.shape[0]
    out = np.empty((n + 1, 2))
    order = np.empty(n + 1, np.int64)
    stack = np.empty(2 * n + 2, np.int64)
    m = convex_hull_into(p, n, out, order, stack)
    hull = np.empty((m, 2))
    for i in range(m):
        hull[i, 0] = out[i, 0]
        hull[i, 1] = out[i, 1]
    return hull
