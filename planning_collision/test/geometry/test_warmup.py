"""warmup() covers every kernel: later calls, whatever the input dtypes, never compile."""

import importlib
import pkgutil
import subprocess
import sys

import numpy as np
from numba.core.registry import CPUDispatcher

import planning_collision.geometry as geometry
from planning_collision.geometry import (
    ConvexShape,
    ObstacleSet,
    boxes_overlap_batch,
    decompose,
    gjk_distance,
    gjk_distance_batch,
    pack_shapes,
    penetration,
    penetration_batch,
    sat_mtv,
    sat_overlap,
    signed_distance,
    signed_distance_batch,
)


def dispatchers():
    found = {}
    for info in pkgutil.iter_modules(geometry.__path__):
        module = importlib.import_module(f"{geometry.__name__}.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                found[f"{info.name}.{name}"] = obj
    return found


def signature_counts():
    return {name: len(d.signatures) for name, d in dispatchers().items()}


def test_warmup_compiles_everything_the_api_can_reach():
    seconds = geometry.warmup()
    assert seconds >= 0.0
    before = signature_counts()
    # entry points called from Python have exactly one specialisation each (helpers
    # that are only called from other kernels are linked into them and show none)
    assert max(before.values()) == 1
    assert sum(before.values()) >= 12
    # odd but valid inputs: float32, int32 counts, lists, non-contiguous views, big rows
    a = ConvexShape.polygon(np.array([(0, 0), (2, 0), (2, 1), (0, 1)], np.float32))
    b = ConvexShape.hull(np.random.default_rng(0).normal(size=(60, 2)).tolist(), 0.25)
    c = ConvexShape.circle([0.5, 0.5], 1)
    for x, y in ((a, b), (b, c), (a, c), (a, a)):
        gjk_distance(x, y)
        penetration(x, y)
        signed_distance(x, y)
        sat_overlap(x, y)
        sat_mtv(x, y)
    decompose(np.array([(0, 0), (3, 0), (3, 1), (1, 1), (1, 3), (0, 3)], np.int32))
    points, counts, radii = pack_shapes([a, b, c])
    p32 = np.asfortranarray(points.astype(np.float32))
    c32 = counts.astype(np.int32)
    gjk_distance_batch(p32, c32, radii.astype(np.float32), points, counts, 0)
    signed_distance_batch(points[::-1], counts[::-1], radii[::-1], p32, c32, radii)
    penetration_batch(points, counts, radii, points, counts, radii)
    boxes = np.array([[0, 0, 0, 2, 1], [1, 0, 1, 2, 1]], np.float32)
    boxes_overlap_batch(boxes, boxes[::-1])
    world = ObstacleSet(p32, c32, radii)
    world.index.query([0, 0, 1, 1])
    world.index.query_batch(np.array([[0, 0, 1, 1]], np.int64))
    world.nearest(p32, c32, radii, max_distance=2)
    world.nearest(points, counts, radii, signed=True)
    world.colliding(points, counts, radii, margin=1)
    from planning_collision.geometry.raycast import cast_segments, segment_cast

    cast_segments(world, np.array([[0, 0], [5, 5]], np.float32), [[1, 1], [-5, 5]])
    segment_cast(b, [0, 0], [3, 1])
    assert signature_counts() == before


def test_import_compiles_nothing():
    code = (
        "import planning_collision.geometry as g, importlib, pkgutil\n"
        "from numba.core.registry import CPUDispatcher\n"
        "n = 0\n"
        "for info in pkgutil.iter_modules(g.__path__):\n"
        "    m = importlib.import_module(g.__name__ + '.' + info.name)\n"
        "    n += sum(len(o.signatures) for o in vars(m).values()"
        " if isinstance(o, CPUDispatcher))\n"
        "print(n)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
