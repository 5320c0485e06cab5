"""Static polygon obstacles: the processed structure, its k-d tree and its queries.

RVO2's rules apply: an obstacle is a list of at least two vertices, counter-clockwise for a
solid polygon and clockwise for an enclosing boundary (agents inside); a two-vertex obstacle
is a thin wall.  Every vertex starts an edge to the next vertex; a vertex is *convex* when
the polygon turns left (or goes straight) there, and both vertices of a two-vertex obstacle
are convex.  Agents only see an edge from its right side (the outside of a CCW polygon)
or from exactly on its line (RVO2: strictly right only).

:func:`build_obstacles` turns the polygons into an :class:`ObstacleTree` of flat arrays (built
once per obstacle set, usable from numba kernels).  Its binary space partition follows
RVO2's ``buildObstacleTree``: each node splits on the edge that best balances the two sides,
and edges crossing the split line are cut in two (the cut adds a convex vertex).  RVO2 finds
that edge by trying every edge against every other, O(m^2) per node, which took minutes
for a 10,000-vertex polygon or a large map.  Nodes of up to ``EXACT_SPLIT_MAX`` (256) edges
still do so; larger nodes try ``SPLIT_SAMPLES`` evenly spaced candidates with RVO2's
criterion, so the build takes O(n log n) when those splits are balanced.  Where they
cannot be (a convex polygon, a room's walls: every edge has all the others on one side, so
any tree of them is a chain n deep), a node takes all its one-sided edges at once, found
from the convex hull of its vertices in O(m log m), instead of one per pass over its edges:
a convex 10,000-gon took 35 s (O(n^2)) and now takes milliseconds.  A polygon whose edges
split each other this badly without lying on a hull (a fine zigzag around a circle) still
costs O(n^2); the build releases the GIL, so a node's other threads keep running meanwhile.

What that changes, precisely: for sets of at most 256 edges nothing (the edge list, the cut
vertices and the order in which neighbours are found are RVO2's).  For larger sets the tree
is different, so edges are cut at other places: the edge list has other cut vertices (the
same polygons, cut into other pieces), and an agent's obstacle half-planes can differ from
RVO2's where a cut vertex lies within its range (RVO2 treats a cut vertex as a convex
corner).  The queries keep their contracts: :func:`find_obstacle_neighbors` returns every
edge of the set within range that faces the agent, nearest first, as a scan of all edges
does (equal distances may come in another order), and :func:`query_visibility` applies
RVO2's test to every edge that can block the segment.
"""

import functools
import math
from typing import NamedTuple

import numba
import numpy as np

from planning_collision.common.hull import convex_hull

from .constants import EPSILON, NONE
from .validation import MAX_MAGNITUDE, TINY, as_orca_points, as_position, as_scalar

#: Tree nodes with at most this many edges choose their split edge as RVO2 does, by trying
#: every edge (O(m^2)); so sets of up to this many edges get exactly RVO2's tree.
EXACT_SPLIT_MAX = 256
#: Larger nodes try this many evenly spaced candidate edges (O(m) per node).
SPLIT_SAMPLES = 16
#: A larger node whose best sampled split leaves at least (CHAIN_SPLIT - 1) / CHAIN_SPLIT of
#: its edges on one side takes all its one-sided edges at once (see :func:`_build_tree`).
CHAIN_SPLIT = 16


class ObstacleVertices(NamedTuple):
    """The edges of the polygons: vertex ``k`` starts the edge ``k -> next_vertex[k]``.

    ``points`` (V, 2), ``directions`` (V, 2) unit edge directions, ``next_vertex`` and
    ``prev_vertex`` (V,), ``convex`` (V,) bool, ``polygon`` (V,) index of the input polygon.
    """

    points: np.ndarray
    directions: np.ndarray
    next_vertex: np.ndarray
    prev_vertex: np.ndarray
    convex: np.ndarray
    polygon: np.ndarray


class BuiltTree(NamedTuple):
    """What :func:`_build_tree` returns: grown vertex arrays (the first ``vertex_count``
    used) and tree arrays (the first ``node_count`` used)."""

    vertices: ObstacleVertices
    vertex_count: int
    tree_vertex: np.ndarray
    tree_left: np.ndarray
    tree_right: np.ndarray
    node_count: int


