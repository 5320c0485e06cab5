"""Agent neighbour search with RVO2's semantics on a uniform grid.

RVO2 gives each agent its ``max_neighbors`` nearest other agents whose squared distance is
below ``neighbor_dist ** 2`` (its k-d tree shrinks the search range to the current k-th
distance).  This module returns the same set: the ``max_neighbors`` smallest keys
``(squared distance, agent index)`` below the range, sorted.  Equal distances are ordered
by agent index (RVO2 orders them by its tree's internal order, which is not specified).

Agents are counting-sorted into row-major cells (O(N + cells) per step), so the agents of
consecutive cells of a row are contiguous.  A query scans, row by row from the agent's own
row outwards, the slice of cells that overlaps the current search disc; the disc shrinks
as soon as ``max_neighbors`` candidates are found.  The cell size is a fraction of the
largest neighbour distance, enlarged when the scene is so spread out that the grid would
have more than ``CELLS_PER_AGENT`` cells per agent.
"""

import math
from typing import NamedTuple

import numba
import numpy as np

#: Cell size as a fraction of the largest neighbour distance.
CELL_FRACTION = 0.5
#: Upper bound on the number of cells per agent (the cell size grows beyond it).
CELLS_PER_AGENT = 16.0


class GridShape(NamedTuple):
    """Where the grid lies: lower-left corner, cell size and the number of cells."""

    origin_x: float
    origin_y: float
    cell: float
    columns: int
    rows: int


class AgentGrid(NamedTuple):
    """Agents sorted into the cells of a :class:`GridShape` (see :func:`build_grid`).

    The agents of cell ``(cx, cy)`` are the sorted slots ``cell_start[cy * columns + cx]``
    to ``cell_start[cy * columns + cx + 1]``; ``order[s]`` is the agent in slot ``s`` and
    ``sorted_positions[s]`` its position.
    """

    shape: GridShape
    cell_start: np.ndarray
    order: np.ndarray
    sorted_positions: np.ndarray


@numba.njit(cache=True, error_model="numpy")
def build_grid(positions, largest_range):
    """Sort the agents into cells: an :class:`AgentGrid`."""
    n = positions.shape[0]
    lo_x = math.inf
    lo_y = math.inf
    hi_x = -math.inf
    hi_y = -math.inf
    for i in range(n):
        lo_x = min(lo_x, positions[i, 0])
        lo_y = min(lo_y, positions[i, 1])
        hi_x = max(hi_x, positions[i, 0])
        hi_y = max(hi_y, positions[i, 1])
    if n == 0:
        lo_x = lo_y = hi_x = hi_y = 0.0
    width = hi_x - lo_x
    height = hi_y - lo_y
    cell = largest_range * CELL_FRACTION
    if not cell > 0.0:
        cell = 1.0
    budget = CELLS_PER_AGENT * n + 16.0
    if (width / cell + 1.0) * (height / cell + 1.0) > budget:
        # Too spread out: grow the cells so that the grid stays O(N).
        cell = max(cell, (width + height) / (math.sqrt(budget) - 1.0))
    columns = np.int64(width / cell) + 1
    rows = np.int64(height / cell) + 1
    cell_of = np.empty(n, np.int64)
    cell_start = np.zeros(columns * rows + 1, np.int64)
    inv_cell = 1.0 / cell
    for i in range(n):
        cx = min(np.int64((positions[i, 0] - lo_x) * inv_cell), columns - 1)
        cy = min(np.int64((positions[i, 1] - lo_y) * inv_cell), rows - 1)
        c = cy * columns + cx
        cell_of[i] = c
        cell_start[c + 1] += 1
    for c in range(columns * rows):
        cell_start[c + 1] += cell_start[c]
    fill = np.empty(columns * rows, np.int64)
    for c in range(columns * rows):
        fill[c] = cell_start[c]
    order = np.empty(n, np.int64)
    sorted_positions = np.empty((n, 2))
    for i in range(n):
        s = fill[cell_of[i]]
        fill[cell_of[i]] += 1
        order[s] = i
        sorted_positions[s, 0] = positions[i, 0]
        sorted_positions[s, 1] = positions[i, 1]
    return AgentGrid(GridShape(lo_x, lo_y, cell, columns, rows), cell_start, order,
                     sorted_positions)


