"""compute_velocities never returns a velocity faster than the agent's max speed (issue #11).

Every returned velocity is finite with ``|v| <= max_speed * (1 + SPEED_TOLERANCE)`` for any
finite input inside ORCA's working range, and input outside that range is refused with a
ValueError naming the argument.  Adversarial magnitudes from 1e-300 to 1e300 and mixes of
them are drawn; the last-line-of-defence clamp must never have had to act.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning_collision.orca import build_obstacles, compute_velocities
from planning_collision.orca.constants import SPEED_TOLERANCE
from planning_collision.orca.validation import MAX_MAGNITUDE, MIN_TIME
from planning_collision.orca.velocities import _within_speed

BASE = dict(time_step=0.1, radius=0.3, max_speed=1.0, neighbor_dist=5.0, max_neighbors=10,
            time_horizon=2.0, time_horizon_obst=2.0)


def check_bounded(result, max_speed, n):
    speed = np.hypot(result.velocities[:, 0], result.velocities[:, 1])
    limit = np.broadcast_to(np.asarray(max_speed, float), (n,)) * (1.0 + SPEED_TOLERANCE)
    assert np.all(np.isfinite(result.velocities))
    assert np.all(speed <= limit), (speed, limit)
    assert not result.speed_clamped.any()  # the programs themselves stayed within the limit


# ---------------------------------------------------------------- the two cases
def test_observed_agent_with_a_huge_twist_is_refused_by_name():
    """Issue #11: an observed agent at (0.8, 0) whose twist is -1e200 m/s made the node
    command 7.9e199 m/s (squares overflowed to inf, inf - inf = NaN in the chord, and NaN
    comparisons let the unclamped point through).  Such a velocity is outside the working
    range: refused, naming the argument."""
    with pytest.raises(ValueError, match=r"^velocities has a value of magnitude 1e\+200"):
        compute_velocities([[0.0, 0.0], [0.8, 0.0]], [[0.0, 0.0], [-1e200, 0.0]],
                           [[1.0, 0.0], [-1e200, 0.0]], responsibility=[0.5, 1.0],
                           reactive=[True, False], **BASE)


def test_own_huge_twist_is_refused_by_name():
    """Issue #11: robA's own twist 1e300 with robB 1 m away gave 3.9e299 m/s."""
    with pytest.raises(ValueError, match=r"^velocities has a value of magnitude 1e\+300"):
        compute_velocities([[0.0, 0.0], [1.0, 0.0]], [[1e300, 0.0], [0.0, 0.0]],
                           [[1.0, 0.0], [0.0, 0.0]], **BASE)


@pytest.mark.parametrize("twist", [-MAX_MAGNITUDE, -1e6, -10.0])
def test_observed_agent_rushing_in_within_the_range_is_avoided_at_max_speed(twist):
    """The same scene inside the working range: robA backs off, at most at its max speed."""
    r = compute_velocities([[0.0, 0.0], [0.8, 0.0]], [[0.0, 0.0], [twist, 0.0]],
                           [[1.0, 0.0], [twist, 0.0]], responsibility=[0.5, 1.0],
                           reactive=[True, False], **BASE)
    check_bounded(r, 1.0, 2)
    assert r.velocities[0, 0] < 0.0  # away from the agent coming at it


@pytest.mark.parametrize("twist", [MAX_MAGNITUDE, 1e6, 10.0])
def test_own_twist_within_the_range_gives_at_most_max_speed(twist):
    for angle in np.linspace(0.0, 2.0 * math.pi, 37):
        v = twist * np.array([math.cos(angle), math.sin(angle)])
        r = compute_velocities([[0.0, 0.0], [1.0, 0.0]], [v, [0.0, 0.0]],
                               [[1.0, 0.0], [0.0, 0.0]], **BASE)
        check_bounded(r, 1.0, 2)


# ------------------------------------------------------------------ adversarial inputs
sign = st.sampled_from([-1.0, 1.0])


def log_uniform(rng, exp_lo, exp_hi, shape):
    return 10.0 ** rng.uniform(exp_lo, exp_hi, shape)


