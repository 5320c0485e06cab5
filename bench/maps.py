"""Random occupancy maps the service benchmarks send (bench_collision_server.py and
bench_transport.py): rectangles of 5-39 cells dropped until a fraction of the cells is
occupied (100), the rest free (0)."""

from __future__ import annotations

import numpy as np


def random_rect_map(rng, size: int, fill: float) -> np.ndarray:
    """Random rectangles until ``fill`` of the cells are occupied. The occupied count is kept
    as rectangles land (counting the whole map after each one took 6 minutes at 4000 x 4000,
    longer than the big-map publisher is given to come up); the map is the same."""
    data = np.zeros((size, size), dtype=np.int8)
    occupied, wanted = 0, fill * size * size
    while occupied < wanted:
        w, h = rng.integers(5, 40, 2)
        x, y = rng.integers(0, size - 40, 2)
        block = data[y:y + h, x:x + w]
        occupied += int(np.count_nonzero(block != 100))
        block[...] = 100
    return data
