"""Exact, fast 2D convex geometry: GJK distance, penetration, SAT, batch kernels, broadphase.

Pure numpy + numba (no ROS). Every shape is a :class:`ConvexShape`: a convex point set
(stored as its CCW hull) plus a radius, so polygons, boxes, discs, capsules, segments and
points share one code path.

Scalar API (one pair, Python objects)
    :func:`gjk_distance`, :func:`penetration`, :func:`signed_distance`,
    :func:`sat_overlap`, :func:`sat_mtv`, :func:`decompose`.
Batch API (padded arrays in, arrays out, compiled loops shared among threads)
    :func:`pack_shapes`, :func:`gjk_distance_batch`, :func:`signed_distance_batch`,
    :func:`penetration_batch`, :func:`boxes_overlap_batch`; each takes ``threads=``
    (None: every core; the answers do not depend on it).
Broadphase
    :class:`AabbIndex` (BVH over boxes) and :class:`ObstacleSet` (nearest obstacle,
    colliding pairs).

Conventions and tolerances
    * Touching counts as intersecting everywhere: distance 0, ``intersecting`` True,
      ``sat_overlap`` True, penetration depth 0.
    * "Touching" means a gap of at most ``TOUCH_REL`` (16 machine epsilons, about 3.6e-15)
      times the coordinate scale of the pair (the largest absolute coordinate of the
      Minkowski difference ``A - B``, i.e. shape sizes and separation, not the distance
      from the world origin), for every query (GJK, penetration, SAT, batch kernels) and
      every contact feature. Gaps of 1e-9 at unit scale are reported exactly; see
      :mod:`.tolerances` for all constants.
    * Separated shapes: witness points lie on each boundary and ``|point_a - point_b| ==
      distance`` to rounding; accuracy is about 1e-15 relative (tested against shapely to
      1e-9 absolute). Intersecting shapes: both witness points are one common point.
    * Penetration: the normal points from A to B; moving B by ``depth * normal`` leaves them
      touching; ``signed_distance == -depth``.
    * Degenerate hulls are kept, never rejected: one point (disc or point), two points
      (segment or capsule); duplicate and collinear points are dropped. GJK runs at most
      ``4 (Ka + Kb) + 32`` iterations and never divides by a zero length.
    * Bad input (NaN or inf, no points, negative radius or size, non-convex input to
      ``ConvexShape.polygon``, self-intersecting input to ``decompose``) raises
      ``ValueError`` naming the problem.

Compilation: every kernel is ``@numba.njit(cache=True)``; importing this package compiles
nothing. Call :func:`warmup` once at node start: it compiles the kernels on the first run
ever and loads them from numba's cache afterwards.
"""

from .batch import (
    DistanceBatch,
    PenetrationBatch,
    ShapeBatch,
    boxes_overlap_batch,
    gjk_distance_batch,
    pack_shapes,
    penetration_batch,
    signed_distance_batch,
)
from .broadphase import AabbIndex, CandidateLists
from .decompose import decompose
from .distance import DistanceResult, gjk_distance
from .obstacles import CollidingPairs, NearestOne, NearestResult, ObstacleSet
from .penetration import PenetrationResult, penetration, signed_distance
from .sat import sat_mtv, sat_overlap
from .shapes import ConvexShape
from .warmup import warmup

__all__ = [
    "AabbIndex",
    "CandidateLists",
    "CollidingPairs",
    "ConvexShape",
    "DistanceBatch",
    "DistanceResult",
    "NearestOne",
    "NearestResult",
    "ObstacleSet",
    "PenetrationBatch",
    "PenetrationResult",
    "ShapeBatch",
    "boxes_overlap_batch",
    "decompose",
    "gjk_distance",
    "gjk_distance_batch",
    "pack_shapes",
    "penetration",
    "penetration_batch",
    "sat_mtv",
    "sat_overlap",
    "signed_distance",
    "signed_distance_batch",
    "warmup",
]
