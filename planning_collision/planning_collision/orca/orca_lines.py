"""ORCA half-planes ("lines") induced by neighbouring agents and by obstacle edges.

A line is a point and a unit direction; permitted velocities lie to the left of the
direction, as in RVO2.  All quantities are relative to the agent: ``relative position`` is
``other - self`` and velocities live in the agent's velocity space.

Agent lines follow van den Berg et al.: the velocity obstacle of the pair for the time
horizon is a truncated cone; ``u`` is the smallest change of the relative velocity that
leaves it, and the agent takes the share ``responsibility`` of ``u`` (0.5 reciprocal).
When the agents already overlap, the cone is replaced by the disc that would separate them
within ``overlap_time`` (RVO2 uses the time step).

Obstacle lines follow RVO2's ``computeNewVelocity``: each edge (nearest first) is skipped
when earlier obstacle lines already exclude it, otherwise its velocity obstacle (cut-off
segment between two cut-off discs, legs tangent at the convex end vertices) gives one line.
"""

import math
from typing import NamedTuple

import numba
import numpy as np

from .constants import EPSILON, SEPARATION_SLACK
from .symmetry_breaking import pair_direction

#: Fraction of the max speed left out of the parting speed asked of an overlapped agent
#: (:func:`separation_line`): the permitted velocities are then a chord of the speed disc,
#: about ``sqrt(2 * PARTING_SLACK)`` of the max speed long, which the linear program finds
#: whatever its rounding.
PARTING_SLACK = 1e-6


class HalfPlane(NamedTuple):
    """A line in velocity space: permitted velocities lie left of the direction."""

    point_x: float
    point_y: float
    direction_x: float
    direction_y: float


@numba.njit(cache=True, error_model="numpy")
def _apart_single_precision(rpx, rpy, radius, other_radius):
    """RVO2's overlap test ``|p_other - p| ** 2 > (r + r_other) ** 2``, in float32.

    ORCA drives touching pairs to exactly the contact distance, and the half-plane is
    discontinuous there (cone for apart agents, one-step separation disc for overlapping
    ones).  Evaluating this one test with RVO2's single-precision rounding makes pairs at
    contact take RVO2's branch; elsewhere it is the float64 test up to a relative 1e-7.
    """
    x = np.float32(rpx)
    y = np.float32(rpy)
    combined = np.float32(radius) + np.float32(other_radius)
    return x * x + y * y > combined * combined


@numba.njit(cache=True, error_model="numpy")
def agent_line(agent, other, px, py, vx, vy, radius, ox, oy, ovx, ovy, other_radius,
               inv_time_horizon, inv_overlap_time, share):
    """ORCA line (a :class:`HalfPlane`) of ``agent`` with respect to ``other``."""
    rpx = ox - px
    rpy = oy - py
    rvx = vx - ovx
    rvy = vy - ovy
    dist_sq = rpx * rpx + rpy * rpy
    combined = radius + other_radius
    combined_sq = combined * combined
    if _apart_single_precision(rpx, rpy, radius, other_radius):
        # No collision: w is the relative velocity seen from the cut-off disc centre.
        wx = rvx - inv_time_horizon * rpx
        wy = rvy - inv_time_horizon * rpy
        w_len_sq = wx * wx + wy * wy
        dot = wx * rpx + wy * rpy
        if dot < 0.0 and dot * dot > combined_sq * w_len_sq:
            # Closest boundary point is on the cut-off disc.
            w_len = math.sqrt(w_len_sq)
            ux = wx / w_len
            uy = wy / w_len
            dx = uy
            dy = -ux
            scale = combined * inv_time_horizon - w_len
            ux_ = scale * ux
            uy_ = scale * uy
        else:
            # Closest boundary point is on one of the two legs of the cone.
            leg = math.sqrt(max(dist_sq - combined_sq, 0.0))
            if rpx * wy - rpy * wx > 0.0:
                dx = (rpx * leg - rpy * combined) / dist_sq
                dy = (rpx * combined + rpy * leg) / dist_sq
            else:
                dx = -(rpx * leg + rpy * combined) / dist_sq
                dy = -(-rpx * combined + rpy * leg) / dist_sq
            along = rvx * dx + rvy * dy
            ux_ = along * dx - rvx
            uy_ = along * dy - rvy
    else:
        # Overlap: leave the disc of the relative position scaled by 1 / overlap_time.
        wx = rvx - inv_overlap_time * rpx
        wy = rvy - inv_overlap_time * rpy
        w_len = math.sqrt(wx * wx + wy * wy)
        if w_len > 0.0:
            ux = wx / w_len
            uy = wy / w_len
        else:
            # Same place and same velocity (RVO2 divides by zero): a fixed pair direction.
            ux, uy = pair_direction(agent, other)
        dx = uy
        dy = -ux
        scale = combined * inv_overlap_time - w_len
        ux_ = scale * ux
        uy_ = scale * uy
    return HalfPlane(vx + share * ux_, vy + share * uy_, dx, dy)


