"""Exact convex decomposition of a simple polygon in O(n log n) (sweeps + Hertel-Mehlhorn).

``decompose(vertices)`` splits a simple polygon (convex or not, either winding, no holes)
into convex pieces whose union is exactly the polygon and whose interiors are disjoint, so
an L-shaped wall stays an L (two pieces), never its hull.

1. Clean-up: repeated consecutive vertices and vertices exactly on the line through their
   neighbours are removed (they do not change the region).
2. Validation (``ValueError``): fewer than 3 vertices left, zero area, a spike (an edge
   folding back on the previous one) or any two non-adjacent edges that intersect or touch
   (a self-intersecting or self-touching boundary), found by a Shamos-Hoey sweep over the
   edges (O(n log n); the sweep's ordered set is a treap).
3. Triangulation in O(n log n): a sweep splits the polygon into y-monotone pieces by
   diagonals (de Berg et al., *Computational Geometry*, ch. 3; vertices ordered by
   (y, -x), so equal heights need no special case), and each piece is triangulated in
   linear time with the reflex-chain stack.  Every triangle is then checked to be
   counter-clockwise or flat -- with an exact test where float64 cannot decide -- which
   proves that the triangles tile the polygon exactly (the winding numbers of
   non-negatively oriented triangles of a triangulated cycle add up to the polygon's).
4. Hertel-Mehlhorn removes every diagonal whose two sides merge into a convex polygon
   (angles of exactly 180 degrees count as convex), in one pass over a half-edge
   structure (O(n)). The result has at most four times the minimum number of convex
   pieces, and one piece if the input is convex.

Orientation tests are float64 cross products of coordinate differences, as in the rest of
the geometry package; a polygon too close to degenerate for them to give a valid
triangulation raises ``ValueError`` (the exact check of step 3 catches it).
"""

from fractions import Fraction

import numpy as np
from numba import njit

from planning_collision.common.hull import convex_hull
from planning_collision.common.predicates import orient, segments_meet

from .shapes import ConvexShape, as_points

_NONE = -1


@njit(cache=True, nogil=True)
def _turn(p, a, b, c):
    return orient(p[a, 0], p[a, 1], p[b, 0], p[b, 1], p[c, 0], p[c, 1])


@njit(cache=True, nogil=True)
def _segments_meet(p, i, j):
    """True if edges i (p[i]-p[i+1]) and j (p[j]-p[j+1]) intersect or touch."""
    n = p.shape[0]
    i2 = (i + 1) % n
    j2 = (j + 1) % n
    return segments_meet(p[i, 0], p[i, 1], p[i2, 0], p[i2, 1],
                         p[j, 0], p[j, 1], p[j2, 0], p[j2, 1])


# --------------------------------------------------------------------------------- treap
# An ordered set of edge ids for the sweeps: a binary search tree whose shape is that of a
# heap on random priorities (expected depth O(log n) whatever the insertion order).  The
# sweeps descend it with their own comparison and attach the new node as a leaf; removal
# and neighbour queries go by node alone, without comparisons.


@njit(cache=True, nogil=True)
def _priorities(n):
    out = np.empty(n, np.uint64)
    state = np.uint64(0x9E3779B97F4A7C15)
    for i in range(n):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        out[i] = state
    return out


@njit(cache=True, nogil=True)
def _rotate_up(x, left, right, parent, root):
    """Rotate node ``x`` above its parent; returns the (possibly new) root."""
    p = parent[x]
    g = parent[p]
    if left[p] == x:
        b = right[x]
        left[p] = b
        right[x] = p
    else:
        b = left[x]
        right[p] = b
        left[x] = p
    if b != _NONE:
        parent[b] = p
    parent[p] = x
    parent[x] = g
    if g == _NONE:
        return x
    if left[g] == p:
        left[g] = x
    else:
        right[g] = x
    return root


