"""Broadphase: a static bounding-volume hierarchy over axis-aligned boxes (numba).

:class:`AabbIndex` takes N boxes ``(minx, miny, maxx, maxy)`` and answers "which boxes
overlap this box" in O(log N + hits) instead of N tests, for one query box or a batch.
Touching boxes count as overlapping (closed intervals), like everywhere in this package.

Build: top-down median split. Each node stores the bounds of its items; a node with more
than ``leaf_size`` items is split at the median of the item centres along the axis where
the centres spread most, so the tree is balanced (depth <= log2(N / leaf_size) + 1) for
any size distribution (long walls, tiny posts, duplicates). Build cost O(N log^2 N),
about a few milliseconds for 10,000 boxes.

Results list item indices in ascending order. The tree is plain data (:class:`Bvh`, one
named tuple of arrays), which :mod:`.obstacles` (nearest obstacle) and :mod:`.raycast`
(segment casts) pass to their own kernels.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from planning_collision.common.sorting import argsort_into

from .buffers import grow_int, head_int

_STACK = 128  # > 2 * max depth of a median-split tree over < 2**63 items


class Bvh(NamedTuple):
    """The tree as the kernels read it: node ``k`` has bounds ``node_box[k]`` (minx, miny,
    maxx, maxy) and children ``node_child[k]`` and ``node_child[k] + 1`` (-1 for a leaf); a
    leaf holds items ``order[node_start[k]:node_start[k] + node_count[k]]``, whose own boxes
    are ``boxes[item]``. Node 0 is the root."""

    node_box: np.ndarray
    node_child: np.ndarray
    node_start: np.ndarray
    node_count: np.ndarray
    order: np.ndarray
    boxes: np.ndarray


class QueryPairs(NamedTuple):
    """Overlapping ``(query_index, item_index)`` pairs, as two int64 arrays."""

    query_index: np.ndarray
    item_index: np.ndarray


class CandidateLists(NamedTuple):
    """CSR candidate lists: query ``i`` hits ``indices[offsets[i]:offsets[i + 1]]``."""

    offsets: np.ndarray
    indices: np.ndarray


@njit(cache=True, nogil=True)
def _build(boxes, leaf_size):
    """Median-split BVH over ``boxes``: a :class:`Bvh`."""
    n = boxes.shape[0]
    cap = max(2 * n, 1)
    node_box = np.empty((cap, 4))
    node_child = np.empty(cap, np.int64)
    node_start = np.empty(cap, np.int64)
    node_count = np.empty(cap, np.int64)
    order = np.empty(n, np.int64)
    cx = np.empty(n)
    cy = np.empty(n)
    for i in range(n):
        order[i] = i
        cx[i] = 0.5 * (boxes[i, 0] + boxes[i, 2])
        cy[i] = 0.5 * (boxes[i, 1] + boxes[i, 3])
    stack = np.empty(_STACK, np.int64)
    scratch = np.empty(max(n, 1), np.int64)
    seg = np.empty(max(n, 1), np.int64)
    perm = np.empty(max(n, 1), np.int64)
    vals = np.empty(max(n, 1))
    top = 0
    used = 1
    node_child[0] = -1
    node_start[0] = 0
    node_count[0] = n
    if n == 0:
        node_box[0, 0] = np.inf
        node_box[0, 1] = np.inf
        node_box[0, 2] = -np.inf
        node_box[0, 3] = -np.inf
    else:
        stack[top] = 0
        top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        start = node_start[node]
        count = node_count[node]
        lox = np.inf
        loy = np.inf
        hix = -np.inf
        hiy = -np.inf
        clox = np.inf
        cloy = np.inf
        chix = -np.inf
        chiy = -np.inf
        for s in range(start, start + count):
            i = order[s]
            lox = min(lox, boxes[i, 0])
            loy = min(loy, boxes[i, 1])
            hix = max(hix, boxes[i, 2])
            hiy = max(hiy, boxes[i, 3])
            clox = min(clox, cx[i])
            cloy = min(cloy, cy[i])
            chix = max(chix, cx[i])
            chiy = max(chiy, cy[i])
        node_box[node, 0] = lox
        node_box[node, 1] = loy
        node_box[node, 2] = hix
        node_box[node, 3] = hiy
        if count <= leaf_size:
            continue
        use_x = chix - clox >= chiy - cloy
        for s in range(count):
            seg[s] = order[start + s]
            perm[s] = s
            vals[s] = cx[seg[s]] if use_x else cy[seg[s]]
        argsort_into(vals, perm, count, scratch)
        for s in range(count):
            order[start + s] = seg[perm[s]]
        half = count // 2
        left = used
        used += 2
        node_child[node] = left
        for c in range(2):
            node_child[left + c] = -1
        node_start[left] = start
        node_count[left] = half
        node_start[left + 1] = start + half
        node_count[left + 1] = count - half
        stack[top] = left
        stack[top + 1] = left + 1
        top += 2
    return Bvh(node_box, node_child, node_start, node_count, order, boxes)


@njit(cache=True)
def boxes_touch(a, i, b, j):
    """Closed-interval overlap of ``a[i]`` and ``b[j]`` (rows minx, miny, maxx, maxy)."""
    return a[i, 0] <= b[j, 2] and b[j, 0] <= a[i, 2] and a[i, 1] <= b[j, 3] and b[j, 1] <= a[i, 3]


@njit(cache=True)
def _query_into(tree, q, qi, out, n_out):
    """Append the items of ``tree`` overlapping ``q[qi]`` to ``out`` (grown as needed)."""
    stack = np.empty(_STACK, np.int64)
    top = 1
    stack[0] = 0
    while top > 0:
        top -= 1
        node = stack[top]
        if not boxes_touch(tree.node_box, node, q, qi):
            continue
        child = tree.node_child[node]
        if child >= 0:
            stack[top] = child
            stack[top + 1] = child + 1
            top += 2
            continue
        for s in range(tree.node_start[node], tree.node_start[node] + tree.node_count[node]):
            item = tree.order[s]
            if boxes_touch(tree.boxes, item, q, qi):
                if n_out == out.shape[0]:
                    out = grow_int(out, n_out)
                out[n_out] = item
                n_out += 1
    return out, n_out


@njit(cache=True, nogil=True)
def _query_batch(tree, q):
    m = q.shape[0]
    offsets = np.empty(m + 1, np.int64)
    offsets[0] = 0
    out = np.empty(16 + 4 * m, np.int64)
    n_out = np.int64(0)  # not a literal: keeps callees to one specialisation
    for qi in range(m):
        out, n_out = _query_into(tree, q, qi, out, n_out)
        offsets[qi + 1] = n_out
    return offsets, head_int(out, n_out)


def as_aabbs(aabbs, name="aabbs"):
    """Validate (N, 4) boxes ``minx, miny, maxx, maxy``; returns a float64 C array."""
    try:
        b = np.ascontiguousarray(aabbs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (N, 4)") from exc
    if b.ndim == 1 and b.shape == (4,):
        b = b.reshape(1, 4)
    if b.ndim != 2 or b.shape[1] != 4:
        raise ValueError(f"{name} must have shape (N, 4), got {b.shape}")
    if not np.isfinite(b).all():
        raise ValueError(f"{name} contains NaN or inf")
    bad = np.flatnonzero((b[:, 0] > b[:, 2]) | (b[:, 1] > b[:, 3]))
    if bad.size:
        raise ValueError(f"{name} row {int(bad[0])} has min > max")
    return b


class AabbIndex:
    """Static BVH over N axis-aligned boxes (rows ``minx, miny, maxx, maxy``)."""

    def __init__(self, aabbs, leaf_size=4):
        self.aabbs = as_aabbs(aabbs)
        if int(leaf_size) < 1:
            raise ValueError(f"leaf_size must be >= 1, got {leaf_size}")
        self.leaf_size = int(leaf_size)
        #: The tree's arrays (:class:`Bvh`), for kernels.
        self.tree = _build(self.aabbs, self.leaf_size)

    def __len__(self):
        return self.aabbs.shape[0]

    def query(self, aabb):
        """Indices (ascending int64) of the boxes overlapping or touching ``aabb`` (4,)."""
        q = as_aabbs(np.asarray(aabb, dtype=np.float64).reshape(-1), "aabb")
        if q.shape[0] != 1:
            raise ValueError("aabb must be a single box (minx, miny, maxx, maxy)")
        return np.sort(_query_batch(self.tree, q)[1])

    def query_batch(self, aabbs):
        """CSR candidate lists for many query boxes (M, 4): :class:`CandidateLists`,
        each list ascending."""
        q = as_aabbs(aabbs)
        offsets, indices = _query_batch(self.tree, q)
        rows = np.repeat(np.arange(q.shape[0]), np.diff(offsets))
        return CandidateLists(offsets, indices[np.lexsort((indices, rows))])

    def query_pairs(self, aabbs):
        """All overlapping pairs: :class:`QueryPairs` ``(query_index, item_index)``."""
        offsets, indices = self.query_batch(aabbs)
        query_index = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        return QueryPairs(query_index, indices)
