"""Batch geometry shared among threads: the same answers, bit for bit, for any count."""

import threading

import numpy as np
import pytest

from planning_collision.geometry import (
    ConvexShape,
    ObstacleSet,
    boxes_overlap_batch,
    gjk_distance_batch,
    pack_shapes,
    penetration_batch,
    signed_distance_batch,
)
from planning_collision.geometry import batch as batch_module
from planning_collision.geometry import obstacles as obstacles_module
from planning_collision.geometry import raycast as raycast_module
from planning_collision.geometry.raycast import cast_segments


def spy_on_sharing(monkeypatch, module):
    """Record the thread count each call of ``module.share_rows`` was given (not counting the
    calls that check the input rows)."""
    planned = []
    real = module.share_rows

    def share_rows(process, rows, threads):
        if "_check_all_rows" not in process.__qualname__:
            planned.append(threads)
        real(process, rows, threads)

    monkeypatch.setattr(module, "share_rows", share_rows)
    return planned


def assert_same(one, many):
    one = one if isinstance(one, tuple) else (one,)
    many = many if isinstance(many, tuple) else (many,)
    for a, b in zip(one, many, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)  # NaN == NaN here: bit for bit


@pytest.fixture
def pairs(rng, geo):
    """3,000 mixed pairs: polygons, discs, capsules, points, some rounded, some overlapping."""
    n = 3000
    pa, ca = geo.random_convex_batch(rng, n, 1, 12, spread=3.0)
    pb, cb = geo.random_convex_batch(rng, n, 1, 12, spread=3.0)
    ra = rng.choice([0.0, 0.0, 0.3], n)
    rb = rng.choice([0.0, 0.5], n)
    return pa, ca, ra, pb, cb, rb


def test_distance_penetration_signed_identical(pairs, monkeypatch):
    planned = spy_on_sharing(monkeypatch, batch_module)
    for fn in (gjk_distance_batch, penetration_batch, signed_distance_batch):
        one = fn(*pairs, threads=1)
        for threads in (2, 3, None):
            assert_same(one, fn(*pairs, threads=threads))
    assert planned[:3] == [1, 2, 3]
    hit = gjk_distance_batch(*pairs).intersecting
    assert 0.1 < hit.mean() < 0.9


def test_boxes_identical_and_the_first_bad_row_is_named(rng, geo, monkeypatch):
    planned = spy_on_sharing(monkeypatch, batch_module)
    a, b = geo.random_boxes(rng, 20_000), geo.random_boxes(rng, 20_000)
    one = boxes_overlap_batch(a, b, threads=1)
    for threads in (2, 4, None):
        assert_same(one, boxes_overlap_batch(a, b, threads=threads))
    assert planned[:3] == [1, 2, 4]
    # bad rows in several chunks: the first one is reported, whichever chunk finished first
    a[15_000, 3] = -1.0
    a[9_000, 0] = np.nan
    for threads in (1, 4):
        with pytest.raises(ValueError, match="box row 9000"):
            boxes_overlap_batch(a, b, threads=threads)


def test_obstacle_queries_identical(rng, geo, monkeypatch):
    near_planned = spy_on_sharing(monkeypatch, obstacles_module)
    cast_planned = spy_on_sharing(monkeypatch, raycast_module)
    pts, counts = geo.random_convex_batch(rng, 2000, 3, 8, spread=0.0, size=(0.2, 1.0))
    pts = pts + rng.uniform(0, 60, (2000, 1, 2))
    world = ObstacleSet(pts, counts, rng.choice([0.0, 0.1], 2000))
    feet = [ConvexShape.box(rng.uniform(0, 60, 2), rng.uniform(-3, 3), 1.0, 0.6)
            for _ in range(600)]
    feet += [ConvexShape.circle(rng.uniform(0, 60, 2), 0.4) for _ in range(200)]
    queries = pack_shapes(feet)
    for signed in (False, True):
        one = world.nearest(*queries, max_distance=5.0, signed=signed, threads=1)
        assert (one.index >= 0).mean() > 0.5 and (one.distance <= 0).sum() > 10
        for threads in (2, 3):
            assert_same(tuple(one), tuple(world.nearest(*queries, max_distance=5.0,
                                                        signed=signed, threads=threads)))
    one = world.colliding(*queries, margin=0.5, threads=1)
    assert_same(tuple(one), tuple(world.colliding(*queries, margin=0.5, threads=2)))
    starts = rng.uniform(0, 60, (1500, 2))
    goals = starts + rng.uniform(-2, 2, (1500, 2))
    one = cast_segments(world, starts, goals, threads=1)
    assert 0.1 < (one.index >= 0).mean() < 0.9
    for threads in (2, 3):
        assert_same(tuple(one), tuple(cast_segments(world, starts, goals, threads=threads)))
    assert near_planned == [1, 2, 3, 1, 2, 3]
    assert cast_planned[:3] == [1, 2, 3]