@numba.njit(cache=True, error_model="numpy")
def _det(ax, ay, bx, by):
    return ax * by - ay * bx


@numba.njit(cache=True, error_model="numpy")
def obstacle_lines(px, py, vx, vy, radius, inv_time_horizon_obst, neighbor_vertices, count,
                   points, directions, next_vertex, prev_vertex, convex, out_points,
                   out_directions):
    """Write the obstacle lines of an agent from row 0 on; returns their number.

    ``neighbor_vertices[:count]`` are the nearby edges (by start vertex), nearest first;
    ``points`` to ``convex`` are fields of an
    :class:`~planning_collision.orca.obstacles.ObstacleTree` (passed apart: per agent,
    taking arrays out of a named tuple would cost numba a reference count each).
    """
    inv_t = inv_time_horizon_obst
    radius_sq = radius * radius
    n_lines = 0
    for k in range(count):
        v1 = neighbor_vertices[k]
        v2 = next_vertex[v1]
        r1x = points[v1, 0] - px
        r1y = points[v1, 1] - py
        r2x = points[v2, 0] - px
        r2y = points[v2, 1] - py

        # Skip the edge when one earlier obstacle line already excludes both cut-off discs.
        covered = False
        for j in range(n_lines):
            lpx = out_points[j, 0]
            lpy = out_points[j, 1]
            ldx = out_directions[j, 0]
            ldy = out_directions[j, 1]
            if (_det(inv_t * r1x - lpx, inv_t * r1y - lpy, ldx, ldy) - inv_t * radius
                    >= -EPSILON
                    and _det(inv_t * r2x - lpx, inv_t * r2y - lpy, ldx, ldy) - inv_t * radius
                    >= -EPSILON):
                covered = True
                break
        if covered:
            continue

        dist_sq1 = r1x * r1x + r1y * r1y
        dist_sq2 = r2x * r2x + r2y * r2y
        ex = points[v2, 0] - points[v1, 0]
        ey = points[v2, 1] - points[v1, 1]
        s = (-r1x * ex - r1y * ey) / (ex * ex + ey * ey)
        qx = -r1x - s * ex
        qy = -r1y - s * ey
        dist_sq_line = qx * qx + qy * qy

        if s < 0.0 and dist_sq1 <= radius_sq:
            # Overlapping the start vertex: move straight away from it (if convex).
            if convex[v1]:
                norm = math.sqrt(dist_sq1)
                out_points[n_lines, 0] = 0.0
                out_points[n_lines, 1] = 0.0
                out_directions[n_lines, 0] = -r1y / norm
                out_directions[n_lines, 1] = r1x / norm
                n_lines += 1
            continue
        if s > 1.0 and dist_sq2 <= radius_sq:
            # Overlapping the end vertex; the next edge handles it unless seen from here.
            if convex[v2] and _det(r2x, r2y, directions[v2, 0], directions[v2, 1]) >= 0.0:
                norm = math.sqrt(dist_sq2)
                out_points[n_lines, 0] = 0.0
                out_points[n_lines, 1] = 0.0
                out_directions[n_lines, 0] = -r2y / norm
                out_directions[n_lines, 1] = r2x / norm
                n_lines += 1
            continue
        if s >= 0.0 and s <= 1.0 and dist_sq_line <= radius_sq:
            # Overlapping the edge itself: forbid moving towards it.
            out_points[n_lines, 0] = 0.0
            out_points[n_lines, 1] = 0.0
            out_directions[n_lines, 0] = -directions[v1, 0]
            out_directions[n_lines, 1] = -directions[v1, 1]
            n_lines += 1
            continue

        # No overlap: the legs of the velocity obstacle.  Seen obliquely, both legs come
        # from one vertex; at a non-convex vertex the leg continues the edge.
        if s < 0.0 and dist_sq_line <= radius_sq:
            if not convex[v1]:
                continue
            v2 = v1
            leg = math.sqrt(dist_sq1 - radius_sq)
            llx = (r1x * leg - r1y * radius) / dist_sq1
            lly = (r1x * radius + r1y * leg) / dist_sq1
            rlx = (r1x * leg + r1y * radius) / dist_sq1
            rly = (-r1x * radius + r1y * leg) / dist_sq1
        elif s > 1.0 and dist_sq_line <= radius_sq:
            if not convex[v2]:
                continue
            v1 = v2
            leg = math.sqrt(dist_sq2 - radius_sq)
            llx = (r2x * leg - r2y * radius) / dist_sq2
            lly = (r2x * radius + r2y * leg) / dist_sq2
            rlx = (r2x * leg + r2y * radius) / dist_sq2
            rly = (-r2x * radius + r2y * leg) / dist_sq2
        else:
            if convex[v1]:
                leg = math.sqrt(dist_sq1 - radius_sq)
                llx = (r1x * leg - r1y * radius) / dist_sq1
                lly = (r1x * radius + r1y * leg) / dist_sq1
            else:
                llx = -directions[v1, 0]
                lly = -directions[v1, 1]
            if convex[v2]:
                leg = math.sqrt(dist_sq2 - radius_sq)
                rlx = (r2x * leg + r2y * radius) / dist_sq2
                rly = (-r2x * radius + r2y * leg) / dist_sq2
            else:
                rlx = directions[v1, 0]
                rly = directions[v1, 1]

        # A leg may not point into the neighbouring edge of a convex vertex; use that edge
        # instead and add no line when the velocity projects on such a "foreign" leg.
        left_neighbor = prev_vertex[v1]
        left_foreign = False
        right_foreign = False
        if convex[v1] and _det(llx, lly, -directions[left_neighbor, 0],
                               -directions[left_neighbor, 1]) >= 0.0:
            llx = -directions[left_neighbor, 0]
            lly = -directions[left_neighbor, 1]
            left_foreign = True
        if convex[v2] and _det(rlx, rly, directions[v2, 0], directions[v2, 1]) <= 0.0:
            rlx = directions[v2, 0]
            rly = directions[v2, 1]
            right_foreign = True

        lcx = inv_t * (points[v1, 0] - px)
        lcy = inv_t * (points[v1, 1] - py)
        rcx = inv_t * (points[v2, 0] - px)
        rcy = inv_t * (points[v2, 1] - py)
        cvx = rcx - lcx
        cvy = rcy - lcy
        same = v1 == v2
        if same:
            t = 0.5
        else:
            t = ((vx - lcx) * cvx + (vy - lcy) * cvy) / (cvx * cvx + cvy * cvy)
        t_left = (vx - lcx) * llx + (vy - lcy) * lly
        t_right = (vx - rcx) * rlx + (vy - rcy) * rly

        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            # Project on the left cut-off disc.
            wx = vx - lcx
            wy = vy - lcy
            norm = math.sqrt(wx * wx + wy * wy)
            wx /= norm
            wy /= norm
            out_directions[n_lines, 0] = wy
            out_directions[n_lines, 1] = -wx
            out_points[n_lines, 0] = lcx + radius * inv_t * wx
            out_points[n_lines, 1] = lcy + radius * inv_t * wy
            n_lines += 1
            continue
        if t > 1.0 and t_right < 0.0:
            # Project on the right cut-off disc.
            wx = vx - rcx
            wy = vy - rcy
            norm = math.sqrt(wx * wx + wy * wy)
            wx /= norm
            wy /= norm
            out_directions[n_lines, 0] = wy
            out_directions[n_lines, 1] = -wx
            out_points[n_lines, 0] = rcx + radius * inv_t * wx
            out_points[n_lines, 1] = rcy + radius * inv_t * wy
            n_lines += 1
            continue

        # Project on the left leg, the right leg or the cut-off segment, whichever is closest.
        inf = math.inf
        if t < 0.0 or t > 1.0 or same:
            d_cut = inf
        else:
            qx = vx - (lcx + t * cvx)
            qy = vy - (lcy + t * cvy)
            d_cut = qx * qx + qy * qy
        if t_left < 0.0:
            d_left = inf
        else:
            qx = vx - (lcx + t_left * llx)
            qy = vy - (lcy + t_left * lly)
            d_left = qx * qx + qy * qy
        if t_right < 0.0:
            d_right = inf
        else:
            qx = vx - (rcx + t_right * rlx)
            qy = vy - (rcy + t_right * rly)
            d_right = qx * qx + qy * qy

        if d_cut <= d_left and d_cut <= d_right:
            dx = -directions[v1, 0]
            dy = -directions[v1, 1]
            out_directions[n_lines, 0] = dx
            out_directions[n_lines, 1] = dy
            out_points[n_lines, 0] = lcx + radius * inv_t * -dy
            out_points[n_lines, 1] = lcy + radius * inv_t * dx
            n_lines += 1
            continue
        if d_left <= d_right:
            if left_foreign:
                continue
            out_directions[n_lines, 0] = llx
            out_directions[n_lines, 1] = lly
            out_points[n_lines, 0] = lcx + radius * inv_t * -lly
            out_points[n_lines, 1] = lcy + radius * inv_t * llx
            n_lines += 1
            continue
        if right_foreign:
            continue
        dx = -rlx
        dy = -rly
        out_directions[n_lines, 0] = dx
        out_directions[n_lines, 1] = dy
        out_points[n_lines, 0] = rcx + radius * inv_t * -dy
        out_points[n_lines, 1] = rcy + radius * inv_t * dx
        n_lines += 1
    return n_lines