@njit(cache=True, nogil=True)
def _attach(x, at, as_left, left, right, parent, prio, root):
    """Attach ``x`` as a leaf below ``at`` (-1: empty tree), restore the heap order."""
    left[x] = _NONE
    right[x] = _NONE
    parent[x] = at
    if at == _NONE:
        return x
    if as_left:
        left[at] = x
    else:
        right[at] = x
    while parent[x] != _NONE and prio[x] > prio[parent[x]]:
        root = _rotate_up(x, left, right, parent, root)
    return root


@njit(cache=True, nogil=True)
def _detach(x, left, right, parent, prio, root):
    """Remove node ``x`` (rotated down to a leaf first); returns the new root."""
    while left[x] != _NONE or right[x] != _NONE:
        if left[x] == _NONE:
            c = right[x]
        elif right[x] == _NONE:
            c = left[x]
        elif prio[left[x]] > prio[right[x]]:
            c = left[x]
        else:
            c = right[x]
        root = _rotate_up(c, left, right, parent, root)
    p = parent[x]
    parent[x] = _NONE
    if p == _NONE:
        return _NONE
    if left[p] == x:
        left[p] = _NONE
    else:
        right[p] = _NONE
    return root


@njit(cache=True, nogil=True)
def _before(x, left, right, parent):
    """In-order predecessor of node ``x`` (-1 if none)."""
    if left[x] != _NONE:
        y = left[x]
        while right[y] != _NONE:
            y = right[y]
        return y
    y = x
    while parent[y] != _NONE and left[parent[y]] == y:
        y = parent[y]
    return parent[y]


@njit(cache=True, nogil=True)
def _after(x, left, right, parent):
    """In-order successor of node ``x`` (-1 if none)."""
    if right[x] != _NONE:
        y = right[x]
        while left[y] != _NONE:
            y = left[y]
        return y
    y = x
    while parent[y] != _NONE and right[parent[y]] == y:
        y = parent[y]
    return parent[y]


# ------------------------------------------------------------------ self-intersection sweep
@njit(cache=True, nogil=True)
def _adjacent(i, j, n):
    d = abs(i - j)
    return d == 1 or d == n - 1


@njit(cache=True, nogil=True)
def _meet_if_apart(p, i, j):
    """Non-adjacent edges ``i`` and ``j`` (either may be -1) that intersect or touch."""
    if i == _NONE or j == _NONE or _adjacent(i, j, p.shape[0]):
        return False
    return _segments_meet(p, i, j)


@njit(cache=True, nogil=True)
def _first_crossing(p, lo, hi, events):
    """A pair of non-adjacent edges that meet, or (-1, -1) for a simple polygon.

    Shamos-Hoey: edge ``i`` runs from ``lo[i]`` to ``hi[i]`` (its lexicographically smaller
    and larger end); ``events`` (2n, 2) are (edge, 0 insert / 1 remove) sorted by the event
    point (x, then y), insertions first.  The ordered set holds the edges crossing the sweep
    line from bottom to top; every edge is tested against its neighbours when it enters,
    and its two neighbours against each other when it leaves.  The leftmost meeting point
    of two edges is always reached with two meeting edges adjacent in the set.
    """
    n = p.shape[0]
    left = np.full(n, _NONE, np.int64)
    right = np.full(n, _NONE, np.int64)
    parent = np.full(n, _NONE, np.int64)
    prio = _priorities(n)
    root = _NONE
    for k in range(events.shape[0]):
        e = events[k, 0]
        if events[k, 1] == 1:
            below = _before(e, left, right, parent)
            above = _after(e, left, right, parent)
            root = _detach(e, left, right, parent, prio, root)
            if _meet_if_apart(p, below, above):
                return min(below, above), max(below, above)
            continue
        # Insert e, ordered at its lower end q against each edge s on the way down.
        qx = p[lo[e], 0]
        qy = p[lo[e], 1]
        rx = p[hi[e], 0]
        ry = p[hi[e], 1]
        s = root
        at = _NONE
        go_left = False
        while s != _NONE:
            ax = p[lo[s], 0]
            ay = p[lo[s], 1]
            bx = p[hi[s], 0]
            by = p[hi[s], 1]
            o = orient(ax, ay, bx, by, qx, qy)
            if o == 0.0:
                o = orient(ax, ay, bx, by, rx, ry)
            if o == 0.0:
                o = float(e - s)  # collinear: any consistent order (they meet)
            at = s
            go_left = o < 0.0
            s = left[s] if go_left else right[s]
        root = _attach(e, at, go_left, left, right, parent, prio, root)
        below = _before(e, left, right, parent)
        if _meet_if_apart(p, e, below):
            return min(e, below), max(e, below)
        above = _after(e, left, right, parent)
        if _meet_if_apart(p, e, above):
            return min(e, above), max(e, above)
    return -1, -1


