"""A static set of obstacle shapes with broadphase-accelerated queries.

:class:`ObstacleSet` keeps the obstacles as padded batch arrays (see :mod:`.batch`) plus an
:class:`.AabbIndex` over their bounding boxes, and answers, for a batch of query shapes
(footprints, segments for line of sight, ...):

* :meth:`ObstacleSet.nearest`: the nearest obstacle, its index, the distance and both
  witness points. Branch and bound over the BVH: a node is skipped when the distance
  between its box and the query's box already exceeds the best exact (GJK) distance found,
  so the answer is certain, not approximate. ``max_distance`` bounds the search: obstacles
  farther than that are ignored and a query with none in range gets index -1, distance
  ``inf`` and zero witness points. With ``signed=True`` overlapping obstacles are ranked by
  penetration depth (the deepest one wins, distance negative, witness points are the
  penetration contact points).
* :meth:`ObstacleSet.colliding`: every (query, obstacle) pair closer than ``margin``
  (touching included), with the distance; only broadphase candidates are tested exactly.

Ties (equal distances, e.g. several overlapping obstacles without ``signed``) go to the
lowest obstacle index, so results match a brute-force scan exactly.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from planning_collision.common.checks import finite_scalar
from planning_collision.common.work_sharing import share_rows, threads_for

from .batch import ShapeBatch, as_batch, pack_shapes, run_distance, run_penetration
from .broadphase import _STACK, AabbIndex
from .distance import core_distance, inflate

#: Fewest queries worth a thread of their own in :meth:`ObstacleSet.nearest` (about 50 us: a
#: footprint among thousands of obstacles takes 1-2 us); batches under twice as many run on
#: the calling thread.
QUERIES_PER_THREAD = 32


class NearestResult(NamedTuple):
    """Per query: obstacle index (-1 if none in range), distance, witness points."""

    index: np.ndarray
    distance: np.ndarray
    point_query: np.ndarray
    point_obstacle: np.ndarray


class NearestOne(NamedTuple):
    """Result of :meth:`ObstacleSet.nearest_shape`: obstacle index (-1 if none in range),
    distance, and the witness points (2,) on the query and on the obstacle."""

    index: int
    distance: float
    point_query: np.ndarray
    point_obstacle: np.ndarray


class CollidingPairs(NamedTuple):
    """Pairs closer than the margin, sorted by query then obstacle index."""

    query_index: np.ndarray
    obstacle_index: np.ndarray
    distance: np.ndarray


@njit(cache=True, nogil=True)
def shape_aabbs(points, counts, radii):
    """(N, 4) bounding boxes of padded shapes, radii included."""
    n = points.shape[0]
    out = np.empty((n, 4))
    for i in range(n):
        lox = np.inf
        loy = np.inf
        hix = -np.inf
        hiy = -np.inf
        for j in range(counts[i]):
            lox = min(lox, points[i, j, 0])
            loy = min(loy, points[i, j, 1])
            hix = max(hix, points[i, j, 0])
            hiy = max(hiy, points[i, j, 1])
        r = radii[i]
        out[i, 0] = lox - r
        out[i, 1] = loy - r
        out[i, 2] = hix + r
        out[i, 3] = hiy + r
    return out


@njit(cache=True)
def _box_gap(b, i, q, qi):
    """Distance between boxes ``b[i]`` and ``q[qi]`` (0 when they overlap): a lower bound
    on the distance of any shapes they bound."""
    gx = max(b[i, 0] - q[qi, 2], q[qi, 0] - b[i, 2], 0.0)
    gy = max(b[i, 1] - q[qi, 3], q[qi, 1] - b[i, 3], 0.0)
    return math.hypot(gx, gy)


@njit(cache=True, nogil=True)
def _nearest_rows(tree, obstacles, queries, qbox, limit, out, begin, end):
    """Nearest obstacle (within ``limit``) of queries ``begin <= i < end``: branch and bound
    over ``tree`` (:class:`.Bvh`) of ``obstacles`` (:class:`.ShapeBatch`); ``qbox`` holds
    the queries' bounding boxes. Writes into ``out`` (:class:`NearestResult`)."""
    op, oc, orad = obstacles
    qp, qc, qrad = queries
    node_box = tree.node_box
    stack = np.empty(_STACK, np.int64)
    bounds = np.empty(_STACK)
    root = np.int64(0)  # not a literal: keeps callees to one specialisation
    for i in range(begin, end):
        best = limit
        best_j = -1
        wqx = wqy = wox = woy = 0.0
        top = 0
        if tree.boxes.shape[0] > 0:
            top = 1
            stack[0] = root
            bounds[0] = _box_gap(node_box, root, qbox, i)
        while top > 0:
            top -= 1
            node = stack[top]
            if bounds[top] > best:
                continue
            child = tree.node_child[node]
            if child >= 0:
                lb0 = _box_gap(node_box, child, qbox, i)
                lb1 = _box_gap(node_box, child + 1, qbox, i)
                # push the farther child first so the nearer one is searched first
                near, far, lb_near, lb_far = child, child + 1, lb0, lb1
                if lb1 < lb0:
                    near, far, lb_near, lb_far = child + 1, child, lb1, lb0
                stack[top] = far
                bounds[top] = lb_far
                stack[top + 1] = near
                bounds[top + 1] = lb_near
                top += 2
                continue
            for s in range(tree.node_start[node], tree.node_start[node] + tree.node_count[node]):
                j = tree.order[s]
                if _box_gap(tree.boxes, j, qbox, i) > best:
                    continue
                r = inflate(core_distance(qp[i], qc[i], op[j], oc[j]), qrad[i], orad[j])
                if r.distance < best or (r.distance == best and (best_j < 0 or j < best_j)):
                    best = r.distance
                    best_j = j
                    wqx = r.ax
                    wqy = r.ay
                    wox = r.bx
                    woy = r.by
        if best_j >= 0:
            out.index[i] = best_j
            out.distance[i] = best
        else:
            out.index[i] = -1
            out.distance[i] = np.inf
            wqx = wqy = wox = woy = 0.0
        out.point_query[i, 0] = wqx
        out.point_query[i, 1] = wqy
        out.point_obstacle[i, 0] = wox
        out.point_obstacle[i, 1] = woy