@numba.njit(cache=True, error_model="numpy")
def separation_line(agent, other, px, py, radius, ox, oy, other_radius, share, time_step,
                    overlap_time, max_speed):
    """Hard half-plane (a :class:`HalfPlane`) keeping the pair apart during the next step.

    With ``e`` the unit vector towards the other agent and ``gap`` the free distance, the
    agent may approach by at most ``share * gap`` within ``time_step``:
    ``v . e <= share * gap / time_step``.  If both agents obey (shares summing to at most
    1), their distance cannot drop below the sum of the radii during the step, whatever
    their other constraints.  The half-plane contains the zero velocity, so it never makes
    the program infeasible.  Overlapping agents (``gap < 0``) must part at
    ``share * |gap| / overlap_time``, but never faster than the agent can move: a parting
    speed above ``max_speed`` is asked as ``max_speed`` (less ``PARTING_SLACK`` of it, so the
    answer is a short chord of the speed disc, not a single point that rounding may miss).
    Asked for more, the hard lines had no common velocity and the agent stood still while
    whoever overlapped it (a person, who avoids nobody) kept walking into it; asked for its
    max speed it flees straight away from the other disc, as fast as it can, and the pair
    parts as fast as the other allows.  A slack of ``SEPARATION_SLACK`` keeps the zero
    velocity strictly inside for touching agents (it allows overlaps of about 1e-9).
    """
    ex = ox - px
    ey = oy - py
    dist = math.sqrt(ex * ex + ey * ey)
    if dist > 0.0:
        ex /= dist
        ey /= dist
    else:
        ex, ey = pair_direction(agent, other)
        ex = -ex
        ey = -ey
    gap = dist - radius - other_radius
    if gap >= 0.0:
        rate = share * gap / time_step + SEPARATION_SLACK
    else:
        rate = max(share * gap / overlap_time, -max_speed * (1.0 - PARTING_SLACK))
    # Permitted: v . e <= rate, i.e. left of the direction e rotated by +90 degrees.
    return HalfPlane(ex * rate, ey * rate, -ey, ex)