# ------------------------------------------------------------------ monotone partition
@njit(cache=True, nogil=True)
def _higher(p, a, b):
    """Sweep order (top to bottom): ``a`` before ``b`` (larger y, then smaller x)."""
    return p[a, 1] > p[b, 1] or (p[a, 1] == p[b, 1] and p[a, 0] < p[b, 0])


@njit(cache=True, nogil=True)
def _edge_left_of(p, root, left, right, v):
    """The edge of the sweep's set directly left of vertex ``v`` (-1 if none).

    The set holds downward edges ``s -> s + 1``; ``s`` is left of ``v`` when ``v`` lies on
    its +x side: orient(s, s + 1, v) > 0.
    """
    n = p.shape[0]
    best = _NONE
    s = root
    while s != _NONE:
        if _turn(p, s, (s + 1) % n, v) > 0.0:
            best = s
            s = right[s]
        else:
            s = left[s]
    return best


@njit(cache=True, nogil=True)
def _insert_edge(p, root, left, right, parent, prio, e):
    """Insert downward edge ``e`` (from vertex ``e``, the sweep's current vertex)."""
    n = p.shape[0]
    s = root
    at = _NONE
    go_left = False
    while s != _NONE:
        at = s
        go_left = _turn(p, s, (s + 1) % n, e) < 0.0  # e's top lies left of s
        s = left[s] if go_left else right[s]
    return _attach(e, at, go_left, left, right, parent, prio, root)


@njit(cache=True, nogil=True)
def _monotone_diagonals(p, order):
    """Diagonals splitting the CCW polygon ``p`` into y-monotone pieces: (m, 2).

    ``order`` is the vertices in sweep order (see :func:`_higher`).  Returns the diagonals
    and True, or no diagonals and False if an edge that must exist left of a vertex is
    missing (float64 rounding on an almost degenerate polygon).
    """
    n = p.shape[0]
    left = np.full(n, _NONE, np.int64)
    right = np.full(n, _NONE, np.int64)
    parent = np.full(n, _NONE, np.int64)
    prio = _priorities(n)
    helper = np.full(n, _NONE, np.int64)
    merge = np.zeros(n, np.bool_)
    diagonals = np.empty((n, 2), np.int64)
    m = 0
    root = _NONE
    for k in range(n):
        v = order[k]
        u = (v - 1) % n
        w = (v + 1) % n
        u_below = _higher(p, v, u)
        w_below = _higher(p, v, w)
        reflex = _turn(p, u, v, w) < 0.0
        if u_below and w_below:
            if reflex:  # split vertex: connect to the helper of the edge to its left
                ej = _edge_left_of(p, root, left, right, v)
                if ej == _NONE:
                    return diagonals[:0], False
                diagonals[m, 0] = v
                diagonals[m, 1] = helper[ej]
                m += 1
                helper[ej] = v
            root = _insert_edge(p, root, left, right, parent, prio, v)  # start or split
            helper[v] = v
            continue
        if u_below or w_below:
            if not u_below:  # regular vertex, interior to its right (boundary goes down)
                if merge[helper[u]]:
                    diagonals[m, 0] = v
                    diagonals[m, 1] = helper[u]
                    m += 1
                root = _detach(u, left, right, parent, prio, root)
                root = _insert_edge(p, root, left, right, parent, prio, v)
                helper[v] = v
                continue
            ej = _edge_left_of(p, root, left, right, v)  # regular, interior to its left
            if ej == _NONE:
                return diagonals[:0], False
            if merge[helper[ej]]:
                diagonals[m, 0] = v
                diagonals[m, 1] = helper[ej]
                m += 1
            helper[ej] = v
            continue
        # End vertex (convex) or merge vertex (reflex): both neighbours above.
        if merge[helper[u]]:
            diagonals[m, 0] = v
            diagonals[m, 1] = helper[u]
            m += 1
        root = _detach(u, left, right, parent, prio, root)
        if reflex:
            merge[v] = True
            ej = _edge_left_of(p, root, left, right, v)
            if ej == _NONE:
                return diagonals[:0], False
            if merge[helper[ej]]:
                diagonals[m, 0] = v
                diagonals[m, 1] = helper[ej]
                m += 1
            helper[ej] = v
    return diagonals[:m], True