def test_input_checks_are_shared_and_name_the_first_bad_row(pairs, monkeypatch):
    calls = []
    real = batch_module.share_rows

    def share_rows(process, rows, threads):
        calls.append((process.__qualname__, rows, threads))
        real(process, rows, threads)

    monkeypatch.setattr(batch_module, "share_rows", share_rows)
    many = 3 * batch_module.CHECKS_PER_THREAD
    points, counts, radii = (np.resize(side, (many, *side.shape[1:])) for side in pairs[:3])
    # the pair kernels check their rows in the same pass: one sharing per call, no other
    for batch in (gjk_distance_batch, penetration_batch, signed_distance_batch):
        calls.clear()
        batch(points, counts, radii, points, counts, radii, threads=3)
        assert [c[1:] for c in calls] == [(many, 3)]
    # a bad count in the last chunk, a bad radius earlier in another one: the radius is named
    counts[many - 5] = 0
    first = 2 * batch_module.CHECKS_PER_THREAD + 1
    radii[first] = -1.0
    ones = np.ones(many, np.int64)
    for batch in (gjk_distance_batch, penetration_batch, signed_distance_batch):
        for threads in (1, 3):
            with pytest.raises(ValueError, match=f"a row {first}: radius negative"):
                batch(points, counts, radii, points, ones, 0.0, threads=threads)
            # side a is named before side b, even when b's bad row comes first
            bad_b = np.array(radii)
            bad_b[:] = 0.0
            bad_b[3] = np.nan
            with pytest.raises(ValueError, match=f"a row {first}: radius negative"):
                batch(points, counts, radii, points, ones, bad_b, threads=threads)
            with pytest.raises(ValueError, match="b row 3: radius negative"):
                batch(points, ones, 0.0, points, ones, bad_b, threads=threads)
            with pytest.raises(ValueError, match="b row 7: count out of range"):
                batch(points, ones, 0.0, points, np.where(np.arange(many) == 7, 99, 1), 0.0,
                      threads=threads)


def test_small_batches_stay_on_the_calling_thread(pairs, monkeypatch):
    planned = spy_on_sharing(monkeypatch, batch_module)
    m = 2 * batch_module.PAIRS_PER_THREAD - 1
    gjk_distance_batch(*(side[:m] for side in pairs), threads=8)
    gjk_distance_batch(*(side[: m + 1] for side in pairs), threads=8)
    boxes = np.tile([0.0, 0.0, 0.0, 1.0, 1.0], (2 * batch_module.BOXES_PER_THREAD - 1, 1))
    boxes_overlap_batch(boxes, boxes, threads=8)
    assert planned == [1, 2, 1]


def test_concurrent_callers_get_the_answers_of_one_thread(pairs):
    want = gjk_distance_batch(*pairs, threads=1)
    got = {}

    def request(k):
        got[k] = gjk_distance_batch(*pairs)

    workers = [threading.Thread(target=request, args=(k,)) for k in range(5)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert sorted(got) == list(range(5))
    for answer in got.values():
        assert_same(tuple(want), tuple(answer))


@pytest.mark.parametrize("threads", [0, -1, 2.5, True, "2"])
def test_bad_threads_raise_value_error(pairs, threads):
    world = ObstacleSet(*pack_shapes([ConvexShape.circle((0, 0), 1.0)]))
    q = pack_shapes([ConvexShape.point((3, 0))])
    calls = [
        lambda: gjk_distance_batch(*pairs, threads=threads),
        lambda: penetration_batch(*pairs, threads=threads),
        lambda: signed_distance_batch(*pairs, threads=threads),
        lambda: boxes_overlap_batch(np.ones((2, 5)), np.ones((2, 5)), threads=threads),
        lambda: world.nearest(*q, threads=threads),
        lambda: world.colliding(*q, threads=threads),
        lambda: cast_segments(world, [[0.0, 0.0]], [[1.0, 1.0]], threads=threads),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="threads must be a positive integer or None"):
            call()
