"""Deterministic pseudo-random numbers for symmetry breaking and degenerate cases.

RVO2's examples add random noise (up to 1e-4) to the preferred velocities so that perfectly
symmetric scenes do not freeze.  Here the noise is a pure function of the agent index and a
caller-supplied ``seed`` (the simulator passes its step counter), so results are
reproducible run to run and identical across threads.

What the options of :func:`~planning_collision.orca.velocities.compute_velocities` each
contribute (details and measurements in :mod:`planning_collision.orca.velocities`):

* ``symmetry_breaking`` (this perturbation) makes exact ties unequal -- a perfectly aligned
  head-on pair, agents at the same place -- and seeds asymmetry, deterministically.  On
  its own it does not unlock a symmetric crowd: 32 agents on a circle lock up in a ring
  with perturbations up to 1e-2, as RVO2 does with its random noise;
* ``side_preference`` is what unlocks that ring, by amplifying the perturbation into a
  consistent passing side (it needs one: an unperturbed ring stays symmetric; 1e-2 works,
  1e-3 is too small for the 32-agent ring);
* ``keep_apart`` (with its margin) keeps every pair at least the sum of the radii apart.

The scenario tests (Circle with 250 and 32 agents, Blocks) switch all three on
(perturbation 1e-2, side preference 0.35, ``keep_apart``): it is the combination that both
reaches the goals and keeps every pair apart.
"""

import math

import numba
import numpy as np

from .vector import Vector

_TWO_PI = 2.0 * math.pi


@numba.njit(cache=True, error_model="numpy")
def mix64(x):
    """SplitMix64 finaliser: a well-spread 64-bit hash of a 64-bit integer."""
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, error_model="numpy")
def unit_uniform(a, b):
    """A number in [0, 1) determined by the integers ``a`` and ``b``."""
    h = mix64(np.uint64(mix64(np.uint64(a))) ^ np.uint64(b))
    return float(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, error_model="numpy")
def perturbation(agent, seed, magnitude):
    """Offset of length up to ``magnitude`` in a direction given by ``(agent, seed)``.

    Like RVO2's example noise: uniform angle, uniform length in [0, magnitude).
    """
    angle = _TWO_PI * unit_uniform(2 * agent, seed)
    length = magnitude * unit_uniform(2 * agent + 1, seed)
    return Vector(length * math.cos(angle), length * math.sin(angle))


@numba.njit(cache=True, error_model="numpy")
def pair_direction(agent, other):
    """Unit vector for separating two agents at the same place; opposite for the other one."""
    lo = min(agent, other)
    hi = max(agent, other)
    angle = _TWO_PI * unit_uniform(lo, hi)
    sign = 1.0 if agent == lo else -1.0
    return Vector(sign * math.cos(angle), sign * math.sin(angle))