@njit(cache=True, nogil=True)
def _angle_before(p, w, a, b):
    """Around vertex ``w``: direction to ``a`` comes before direction to ``b`` (CCW from +x)."""
    ax = p[a, 0] - p[w, 0]
    ay = p[a, 1] - p[w, 1]
    bx = p[b, 0] - p[w, 0]
    by = p[b, 1] - p[w, 1]
    ha = 0 if (ay > 0.0 or (ay == 0.0 and ax > 0.0)) else 1
    hb = 0 if (by > 0.0 or (by == 0.0 and bx > 0.0)) else 1
    if ha != hb:
        return ha < hb
    return ax * by - ay * bx > 0.0


@njit(cache=True, nogil=True)
def _monotone_pieces(p, diagonals):
    """Faces of the polygon cut by ``diagonals``: (piece offsets, vertex cycles), CCW."""
    n = p.shape[0]
    m = diagonals.shape[0]
    degree = np.full(n, 2, np.int64)
    for k in range(m):
        degree[diagonals[k, 0]] += 1
        degree[diagonals[k, 1]] += 1
    start = np.zeros(n + 1, np.int64)
    for v in range(n):
        start[v + 1] = start[v] + degree[v]
    nb = np.empty(start[n], np.int64)
    fill = start[:n].copy()
    for v in range(n):
        nb[fill[v]] = (v + 1) % n
        nb[fill[v] + 1] = (v - 1) % n
        fill[v] += 2
    for k in range(m):
        a = diagonals[k, 0]
        b = diagonals[k, 1]
        nb[fill[a]] = b
        fill[a] += 1
        nb[fill[b]] = a
        fill[b] += 1
    for v in range(n):  # sort each vertex's neighbours counter-clockwise (few per vertex)
        for i in range(start[v] + 1, start[v + 1]):
            x = nb[i]
            j = i - 1
            while j >= start[v] and _angle_before(p, v, x, nb[j]):
                nb[j + 1] = nb[j]
                j -= 1
            nb[j + 1] = x
    # A half-edge is a slot (v, k): v -> nb[k].  Interior faces lie to its left; the
    # boundary half-edge v -> v - 1 has the outside there.
    used = np.zeros(start[n], np.bool_)
    for v in range(n):
        for k in range(start[v], start[v + 1]):
            if nb[k] == (v - 1) % n:
                used[k] = True
    offsets = np.zeros(m + 2, np.int64)
    cycles = np.empty(n + 2 * m, np.int64)
    count = 0
    total = 0
    for v0 in range(n):
        for k0 in range(start[v0], start[v0 + 1]):
            if used[k0]:
                continue
            v = v0
            k = k0
            while not used[k]:
                used[k] = True
                cycles[total] = v
                total += 1
                w = nb[k]
                # At w, the next half-edge is the neighbour just clockwise of v.
                j = start[w]
                while nb[j] != v:
                    j += 1
                j = j - 1 if j > start[w] else start[w + 1] - 1
                v = w
                k = j
            count += 1
            offsets[count] = total
    return offsets[:count + 1], cycles[:total]