@st.composite
def scenes(draw):
    """Agents clustered around a centre of any magnitude, with spreads, velocities, speeds,
    radii, ranges and times each of an independently drawn magnitude (and some zeros)."""
    n = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # Decimal exponents: in three scenes of four inside the working range (extreme mixes of
    # scales that it accepts), else anywhere in float64's range.
    wild = draw(st.integers(0, 3)) == 0
    e = {name: draw(st.integers(-300, 300) if wild else st.integers(-14, 8))
         for name in ("centre", "spread", "vel", "pref", "speed", "radius", "range", "obst")}
    e.update({name: draw(st.integers(-300, 300) if wild else st.integers(-8, 8))
              for name in ("time", "horizon")})

    def signed(exp, shape, zeros=0.1):
        values = rng.choice([-1.0, 1.0], shape) * log_uniform(rng, exp - 2, exp + 1, shape)
        return values * (rng.random(shape) >= zeros)

    centre = draw(sign) * 10.0 ** e["centre"] * np.array([1.0, draw(st.floats(-1, 1))])
    positions = centre + signed(e["spread"], (n, 2))
    scene = dict(
        positions=positions, velocities=signed(e["vel"], (n, 2)),
        pref_velocities=signed(e["pref"], (n, 2)),
        max_speed=log_uniform(rng, e["speed"] - 1, e["speed"] + 1, n) * (rng.random(n) > 0.1),
        radius=log_uniform(rng, e["radius"] - 1, e["radius"] + 1, n) * (rng.random(n) > 0.1),
        neighbor_dist=log_uniform(rng, e["range"] - 1, e["range"] + 1, n),
        time_horizon=log_uniform(rng, e["horizon"] - 1, e["horizon"] + 1, n),
        time_horizon_obst=log_uniform(rng, e["horizon"] - 1, e["horizon"] + 1, n),
        time_step=float(10.0 ** (e["time"] + rng.uniform(-1, 1))),
        max_neighbors=int(rng.integers(0, 6)), responsibility=rng.random(n),
        reactive=rng.random(n) > 0.2, keep_apart=draw(st.booleans()),
        side_preference=draw(st.sampled_from([0.0, 0.35, -2.0])),
        symmetry_breaking=draw(st.sampled_from([0.0, 1e-4, 10.0 ** e["pref"]])),
        overlap_time=draw(st.sampled_from([None, 10.0 ** e["time"]])),
    )
    polygons = None
    if draw(st.booleans()):
        # A few polygons next to agents, of the obstacle magnitude or of the agents' spread.
        polygons = []
        size = draw(st.sampled_from([e["obst"], e["spread"], e["radius"]]))
        for _ in range(int(rng.integers(1, 4))):
            m = int(rng.integers(2, 7))
            angles = np.sort(rng.uniform(0.0, 2.0 * math.pi, m))
            radii = log_uniform(rng, size - 1, size, m)
            near = positions[rng.integers(n)] + signed(size, 2, zeros=0.3)
            polygons.append(near + radii[:, None]
                            * np.column_stack([np.cos(angles), np.sin(angles)]))
    return scene, polygons


def out_of_range(scene, polygons):
    """Names of the arguments that lie outside the working range."""
    names = []
    for name in ("positions", "velocities", "pref_velocities", "max_speed", "radius",
                 "neighbor_dist", "time_horizon", "time_horizon_obst", "time_step",
                 "overlap_time", "symmetry_breaking"):
        value = scene[name]
        if value is None:
            continue
        value = np.abs(np.asarray(value, float))
        if np.any(value > MAX_MAGNITUDE):
            names.append(name)
        if name.startswith("time") or name == "overlap_time":
            if np.any(value < MIN_TIME):
                names.append(name)
    if polygons is not None and np.abs(np.concatenate(polygons)).max() > MAX_MAGNITUDE:
        names.append("obstacle")
    return names


@settings(max_examples=400, deadline=None)
@given(scenes())
def test_any_finite_input_is_bounded_or_refused_by_name(drawn):
    scene, polygons = drawn
    n = scene["positions"].shape[0]
    bad = out_of_range(scene, polygons)
    try:
        obstacles = None if polygons is None else build_obstacles(polygons)
        result = compute_velocities(**scene, obstacles=obstacles, return_lines=True)
    except ValueError as error:
        message = str(error)
        if "consecutive equal vertices" in message:  # a tiny polygon flushed to a point
            return
        assert bad and any(message.startswith(name) for name in bad), (message, bad)
        return
    assert not bad, bad
    check_bounded(result, np.where(np.abs(scene["max_speed"]) < 1e-100, 0.0,
                                   scene["max_speed"]), n)
    lines = result.lines
    assert np.all(np.isfinite(lines.points)) and np.all(np.isfinite(lines.directions))
    length = np.hypot(lines.directions[:, 0], lines.directions[:, 1])
    assert np.all(np.abs(length - 1.0) < 1e-6)  # no degenerate (NaN or zero) half-plane


# ----------------------------------------------------------------- the root causes, one each
def test_speed_zero_with_a_tiny_preferred_velocity_stays_still():
    """Squares of tiny numbers underflowed: |pref|^2 = 0 was not > max_speed^2 = 0, so a
    pref of 1e-200 was returned for an agent whose max speed is 0."""
    r = compute_velocities([[0.0, 0.0]], [[0.0, 0.0]], [[1e-200, 3e-170]],
                           **{**BASE, "max_speed": 0.0})
    assert np.array_equal(r.velocities, [[0.0, 0.0]]) and not r.speed_clamped.any()


