"""Rays and footprints shared among threads: the same answers, bit for bit, for any count."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from planning_collision.geometry import ConvexShape
from planning_collision.grid import GridMap, footprint_collides, line_of_sight_batch, traversal
from planning_collision.grid import footprint as footprint_module


@pytest.fixture
def grid(rng):
    """300 x 400 cells at 5 cm, about 15 % blocked in rectangles (some unknown), yawed."""
    data = np.zeros((300, 400), np.int8)
    for _ in range(60):
        x, y = rng.integers(0, 400), rng.integers(0, 300)
        w, h = rng.integers(3, 25, 2)
        data[y:y + h, x:x + w] = rng.choice([100, -1])
    return GridMap(data, 0.05, origin=(-1.0, 2.0, 0.3))


def spy_on_sharing(monkeypatch, module):
    """Record the thread count each call of ``module.share_rows`` was given."""
    planned = []
    real = module.share_rows

    def share_rows(process, rows, threads):
        planned.append(threads)
        real(process, rows, threads)

    monkeypatch.setattr(module, "share_rows", share_rows)
    return planned


@pytest.mark.parametrize("mode", ["bresenham", "supercover", "conservative"])
@pytest.mark.parametrize("out_of_map", ["blocked", "free"])
def test_rays_identical_for_any_thread_count(grid, rng, mode, out_of_map, monkeypatch):
    planned = spy_on_sharing(monkeypatch, traversal)
    starts = rng.integers(-50, 450, (5000, 2))
    goals = np.clip(starts + rng.integers(-120, 121, (5000, 2)), -60, 460)
    one = line_of_sight_batch(grid, starts, goals, mode, out_of_map, cells_checked=True,
                              threads=1)
    assert 0.05 < one.clear.mean() < 0.95
    for threads in (2, 3, None):
        many = line_of_sight_batch(grid, starts, goals, mode, out_of_map, cells_checked=True,
                                   threads=threads)
        for a, b in zip(one, many, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    assert planned[:3] == [1, 2, 3]


@pytest.mark.parametrize("out_of_map", ["blocked", "free"])
def test_footprints_identical_for_any_thread_count(grid, rng, out_of_map, monkeypatch):
    planned = spy_on_sharing(monkeypatch, footprint_module)
    poses = np.column_stack([rng.uniform(-2, 19, 3000), rng.uniform(1, 21, 3000),
                             rng.uniform(-3, 3, 3000)])
    for shape in (ConvexShape.box((0.1, 0), 0.3, 0.6, 0.4),
                  ConvexShape.capsule((-0.2, 0), (0.2, 0), 0.1)):
        one = footprint_collides(grid, shape, poses, out_of_map, threads=1)
        assert 0.05 < one.mean() < 0.95
        for threads in (2, 4, None):
            np.testing.assert_array_equal(one, footprint_collides(grid, shape, poses,
                                                                  out_of_map, threads=threads))
    assert planned[:3] == [1, 2, 4]


def test_small_batches_stay_on_the_calling_thread(grid, rng, monkeypatch):
    rays = spy_on_sharing(monkeypatch, traversal)
    feet = spy_on_sharing(monkeypatch, footprint_module)
    starts = rng.integers(0, 300, (2 * traversal.RAYS_PER_THREAD - 1, 2))
    line_of_sight_batch(grid, starts, starts[::-1], threads=8)
    line_of_sight_batch(grid, np.vstack([starts, starts[:1]]), np.vstack([starts, starts[:1]]),
                        threads=8)
    poses = np.zeros((2 * footprint_module.POSES_PER_THREAD - 1, 3))
    footprint_collides(grid, ConvexShape.circle((0, 0), 0.2), poses, threads=8)
    assert rays == [1, 2] and feet == [1]


def test_concurrent_callers_get_the_answers_of_one_thread(grid, rng):
    """Requests answered on several Python threads at once (the kernels release the GIL)."""
    starts = rng.integers(-20, 420, (4000, 2))
    goals = rng.integers(-20, 420, (4000, 2))
    poses = np.column_stack([rng.uniform(0, 20, 2000), rng.uniform(0, 20, 2000),
                             np.zeros(2000)])
    box = ConvexShape.box((0, 0), 0.0, 0.6, 0.4)
    want_rays = line_of_sight_batch(grid, starts, goals, "conservative", threads=1)
    want_feet = footprint_collides(grid, box, poses, threads=1)
    got = {}

    def request(k):
        if k % 2:
            got[k] = line_of_sight_batch(grid, starts, goals, "conservative")
        else:
            got[k] = footprint_collides(grid, box, poses)

    workers = [threading.Thread(target=request, args=(k,)) for k in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert sorted(got) == list(range(6))
    for k, answer in got.items():
        if k % 2:
            np.testing.assert_array_equal(answer.clear, want_rays.clear)
            np.testing.assert_array_equal(answer.first_blocked, want_rays.first_blocked)
        else:
            np.testing.assert_array_equal(answer, want_feet)


@pytest.mark.parametrize("threads", [0, -2, 1.5, True, "all"])
def test_bad_threads_raise_value_error(grid, threads):
    cells = np.zeros((3, 2), np.int64)
    with pytest.raises(ValueError, match="threads must be a positive integer or None"):
        line_of_sight_batch(grid, cells, cells, threads=threads)
    with pytest.raises(ValueError, match="threads must be a positive integer or None"):
        footprint_collides(grid, ConvexShape.point((0, 0)), np.zeros((3, 3)), threads=threads)
