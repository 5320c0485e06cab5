"""Batch API: arrays in, arrays out, compiled loops (no Python loop per pair).

Each call's rows are shared among threads (:mod:`planning_collision.common.work_sharing`):
``threads=None`` (the default) uses every core for large batches, an integer caps the
threads; small batches stay on the calling thread. Every row is computed the same way on any
thread, so the answers are bit-for-bit the same for any thread count, and the kernels release
the GIL.

Shapes travel as padded arrays, the layout :func:`pack_shapes` builds:

* ``points``: (N, Kmax, 2) float64; row ``i`` uses ``points[i, :counts[i]]`` and ignores the
  padding (it may hold anything, even NaN). The shape is the convex hull of the used points
  plus the radius, so rows need not be ordered or deduplicated;
* ``counts``: (N,) integers in ``[1, Kmax]``;
* ``radii``: (N,) floats >= 0, or one scalar for all rows.

Inputs are converted once to C-contiguous float64 / int64, so every kernel has exactly one
compiled specialisation, the one :func:`.warmup` loads. Invalid rows (a count out of
range, NaN or inf among the used points, a negative or non-finite radius, a negative box
size) raise ``ValueError`` naming the first bad row.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from planning_collision.common.work_sharing import share_rows, threads_for

from .distance import core_distance, inflate
from .penetration import penetration_points
from .sat import box_overlap
from .shapes import ConvexShape
from .tolerances import MAX_COORD

_OK = 0
_BAD_COUNT = 1
_BAD_POINT = 2
_BAD_RADIUS = 3
_BAD_BOX = 4
_MESSAGES = {
    _BAD_COUNT: "count out of range [1, Kmax]",
    _BAD_POINT: "NaN or inf (or a coordinate beyond +-1e150) among its points",
    _BAD_RADIUS: "radius negative or not finite",
    _BAD_BOX: "NaN or inf (or beyond +-1e150), or a negative length or width",
}

#: Fewest rows worth a thread of their own (about 50 us of work); batches under twice as many
#: run on the calling thread. GJK and penetration pairs take 0.1-0.5 us, a box pair 25 ns.
PAIRS_PER_THREAD = 256
BOXES_PER_THREAD = 2048
CHECKS_PER_THREAD = 4096  # rows checked by as_batch (about 12 ns each)


class ShapeBatch(NamedTuple):
    """One side of a batch: ``points`` (N, Kmax, 2) float64, ``counts`` (N,) int64 and
    ``radii`` (N,) float64 (see the module docstring)."""

    points: np.ndarray
    counts: np.ndarray
    radii: np.ndarray


class DistanceBatch(NamedTuple):
    """Result of :func:`gjk_distance_batch`: row-wise :class:`.DistanceResult` fields."""

    distance: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    intersecting: np.ndarray
    #: (N, 2) unit normals from A to B; NaN where the cores touch or overlap.
    normal: np.ndarray


class PenetrationBatch(NamedTuple):
    """Result of :func:`penetration_batch` (unpacks like a 4-tuple)."""

    depth: np.ndarray
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray


def pack_shapes(shapes) -> ShapeBatch:
    """Pack a sequence of :class:`ConvexShape` into a :class:`ShapeBatch` ``(points, counts,
    radii)``.

    ``points`` is (N, Kmax, 2) float64 with each row's hull (CCW) first; padding repeats the
    row's first point, so even a reader that ignores ``counts`` sees the same point set.
    """
    shapes = list(shapes)
    for i, s in enumerate(shapes):
        if not isinstance(s, ConvexShape):
            raise ValueError(f"shapes[{i}] must be a ConvexShape, got {type(s).__name__}")
    n = len(shapes)
    counts = np.fromiter((s.points.shape[0] for s in shapes), dtype=np.int64, count=n)
    kmax = int(counts.max()) if n else 1
    points = np.empty((n, kmax, 2))
    radii = np.fromiter((s.radius for s in shapes), dtype=np.float64, count=n)
    for i, s in enumerate(shapes):
        k = counts[i]
        points[i, :k] = s.points
        points[i, k:] = s.points[0]
    return ShapeBatch(points, counts, radii)


@njit(cache=True, inline="always")
def row_problem(points, counts, radii, i):
    """What is wrong with row ``i`` of a batch side: ``_OK`` (0) or the code of its message."""
    k = counts[i]
    if k < 1 or k > points.shape[1]:
        return _BAD_COUNT
    r = radii[i]
    if not (r >= 0.0 and r <= MAX_COORD):
        return _BAD_RADIUS
    for j in range(k):
        if not (abs(points[i, j, 0]) <= MAX_COORD and abs(points[i, j, 1]) <= MAX_COORD):
            return _BAD_POINT
    return _OK


@njit(cache=True, nogil=True)
def check_rows(points, counts, radii, begin, end):
    """Return ``(code, row)`` for the first invalid row in ``[begin, end)``, ``(0, -1)`` if
    all are valid."""
    for i in range(begin, end):
        code = row_problem(points, counts, radii, i)
        if code != _OK:
            return code, i
    return _OK, -1


class BadRows(NamedTuple):
    """The first invalid row (-1: none) and its problem code, per side, of a chunk of rows
    that a pair kernel checked itself (see :func:`distance_rows`)."""

    a_row: int
    a_code: int
    b_row: int
    b_code: int


@njit(cache=True, inline="always")
def _check_pair_row(a, b, i, first_row, found):
    """Check row ``i`` of both sides (``ShapeBatch`` chunks whose row 0 is ``first_row``):
    ``(whether the row may be computed, found)``, ``found`` (:class:`BadRows`) noting the row
    on each side where it is invalid and no earlier row was (rows come in increasing order)."""
    code_a = row_problem(a.points, a.counts, a.radii, i)
    code_b = row_problem(b.points, b.counts, b.radii, i)
    if code_a != _OK and found.a_row < 0:
        found = BadRows(first_row + i, code_a, found.b_row, found.b_code)
    if code_b != _OK and found.b_row < 0:
        found = BadRows(found.a_row, found.a_code, first_row + i, code_b)
    return code_a == _OK and code_b == _OK, found


def _check_all_rows(points, counts, radii, name, threads):
    """ValueError naming the first invalid row; the rows are checked on ``threads`` threads
    (left serial, the check was a tenth of a GJK batch's time, which capped its speed-up)."""
    rows = points.shape[0]
    bad = []

    def process(begin, end):
        code, row = check_rows(points, counts, radii, begin, end)
        if code != _OK:
            bad.append((row, code))

    share_rows(process, rows, threads_for(threads, rows, CHECKS_PER_THREAD))
    if bad:
        row, code = min(bad)
        raise ValueError(f"{name} row {row}: {_MESSAGES[code]}")


def as_batch(points, counts, radii, name, n=None, threads=None) -> ShapeBatch:
    """Validate and convert one side of a batch; returns canonical arrays."""
    side = _as_arrays(points, counts, radii, name, n)
    _check_all_rows(*side, name, threads)
    return side


def _as_arrays(points, counts, radii, name, n=None) -> ShapeBatch:
    """One side of a batch as canonical arrays, its shapes checked but not its rows."""
    try:
        p = np.ascontiguousarray(points, dtype=np.float64)
        c = np.ascontiguousarray(counts, dtype=np.int64)
        r = np.asarray(radii, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: points, counts and radii must be numeric arrays") from exc
    if p.ndim != 3 or p.shape[2] != 2 or p.shape[1] < 1:
        raise ValueError(
            f"{name} points must have shape (N, Kmax, 2) with Kmax >= 1, got {p.shape}"
        )
    rows = p.shape[0]
    if n is not None and rows != n:
        raise ValueError(f"{name} has {rows} rows, expected {n} like the first side")
    if c.shape != (rows,):
        raise ValueError(f"{name} counts must have shape ({rows},), got {c.shape}")
    if r.ndim == 0:
        r = np.full(rows, float(r))
    if r.shape != (rows,):
        raise ValueError(f"{name} radii must be a scalar or have shape ({rows},), got {r.shape}")
    return ShapeBatch(p, c, np.ascontiguousarray(r))


def _pair(points_a, counts_a, radii_a, points_b, counts_b, radii_b):
    """Both sides as arrays; their rows are checked by the pair kernel itself, in the same
    pass as the answers (a separate pass over the rows was a tenth of a GJK batch's time and,
    shared among threads, paid the helpers' wake-up twice more: 1.2x from 2 threads)."""
    a = _as_arrays(points_a, counts_a, radii_a, "a")
    return a, _as_arrays(points_b, counts_b, radii_b, "b", a.points.shape[0])


# The entry kernels take plain arrays (numba types a tuple argument in Python, which costs a
# few microseconds per call, paid once per chunk) and name them again inside. They loop over
# slices from 0: a loop from ``begin`` keeps the negative-index wrap-around of every lookup.
@njit(cache=True, nogil=True)
def distance_rows(pa, ca, ra, pb, cb, rb, distance, point_a, point_b, intersecting, normal,
                  begin, end, check):
    """Rows ``begin <= i < end`` of the distance of batches ``a`` and ``b`` (the arrays of two
    :class:`ShapeBatch`), written into the arrays of a :class:`DistanceBatch`.

    With ``check``, each row is checked first and an invalid one is skipped (its outputs left
    unwritten); returns the chunk's :class:`BadRows`.
    """
    rows = slice(begin, end)
    return _distance_loop(ShapeBatch(pa[rows], ca[rows], ra[rows]),
                          ShapeBatch(pb[rows], cb[rows], rb[rows]),
                          DistanceBatch(distance[rows], point_a[rows], point_b[rows],
                                        intersecting[rows], normal[rows]), check, begin)


@njit(cache=True, nogil=True)
def _distance_loop(a, b, out, check, first_row):
    found = BadRows(-1, _OK, -1, _OK)
    for i in range(a.points.shape[0]):
        if check:
            valid, found = _check_pair_row(a, b, i, first_row, found)
            if not valid:
                continue
        r = inflate(core_distance(a.points[i], a.counts[i], b.points[i], b.counts[i]),
                    a.radii[i], b.radii[i])
        out.distance[i] = r.distance
        out.point_a[i, 0] = r.ax
        out.point_a[i, 1] = r.ay
        out.point_b[i, 0] = r.bx
        out.point_b[i, 1] = r.by
        out.intersecting[i] = r.intersecting
        out.normal[i, 0] = r.nx
        out.normal[i, 1] = r.ny
    return found


@njit(cache=True, nogil=True)
def penetration_rows(pa, ca, ra, pb, cb, rb, depth, normal, point_a, point_b, begin, end,
                     check):
    """Rows ``begin <= i < end`` of the penetration of batches ``a`` and ``b`` (the arrays of
    two :class:`ShapeBatch`), written into the arrays of a :class:`PenetrationBatch`; ``check``
    and the :class:`BadRows` returned as in :func:`distance_rows`."""
    rows = slice(begin, end)
    return _penetration_loop(ShapeBatch(pa[rows], ca[rows], ra[rows]),
                             ShapeBatch(pb[rows], cb[rows], rb[rows]),
                             PenetrationBatch(depth[rows], normal[rows], point_a[rows],
                                              point_b[rows]), check, begin)


@njit(cache=True, nogil=True)
def _penetration_loop(a, b, out, check, first_row):
    k = max(a.points.shape[1], b.points.shape[1])
    ha = np.empty((k + 1, 2))
    hb = np.empty((k + 1, 2))
    order = np.empty(k + 1, np.int64)
    stack = np.empty(2 * k + 2, np.int64)
    found = BadRows(-1, _OK, -1, _OK)
    for i in range(a.points.shape[0]):
        if check:
            valid, found = _check_pair_row(a, b, i, first_row, found)
            if not valid:
                continue
        c = penetration_points(a.points[i], a.counts[i], a.radii[i], b.points[i], b.counts[i],
                               b.radii[i], ha, hb, order, stack)
        out.depth[i] = c.depth
        out.normal[i, 0] = c.nx
        out.normal[i, 1] = c.ny
        out.point_a[i, 0] = c.ax
        out.point_a[i, 1] = c.ay
        out.point_b[i, 0] = c.bx
        out.point_b[i, 1] = c.by
    return found


def _run_pairs(kernel, a: ShapeBatch, b: ShapeBatch, out, threads, check):
    """``kernel`` (:func:`distance_rows` or :func:`penetration_rows`) over every row, shared
    among threads; with ``check``, ValueError naming the first bad row of side a, else of b
    (as if a were checked whole before b)."""
    n = a.points.shape[0]
    found = []

    def process(begin, end):
        bad = kernel(*a, *b, *out, begin, end, check)
        if bad.a_row >= 0 or bad.b_row >= 0:
            found.append(bad)

    share_rows(process, n, threads_for(threads, n, PAIRS_PER_THREAD))
    for side, rows in (("a", [(f.a_row, f.a_code) for f in found if f.a_row >= 0]),
                       ("b", [(f.b_row, f.b_code) for f in found if f.b_row >= 0])):
        if rows:
            row, code = min(rows)
            raise ValueError(f"{side} row {row}: {_MESSAGES[code]}")
    return out


def run_distance(a: ShapeBatch, b: ShapeBatch, threads=None, check=False) -> DistanceBatch:
    """:func:`distance_rows` over every row of two batches (``check``: rows not yet
    checked), shared among threads."""
    n = a.points.shape[0]
    out = DistanceBatch(np.empty(n), np.empty((n, 2)), np.empty((n, 2)),
                        np.empty(n, np.bool_), np.empty((n, 2)))
    return _run_pairs(distance_rows, a, b, out, threads, check)


def run_penetration(a: ShapeBatch, b: ShapeBatch, threads=None,
                    check=False) -> PenetrationBatch:
    """:func:`penetration_rows` over every row of two batches (``check``: rows not yet
    checked), shared among threads."""
    n = a.points.shape[0]
    out = PenetrationBatch(np.empty(n), np.empty((n, 2)), np.empty((n, 2)), np.empty((n, 2)))
    return _run_pairs(penetration_rows, a, b, out, threads, check)


def gjk_distance_batch(points_a, counts_a, radii_a, points_b, counts_b, radii_b, threads=None):
    """Row-wise GJK distance of two batches of shapes (see the module docstring).

    Returns :class:`DistanceBatch` ``(distance (N,), point_a (N, 2), point_b (N, 2),
    intersecting (N,) bool, normal (N, 2))`` with the conventions of :func:`.gjk_distance`.

    ``threads``: None (the default) shares the rows among every core, an integer caps the
    threads; batches under twice :data:`PAIRS_PER_THREAD` rows stay on the calling thread.
    Every row's answer is the same for any thread count; the kernel releases the GIL.
    """
    a, b = _pair(points_a, counts_a, radii_a, points_b, counts_b, radii_b)
    return run_distance(a, b, threads, check=True)


def signed_distance_batch(points_a, counts_a, radii_a, points_b, counts_b, radii_b,
                          threads=None):
    """Row-wise signed distance (N,): distance when apart, minus the depth when overlapping.

    ``threads``: None (the default) shares the rows among every core, an integer caps the
    threads; batches under twice :data:`PAIRS_PER_THREAD` rows stay on the calling thread.
    Every row's answer is the same for any thread count; the kernel releases the GIL.
    """
    a, b = _pair(points_a, counts_a, radii_a, points_b, counts_b, radii_b)
    return 0.0 - run_penetration(a, b, threads, check=True).depth


def penetration_batch(points_a, counts_a, radii_a, points_b, counts_b, radii_b, threads=None):
    """Row-wise :func:`.penetration`; returns :class:`PenetrationBatch`.

    ``threads``: None (the default) shares the rows among every core, an integer caps the
    threads; batches under twice :data:`PAIRS_PER_THREAD` rows stay on the calling thread.
    Every row's answer is the same for any thread count; the kernel releases the GIL.
    """
    a, b = _pair(points_a, counts_a, radii_a, points_b, counts_b, radii_b)
    return run_penetration(a, b, threads, check=True)


@njit(cache=True)
def _boxes_into(a, b, out):
    """Fill ``out`` with the overlaps of box rows ``a`` and ``b``; return the first invalid
    row, or -1."""
    for i in range(a.shape[0]):
        bad = False
        for j in range(5):
            if not (abs(a[i, j]) <= MAX_COORD and abs(b[i, j]) <= MAX_COORD):
                bad = True
        if bad or a[i, 3] < 0.0 or a[i, 4] < 0.0 or b[i, 3] < 0.0 or b[i, 4] < 0.0:
            return i
        out[i] = box_overlap(
            a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], b[i, 0], b[i, 1], b[i, 2], b[i, 3], b[i, 4]
        )
    return -1


@njit(cache=True, nogil=True)
def boxes_rows(a, b, out, begin, end):
    """Fill ``out[begin:end]`` with box overlaps; return the first invalid row there, or -1.

    (The loop runs over slices: a loop from ``begin`` measured 3 % slower.)"""
    row = _boxes_into(a[begin:end], b[begin:end], out[begin:end])
    return begin + row if row >= 0 else -1


def boxes_overlap_batch(boxes_a, boxes_b, threads=None):
    """Row-wise overlap (touching included) of oriented boxes, rows ``cx, cy, heading,
    length, width`` (Apollo convention); returns a bool array (N,).

    Each answer is the one ``sat_overlap`` and ``gjk_distance(...).intersecting`` give for
    ``ConvexShape.box`` of the two rows, touching within the touch tolerance included (see
    :mod:`.sat` and :mod:`.tolerances`).

    ``threads``: None (the default) shares the rows among every core, an integer caps the
    threads; batches under twice :data:`BOXES_PER_THREAD` rows stay on the calling thread.
    The answers are the same for any thread count; the kernel releases the GIL.
    """
    try:
        a = np.ascontiguousarray(boxes_a, dtype=np.float64)
        b = np.ascontiguousarray(boxes_b, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("boxes must be numeric arrays of shape (N, 5)") from exc
    if a.ndim != 2 or a.shape[1] != 5:
        raise ValueError(f"boxes_a must have shape (N, 5), got {a.shape}")
    if b.shape != a.shape:
        raise ValueError(f"boxes_b must have shape {a.shape} like boxes_a, got {b.shape}")
    n = a.shape[0]
    out = np.empty(n, dtype=np.bool_)
    bad = []

    def process(begin, end):
        row = boxes_rows(a, b, out, begin, end)
        if row >= 0:
            bad.append(row)

    share_rows(process, n, threads_for(threads, n, BOXES_PER_THREAD))
    if bad:
        raise ValueError(f"box row {min(bad)}: {_MESSAGES[_BAD_BOX]}")
    return out
