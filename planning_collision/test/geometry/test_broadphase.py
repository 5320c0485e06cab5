"""AabbIndex (BVH) queries against brute force."""

import numpy as np
import pytest

from planning_collision.geometry import AabbIndex


def random_aabbs(rng, n, world=100.0):
    lo = rng.uniform(0, world, (n, 2))
    size = rng.lognormal(0.0, 1.0, (n, 2))  # mostly small, some long walls
    size[rng.random(n) < 0.02] *= 30.0
    return np.c_[lo, lo + size]


def brute(boxes, q):
    return np.flatnonzero(
        (boxes[:, 0] <= q[2])
        & (q[0] <= boxes[:, 2])
        & (boxes[:, 1] <= q[3])
        & (q[1] <= boxes[:, 3])
    )


@pytest.mark.parametrize("leaf_size", [1, 4, 16])
def test_query_matches_brute_force(rng, leaf_size):
    boxes = random_aabbs(rng, 3000)
    index = AabbIndex(boxes, leaf_size=leaf_size)
    assert len(index) == 3000
    queries = random_aabbs(rng, 300)
    for q in queries:
        np.testing.assert_array_equal(index.query(q), brute(boxes, q))
    offsets, indices = index.query_batch(queries)
    assert offsets[0] == 0 and offsets[-1] == len(indices)
    for k, q in enumerate(queries):
        np.testing.assert_array_equal(indices[offsets[k] : offsets[k + 1]], brute(boxes, q))
    qi, ii = index.query_pairs(queries)
    expected = [(k, j) for k, q in enumerate(queries) for j in brute(boxes, q)]
    assert list(zip(qi.tolist(), ii.tolist(), strict=True)) == expected


def test_touching_boxes_are_reported_and_degenerate_boxes_work():
    boxes = np.array([[0, 0, 1, 1], [1, 1, 2, 2], [3, 3, 3, 3], [0, 5, 10, 5]], float)
    index = AabbIndex(boxes)
    assert index.query([1, 0, 1, 0]).tolist() == [0]
    assert index.query([2, 2, 2.5, 2.5]).tolist() == [1]
    assert index.query([3, 3, 3, 3]).tolist() == [2]
    assert index.query([4, 4, 6, 6]).tolist() == [3]
    assert index.query([1.5, -1, 2.9, 0.9]).tolist() == []


def test_many_identical_boxes():
    boxes = np.tile([[1.0, 1.0, 2.0, 2.0]], (500, 1))
    index = AabbIndex(boxes)
    assert index.query([0, 0, 1, 1]).tolist() == list(range(500))
    assert index.query([3, 3, 4, 4]).size == 0


def test_empty_index():
    index = AabbIndex(np.zeros((0, 4)))
    assert len(index) == 0
    assert index.query([0, 0, 1, 1]).size == 0
    offsets, indices = index.query_batch(np.array([[0, 0, 1, 1], [2, 2, 3, 3]], float))
    assert offsets.tolist() == [0, 0, 0] and indices.size == 0


@pytest.mark.parametrize(
    "boxes, message",
    [
        (np.array([[0, 0, 1]], float), "shape"),
        (np.array([[0, 0, np.nan, 1]]), "NaN or inf"),
        (np.array([[2, 0, 1, 1]], float), "row 0 has min > max"),
    ],
)
def test_bad_boxes_raise(boxes, message):
    with pytest.raises(ValueError, match=message):
        AabbIndex(boxes)
    with pytest.raises(ValueError, match=message):
        AabbIndex(np.array([[0, 0, 1, 1]], float)).query_batch(boxes)
