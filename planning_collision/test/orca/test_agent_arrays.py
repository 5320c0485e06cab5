"""validation.agent_arrays, the one-pass check of the agents' arrays that compute_velocities
and CheckedSettings both make: what it passes is what the per-argument checks (the oracle:
as_agent_points, as_agent_values, as_agent_counts, as_agent_flags, each on its own) return,
to the bit; what they refuse it does not pass (they then raise, naming the argument); and
compute_velocities answers the same through it as through the per-argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planning_collision import orca
from planning_collision.orca.validation import (
    agent_arrays,
    as_agent_counts,
    as_agent_flags,
    as_agent_points,
    as_agent_values,
)

NAMES = ("positions", "velocities", "pref_velocities", "radius", "max_speed",
         "responsibility", "max_neighbors", "reactive")


def random_arrays(rng, n: int) -> dict:
    """As FleetController passes them, zeros of both signs and tiny numbers among them."""
    values = dict(positions=rng.uniform(-3.0, 3.0, (n, 2)),
                  velocities=rng.normal(0.0, 0.5, (n, 2)),
                  pref_velocities=rng.normal(0.0, 0.5, (n, 2)),
                  radius=rng.uniform(0.1, 0.5, n), max_speed=rng.uniform(0.0, 1.5, n),
                  responsibility=rng.choice([0.0, 0.5, 1.0, 0.3], n),
                  max_neighbors=rng.integers(0, 12, n).astype(np.int64),
                  reactive=rng.random(n) < 0.7)
    for name in ("positions", "velocities", "pref_velocities"):
        a = values[name]
        a[rng.random((n, 2)) < 0.2] = rng.choice([0.0, -0.0, 1e-150, -1e-200])
    values["max_speed"][rng.random(n) < 0.2] = rng.choice([0.0, -0.0, 1e-120])
    return values


def one_by_one(values: dict) -> tuple:
    """The oracle: each argument through its own check (raises ValueError)."""
    n = np.shape(values["positions"])[0]
    return (as_agent_points(values["positions"], n, "positions"),
            as_agent_points(values["velocities"], n, "velocities"),
            as_agent_points(values["pref_velocities"], n, "pref_velocities"),
            as_agent_values(values["radius"], n, "radius"),
            as_agent_values(values["max_speed"], n, "max_speed"),
            as_agent_values(values["responsibility"], n, "responsibility", maximum=1.0),
            as_agent_counts(values["max_neighbors"], n, "max_neighbors"),
            as_agent_flags(values["reactive"], n, "reactive"))


def check_against_oracle(values: dict) -> bool:
    """True when the one pass took the arrays (then equal to the oracle's to the bit)."""
    try:
        expected = one_by_one(values)
    except ValueError:
        expected = None
    got = agent_arrays(*(values[k] for k in NAMES))
    if expected is None:
        assert got is None
        return False
    if got is None:
        return False  # the oracle accepts what the one pass leaves to it (lists, scalars...)
    for name, a, b in zip(NAMES, got, expected, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.flags.c_contiguous, name
        assert a.tobytes() == b.tobytes(), name  # -0.0 and +0.0 told apart
    return True


@pytest.mark.parametrize("seed", range(20))
def test_plain_arrays_pass_in_one_pass_equal_to_the_checks_one_by_one(seed):
    rng = np.random.default_rng(seed)
    values = random_arrays(rng, int(rng.integers(1, 40)))
    assert check_against_oracle(values)


def test_the_one_pass_copies_the_floats_and_flushes_negative_zero():
    values = random_arrays(np.random.default_rng(0), 5)
    values["positions"][0] = -0.0
    before = {k: v.copy() for k, v in values.items()}
    got = agent_arrays(*(values[k] for k in NAMES))
    assert np.signbit(got[0][0]).tolist() == [False, False]
    got[0][:] = 7.0
    for k in NAMES:  # the caller's arrays untouched
        assert values[k].tobytes() == before[k].tobytes()


EDGES = {
    "nan position": lambda v: v["positions"].__setitem__((1, 0), math.nan),
    "inf preference": lambda v: v["pref_velocities"].__setitem__((0, 1), -math.inf),
    "huge velocity": lambda v: v["velocities"].__setitem__((2, 0), 2e9),
    "largest velocity": lambda v: v["velocities"].__setitem__((2, 0), -1e9),
    "negative radius": lambda v: v["radius"].__setitem__(0, -0.1),
    "negative tiny radius": lambda v: v["radius"].__setitem__(0, -1e-120),
    "negative zero radius": lambda v: v["radius"].__setitem__(0, -0.0),
    "huge max_speed": lambda v: v["max_speed"].__setitem__(1, 5e9),
    "responsibility above 1": lambda v: v["responsibility"].__setitem__(0, 1.0 + 1e-15),
    "negative max_neighbors": lambda v: v["max_neighbors"].__setitem__(0, -1),
    "float max_neighbors": lambda v: v.__setitem__("max_neighbors",
                                                   v["max_neighbors"].astype(float)),
    "int32 max_neighbors": lambda v: v.__setitem__("max_neighbors",
                                                   v["max_neighbors"].astype(np.int32)),
    "int reactive": lambda v: v.__setitem__("reactive", v["reactive"].astype(int)),
    "float32 positions": lambda v: v.__setitem__("positions",
                                                 v["positions"].astype(np.float32)),
    "fortran velocities": lambda v: v.__setitem__("velocities",
                                                  np.asfortranarray(v["velocities"])),
    "strided radius": lambda v: v.__setitem__("radius", np.repeat(v["radius"], 2)[::2]),
    "list radius": lambda v: v.__setitem__("radius", v["radius"].tolist()),
    "scalar max_speed": lambda v: v.__setitem__("max_speed", 0.5),
    "short max_speed": lambda v: v.__setitem__("max_speed", v["max_speed"][:-1]),
    "(n, 3) positions": lambda v: v.__setitem__("positions", np.zeros((4, 3))),
    "no agents": lambda v: v.update({k: a[:0] for k, a in v.items()}),
}


@pytest.mark.parametrize("edge", sorted(EDGES))
def test_what_the_checks_refuse_is_not_passed(edge):
    values = random_arrays(np.random.default_rng(5), 4)
    EDGES[edge](values)
    check_against_oracle(values)


def test_compute_velocities_answers_the_same_through_either_check():
    """Plain arrays take the one pass; the same numbers as lists take the checks one by one
    (the path compute_velocities had alone before): every field to the bit."""
    rng = np.random.default_rng(11)
    for _ in range(10):
        n = int(rng.integers(1, 20))
        values = random_arrays(rng, n)
        assert agent_arrays(*(values[k] for k in NAMES)) is not None
        settings = dict(time_step=0.1, neighbor_dist=float(rng.uniform(1.0, 5.0)),
                        time_horizon=2.0, time_horizon_obst=1.0, keep_apart=True,
                        side_preference=0.35, symmetry_breaking=1e-3, seed=3,
                        return_lines=True, return_neighbors=True)
        fast = orca.compute_velocities(**values, **settings)
        lists = orca.compute_velocities(**{k: v.tolist() for k, v in values.items()},
                                        **settings)
        for name in ("velocities", "num_neighbors", "infeasible", "num_lines",
                     "num_hard_lines", "num_obstacle_lines", "speed_clamped"):
            a, b = getattr(fast, name), getattr(lists, name)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
        for name in ("lines", "neighbors"):
            for a, b in zip(getattr(fast, name), getattr(lists, name), strict=True):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("bad, message", [
    (dict(radius=np.array([0.2, -0.1, 0.2])), "radius"),
    (dict(velocities=np.array([[0.0, 0.0], [math.nan, 0.0], [0.0, 0.0]])), "velocities"),
    (dict(max_neighbors=np.array([1, -1, 2], np.int64)), "max_neighbors"),
    (dict(responsibility=np.array([0.5, 1.5, 0.5])), "responsibility"),
])
def test_a_refused_array_is_named_by_compute_velocities(bad, message):
    values = dict(positions=np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
                  velocities=np.zeros((3, 2)), pref_velocities=np.ones((3, 2)),
                  radius=np.full(3, 0.2), max_speed=np.ones(3),
                  responsibility=np.full(3, 0.5), max_neighbors=np.full(3, 5, np.int64),
                  reactive=np.ones(3, bool))
    values.update(bad)
    with pytest.raises(ValueError, match=f"^{message} "):
        orca.compute_velocities(**values, time_step=0.1, neighbor_dist=3.0, time_horizon=2.0,
                                time_horizon_obst=1.0)