def test_non_reactive_agent_keeps_its_preferred_velocity_up_to_its_max_speed():
    """A non-reactive agent used to get its preferred velocity back whatever its size."""
    r = compute_velocities([[0.0, 0.0], [50.0, 0.0]], np.zeros((2, 2)),
                           [[3.0, 4.0], [0.3, 0.4]], reactive=False, **BASE)
    assert np.allclose(r.velocities, [[0.6, 0.8], [0.3, 0.4]], rtol=0, atol=1e-15)
    check_bounded(r, 1.0, 2)


@pytest.mark.parametrize("twist", [1e6, 1e8, MAX_MAGNITUDE])
def test_a_half_plane_far_from_the_speed_disc_keeps_its_exact_optimum(twist):
    """Two robots side by side, 1 m apart, both measured at ``twist`` m/s along x (a
    glitch, max speed 1).  robA's half-plane from robB is y <= 0.1, but its point lies
    ``twist`` away along the line, and RVO2's chord from |p|^2 lost the unit disc to
    cancellation: at 1e6 robA was 5e-6 too slow, from 1e8 on its chord shrank to the
    point (0, 0.1) instead of (0.995, 0.1).  The far line is solved in its Hesse form."""
    r = compute_velocities([[0.0, 0.0], [0.0, 1.0]], [[twist, 0.0], [twist, 0.0]],
                           [[3.0, 1.0], [0.0, 0.0]], return_lines=True, **BASE)
    assert np.allclose(r.lines.points[0], [twist, 0.1], rtol=1e-15, atol=0.0)
    assert np.allclose(r.velocities[0], [math.sqrt(1.0 - 0.01), 0.1], rtol=0.0, atol=1e-12)
    check_bounded(r, 1.0, 2)


def test_last_line_of_defence_clamps_and_reports():
    assert _within_speed(0.6, 0.8, 1.0) == (0.6, 0.8, False)
    x, y, acted = _within_speed(3.0, 4.0, 1.0)
    assert acted and math.isclose(x, 0.6) and math.isclose(y, 0.8)
    assert _within_speed(math.nan, 0.0, 1.0) == (0.0, 0.0, True)
    assert _within_speed(1e-30, 0.0, 0.0) == (0.0, 0.0, True)
    edge = 1.0 + SPEED_TOLERANCE / 2
    assert _within_speed(edge, 0.0, 1.0) == (edge, 0.0, False)


@pytest.mark.parametrize("change, message", [
    (dict(positions=[[2e9, 0.0], [0.0, 0.0]]), "positions has a value of magnitude 2e"),
    (dict(pref_velocities=[[0.0, -1e10], [0.0, 0.0]]), "pref_velocities has a value"),
    (dict(radius=1e10), r"radius must be finite and in \[0, 1e\+09\], got 10000000000.0"),
    (dict(max_speed=[1.0, 5e9]),
     r"max_speed must be finite and in \[0, 1e\+09\], got 5000000000.0"),
    (dict(time_step=1e-10), r"time_step must be finite and in \[1e-09, 1e\+09\], got 1e-10"),
    (dict(time_horizon=1e-12), r"time_horizon must be finite and in \[1e-09, 1e\+09\], got 1e-12"),
    (dict(time_horizon_obst=2e9),
     r"time_horizon_obst must be finite and in \[1e-09, 1e\+09\], got 2000000000.0"),
    (dict(overlap_time=1e-300),
     r"overlap_time must be finite and in \[1e-09, 1e\+09\], got 1e-300"),
    (dict(side_preference=-1e12), "side_preference has a value of magnitude"),
])
def test_values_outside_the_working_range_are_refused_by_name(change, message):
    args = dict(positions=[[0.0, 0.0], [1.0, 0.0]], velocities=np.zeros((2, 2)),
                pref_velocities=np.zeros((2, 2)), **BASE)
    args.update(change)
    with pytest.raises(ValueError, match="^" + message):
        compute_velocities(**args)


def test_numbers_below_the_floor_count_as_zero():
    tiny = compute_velocities([[0.0, 0.0], [3.0, 1e-101]], [[1e-150, 0.0], [0.0, 0.0]],
                              [[1.0, 0.0], [-1.0, 0.0]], **BASE, return_lines=True)
    zero = compute_velocities([[0.0, 0.0], [3.0, 0.0]], np.zeros((2, 2)),
                              [[1.0, 0.0], [-1.0, 0.0]], **BASE, return_lines=True)
    assert np.array_equal(tiny.velocities, zero.velocities)
    assert np.array_equal(tiny.lines.points, zero.lines.points)