@njit(cache=True, nogil=True)
def _triangulate_monotone(p, cycle, tris, t):
    """Triangulate one y-monotone CCW ``cycle`` into ``tris[t:]``; returns the new count.

    Triangles are written counter-clockwise as the combinatorics of the chains dictate (not
    by testing their sign), so that the caller's orientation check can certify them.
    """
    k = cycle.shape[0]
    if k == 3:
        tris[t, 0] = cycle[0]
        tris[t, 1] = cycle[1]
        tris[t, 2] = cycle[2]
        return t + 1
    top = 0
    bottom = 0
    for i in range(1, k):
        if _higher(p, cycle[i], cycle[top]):
            top = i
        if _higher(p, cycle[bottom], cycle[i]):
            bottom = i
    # Merge the left chain (forward from the top) and the right chain (backward).
    u = np.empty(k, np.int64)
    side = np.empty(k, np.int64)  # 0 left chain, 1 right chain
    u[0] = cycle[top]
    side[0] = 0
    a = (top + 1) % k
    b = (top - 1) % k
    for i in range(1, k):
        take_left = a != bottom and (b == bottom or _higher(p, cycle[a], cycle[b]))
        if i == k - 1:
            u[i] = cycle[bottom]
            side[i] = 2
        elif take_left:
            u[i] = cycle[a]
            side[i] = 0
            a = (a + 1) % k
        else:
            u[i] = cycle[b]
            side[i] = 1
            b = (b - 1) % k
    stack = np.empty(k, np.int64)  # indices into u
    stack[0] = 0
    stack[1] = 1
    top_s = 2
    for j in range(2, k - 1):
        if side[j] != side[stack[top_s - 1]]:
            # Opposite chains: u[j] sees the whole reflex chain on the stack.
            while top_s > 1:
                lo = u[stack[top_s - 1]]
                hi = u[stack[top_s - 2]]
                top_s -= 1
                tris[t, 0] = u[j]
                if side[j] == 0:  # u[j] left, the chain right: (u, lower, upper)
                    tris[t, 1] = lo
                    tris[t, 2] = hi
                else:
                    tris[t, 1] = hi
                    tris[t, 2] = lo
                t += 1
            stack[0] = j - 1
            stack[1] = j
            top_s = 2
            continue
        # Same chain: cut off the triangles that lie inside, as long as they do.
        top_s -= 1
        last = stack[top_s]
        while top_s > 0:
            hi = u[stack[top_s - 1]]
            lo = u[last]
            if side[j] == 0:
                inside = _turn(p, hi, lo, u[j]) > 0.0
            else:
                inside = _turn(p, u[j], lo, hi) > 0.0
            if not inside:
                break
            if side[j] == 0:
                tris[t, 0] = hi
                tris[t, 1] = lo
                tris[t, 2] = u[j]
            else:
                tris[t, 0] = u[j]
                tris[t, 1] = lo
                tris[t, 2] = hi
            t += 1
            top_s -= 1
            last = stack[top_s]
        stack[top_s] = last
        stack[top_s + 1] = j
        top_s += 2
    # The bottom vertex sees the rest of the stack.
    j = k - 1
    chain = side[stack[top_s - 1]]
    while top_s > 1:
        lo = u[stack[top_s - 1]]
        hi = u[stack[top_s - 2]]
        top_s -= 1
        tris[t, 0] = u[j]
        if chain == 1:  # the chain is on the right: the bottom acts as a left vertex
            tris[t, 1] = lo
            tris[t, 2] = hi
        else:
            tris[t, 1] = hi
            tris[t, 2] = lo
        t += 1
    return t


@njit(cache=True, nogil=True)
def _triangulate(p, order):
    """(n - 2, 3) CCW triangles of the simple CCW polygon ``p``; ok flag."""
    n = p.shape[0]
    tris = np.empty((n - 2, 3), np.int64)
    diagonals, ok = _monotone_diagonals(p, order)
    if not ok:
        return tris[:0], False
    offsets, cycles = _monotone_pieces(p, diagonals)
    t = 0
    for f in range(offsets.shape[0] - 1):
        size = offsets[f + 1] - offsets[f]
        if size < 3 or t + size - 2 > n - 2:
            return tris[:0], False
        t = _triangulate_monotone(p, cycles[offsets[f]:offsets[f + 1]], tris, t)
    if t != n - 2:
        return tris[:0], False
    return tris, True


