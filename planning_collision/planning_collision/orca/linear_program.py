"""The 2-D linear programs that pick a velocity inside the ORCA half-planes.

A constraint ("line") is a point ``p`` and a unit direction ``d``; the permitted half-plane
is the left side of ``d``: ``det(d, v - p) >= 0``.  Lines live in two parallel arrays
``points`` (M, 2) and ``directions`` (M, 2) of which only the first ``count`` rows are used,
so the callers can keep one scratch buffer per thread.

The three programs follow van den Berg et al. and the RVO2 library:

* :func:`solve_on_line` (RVO2's linearProgram1) optimises on one line, bounded by the
  speed disc and by all earlier lines;
* :func:`solve_incremental` (linearProgram2) is the randomised-incremental (here: in order)
  algorithm over all lines, returning the index of the first line it could not satisfy;
* :func:`solve_least_violation` (linearProgram3) is used when the program is infeasible:
  it keeps the first ``hard_count`` lines (obstacles, kinematic limits) and minimises the
  largest violation of the remaining ones.

Everything is computed in float64 (RVO2 uses float32).  Deliberate differences from RVO2,
both in :func:`solve_on_line`: almost parallel lines (angle below ``EPSILON``) are not judged
by one point alone but evaluated along the whole piece of line (issue #15); a line whose
point lies far from the speed disc is solved in its Hesse form, so that every returned
velocity stays within ``speed * (1 + SPEED_TOLERANCE)`` (issue #11).
"""

import math
from typing import NamedTuple

import numba

from .constants import EPSILON, FAR_LINE, SPEED_TOLERANCE
from .vector import Vector


class LineOptimum(NamedTuple):
    """Result of :func:`solve_on_line`: ``found`` False when no point of the line is feasible
    (then ``x``, ``y`` are 0)."""

    found: bool
    x: float
    y: float


class ProgramResult(NamedTuple):
    """Result of :func:`solve_incremental`: ``failed_line`` is the number of lines when all
    are satisfied, else the first line that could not be, with the result so far."""

    failed_line: int
    x: float
    y: float


@numba.njit(cache=True, error_model="numpy")
def _det(ax, ay, bx, by):
    return ax * by - ay * bx


@numba.njit(cache=True, error_model="numpy")
def _clip_on_line(points, directions, line_no, speed, opt_x, opt_y, direction_opt, bx, by,
                  t_left, t_right):
    """Clip the piece ``t_left..t_right`` of line ``line_no`` by lines ``0..line_no-1``.

    The line is parametrised as ``(bx, by) + t * d``; returns a :class:`LineOptimum` as
    :func:`solve_on_line` does.  Every returned point has ``t`` within the given interval.
    """
    dx = directions[line_no, 0]
    dy = directions[line_no, 1]
    for i in range(line_no):
        qx = directions[i, 0]
        qy = directions[i, 1]
        # Line i holds where numerator - t * denominator >= 0.
        denominator = _det(dx, dy, qx, qy)
        numerator = _det(qx, qy, bx - points[i, 0], by - points[i, 1])
        if abs(denominator) <= EPSILON:
            # (Almost) parallel lines.  RVO2 keeps or drops the whole line by the sign of
            # the numerator at t = 0 alone, which is wrong when the lines, only almost
            # parallel, cross inside the interval (issue #15): it then declares a feasible
            # program infeasible, or ignores line i where it is violated.  Line i is
            # evaluated at both ends of the interval instead (no division by the tiny
            # denominator, whose sign may be rounding noise), with a slack of
            # SPEED_TOLERANCE * speed: the current result may violate line i by rounding
            # (~1e-16), and two lines that almost coincide would otherwise cut each other
            # wherever that noise puts their crossing.
            slack = SPEED_TOLERANCE * speed
            at_left = numerator - t_left * denominator + slack
            at_right = numerator - t_right * denominator + slack
            if at_left < 0.0 and at_right < 0.0:
                return LineOptimum(False, 0.0, 0.0)
            if at_left >= 0.0 and at_right >= 0.0:
                continue
            t = t_left + (t_right - t_left) * (at_left / (at_left - at_right))
            t = min(max(t, t_left), t_right)
            if at_left < 0.0:
                t_left = t
            else:
                t_right = t
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            if t < t_right:
                t_right = t
        else:
            if t > t_left:
                t_left = t
        if t_left > t_right:
            return LineOptimum(False, 0.0, 0.0)
    if direction_opt:
        if opt_x * dx + opt_y * dy > 0.0:
            t = t_right
        else:
            t = t_left
    else:
        t = dx * (opt_x - bx) + dy * (opt_y - by)
        if t < t_left:
            t = t_left
        elif t > t_right:
            t = t_right
    return LineOptimum(True, bx + t * dx, by + t * dy)


