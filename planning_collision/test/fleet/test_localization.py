"""fleet.localization: odometry frames placed in the map by a fixed origin, by the
localizer's pose fused by timestamp, and by tf's map -> odom transforms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planning_collision.common import se2
from planning_collision.fleet.localization import MapFromOdom, PoseHistory


def close(a, b, tol=1e-9):
    return (math.hypot(a[0] - b[0], a[1] - b[1]) < tol
            and abs(se2.wrap_angle(a[2] - b[2])) < tol)


def test_history_interpolates_clamps_and_drops_late_samples():
    h = PoseHistory(span=1.0)
    assert h.pose_at(0.0) is None
    assert h.add(0.0, (0.0, 0.0, 0.0)) and h.add(1.0, (2.0, 4.0, 1.0))
    assert close(h.pose_at(0.25), (0.5, 1.0, 0.25))
    assert h.pose_at(-5.0) == (0.0, 0.0, 0.0) and h.pose_at(9.0) == (2.0, 4.0, 1.0)
    assert not h.add(0.5, (9.0, 9.0, 0.0))  # older than the newest: dropped
    assert close(h.pose_at(0.5), (1.0, 2.0, 0.5))
    h.add(2.5, (3.0, 4.0, 1.0))  # the 0.0 sample is now older than the span
    assert h.times[0] >= 1.0


def test_odom_origin_is_a_fixed_placement():
    m = MapFromOdom("odom_origin", (2.0, 3.0, math.pi / 2))
    assert close(m.map_pose((1.0, 0.0, 0.0)), (2.0, 4.0, math.pi / 2))


def drifting_run(steps=60, dt=0.05):
    """A robot driving a curve; its odometry frame drifts away from the map (a slowly
    turning and sliding map -> odom). Returns per step (t, true map pose, odometry pose,
    true map -> odom)."""
    out = []
    for j in range(steps):
        t = 10.0 + j * dt
        truth = (0.4 * t, math.sin(t), 0.3 * t)
        drift = (0.02 * (t - 10.0), -0.05 * (t - 10.0), 0.01 * (t - 10.0))  # map -> odom
        odom = se2.compose(se2.inverse(drift), truth)
        out.append((t, truth, odom, drift))
    return out


def test_pose_topic_fuses_an_old_localized_pose_by_its_stamp():
    """The localizer's pose is stamped 0.5 s before the newest odometry (AMCL is slow):
    the correction is computed at that stamp, so the newest odometry is placed exactly."""
    run = drifting_run()
    m = MapFromOdom("pose_topic")
    assert m.correction() is None
    for t, _, odom, _ in run[:30]:
        m.add_odometry(t, odom)
    assert m.map_pose(run[29][2]) is None  # no localization yet
    t_loc, truth_loc = run[20][0], run[20][1]
    m.add_pose(t_loc, truth_loc)
    for t, truth, odom, _ in run[30:40]:
        m.add_odometry(t, odom)
        # Drift goes on after the localized pose, so only the drift since then is left.
        placed = m.map_pose(odom)
        drift_since = math.hypot(*(a - b for a, b in zip(run[20][3][:2], run[39][3][:2],
                                                           strict=True)))
        assert math.hypot(placed[0] - truth[0], placed[1] - truth[1]) <= drift_since + 1e-9
    # Between samples (the stamp between two odometry samples) the fusion interpolates.
    m.add_pose(0.5 * (run[35][0] + run[36][0]), se2.interpolate(run[35][1], run[36][1], 0.5))
    placed = m.map_pose(run[36][2])
    assert math.hypot(placed[0] - run[36][1][0], placed[1] - run[36][1][1]) < 2e-3


def test_pose_before_any_odometry_is_used_once_odometry_arrives():
    run = drifting_run()
    m = MapFromOdom("pose_topic")
    m.add_pose(run[0][0], run[0][1])
    m.add_odometry(run[0][0], run[0][2])
    assert close(m.map_pose(run[0][2]), run[0][1])


def test_tf_interpolates_transforms_at_the_odometry_time_and_keeps_statics():
    run = drifting_run()
    m = MapFromOdom("tf")
    assert m.correction() is None
    m.add_transform(0.0, (1.0, 2.0, 0.0), static=True)
    m.add_odometry(run[0][0], run[0][2])
    assert close(m.correction(), (1.0, 2.0, 0.0))  # only a static one so far
    for t, _, _, drift in run[:40:4]:  # transforms at a quarter of the odometry rate
        m.add_transform(t, drift)
    for t, _, odom, _ in run[:37]:
        m.add_odometry(t, odom)
    # The drift is linear in time, so interpolating the transforms is exact.
    assert close(m.map_pose(run[36][2]), run[36][1], 1e-9)
    # Odometry newer than the newest transform: the newest transform is used.
    m.add_odometry(run[50][0], run[50][2])
    assert close(m.correction(), run[36][3])


@given(st.floats(-50, 50), st.floats(-50, 50), st.floats(-3, 3),
       st.floats(-50, 50), st.floats(-50, 50), st.floats(-3, 3))
def test_fusion_recovers_the_map_to_odom_transform(ox, oy, oyaw, px, py, pyaw):
    drift = (ox, oy, oyaw)
    odom = (px, py, pyaw)
    truth = se2.compose(drift, odom)
    m = MapFromOdom("pose_topic")
    m.add_odometry(1.0, odom)
    m.add_pose(1.0, truth)
    corr = m.correction()
    assert corr[:2] == pytest.approx(drift[:2], abs=1e-9)
    assert abs(se2.wrap_angle(corr[2] - oyaw)) < 1e-9


def test_unknown_source_is_refused():
    with pytest.raises(ValueError, match="pose source"):
        MapFromOdom("gps")
