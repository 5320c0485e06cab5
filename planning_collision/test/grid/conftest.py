"""Shared helpers for the grid tests: seeded random maps and independent oracles."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest


def _random_grid_data(rng, height, width, p_occ=0.3, p_unknown=0.05):
    """int8 (height, width) with values in {-1, 0..100}."""
    data = rng.integers(0, 101, size=(height, width)).astype(np.int8)
    data[rng.random((height, width)) >= p_occ] = 0
    data[rng.random((height, width)) < p_unknown] = -1
    return data


def _param_interval(a: int, b: int, lo: int, hi: int):
    """Parameter interval (as Fractions, None = unbounded) where lo < a + t (b - a) < hi.

    Returns (t_lo, t_hi) or None if never (a is odd and lo, hi even, so never on the edge).
    """
    d = b - a
    if d == 0:
        return (None, None) if lo < a < hi else None
    t1 = Fraction(lo - a, d)
    t2 = Fraction(hi - a, d)
    return (min(t1, t2), max(t1, t2))


def segment_hits_square(start, goal, cell, closed: bool) -> bool:
    """Brute force: does the segment between the centres of start and goal meet the square of
    ``cell`` (open interior, or closed square)? Exact, in doubled integer coordinates."""
    ax, ay = 2 * int(start[0]) + 1, 2 * int(start[1]) + 1
    bx, by = 2 * int(goal[0]) + 1, 2 * int(goal[1]) + 1
    ix = _param_interval(ax, bx, 2 * int(cell[0]), 2 * int(cell[0]) + 2)
    iy = _param_interval(ay, by, 2 * int(cell[1]), 2 * int(cell[1]) + 2)
    if ix is None or iy is None:
        return False
    lows = [t for t in (ix[0], iy[0]) if t is not None]
    highs = [t for t in (ix[1], iy[1]) if t is not None]
    lo = max(lows) if lows else Fraction(-1)
    hi = min(highs) if highs else Fraction(2)
    if closed:
        return lo <= hi and lo <= 1 and hi >= 0
    return lo < hi and lo < 1 and hi > 0


def _brute_force_cells(start, goal, closed: bool) -> set[tuple[int, int]]:
    x0, x1 = sorted((int(start[0]), int(goal[0])))
    y0, y1 = sorted((int(start[1]), int(goal[1])))
    return {
        (i, j)
        for i in range(x0 - 1, x1 + 2)
        for j in range(y0 - 1, y1 + 2)
        if segment_hits_square(start, goal, (i, j), closed)
    }


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def random_grid_data():
    """Function (rng, height, width, p_occ, p_unknown) -> int8 map data."""
    return _random_grid_data


@pytest.fixture
def brute_force_cells():
    """Function (start, goal, closed) -> set of cells whose (open or closed) square the
    centre-to-centre segment meets, by exact brute force over the bounding box."""
    return _brute_force_cells