class ObstacleTree(NamedTuple):
    """Processed obstacles: the edges and RVO2's tree over them (all arrays; vertex ``k``
    starts the edge ``k -> next_vertex[k]``).

    ``points`` (V, 2), ``directions`` (V, 2) unit edge directions, ``next_vertex`` and
    ``prev_vertex`` (V,), ``convex`` (V,) bool, ``polygon`` (V,) index of the input polygon;
    the vertices after ``num_input_vertices`` were added where the tree cut an edge.
    ``tree_vertex``, ``tree_left``, ``tree_right`` (T,) are the tree nodes (root 0, ``-1``
    for no child).
    """

    points: np.ndarray
    directions: np.ndarray
    next_vertex: np.ndarray
    prev_vertex: np.ndarray
    convex: np.ndarray
    polygon: np.ndarray
    tree_vertex: np.ndarray
    tree_left: np.ndarray
    tree_right: np.ndarray
    num_input_vertices: int

    @property
    def num_vertices(self) -> int:
        return int(self.points.shape[0])


@functools.cache
def empty_obstacles() -> ObstacleTree:
    """An obstacle set without obstacles (shared; the kernels never modify obstacles)."""
    return build_obstacles([])


def polygon_vertex_arrays(polygons):
    """Validate ``polygons`` and return the flat vertex arrays before the tree is built.

    Vectorised over all vertices (a map can hand over thousands of small polygons); the
    per-polygon loop only converts and checks shapes.
    """
    arrays = []
    for k, poly in enumerate(polygons):
        name = f"obstacle {k} vertices"
        try:
            verts = np.asarray(poly, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric with shape (K, 2): {exc}") from None
        if verts.ndim != 2 or verts.shape[1] != 2:
            raise ValueError(f"{name} must have shape (K, 2), got {verts.shape}")
        if verts.shape[0] < 2:
            raise ValueError(f"obstacle {k} has {verts.shape[0]} vertices; at least 2 needed")
        arrays.append(verts)
    counts = np.array([a.shape[0] for a in arrays], np.int64)
    points = np.concatenate(arrays) if arrays else np.empty((0, 2))
    n = points.shape[0]
    polygon = np.repeat(np.arange(len(arrays), dtype=np.int64), counts)
    first = np.zeros(len(arrays), np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    bad = ~np.all(np.isfinite(points) & (np.abs(points) <= MAX_MAGNITUDE), axis=1)
    if bad.any():  # as_orca_points raises with its message, naming the first such polygon
        k = int(polygon[np.flatnonzero(bad)[0]])
        as_orca_points(arrays[k], f"obstacle {k} vertices")
    points[np.abs(points) < TINY] = 0.0  # as as_orca_points does
    local = np.arange(n, dtype=np.int64) - first[polygon]
    nxt = first[polygon] + (local + 1) % counts[polygon]
    prv = first[polygon] + (local - 1) % counts[polygon]
    edge = points[nxt] - points
    length = np.hypot(edge[:, 0], edge[:, 1])
    if np.any(length == 0.0):
        k = int(polygon[np.flatnonzero(length == 0.0)[0]])
        raise ValueError(f"obstacle {k} has two consecutive equal vertices")
    directions = edge / length[:, None]
    before = points[prv]
    after = points[nxt]
    # leftOf(previous, vertex, next) >= 0: the boundary turns left (or not at all); both
    # vertices of a two-vertex wall are convex.
    turn = ((before[:, 0] - after[:, 0]) * (points[:, 1] - before[:, 1])
            - (before[:, 1] - after[:, 1]) * (points[:, 0] - before[:, 0]))
    convex = (turn >= 0.0) | (counts[polygon] == 2)
    return ObstacleVertices(np.ascontiguousarray(points), directions, nxt, prv, convex, polygon)


def build_obstacles(polygons) -> ObstacleTree:
    """Process a sequence of polygons (each (K, 2), K >= 2) into an :class:`ObstacleTree`."""
    vertices = polygon_vertex_arrays(polygons)
    built = _build_tree(vertices, EXACT_SPLIT_MAX, SPLIT_SAMPLES)
    v = built.vertex_count
    t = built.node_count
    return ObstacleTree(
        points=built.vertices.points[:v].copy(),
        directions=built.vertices.directions[:v].copy(),
        next_vertex=built.vertices.next_vertex[:v].copy(),
        prev_vertex=built.vertices.prev_vertex[:v].copy(),
        convex=built.vertices.convex[:v].copy(),
        polygon=built.vertices.polygon[:v].copy(),
        tree_vertex=built.tree_vertex[:t].copy(),
        tree_left=built.tree_left[:t].copy(),
        tree_right=built.tree_right[:t].copy(),
        num_input_vertices=vertices.points.shape[0],
    )


@numba.njit(cache=True, error_model="numpy")
def _left_of(ax, ay, bx, by, cx, cy):
    """Twice the signed area of (a, b, c): positive when c is left of the line a -> b."""
    return (ax - cx) * (by - ay) - (ay - cy) * (bx - ax)


@numba.njit(cache=True, error_model="numpy")
def _grow_points(a, capacity):
    out = np.empty((capacity, 2))
    for i in range(a.shape[0]):
        out[i, 0] = a[i, 0]
        out[i, 1] = a[i, 1]
    return out


@numba.njit(cache=True, error_model="numpy")
def _grow_ints(a, capacity):
    out = np.empty(capacity, np.int64)
    for i in range(capacity):
        out[i] = a[i] if i < a.shape[0] else NONE
    return out


@numba.njit(cache=True, error_model="numpy")
def _grow_flags(a, capacity):
    out = np.zeros(capacity, np.bool_)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


@numba.njit(cache=True, error_model="numpy")
def _hull_angles(hull):
    """Direction angles of the CCW hull's edges (edge k: hull[k] -> hull[k + 1]), made
    increasing from edge 0's (they turn through one full turn)."""
    h = hull.shape[0]
    angles = np.empty(h)
    for k in range(h):
        j = k + 1 if k + 1 < h else 0
        angles[k] = math.atan2(hull[j, 1] - hull[k, 1], hull[j, 0] - hull[k, 0])
        if k > 0:
            while angles[k] < angles[k - 1]:
                angles[k] += 2.0 * math.pi
    return angles


@numba.njit(cache=True, error_model="numpy")
def _support(hull, angles, theta):
    """Index of the hull vertex where the hull's edge direction passes ``theta``: the vertex
    farthest to the right of a line of direction ``theta`` (up to rounding of the angles:
    callers also look at its two neighbours)."""
    h = hull.shape[0]
    while theta < angles[0]:
        theta += 2.0 * math.pi
    while theta >= angles[0] + 2.0 * math.pi:
        theta -= 2.0 * math.pi
    lo = 0
    hi = h
    while lo < hi:  # first k with angles[k] >= theta
        mid = (lo + hi) // 2
        if angles[mid] < theta:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < h else 0


@numba.njit(cache=True, error_model="numpy")
def _extreme_side(hull, k, ax, ay, bx, by, lowest):
    """The lowest (or highest) _left_of(a, b, .) among hull vertices k - 1, k, k + 1."""
    h = hull.shape[0]
    best = _left_of(ax, ay, bx, by, hull[k, 0], hull[k, 1])
    for j in (k - 1 if k > 0 else h - 1, k + 1 if k + 1 < h else 0):
        s = _left_of(ax, ay, bx, by, hull[j, 0], hull[j, 1])
        best = min(best, s) if lowest else max(best, s)
    return best


@numba.njit(cache=True, error_model="numpy")
def _one_sided_edges(points, nxt, pool, start, size, sides):
    """Which edges of a node have every other edge of the node on one side of their line:
    ``sides[b]`` 0 (every one on the left, RVO2's test ``>= -EPSILON``), 1 (every one on the
    right) or -1 (neither), for the edge ``pool[start + b]``; returns how many are one-sided.

    O(size log size): every edge endpoint lies in the convex hull of the endpoints, so the
    lowest (highest) value of the affine side test over them is taken at the hull vertex
    that supports the edge's right (left) normal, found by its angle among the hull edges'.
    """
    ends = np.empty((2 * size, 2))
    for b in range(size):
        j1 = pool[start + b]
        j2 = nxt[j1]
        ends[2 * b, 0] = points[j1, 0]
        ends[2 * b, 1] = points[j1, 1]
        ends[2 * b + 1, 0] = points[j2, 0]
        ends[2 * b + 1, 1] = points[j2, 1]
    hull = convex_hull(ends)
    count = 0
    if hull.shape[0] < 2:
        for b in range(size):
            sides[b] = -1
        return 0
    angles = _hull_angles(hull)
    for b in range(size):
        j1 = pool[start + b]
        j2 = nxt[j1]
        ax = points[j1, 0]
        ay = points[j1, 1]
        bx = points[j2, 0]
        by = points[j2, 1]
        theta = math.atan2(by - ay, bx - ax)
        sides[b] = -1
        low = _extreme_side(hull, _support(hull, angles, theta), ax, ay, bx, by, True)
        if low >= -EPSILON:
            sides[b] = 0
        else:
            high = _extreme_side(hull, _support(hull, angles, theta + math.pi), ax, ay, bx,
                                 by, False)
            if high <= EPSILON:
                sides[b] = 1
        if sides[b] >= 0:
            count += 1
    return count


@numba.njit(cache=True, error_model="numpy")
def _add_node(tree_vertex, tree_left, tree_right, node, parent, side):
    """Makes room for tree node ``node`` (the arrays doubled when full) and links it below
    ``parent`` (its left child for side 0, its right one for 1; none for a root)."""
    if node == tree_vertex.shape[0]:
        cap = 2 * tree_vertex.shape[0]
        tree_vertex = _grow_ints(tree_vertex, cap)
        tree_left = _grow_ints(tree_left, cap)
        tree_right = _grow_ints(tree_right, cap)
    if parent != NONE:
        if side == 0:
            tree_left[parent] = node
        else:
            tree_right[parent] = node
    return tree_vertex, tree_left, tree_right


@numba.njit(cache=True, error_model="numpy")
def _stack_room(stack_start, stack_size, stack_parent, stack_side, entries):
    """The four stack arrays, doubled when they hold fewer than ``entries`` entries."""
    if entries > stack_start.shape[0]:
        cap = max(2 * stack_start.shape[0], entries)
        stack_start = _grow_ints(stack_start, cap)
        stack_size = _grow_ints(stack_size, cap)
        stack_parent = _grow_ints(stack_parent, cap)
        stack_side = _grow_ints(stack_side, cap)
    return stack_start, stack_size, stack_parent, stack_side


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _build_tree(vertices, exact_max, split_samples):
    """Binary space partition of the edges (RVO2's rules), cutting edges that straddle.

    ``vertices`` is an :class:`ObstacleVertices`; returns a :class:`BuiltTree` (the vertex
    arrays grow by the cut vertices).  The recursion of RVO2 is replaced by an explicit
    stack that visits the left subtree before the right one, so added vertices get the
    same numbering.  The edge lists live in one pool used as a stack (a node's children
    replace it), so it holds O(n) entries however deep the tree.

    A node of more than ``exact_max`` edges whose best sampled split leaves almost all of
    them on one side (a convex polygon, a room's walls: every edge has all others on one
    side, so any tree of them is a chain) takes every one-sided edge at once
    (:func:`_one_sided_edges`) as a chain of nodes, instead of one per sampling pass: that
    made a convex 10,000-gon take O(n^2), 35 s.  Releases the GIL.
    """
    n = vertices.points.shape[0]
    cap = max(n * 2, 4)
    points = _grow_points(vertices.points, cap)
    directions = _grow_points(vertices.directions, cap)
    nxt = _grow_ints(vertices.next_vertex, cap)
    prv = _grow_ints(vertices.prev_vertex, cap)
    convex = _grow_flags(vertices.convex, cap)
    polygon = _grow_ints(vertices.polygon, cap)
    n_vertices = n

    tree_vertex_init = np.empty(0, np.int64)
    tree_vertex = _grow_ints(tree_vertex_init, cap)
    tree_left = _grow_ints(tree_vertex_init, cap)
    tree_right = _grow_ints(tree_vertex_init, cap)
    n_nodes = 0

    # Pool of edge lists; the stack holds (start, length, parent node, 0 left / 1 right).
    # The lists of the stack's entries lie in the pool in stack order (a node's right child
    # below its left one), so the popped entry's list is the top one.
    pool = np.empty(max(4 * n, 4), np.int64)
    for k in range(n):
        pool[k] = k
    pool_len = n
    sides = np.empty(max(n, 1), np.int64)
    stack_start = np.zeros(max(2 * n + 2, 4), np.int64)
    stack_size = np.zeros(max(2 * n + 2, 4), np.int64)
    stack_parent = np.zeros(max(2 * n + 2, 4), np.int64)
    stack_side = np.zeros(max(2 * n + 2, 4), np.int64)
    stack_size[0] = n
    stack_parent[0] = NONE
    top = 1
    while top > 0:
        top -= 1
        start = stack_start[top]
        size = stack_size[top]
        parent = stack_parent[top]
        side = stack_side[top]
        if size == 0:
            continue
        pool_len = start + size  # what lay above it belonged to finished subtrees

        # Choose the edge whose line splits the others most evenly: minimise
        # (max(left, right), min(left, right)) lexicographically, first edge on ties.
        # RVO2 tries every edge (O(size^2)); above exact_max edges only split_samples
        # evenly spaced candidates are tried.
        best = 0
        best_left = size
        best_right = size
        candidates = size if size <= exact_max else split_samples
        for c in range(candidates):
            a = c if size <= exact_max else (c * size) // candidates
            i1 = pool[start + a]
            i2 = nxt[i1]
            ax = points[i1, 0]
            ay = points[i1, 1]
            bx = points[i2, 0]
            by = points[i2, 1]
            n_left = 0
            n_right = 0
            best_hi = max(best_left, best_right)
            best_lo = min(best_left, best_right)
            for b in range(size):
                if a == b:
                    continue
                j1 = pool[start + b]
                j2 = nxt[j1]
                s1 = _left_of(ax, ay, bx, by, points[j1, 0], points[j1, 1])
                s2 = _left_of(ax, ay, bx, by, points[j2, 0], points[j2, 1])
                if s1 >= -EPSILON and s2 >= -EPSILON:
                    n_left += 1
                elif s1 <= EPSILON and s2 <= EPSILON:
                    n_right += 1
                else:
                    n_left += 1
                    n_right += 1
                hi = max(n_left, n_right)
                lo = min(n_left, n_right)
                if hi > best_hi or (hi == best_hi and lo >= best_lo):
                    break  # counts only grow: this edge cannot beat the best one
            hi = max(n_left, n_right)
            lo = min(n_left, n_right)
            if hi < best_hi or (hi == best_hi and lo < best_lo):
                best_left = n_left
                best_right = n_right
                best = a

        peeled = 0
        if size > exact_max and CHAIN_SPLIT * max(best_left, best_right) >= \
                (CHAIN_SPLIT - 1) * size:
            peeled = _one_sided_edges(points, nxt, pool, start, size, sides)
        if peeled > 0:
            # A chain of the one-sided edges (in list order), each with the rest on its
            # one side; the other edges keep their order, moved down to ``start``.
            kept = 0
            for b in range(size):
                j1 = pool[start + b]
                if sides[b] < 0:
                    pool[start + kept] = j1
                    kept += 1
                    continue
                tree_vertex, tree_left, tree_right = _add_node(
                    tree_vertex, tree_left, tree_right, n_nodes, parent, side)
                node = n_nodes
                n_nodes += 1
                tree_vertex[node] = j1
                parent = node
                side = sides[b]
            pool_len = start + kept
            stack_start, stack_size, stack_parent, stack_side = _stack_room(
                stack_start, stack_size, stack_parent, stack_side, top + 1)
            stack_start[top] = start
            stack_size[top] = kept
            stack_parent[top] = parent
            stack_side[top] = side
            top += 1
            continue

        tree_vertex, tree_left, tree_right = _add_node(
            tree_vertex, tree_left, tree_right, n_nodes, parent, side)
        node = n_nodes
        n_nodes += 1

        # Partition the other edges, cutting those that cross the split line: the right
        # list, then the left one, written above the pool's top and then moved down over
        # this node's own list.
        need = pool_len + best_left + best_right
        if need > pool.shape[0]:
            pool = _grow_ints(pool, max(2 * pool.shape[0], need))
        right_start = pool_len
        left_start = pool_len + best_right
        n_left = 0
        n_right = 0
        i1 = pool[start + best]
        i2 = nxt[i1]
        ax = points[i1, 0]
        ay = points[i1, 1]
        bx = points[i2, 0]
        by = points[i2, 1]
        for b in range(size):
            if b == best:
                continue
            j1 = pool[start + b]
            j2 = nxt[j1]
            s1 = _left_of(ax, ay, bx, by, points[j1, 0], points[j1, 1])
            s2 = _left_of(ax, ay, bx, by, points[j2, 0], points[j2, 1])
            if s1 >= -EPSILON and s2 >= -EPSILON:
                pool[left_start + n_left] = j1
                n_left += 1
            elif s1 <= EPSILON and s2 <= EPSILON:
                pool[right_start + n_right] = j1
                n_right += 1
            else:
                ex = bx - ax
                ey = by - ay
                t = ((ex * (points[j1, 1] - ay) - ey * (points[j1, 0] - ax))
                     / (ex * (points[j1, 1] - points[j2, 1])
                        - ey * (points[j1, 0] - points[j2, 0])))
                if n_vertices == points.shape[0]:
                    cap = 2 * n_vertices
                    points = _grow_points(points, cap)
                    directions = _grow_points(directions, cap)
                    nxt = _grow_ints(nxt, cap)
                    prv = _grow_ints(prv, cap)
                    convex = _grow_flags(convex, cap)
                    polygon = _grow_ints(polygon, cap)
                k = n_vertices
                n_vertices += 1
                points[k, 0] = points[j1, 0] + t * (points[j2, 0] - points[j1, 0])
                points[k, 1] = points[j1, 1] + t * (points[j2, 1] - points[j1, 1])
                directions[k, 0] = directions[j1, 0]
                directions[k, 1] = directions[j1, 1]
                nxt[k] = j2
                prv[k] = j1
                convex[k] = True
                polygon[k] = polygon[j1]
                nxt[j1] = k
                prv[j2] = k
                if s1 > 0.0:
                    pool[left_start + n_left] = j1
                    pool[right_start + n_right] = k
                else:
                    pool[right_start + n_right] = j1
                    pool[left_start + n_left] = k
                n_left += 1
                n_right += 1
        tree_vertex[node] = i1
        moved = n_left + n_right
        for b in range(moved):  # down over this node's list (start <= pool_len)
            pool[start + b] = pool[right_start + b]
        right_start = start
        left_start = start + n_right
        pool_len = start + moved
        if sides.shape[0] < moved:
            sides = np.empty(2 * moved, np.int64)
        stack_start, stack_size, stack_parent, stack_side = _stack_room(
            stack_start, stack_size, stack_parent, stack_side, top + 2)
        stack_start[top] = right_start
        stack_size[top] = n_right
        stack_parent[top] = node
        stack_side[top] = 1
        stack_start[top + 1] = left_start
        stack_size[top + 1] = n_left
        stack_parent[top + 1] = node
        stack_side[top + 1] = 0
        top += 2
    return BuiltTree(ObstacleVertices(points, directions, nxt, prv, convex, polygon),
                     n_vertices, tree_vertex, tree_left, tree_right, n_nodes)


@numba.njit(cache=True, error_model="numpy")
def find_obstacle_neighbors(px, py, range_sq, points, nxt, tree_vertex, tree_left, tree_right,
                            out_vertex, out_dist_sq, stack_node, stack_side):
    """Edges within ``sqrt(range_sq)`` of ``(px, py)`` that face it, nearest first.

    ``points``, ``nxt`` and the ``tree_*`` arrays are fields of an :class:`ObstacleTree`
    (passed apart: per agent, taking arrays out of a named tuple would cost numba a
    reference count each).

    Writes edge indices and squared distances into ``out_vertex``/``out_dist_sq`` (capacity:
    number of vertices) and returns their count.  Equal distances keep the order in which
    RVO2's tree walk meets them (near side, then the node, then the far side).
    ``stack_node``/``stack_side`` are scratch arrays of at least ``2 * len(tree) + 2``.
    """
    count = 0
    if tree_vertex.shape[0] == 0:
        return 0
    # An entry with stack_side == NaN is "visit this subtree"; otherwise it is "after the
    # near subtree of this node": stack_side holds the agent's signed side of the node.
    stack_node[0] = 0
    stack_side[0] = np.nan
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        side = stack_side[top]
        if np.isnan(side):
            if node == NONE:
                continue
            v1 = tree_vertex[node]
            v2 = nxt[v1]
            side = _left_of(points[v1, 0], points[v1, 1], points[v2, 0], points[v2, 1], px, py)
            stack_node[top] = node
            stack_side[top] = side
            stack_node[top + 1] = tree_left[node] if side >= 0.0 else tree_right[node]
            stack_side[top + 1] = np.nan
            top += 2
            continue
        v1 = tree_vertex[node]
        v2 = nxt[v1]
        ex = points[v2, 0] - points[v1, 0]
        ey = points[v2, 1] - points[v1, 1]
        len_sq = ex * ex + ey * ey
        if side * side / len_sq < range_sq:
            if side <= 0.0:
                # The agent is on the right (outer) side of the edge: consider it.  RVO2
                # requires side < 0, which leaves an agent whose centre lies exactly on
                # the edge's line (overlapping it) blind to the edge.
                r = ((px - points[v1, 0]) * ex + (py - points[v1, 1]) * ey) / len_sq
                if r < 0.0:
                    dx = px - points[v1, 0]
                    dy = py - points[v1, 1]
                elif r > 1.0:
                    dx = px - points[v2, 0]
                    dy = py - points[v2, 1]
                else:
                    dx = px - (points[v1, 0] + r * ex)
                    dy = py - (points[v1, 1] + r * ey)
                dist_sq = dx * dx + dy * dy
                if dist_sq < range_sq:
                    k = count
                    count += 1
                    while k > 0 and dist_sq < out_dist_sq[k - 1]:
                        out_vertex[k] = out_vertex[k - 1]
                        out_dist_sq[k] = out_dist_sq[k - 1]
                        k -= 1
                    out_vertex[k] = v1
                    out_dist_sq[k] = dist_sq
            stack_node[top] = tree_right[node] if side >= 0.0 else tree_left[node]
            stack_side[top] = np.nan
            top += 1
    return count


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _visible(ax, ay, bx, by, radius, obstacles):
    points = obstacles.points
    nxt = obstacles.next_vertex
    tree_vertex = obstacles.tree_vertex
    tree_left = obstacles.tree_left
    tree_right = obstacles.tree_right
    if tree_vertex.shape[0] == 0:
        return True
    stack = np.empty(2 * tree_vertex.shape[0] + 2, np.int64)
    stack[0] = 0
    top = 1
    r_sq = radius * radius
    while top > 0:
        top -= 1
        node = stack[top]
        if node == NONE:
            continue
        v1 = tree_vertex[node]
        v2 = nxt[v1]
        x1 = points[v1, 0]
        y1 = points[v1, 1]
        x2 = points[v2, 0]
        y2 = points[v2, 1]
        q1 = _left_of(x1, y1, x2, y2, ax, ay)
        q2 = _left_of(x1, y1, x2, y2, bx, by)
        inv_len = 1.0 / ((x2 - x1) ** 2 + (y2 - y1) ** 2)
        clear = q1 * q1 * inv_len >= r_sq and q2 * q2 * inv_len >= r_sq
        if q1 >= 0.0 and q2 >= 0.0:
            stack[top] = tree_left[node]
            top += 1
            if not clear:
                stack[top] = tree_right[node]
                top += 1
        elif q1 <= 0.0 and q2 <= 0.0:
            stack[top] = tree_right[node]
            top += 1
            if not clear:
                stack[top] = tree_left[node]
                top += 1
        elif q1 >= 0.0 and q2 <= 0.0:
            # Crossing from the left (inner) side to the right: edges are one-sided.
            stack[top] = tree_left[node]
            stack[top + 1] = tree_right[node]
            top += 2
        else:
            p1 = _left_of(ax, ay, bx, by, x1, y1)
            p2 = _left_of(ax, ay, bx, by, x2, y2)
            inv_q = 1.0 / ((bx - ax) ** 2 + (by - ay) ** 2)
            if not (p1 * p2 >= 0.0 and p1 * p1 * inv_q > r_sq and p2 * p2 * inv_q > r_sq):
                return False
            stack[top] = tree_left[node]
            stack[top + 1] = tree_right[node]
            top += 2
    return True


def query_visibility(obstacles: ObstacleTree, point1, point2, radius: float = 0.0) -> bool:
    """Whether a disc of ``radius`` can move from ``point1`` to ``point2`` (RVO2 semantics)."""
    a = as_position(point1, "point1")
    b = as_position(point2, "point2")
    radius = as_scalar(radius, "visibility radius")
    return bool(_visible(a[0], a[1], b[0], b[1], radius, obstacles))
