"""Exact orientation and segment predicates on float64 coordinates, shared by the cores
(polygon decomposition's simplicity checks, the grid contours' repair of simplified rings).

No tolerance: the answers are those of the given floats, with each orientation computed as
one cross product of coordinate differences. Signs are compared directly (never through a
product of two orientations, which can underflow to zero)."""

from numba import njit


@njit(cache=True)
def orient(ax, ay, bx, by, cx, cy):
    """Twice the signed area of triangle a b c: > 0 when c is left of a->b, < 0 right, 0 on
    the line."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


@njit(cache=True)
def on_segment(ax, ay, bx, by, px, py):
    """For p collinear with a-b (the caller checked): is p within the segment's box?"""
    return min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


@njit(cache=True)
def segments_meet(ax, ay, bx, by, cx, cy, dx, dy):
    """Whether segments a-b and c-d cross or touch (an end on the other segment, or
    collinear overlap)."""
    o1 = orient(ax, ay, bx, by, cx, cy)
    o2 = orient(ax, ay, bx, by, dx, dy)
    o3 = orient(cx, cy, dx, dy, ax, ay)
    o4 = orient(cx, cy, dx, dy, bx, by)
    if ((o1 > 0 and o2 < 0) or (o1 < 0 and o2 > 0)) and (
            (o3 > 0 and o4 < 0) or (o3 < 0 and o4 > 0)):
        return True
    return ((o1 == 0 and on_segment(ax, ay, bx, by, cx, cy))
            or (o2 == 0 and on_segment(ax, ay, bx, by, dx, dy))
            or (o3 == 0 and on_segment(cx, cy, dx, dy, ax, ay))
            or (o4 == 0 and on_segment(cx, cy, dx, dy, bx, by)))
