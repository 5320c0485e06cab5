"""CheckedSettings answers exactly as compute_velocities does: the same velocities to the bit
(and the same counts, lines and neighbours) on random inputs, the same ValueError for bad
input, and FleetController's steps, which go through it, match compute_velocities call for
call. The oracle is compute_velocities itself, which checks every argument at every call."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.orca import checked_settings
from planning_collision.orca.checked_settings import CheckedSettings
from planning_collision.orca.validation import agent_arrays
from planning_collision.orca.velocities import ConstraintLines
from planning_collision.tracking import Discs

SQUARE = orca.build_obstacles([np.array([[1.0, -0.5], [2.0, -0.5], [2.0, 0.5], [1.0, 0.5]])])


def random_settings(rng) -> dict:
    return dict(time_step=float(rng.choice([0.05, 0.1, 0.25])),
                neighbor_dist=float(rng.uniform(1.0, 6.0)),
                time_horizon=float(rng.uniform(0.5, 3.0)),
                time_horizon_obst=float(rng.uniform(0.5, 3.0)),
                symmetry_breaking=float(rng.choice([0.0, 1e-3])),
                side_preference=float(rng.choice([0.0, 0.35, -0.2])),
                keep_apart=bool(rng.integers(2)),
                keep_apart_margin=float(rng.choice([0.0, 0.05])),
                overlap_time=None if rng.integers(2) else float(rng.uniform(0.2, 1.0)))


def random_lines(rng, n: int) -> ConstraintLines:
    counts = rng.integers(0, 3, n)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    angles = rng.uniform(-math.pi, math.pi, offsets[-1])
    return ConstraintLines(offsets, rng.normal(0.0, 0.3, (offsets[-1], 2)),
                           np.column_stack([np.cos(angles), np.sin(angles)]))


def random_inputs(rng, n: int) -> tuple[tuple, dict]:
    """Arrays as FleetController passes them: float64 points and values, int64 counts, bool
    flags; zeros of both signs among them."""
    positions = rng.uniform(-3.0, 3.0, (n, 2))
    velocities = rng.normal(0.0, 0.5, (n, 2))
    velocities[rng.random((n, 2)) < 0.2] = rng.choice([0.0, -0.0])
    pref = rng.normal(0.0, 0.5, (n, 2))
    per_agent = dict(radius=rng.uniform(0.1, 0.5, n), max_speed=rng.uniform(0.2, 1.5, n),
                     max_neighbors=rng.integers(0, 12, n).astype(np.int64),
                     responsibility=rng.choice([0.0, 0.5, 1.0, 0.3], n),
                     reactive=rng.random(n) < 0.7, seed=int(rng.integers(0, 10**6)),
                     obstacles=SQUARE if rng.integers(2) else None,
                     constraint_lines=random_lines(rng, n) if rng.integers(2) else None,
                     return_lines=bool(rng.integers(2)), return_neighbors=bool(rng.integers(2)))
    return (positions, velocities, pref), per_agent


def assert_same_result(a: orca.VelocityResult, b: orca.VelocityResult) -> None:
    """Bit for bit (-0.0 and +0.0 told apart), every field."""
    for name in ("velocities", "num_neighbors", "infeasible", "num_lines", "num_hard_lines",
                 "num_obstacle_lines", "speed_clamped"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    for name in ("lines", "neighbors"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            for u, v in zip(x, y, strict=True):
                assert u.dtype == v.dtype and u.tobytes() == v.tobytes(), name


def outcome(call):
    try:
        return call(), None
    except ValueError as exc:
        return None, str(exc)


def compare(settings: dict, arrays: tuple, per_agent: dict) -> bool:
    """Both ways; True when they answered (False: both raised the same error)."""
    checked = CheckedSettings(**settings)
    result, error = outcome(lambda: checked.velocities(*arrays, **per_agent))
    expected, expected_error = outcome(lambda: orca.compute_velocities(*arrays, **settings,
                                                                       **per_agent))
    assert error == expected_error
    if expected is not None:
        assert_same_result(result, expected)
    return expected is not None


@pytest.mark.parametrize("seed", range(60))
def test_random_inputs_give_the_same_velocities_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    arrays, per_agent = random_inputs(rng, int(rng.integers(1, 30)))
    assert compare(random_settings(rng), arrays, per_agent)


def test_the_fast_checks_pass_what_the_controller_passes():
    """Float64, int64 and bool arrays within range go straight to the kernel: the fast check
    is what is measured, not a fall-back to compute_velocities."""
    rng = np.random.default_rng(7)
    arrays, per_agent = random_inputs(rng, 24)
    checked = CheckedSettings(**{k: v for k, v in random_settings(rng).items()})
    assert checked.accepted
    assert agent_arrays(*arrays, per_agent["radius"], per_agent["max_speed"],
                        per_agent["responsibility"], per_agent["max_neighbors"],
                        per_agent["reactive"]) is not None


# Each changes one input of an accepted call; the result or the error must be the same.
EDGES = {
    "tiny position": lambda a, p: a[0].__setitem__((0, 1), 1e-150),
    "tiny negative velocity": lambda a, p: a[1].__setitem__((1, 0), -1e-200),
    "tiny radius": lambda a, p: p["radius"].__setitem__(0, 1e-120),
    "negative tiny radius": lambda a, p: p["radius"].__setitem__(0, -1e-120),
    "negative radius": lambda a, p: p["radius"].__setitem__(1, -0.1),
    "nan position": lambda a, p: a[0].__setitem__((2, 0), math.nan),
    "inf preference": lambda a, p: a[2].__setitem__((0, 0), -math.inf),
    "huge velocity": lambda a, p: a[1].__setitem__((0, 0), 2e9),
    "huge max_speed": lambda a, p: p["max_speed"].__setitem__(2, 5e9),
    "responsibility above 1": lambda a, p: p["responsibility"].__setitem__(0, 1.5),
    "negative max_neighbors": lambda a, p: p["max_neighbors"].__setitem__(0, -1),
    "float max_neighbors": lambda a, p: p.__setitem__("max_neighbors",
                                                      p["max_neighbors"].astype(float)),
    "fractional max_neighbors": lambda a, p: p.__setitem__(
        "max_neighbors", p["max_neighbors"] + 0.5),
    "float32 positions": lambda a, p: None,  # replaced below (tuple item)
    "list radius": lambda a, p: p.__setitem__("radius", p["radius"].tolist()),
    "scalar radius": lambda a, p: p.__setitem__("radius", 0.3),
    "int reactive": lambda a, p: p.__setitem__("reactive", p["reactive"].astype(int)),
    "short max_speed": lambda a, p: p.__setitem__("max_speed", p["max_speed"][:-1]),
    "numpy seed": lambda a, p: p.__setitem__("seed", np.int64(5)),
    "bad seed": lambda a, p: p.__setitem__("seed", "x"),
    "bad obstacles": lambda a, p: p.__setitem__("obstacles", [[0.0, 0.0]]),
    "bad threads": lambda a, p: p.__setitem__("threads", 0),
    "two threads": lambda a, p: p.__setitem__("threads", 2),
    "non-unit constraint": lambda a, p: p.__setitem__("constraint_lines", ConstraintLines(
        np.array([0, 1, 1, 1, 1], np.int64), np.zeros((1, 2)), np.array([[2.0, 0.0]]))),
    "negative zero everywhere": lambda a, p: [x.__setitem__(slice(None), -0.0) for x in a],
}


@pytest.mark.parametrize("edge", sorted(EDGES))
def test_edge_inputs_get_the_same_answer_or_the_same_error(edge):
    rng = np.random.default_rng(3)
    arrays, per_agent = random_inputs(rng, 4)
    per_agent.update(constraint_lines=None, return_lines=True)
    arrays = [a.copy() for a in arrays]
    EDGES[edge](arrays, per_agent)
    if edge == "float32 positions":
        arrays[0] = arrays[0].astype(np.float32)
    settings = random_settings(rng)
    compare(settings, tuple(arrays), per_agent)


@pytest.mark.parametrize("change, message", [
    (dict(time_step=1e-10), "time_step must be finite and in [1e-09, 1e+09], got 1e-10"),
    (dict(time_horizon=0.0), "time_horizon must be finite and in [1e-09, 1e+09], got 0.0"),
    (dict(neighbor_dist=2e9), "neighbor_dist must be finite and in [0, 1e+09], got 2"),
    (dict(keep_apart_margin=-1.0),
     "keep_apart_margin must be finite and in [0, 1e+09], got -1.0"),
    (dict(side_preference=math.nan), "side_preference must be finite and <= 1e+09, got nan"),
])
def test_refused_settings_raise_compute_velocities_error_at_every_call(change, message):
    settings = dict(time_step=0.1, neighbor_dist=3.0, time_horizon=2.0, time_horizon_obst=1.0)
    settings.update(change)
    checked = CheckedSettings(**settings)
    assert not checked.accepted
    arrays, per_agent = random_inputs(np.random.default_rng(1), 3)
    for _ in range(2):
        with pytest.raises(ValueError) as raised:
            checked.velocities(*arrays, **per_agent)
        assert str(raised.value).startswith(message)
        compare(settings, arrays, per_agent)
    # A bad array before a bad setting: the array is named first, as compute_velocities does.
    arrays = (np.full((3, 2), math.nan),) + arrays[1:]
    with pytest.raises(ValueError, match="^positions contains NaN or inf"):
        checked.velocities(*arrays, **per_agent)


# ------------------------------------------------------------- the controller's calls
def feed(c: FleetController, i: int, t: float, x: float, y: float, yaw: float, vx: float,
         vy: float, wz: float = 0.0, stamp: float | None = None) -> None:
    qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
    c.odometry(i, t, stamp, x, y, qx, qy, qz, qw, vx, vy, wz)


@pytest.mark.parametrize("seed", range(6))
def test_the_controllers_steps_match_compute_velocities_call_for_call(seed, monkeypatch):
    """Every ORCA call of random fleets (differential drives, acceleration limits, late
    odometry, tracked discs, lines requested) gives what compute_velocities gives for the
    same arguments, and the fast check takes them."""
    calls = {"same": 0, "fallback": 0}
    fast = CheckedSettings.velocities

    def both(self, *arrays, **per_agent):
        result = fast(self, *arrays, **per_agent)
        expected = orca.compute_velocities(*arrays, **self.settings, **per_agent)
        assert_same_result(result, expected)
        calls["same"] += 1
        return result

    def counted(*args, **kw):
        calls["fallback"] += 1
        return orca.compute_velocities(*args, **kw)

    monkeypatch.setattr(CheckedSettings, "velocities", both)
    monkeypatch.setattr(checked_settings, "compute_velocities", counted)
    rng = np.random.default_rng(seed)
    k, m = 4, 3
    controlled = [AgentSpec(f"r{i}", goal=tuple(rng.uniform(-4.0, 4.0, 2)),
                            holonomic=i != 1, max_linear_accel=0.5 if i == 2 else 0.0,
                            max_speed=float(rng.uniform(0.4, 0.8))) for i in range(k)]
    observed = [AgentSpec(f"o{i}", radius=float(rng.uniform(0.2, 0.4))) for i in range(m)]
    settings = FleetSettings(keep_apart=bool(seed % 2), side_preference=0.35 * (seed % 3 > 0),
                             command_latency=0.1 * (seed % 2))
    c = FleetController(controlled, observed, settings)
    where = rng.uniform(-3.0, 3.0, (k + m, 2))
    for s in range(25):
        now = 1.0 + 0.05 * s
        for i in range(k + m):
            if rng.random() < 0.9:
                late = float(rng.choice([0.0, 0.02, 0.3]))
                feed(c, i, now, *where[i], float(rng.uniform(-3, 3)),
                     *rng.normal(0.0, 0.3, 2), stamp=now - late)
        discs = None
        if s % 3:
            d = int(rng.integers(1, 3))
            discs = Discs(rng.uniform(-3.0, 3.0, (d, 2)), rng.normal(0.0, 0.5, (d, 2)),
                          rng.uniform(0.2, 0.4, d))
        c.step(now, SQUARE if s % 2 else None, want_lines=bool(s % 4 == 0), discs=discs)
        where += rng.normal(0.0, 0.05, where.shape)
    assert calls["same"] >= 20 and calls["fallback"] == 0