@numba.njit(cache=True, error_model="numpy")
def solve_on_line(points, directions, line_no, speed, opt_x, opt_y, direction_opt):
    """Best point on line ``line_no`` inside the speed disc and lines ``0..line_no-1``.

    Returns a :class:`LineOptimum`; ``found`` is False when no point of the line is feasible.
    With ``direction_opt`` the optimisation direction ``(opt_x, opt_y)`` (unit) is
    maximised, otherwise the point closest to ``(opt_x, opt_y)`` is taken.

    The returned point is within ``speed * (1 + SPEED_TOLERANCE)`` of the origin.  RVO2's
    formula parametrises the line from its own point ``p`` and takes the chord from
    ``|p| ** 2``: when ``p`` lies far from the disc compared with its size, cancellation
    loses the disc's scale (beyond ``FAR_LINE`` disc radii it is lost entirely, and points
    come out off the disc, or the chord shrinks to nothing).  Such a line, and any line
    whose point came out beyond the tolerance (e.g. a cone leg at contact distance, whose
    direction is not quite a unit vector), is solved in its Hesse form instead: the
    normalised direction and the line's point nearest to the origin, whose size is that
    of the disc.
    """
    px = points[line_no, 0]
    py = points[line_no, 1]
    dx = directions[line_no, 0]
    dy = directions[line_no, 1]
    far = FAR_LINE * speed
    if px * px + py * py <= far * far:
        along = px * dx + py * dy
        discriminant = along * along + speed * speed - (px * px + py * py)
        if discriminant < 0.0:
            # The speed disc lies entirely on the forbidden side of the line.
            return LineOptimum(False, 0.0, 0.0)
        root = math.sqrt(discriminant)
        rvo2 = _clip_on_line(points, directions, line_no, speed, opt_x, opt_y, direction_opt,
                             px, py, -along - root, -along + root)
        limit = speed * (1.0 + SPEED_TOLERANCE)
        if not rvo2.found or rvo2.x * rvo2.x + rvo2.y * rvo2.y <= limit * limit:
            return rvo2
    # Hesse form: unit direction u, signed offset c = det(u, p) of the origin, nearest
    # point c * (-u_y, u_x), chord half-length sqrt(speed^2 - c^2) (in units of d).
    length = math.sqrt(dx * dx + dy * dy)
    if not length > 0.0:
        return LineOptimum(False, 0.0, 0.0)
    ux = dx / length
    uy = dy / length
    offset = _det(ux, uy, px, py)
    if abs(offset) > speed:
        return LineOptimum(False, 0.0, 0.0)
    root = math.sqrt((speed - abs(offset)) * (speed + abs(offset))) / length
    return _clip_on_line(points, directions, line_no, speed, opt_x, opt_y, direction_opt,
                         -offset * uy, offset * ux, -root, root)


@numba.njit(cache=True, error_model="numpy")
def solve_incremental(points, directions, count, speed, opt_x, opt_y, direction_opt):
    """Velocity closest to ``opt`` (or furthest along ``opt``) satisfying ``count`` lines.

    Returns a :class:`ProgramResult`: ``failed_line == count`` on success, otherwise the
    index of the first line that could not be satisfied, with ``(x, y)`` the result so far.
    """
    if direction_opt:
        rx = opt_x * speed
        ry = opt_y * speed
    elif opt_x * opt_x + opt_y * opt_y > speed * speed:
        norm = math.sqrt(opt_x * opt_x + opt_y * opt_y)
        rx = opt_x / norm * speed
        ry = opt_y / norm * speed
    else:
        rx = opt_x
        ry = opt_y
    for i in range(count):
        if _det(directions[i, 0], directions[i, 1],
                points[i, 0] - rx, points[i, 1] - ry) > 0.0:
            best = solve_on_line(points, directions, i, speed, opt_x, opt_y, direction_opt)
            if not best.found:
                return ProgramResult(i, rx, ry)
            rx = best.x
            ry = best.y
    return ProgramResult(count, rx, ry)


@numba.njit(cache=True, error_model="numpy")
def solve_least_violation(points, directions, count, hard_count, begin, speed, rx, ry,
                          proj_points, proj_directions):
    """Minimise the largest violation of lines ``hard_count..count-1`` (RVO2's LP3).

    The first ``hard_count`` lines stay hard constraints.  ``(rx, ry)`` is the partial
    result of :func:`solve_incremental` that failed at ``begin``.  ``proj_points`` and
    ``proj_directions`` are scratch buffers with at least ``count`` rows.  Returns the
    velocity (a :class:`~planning_collision.orca.vector.Vector`).
    """
    for k in range(hard_count):
        proj_points[k, 0] = points[k, 0]
        proj_points[k, 1] = points[k, 1]
        proj_directions[k, 0] = directions[k, 0]
        proj_directions[k, 1] = directions[k, 1]
    distance = 0.0
    for i in range(begin, count):
        ix = directions[i, 0]
        iy = directions[i, 1]
        if _det(ix, iy, points[i, 0] - rx, points[i, 1] - ry) > distance:
            # The current result violates line i more than the worst line so far: solve
            # the 1-D problem of equal violation of line i and every earlier soft line.
            n = hard_count
            for j in range(hard_count, i):
                jx = directions[j, 0]
                jy = directions[j, 1]
                determinant = _det(ix, iy, jx, jy)
                if abs(determinant) <= EPSILON:
                    if ix * jx + iy * jy > 0.0:
                        # Same direction: line j adds nothing beyond line i.
                        continue
                    qx = 0.5 * (points[i, 0] + points[j, 0])
                    qy = 0.5 * (points[i, 1] + points[j, 1])
                else:
                    s = _det(jx, jy, points[i, 0] - points[j, 0],
                             points[i, 1] - points[j, 1]) / determinant
                    qx = points[i, 0] + s * ix
                    qy = points[i, 1] + s * iy
                bx = jx - ix
                by = jy - iy
                norm = math.sqrt(bx * bx + by * by)
                proj_points[n, 0] = qx
                proj_points[n, 1] = qy
                proj_directions[n, 0] = bx / norm
                proj_directions[n, 1] = by / norm
                n += 1
            result = solve_incremental(proj_points, proj_directions, n, speed, -iy, ix, True)
            if result.failed_line >= n:
                # Otherwise a rounding error made the (by construction feasible) program
                # fail; the previous result is kept, as in RVO2.
                rx = result.x
                ry = result.y
            distance = _det(ix, iy, points[i, 0] - rx, points[i, 1] - ry)
    return Vector(rx, ry)
