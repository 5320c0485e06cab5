"""orca's warmup() readies every kernel orca_node's obstacle worker runs, its geometry ones
included (issue #20: the worker compiled, or loaded, decomposition and nearest-obstacle
kernels on its first obstacle set, holding the interpreter, and the control step with it).

In a fresh interpreter (here every kernel is already loaded): warmup(), then the worker's
conversions of an ObstacleArray and a map's polygons, which must add no specialisation."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r'''
import importlib, json, pkgutil
import numpy as np
from numba.core.registry import CPUDispatcher
import planning_collision.common as common
import planning_collision.geometry as geometry
import planning_collision.orca as orca

def signatures():
    found = {}
    for pkg in (orca, geometry, common):
        for info in pkgutil.iter_modules(pkg.__path__):
            module = importlib.import_module(f"{pkg.__name__}.{info.name}")
            for name, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                    found[f"{module.__name__}.{name}"] = sorted(map(str, obj.signatures))
    return found

orca.warmup()
warm = signatures()
from geometry_msgs.msg import Point
from planning_collision.ros import orca_obstacles
from planning_collision_interfaces.msg import Obstacle, ObstacleArray, Shape

angle = np.linspace(0.0, 2.0 * np.pi, 300, endpoint=False)
ring = np.column_stack([5.0 * np.cos(angle) * (1.0 + 0.2 * (np.arange(300) % 2)),
                        5.0 * np.sin(angle)])
msg = ObstacleArray(obstacles=[
    Obstacle(id="star", type=Obstacle.TYPE_POLYGON,
             polygon=[Point(x=float(x), y=float(y)) for x, y in ring]),
    Obstacle(id="disc", type=Obstacle.TYPE_SHAPE,
             shape=Shape(type=Shape.TYPE_CIRCLE, radius=0.5))])
polygons, problems = orca_obstacles.obstacle_array_polygons(msg)
assert not problems, problems
polygons = [q for _, q in polygons]
orca_obstacles.covered_polygons([ring * 0.1, ring + 30.0], polygons, 0.1)
orca.build_obstacles(polygons)
after = signatures()
print(json.dumps({k: sorted(set(after[k]) - set(warm[k])) for k in after
                  if set(after[k]) - set(warm[k])}))
'''


def test_warmup_readies_the_obstacle_workers_kernels():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}