@njit(cache=True, nogil=True)
def _uncertain_orientations(p, tris):
    """Triangles whose orientation float64 cannot certify as >= 0: ``(indices, ok)``.

    ``ok`` is False (with the culprit's index) as soon as one is certainly clockwise;
    otherwise the indices are those needing an exact test.

    Shewchuk's error bound for orient2d: the float result's sign is exact when its
    magnitude exceeds (3 + 16 eps) eps (|l| + |r|).
    """
    bound = (3.0 + 16.0 * 2.220446049250313e-16) * 2.220446049250313e-16
    out = np.empty(tris.shape[0], np.int64)
    m = 0
    for t in range(tris.shape[0]):
        a = tris[t, 0]
        b = tris[t, 1]
        c = tris[t, 2]
        left = (p[a, 0] - p[c, 0]) * (p[b, 1] - p[c, 1])
        right = (p[a, 1] - p[c, 1]) * (p[b, 0] - p[c, 0])
        det = left - right
        err = bound * (abs(left) + abs(right))
        if det >= err:
            continue
        if det < -err:
            out[0] = t
            return out[:1], False
        out[m] = t
        m += 1
    return out[:m], True


def _certify(pts, tris):
    """True if every triangle is counter-clockwise or flat, exactly."""
    uncertain, ok = _uncertain_orientations(pts, tris)
    if not ok:
        return False
    for t in uncertain:
        (ax, ay), (bx, by), (cx, cy) = (
            (Fraction(x), Fraction(y)) for x, y in pts[tris[t]].tolist()
        )
        if (ax - cx) * (by - cy) - (ay - cy) * (bx - cx) < 0:
            return False
    return True


# ------------------------------------------------------------------ Hertel-Mehlhorn
@njit(cache=True, nogil=True)
def _merge_convex(p, tris):
    """Hertel-Mehlhorn on the triangles: (piece offsets, CCW vertex cycles).

    Half-edge ``3t + k`` runs from ``tris[t, k]`` to ``tris[t, (k + 1) % 3]``.  Each
    diagonal (a half-edge with a twin) is removed, in index order, when the angles at both
    its ends stay convex in the merged face.
    """
    n = p.shape[0]
    h = 3 * tris.shape[0]
    origin = np.empty(h, np.int64)
    nxt = np.empty(h, np.int64)
    prv = np.empty(h, np.int64)
    keys = np.empty(h, np.int64)
    for t in range(tris.shape[0]):
        for k in range(3):
            e = 3 * t + k
            origin[e] = tris[t, k]
            nxt[e] = 3 * t + (k + 1) % 3
            prv[e] = 3 * t + (k + 2) % 3
    for e in range(h):
        keys[e] = origin[e] * n + origin[nxt[e]]
    by_key = np.argsort(keys)
    sorted_keys = keys[by_key]
    twin = np.full(h, _NONE, np.int64)
    for e in range(h):
        want = origin[nxt[e]] * n + origin[e]
        i = np.searchsorted(sorted_keys, want)
        if i < h and sorted_keys[i] == want:
            twin[e] = by_key[i]
    alive = np.ones(h, np.bool_)
    for e in range(h):
        f = twin[e]
        if f == _NONE or f < e:
            continue
        # e: u -> v in face P, f: v -> u in face Q.  Merged, u is entered along prv[e]
        # and left along nxt[f]; v is entered along prv[f] and left along nxt[e].
        u = origin[e]
        v = origin[f]
        if _turn(p, origin[prv[e]], u, origin[nxt[nxt[f]]]) < 0.0:
            continue
        if _turn(p, origin[prv[f]], v, origin[nxt[nxt[e]]]) < 0.0:
            continue
        a = prv[e]
        b = nxt[e]
        c = prv[f]
        d = nxt[f]
        nxt[a] = d
        prv[d] = a
        nxt[c] = b
        prv[b] = c
        alive[e] = False
        alive[f] = False
    offsets = np.zeros(tris.shape[0] + 1, np.int64)
    cycles = np.empty(h, np.int64)
    seen = ~alive
    count = 0
    total = 0
    for e0 in range(h):
        if seen[e0]:
            continue
        e = e0
        while not seen[e]:
            seen[e] = True
            cycles[total] = origin[e]
            total += 1
            e = nxt[e]
        count += 1
        offsets[count] = total
    return offsets[:count + 1], cycles[:total]


