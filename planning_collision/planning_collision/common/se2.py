"""Planar rigid motions (SE(2)): poses ``(x, y, yaw)``, rotations, and the yaw of a quaternion.

Every function takes scalars or numpy arrays (broadcast element by element) and returns the
same kind, so one copy serves a single message and a whole fleet. A pose ``(x, y, yaw)`` is the
frame of a child in its parent: a point ``p`` of the child is ``R(yaw) p + (x, y)`` in the
parent.

Quaternions. ROS messages carry orientations as quaternions that are not always normalised
(hand-written ``(0, 0, 2, 2)``, or ``(0, 0, 1e-6, 1e-6)`` from a careless producer). The yaw
here is that of the rotation the quaternion stands for, whatever its norm: the formula is
homogeneous of degree two, and the components are first scaled by their largest magnitude so
that neither 1e-200 nor 1e200 underflows or overflows. A zero or non-finite quaternion stands
for no rotation at all; its yaw is NaN, and callers refuse or drop it (see
:func:`quaternion_yaw`).
"""

from __future__ import annotations

import math

import numpy as np

#: Types that are scalars without asking numpy (``np.ndim`` costs about a microsecond a call,
#: more than the scalar arithmetic it guards: orca_node turns every odometry message with it).
_SCALAR_TYPES = (float, int, np.floating, np.integer)


def _is_scalar(value) -> bool:
    return isinstance(value, _SCALAR_TYPES) or np.ndim(value) == 0


def quaternion_yaw(qx, qy, qz, qw):
    """Yaw (rotation about z, radians in [-pi, pi]) of the rotation of quaternion
    ``(qx, qy, qz, qw)``, normalised first; NaN where the quaternion is zero or has a NaN or
    infinite component. Scalars in, a float out; arrays in, an array out."""
    if _is_scalar(qx) and _is_scalar(qy) and _is_scalar(qz) and _is_scalar(qw):
        return _scalar_yaw(float(qx), float(qy), float(qz), float(qw))
    q = np.stack(np.broadcast_arrays(*(np.asarray(v, dtype=np.float64)
                                       for v in (qx, qy, qz, qw))))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.max(np.abs(q), axis=0)
        usable = np.isfinite(scale) & (scale > 0.0)
        x, y, z, w = q / np.where(usable, scale, 1.0)
        yaw = np.arctan2(2.0 * (w * z + x * y), (w * w + x * x) - (y * y + z * z))
    return np.where(usable, yaw, np.nan)


def _scalar_yaw(qx: float, qy: float, qz: float, qw: float) -> float:
    scale = max(abs(qx), abs(qy), abs(qz), abs(qw))
    if not (math.isfinite(scale) and scale > 0.0):
        return math.nan
    x, y, z, w = qx / scale, qy / scale, qz / scale, qw / scale
    return math.atan2(2.0 * (w * z + x * y), (w * w + x * x) - (y * y + z * z))


def quaternion_from_yaw(yaw):
    """The unit quaternion ``(qx, qy, qz, qw)`` of a rotation by ``yaw`` about z."""
    if not _is_scalar(yaw):
        half = 0.5 * np.asarray(yaw, dtype=np.float64)
        zero = np.zeros_like(half)
        return zero, zero.copy(), np.sin(half), np.cos(half)
    half = 0.5 * float(yaw)
    return 0.0, 0.0, math.sin(half), math.cos(half)


def wrap_angle(angle):
    """``angle`` wrapped into [-pi, pi)."""
    if not _is_scalar(angle):
        return (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi
    return (float(angle) + math.pi) % (2.0 * math.pi) - math.pi


def rotate(x, y, yaw):
    """The vector ``(x, y)`` rotated by ``yaw``: ``(cos x - sin y, sin x + cos y)``."""
    if not (_is_scalar(x) and _is_scalar(y) and _is_scalar(yaw)):
        c, s = np.cos(yaw), np.sin(yaw)
        return c * x - s * y, s * x + c * y
    x, y, c, s = float(x), float(y), math.cos(yaw), math.sin(yaw)
    return c * x - s * y, s * x + c * y


def to_body(x, y, yaw):
    """A vector given in the parent frame, expressed in a body frame turned by ``yaw``."""
    return rotate(x, y, -yaw if _is_scalar(yaw) else -np.asarray(yaw))


def compose(parent, child):
    """The pose ``parent * child``: where ``child`` (given in ``parent``'s frame) lies in the
    frame ``parent`` is given in. Poses are ``(x, y, yaw)`` triples of scalars or arrays."""
    px, py, pyaw = parent
    cx, cy, cyaw = child
    dx, dy = rotate(cx, cy, pyaw)
    return px + dx, py + dy, wrap_angle(pyaw + cyaw)


def inverse(pose):
    """The pose ``pose^-1`` (``compose(pose, inverse(pose))`` is the identity)."""
    x, y, yaw = pose
    bx, by = to_body(x, y, yaw)
    return -bx, -by, wrap_angle(-yaw if _is_scalar(yaw) else -np.asarray(yaw))


def between(a, b):
    """The pose of ``b`` in ``a``'s frame: ``inverse(a) * b``."""
    return compose(inverse(a), b)


def interpolate(a, b, fraction):
    """The pose a ``fraction`` (0: ``a``, 1: ``b``) of the way from ``a`` to ``b``: position
    linearly, yaw along the shorter arc. ``fraction`` outside [0, 1] extrapolates."""
    ax, ay, ayaw = a
    bx, by, byaw = b
    turn = wrap_angle(byaw - ayaw)
    return (ax + fraction * (bx - ax), ay + fraction * (by - ay),
            wrap_angle(ayaw + fraction * turn))
