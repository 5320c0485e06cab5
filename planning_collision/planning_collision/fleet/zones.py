"""Declared passages: zones given as polygons in the parameters (issue #22 item 3).

Passages are found on the map where free space is too narrow for two robots
(:mod:`~planning_collision.fleet.passages`). A site may know more: a doorway the map draws
wider than it is, a crossing or a lift lobby where robots should go one way at a time (as
Open-RMF's mutex groups declare). Such a zone is a polygon in the global frame; the free cells
whose centres lie inside it form a passage's core, and it is coordinated exactly as one found on
the map (:func:`~planning_collision.fleet.passages.declared_passage`).

A zone is written as one string of vertices, ``"x1 y1, x2 y2, x3 y3, ..."`` (metres, at least
three, either winding; the polygon closes itself). :func:`parse_zone` reads one and says what
is wrong with a bad one; :func:`cells_inside` finds the cells of a grid inside a polygon.
"""

from __future__ import annotations

import numpy as np


def parse_zone(text: str, name: str = "zone") -> np.ndarray:
    """The polygon (V, 2) written in ``text`` as ``"x1 y1, x2 y2, ..."``; ValueError naming
    ``name`` when it is not at least three distinct finite vertices of two numbers each."""
    vertices = []
    for k, part in enumerate(str(text).split(",")):
        fields = part.split()
        if len(fields) != 2:
            raise ValueError(f"{name}: vertex {k + 1} must be two numbers 'x y', got "
                             f"{part.strip()!r} (write a zone as 'x1 y1, x2 y2, x3 y3, ...')")
        try:
            x, y = float(fields[0]), float(fields[1])
        except ValueError:
            raise ValueError(f"{name}: vertex {k + 1} must be two numbers 'x y', got "
                             f"{part.strip()!r}") from None
        if not (np.isfinite(x) and np.isfinite(y)):
            raise ValueError(f"{name}: vertex {k + 1} is not finite ({part.strip()!r})")
        vertices.append((x, y))
    polygon = np.array(vertices, dtype=np.float64).reshape(-1, 2)
    if len(np.unique(polygon, axis=0)) < 3:
        raise ValueError(f"{name}: a zone needs at least three distinct vertices, got "
                         f"{len(np.unique(polygon, axis=0))}")
    x, y = polygon[:, 0], polygon[:, 1]
    if abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)) <= 1e-12:
        raise ValueError(f"{name}: the zone has no area (its vertices lie on one line)")
    return polygon


def parse_zones(texts, name: str = "passage_zones") -> list[np.ndarray]:
    """Every zone of a list of strings (:func:`parse_zone`), named ``name[k]`` in errors."""
    return [parse_zone(text, f"{name}[{k}]") for k, text in enumerate(texts)]


def cells_inside(polygon: np.ndarray, shape: tuple[int, int], to_world) -> np.ndarray:
    """(h, w) bool: the cells of a grid of ``shape`` whose centres lie inside ``polygon``
    (even-odd rule); ``to_world`` maps (row, col) cell coordinates to the global frame."""
    h, w = shape
    rows, cols = np.mgrid[0:h, 0:w]
    centres = to_world(np.column_stack([rows.ravel() + 0.5, cols.ravel() + 0.5]))
    px, py = centres[:, 0], centres[:, 1]
    inside = np.zeros(px.shape, dtype=bool)
    ax, ay = polygon[:, 0], polygon[:, 1]
    bx, by = np.roll(ax, -1), np.roll(ay, -1)
    for x0, y0, x1, y1 in zip(ax, ay, bx, by, strict=True):
        if y0 == y1:
            continue
        crosses = (py >= min(y0, y1)) & (py < max(y0, y1))
        at = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (px < at)
    return inside.reshape(h, w)