# ------------------------------------------------------------------ clean-up, entry point
def _clean(pts):
    """Drop repeated and exactly collinear vertices; raise on spikes."""
    while True:
        n = pts.shape[0]
        if n < 3:
            return pts
        nxt = np.roll(pts, -1, axis=0)
        same = np.all(pts == nxt, axis=1)
        if same.any():
            pts = pts[~same]
            continue
        prv = np.roll(pts, 1, axis=0)
        e_in = pts - prv
        e_out = nxt - pts
        cross = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
        dot = e_in[:, 0] * e_out[:, 0] + e_in[:, 1] * e_out[:, 1]
        flat = cross == 0.0
        if not flat.any():
            return pts
        if (flat & (dot < 0.0)).any():
            k = int(np.flatnonzero(flat & (dot < 0.0))[0])
            raise ValueError(
                f"polygon is self-intersecting: the boundary folds back at vertex {pts[k].tolist()}"
            )
        pts = pts[~flat]


def _crossing(pts):
    """A pair of non-adjacent edges that meet (sweep), or (-1, -1)."""
    n = pts.shape[0]
    nxt = np.roll(pts, -1, axis=0)
    first = (pts[:, 0] < nxt[:, 0]) | ((pts[:, 0] == nxt[:, 0]) & (pts[:, 1] < nxt[:, 1]))
    idx = np.arange(n)
    lo = np.where(first, idx, (idx + 1) % n)
    hi = np.where(first, (idx + 1) % n, idx)
    ends = np.concatenate([lo, hi])
    kind = np.repeat([0, 1], n)
    edge = np.concatenate([idx, idx])
    by_event = np.lexsort((edge, kind, pts[ends, 1], pts[ends, 0]))
    events = np.ascontiguousarray(np.column_stack([edge[by_event], kind[by_event]]))
    i, j = _first_crossing(pts, lo, hi, events)
    return int(i), int(j)


def decompose(vertices):
    """Split a simple polygon into convex :class:`ConvexShape` pieces (see module doc)."""
    pts = as_points(vertices, "vertices")
    if pts.shape[0] < 3:
        raise ValueError(f"polygon needs at least 3 vertices, got {pts.shape[0]}")
    if convex_hull(pts).shape[0] < 3:
        raise ValueError("polygon has zero area: all vertices are collinear")
    pts = _clean(pts)
    if pts.shape[0] < 3:
        raise ValueError("polygon has zero area: fewer than 3 non-collinear vertices")
    i, j = _crossing(pts)
    if i >= 0:
        raise ValueError(f"polygon is self-intersecting: edges {i} and {j} meet")
    rel = pts - pts[0]
    area2 = float(np.sum(rel[:-1, 0] * rel[1:, 1] - rel[1:, 0] * rel[:-1, 1]))
    if area2 == 0.0:
        raise ValueError("polygon has zero area")
    if area2 < 0.0:
        pts = np.ascontiguousarray(pts[::-1])
    order = np.lexsort((pts[:, 0], -pts[:, 1]))  # sweep order: y descending, then x
    tris, ok = _triangulate(pts, order)
    if not ok or not _certify(pts, tris):
        raise ValueError("polygon is too close to degenerate to triangulate in float64")
    offsets, cycles = _merge_convex(pts, tris)
    pieces = []
    for f in range(offsets.shape[0] - 1):
        hull = convex_hull(pts[cycles[offsets[f]:offsets[f + 1]]])
        if hull.shape[0] >= 3:  # a piece of flat triangles only covers no area
            pieces.append(ConvexShape._trusted(np.ascontiguousarray(hull), 0.0))
    return pieces