@numba.njit(cache=True, error_model="numpy")
def find_agent_neighbors(agent, px, py, range_sq, max_neighbors, shape, cell_start, order,
                         sorted_positions, out_index, out_dist_sq):
    """The ``max_neighbors`` nearest agents (other than ``agent``) closer than the range.

    ``shape``, ``cell_start``, ``order`` and ``sorted_positions`` are the fields of an
    :class:`AgentGrid` (passed apart: per agent, taking arrays out of a named tuple would
    cost numba a reference count each).  Writes the indices and squared distances, nearest
    first, into ``out_index`` and ``out_dist_sq`` and returns their count.
    """
    if max_neighbors <= 0:
        return 0
    cell = shape.cell
    columns = shape.columns
    rows = shape.rows
    inv_cell = 1.0 / cell
    rx = px - shape.origin_x
    ry = py - shape.origin_y
    row0 = np.int64(math.floor(ry * inv_cell))
    count = 0
    limit = range_sq
    step = 0
    while True:
        if step > 0:
            gap = (step - 1) * cell
            if gap * gap > limit or (count < max_neighbors and gap * gap >= limit):
                break
        for side in range(2):
            if step == 0 and side == 1:
                break
            row = row0 + step if side == 0 else row0 - step
            if row < 0 or row >= rows:
                continue
            gy = max(0.0, row * cell - ry, ry - (row + 1) * cell)
            gy_sq = gy * gy
            if gy_sq > limit or (count < max_neighbors and gy_sq >= limit):
                continue
            half = math.sqrt(limit - gy_sq)
            c_lo = max(np.int64(math.floor((rx - half) * inv_cell)), 0)
            c_hi = min(np.int64(math.floor((rx + half) * inv_cell)), columns - 1)
            if c_lo > c_hi:
                continue
            base = row * columns
            for s in range(cell_start[base + c_lo], cell_start[base + c_hi + 1]):
                j = order[s]
                if j == agent:
                    continue
                qx = px - sorted_positions[s, 0]
                qy = py - sorted_positions[s, 1]
                d = qx * qx + qy * qy
                if count < max_neighbors:
                    if d >= limit:
                        continue
                    k = count
                    count += 1
                else:
                    last_d = out_dist_sq[count - 1]
                    if d > last_d or (d == last_d and j > out_index[count - 1]):
                        continue
                    k = count - 1
                while k > 0 and (d < out_dist_sq[k - 1]
                                 or (d == out_dist_sq[k - 1] and j < out_index[k - 1])):
                    out_index[k] = out_index[k - 1]
                    out_dist_sq[k] = out_dist_sq[k - 1]
                    k -= 1
                out_index[k] = j
                out_dist_sq[k] = d
                if count == max_neighbors:
                    limit = out_dist_sq[count - 1]
        if row0 + step >= rows - 1 and row0 - step <= 0:
            break
        step += 1
    return count


@numba.njit(cache=True, error_model="numpy")
def find_agents_within(agent, px, py, range_sq, shape, cell_start, order, sorted_positions,
                       out_index):
    """All agents (other than ``agent``) closer than ``sqrt(range_sq)``, in grid order.

    The grid is passed as in :func:`find_agent_neighbors`.  Writes the indices into
    ``out_index`` (capacity: number of agents) and returns their count.
    """
    cell = shape.cell
    columns = shape.columns
    rows = shape.rows
    inv_cell = 1.0 / cell
    rx = px - shape.origin_x
    ry = py - shape.origin_y
    reach = math.sqrt(range_sq)
    r_lo = max(np.int64(math.floor((ry - reach) * inv_cell)), 0)
    r_hi = min(np.int64(math.floor((ry + reach) * inv_cell)), rows - 1)
    c_lo = max(np.int64(math.floor((rx - reach) * inv_cell)), 0)
    c_hi = min(np.int64(math.floor((rx + reach) * inv_cell)), columns - 1)
    count = 0
    for row in range(r_lo, r_hi + 1):
        if c_lo > c_hi:
            break
        base = row * columns
        for s in range(cell_start[base + c_lo], cell_start[base + c_hi + 1]):
            j = order[s]
            if j == agent:
                continue
            qx = px - sorted_positions[s, 0]
            qy = py - sorted_positions[s, 1]
            if qx * qx + qy * qy < range_sq:
                out_index[count] = j
                count += 1
    return count
