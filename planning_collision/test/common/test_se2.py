"""common.se2: quaternion yaw (any norm), poses, rotations; scipy's Rotation is the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from planning_collision.common import se2

angles = st.floats(-math.pi, math.pi, allow_nan=False)
scales = st.sampled_from([1e-300, 1e-200, 1e-6, 0.1, 1.0, 2.0, 1e6, 1e200, 1e300])


@pytest.mark.parametrize("q", [(0.0, 0.0, 0.7071, 0.7071), (0.0, 0.0, 2.0, 2.0),
                               (0.0, 0.0, 1e-6, 1e-6), (0.0, 0.0, 0.1, 0.1),
                               (0.0, 0.0, 1e300, 1e300), (0.0, 0.0, -3.0, -3.0)])
def test_every_scaling_of_a_quarter_turn_has_yaw_90_degrees(q):
    """The issue's cases: (0,0,2,2) was read as 131 degrees, (0,0,1e-6,1e-6) as about 0."""
    assert se2.quaternion_yaw(*q) == pytest.approx(math.pi / 2, abs=1e-12)
    assert se2.quaternion_yaw(*(np.array([v, v]) for v in q)) == \
        pytest.approx([math.pi / 2] * 2, abs=1e-12)


@pytest.mark.parametrize("q", [(0.0, 0.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 1.0),
                               (0.0, 0.0, math.inf, 1.0), (0.0, -math.inf, 0.0, 0.0)])
def test_zero_and_non_finite_quaternions_have_no_yaw(q):
    assert math.isnan(se2.quaternion_yaw(*q))
    batch = se2.quaternion_yaw(*(np.array([v, 0.0]) for v in q[:3]), np.array([q[3], 1.0]))
    assert math.isnan(batch[0]) and batch[1] == 0.0


@given(st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 4).filter(
    lambda q: sum(v * v for v in q) > 1e-3), scales)
def test_yaw_is_scipys_and_does_not_depend_on_the_norm(q, scale):
    yaw, pitch, _ = Rotation.from_quat(q).as_euler("ZYX")
    assume(abs(pitch) < math.radians(89.0))  # at +-90 degrees of pitch yaw is undefined
    expected = yaw
    scaled = tuple(v * scale for v in q)
    got = se2.quaternion_yaw(*scaled)
    assert math.isfinite(got)
    assert abs(se2.wrap_angle(got - expected)) < 1e-9
    assert se2.quaternion_yaw(*(np.array([v]) for v in scaled))[0] == pytest.approx(got,
                                                                                   abs=1e-15)


@given(angles)
def test_quaternion_from_yaw_round_trips(yaw):
    q = se2.quaternion_from_yaw(yaw)
    assert math.hypot(*q) == pytest.approx(1.0)
    assert abs(se2.wrap_angle(se2.quaternion_yaw(*q) - yaw)) < 1e-12


pose = st.tuples(st.floats(-100, 100), st.floats(-100, 100), angles)


@given(pose, pose)
def test_compose_inverse_and_between_agree(a, b):
    identity = se2.compose(a, se2.inverse(a))
    assert identity[:2] == pytest.approx((0.0, 0.0), abs=1e-9)
    assert abs(se2.wrap_angle(identity[2])) < 1e-12
    back = se2.compose(a, se2.between(a, b))
    assert back[:2] == pytest.approx(b[:2], abs=1e-9)
    assert abs(se2.wrap_angle(back[2] - b[2])) < 1e-12
    # The same with arrays of poses.
    arrays = [np.array([v, v]) for v in a], [np.array([v, v]) for v in b]
    batch = se2.compose(*arrays)
    single = se2.compose(a, b)
    for got, want in zip(batch, single, strict=True):
        assert got == pytest.approx([want, want])


def test_rotate_and_to_body_are_inverse_rotations():
    x, y = se2.rotate(1.0, 0.0, math.pi / 2)
    assert (x, y) == pytest.approx((0.0, 1.0))
    assert se2.to_body(x, y, math.pi / 2) == pytest.approx((1.0, 0.0))
    xs, ys = se2.rotate(np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([math.pi, 0.5]))
    assert xs == pytest.approx([-1.0, -math.sin(0.5)])
    assert ys == pytest.approx([0.0, math.cos(0.5)], abs=1e-15)


def test_interpolate_takes_the_short_way_round():
    a, b = (0.0, 0.0, math.pi - 0.1), (2.0, 4.0, -math.pi + 0.1)
    x, y, yaw = se2.interpolate(a, b, 0.5)
    assert (x, y) == (1.0, 2.0)
    assert abs(se2.wrap_angle(yaw - math.pi)) < 1e-12
    assert se2.interpolate(a, b, 1.5)[:2] == (3.0, 6.0)  # extrapolates


@pytest.mark.parametrize("kind", [float, int, np.float64, np.float32, np.int64,
                                  lambda v: np.array(v)])
def test_every_scalar_kind_takes_the_scalar_path_and_agrees_with_arrays(kind):
    """Python, numpy and 0-d array scalars give a plain float; one-element arrays an array
    with the same value (the scalar test avoids numpy's dispatch, see se2._is_scalar)."""
    yaw, x, y = kind(1), kind(2), kind(-1)
    cases = {
        "quaternion_yaw": (se2.quaternion_yaw, (kind(0), kind(0), kind(1), kind(1))),
        "wrap_angle": (se2.wrap_angle, (kind(7),)),
        "rotate": (se2.rotate, (x, y, yaw)),
        "to_body": (se2.to_body, (x, y, yaw)),
        "quaternion_from_yaw": (se2.quaternion_from_yaw, (yaw,)),
        "inverse": (lambda *p: se2.inverse(p), (x, y, yaw)),
    }
    for name, (fn, args) in cases.items():
        scalar = fn(*args)
        batch = fn(*(np.array([float(a)]) for a in args))
        scalar_parts = scalar if isinstance(scalar, tuple) else (scalar,)
        batch_parts = batch if isinstance(batch, tuple) else (batch,)
        for s, b in zip(scalar_parts, batch_parts, strict=True):
            assert isinstance(s, float), (name, type(s))
            assert isinstance(b, np.ndarray) and b.shape == (1,), name
            assert s == pytest.approx(float(b[0]), abs=1e-15), name