def _first_per_group(groups, *keys):
    """Positions of the first row of each group after sorting by (groups, *keys)."""
    order = np.lexsort((*reversed(keys), groups))
    g = groups[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    return order[first]


class ObstacleSet:
    """Obstacles as padded arrays ``(points, counts, radii)`` with a BVH over them."""

    def __init__(self, points, counts, radii, leaf_size=4):
        #: The obstacles as a checked :class:`.ShapeBatch`.
        self.shapes = as_batch(points, counts, radii, "obstacles")
        self.points, self.counts, self.radii = self.shapes
        self.index = AabbIndex(shape_aabbs(self.points, self.counts, self.radii), leaf_size)

    @classmethod
    def from_shapes(cls, shapes, leaf_size=4):
        """Build from a sequence of :class:`.ConvexShape`."""
        shapes = list(shapes)
        if not shapes:
            return cls(np.zeros((0, 1, 2)), np.zeros(0, np.int64), np.zeros(0), leaf_size)
        return cls(*pack_shapes(shapes), leaf_size)

    def __len__(self):
        return self.points.shape[0]

    def nearest(self, points, counts, radii, max_distance=math.inf, signed=False,
                threads=None):
        """Nearest obstacle for each query shape (padded arrays); :class:`NearestResult`.

        ``threads``: None (the default) shares the queries among every core, an integer caps
        the threads; batches under twice :data:`QUERIES_PER_THREAD` queries stay on the
        calling thread. The answers are the same for any thread count.
        """
        queries = as_batch(points, counts, radii, "queries", threads=threads)
        unlimited = isinstance(max_distance, float) and max_distance == math.inf
        limit = math.inf if unlimited else finite_scalar(max_distance, "max_distance",
                                                         at_least=0.0)  # or inf
        m = queries.points.shape[0]
        out = NearestResult(np.empty(m, np.int64), np.empty(m), np.empty((m, 2)),
                            np.empty((m, 2)))
        qbox = shape_aabbs(*queries)
        tree = self.index.tree
        share_rows(lambda begin, end: _nearest_rows(tree, self.shapes, queries, qbox, limit, out,
                                                    begin, end),
                   m, threads_for(threads, m, QUERIES_PER_THREAD))
        if signed:
            self._deepest(queries, out, threads)
        return out

    def _deepest(self, queries, out, threads):
        """Among obstacles a query touches or overlaps, keep the deepest (in place)."""
        hit = np.flatnonzero(out.distance == 0.0)
        if hit.size == 0:
            return
        qp, qc, qr = queries
        pairs = self.colliding(qp[hit], qc[hit], qr[hit], 0.0, threads)
        q, o = hit[pairs.query_index], pairs.obstacle_index
        pen = run_penetration(ShapeBatch(qp[q], qc[q], qr[q]),
                              ShapeBatch(self.points[o], self.counts[o], self.radii[o]), threads)
        signed = 0.0 - pen.depth
        best = _first_per_group(q, signed, o)
        out.index[q[best]] = o[best]
        out.distance[q[best]] = signed[best]
        out.point_query[q[best]] = pen.point_a[best]
        out.point_obstacle[q[best]] = pen.point_b[best]

    def nearest_shape(self, shape, max_distance=math.inf, signed=False):
        """Nearest obstacle to one :class:`.ConvexShape`: :class:`NearestOne` ``(index,
        distance, point_query, point_obstacle)``."""
        r = self.nearest(*pack_shapes([shape]), max_distance=max_distance, signed=signed,
                         threads=1)
        return NearestOne(int(r.index[0]), float(r.distance[0]), r.point_query[0],
                          r.point_obstacle[0])

    def colliding(self, points, counts, radii, margin=0.0, threads=None):
        """All (query, obstacle) pairs with distance <= ``margin``: :class:`CollidingPairs`.

        Broadphase candidates (AABBs grown by ``margin``) go through one batch GJK call,
        shared among ``threads`` as in :func:`.gjk_distance_batch`.
        """
        qp, qc, qr = as_batch(points, counts, radii, "queries", threads=threads)
        m = finite_scalar(margin, "margin", at_least=0.0)
        boxes = shape_aabbs(qp, qc, qr)
        boxes[:, :2] -= m
        boxes[:, 2:] += m
        q, o = self.index.query_pairs(boxes)
        d = run_distance(ShapeBatch(qp[q], qc[q], qr[q]),
                         ShapeBatch(self.points[o], self.counts[o], self.radii[o]),
                         threads).distance
        keep = d <= m
        return CollidingPairs(q[keep], o[keep], d[keep])
