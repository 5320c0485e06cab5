"""Differential-drive robots: trackable velocities, unicycle commands, safety with the
radius inflated by the tracking-error bound."""

import math

import numpy as np
import pytest

from planning_collision.orca import (
    DiffDriveLimits,
    OrcaSimulator,
    integrate_unicycle,
    max_holonomic_speed,
    trackable_polygon,
    unicycle_commands,
)

LIMITS = [
    DiffDriveLimits(1.0, 1.5, 0.4, 0.1),
    DiffDriveLimits(0.5, 3.0, 0.3, 0.02),
    DiffDriveLimits(2.0, 0.8, 1.0, 0.3),
]


def _random_inside(polygon, rng, count):
    """Random points inside a convex polygon that contains the origin."""
    k = len(polygon)
    points = []
    for _ in range(count):
        e = rng.integers(k)
        a, b = polygon[e], polygon[(e + 1) % k]
        s, t = rng.random(2)
        if s + t > 1:
            s, t = 1 - s, 1 - t
        points.append(s * a + t * b)  # inside the triangle (0, a, b)
    return np.array(points)


@pytest.mark.parametrize("limits", LIMITS)
def test_trackable_polygon_is_convex_and_inside_the_limits(limits):
    poly = trackable_polygon(limits)
    edges = np.roll(poly, -1, axis=0) - poly
    turn = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1,
                                                                              axis=0)[:, 0]
    assert np.all(turn > 0)  # strictly convex, counter-clockwise
    # The origin is inside: every edge has it on its left.
    assert np.all(edges[:, 0] * (0 - poly[:, 1]) - edges[:, 1] * (0 - poly[:, 0]) > 0)
    # Boundary points (vertices and edge points) are trackable.
    t = np.linspace(0, 1, 20)[:, None, None]
    samples = (poly[None] + t * edges[None]).reshape(-1, 2)
    angle = np.arctan2(samples[:, 1], samples[:, 0])
    assert np.all(np.hypot(*samples.T) <= max_holonomic_speed(angle, limits) + 1e-12)
    # It is not uselessly small: straight ahead it allows most of the linear speed.
    assert poly[:, 0].max() > 0.8 * limits.max_linear_speed


@pytest.mark.parametrize("limits", LIMITS)
def test_commands_track_the_holonomic_velocity_within_the_error_bound(limits):
    rng = np.random.default_rng(1)
    poly = trackable_polygon(limits)
    targets = _random_inside(poly, rng, 200)
    headings = rng.uniform(-math.pi, math.pi, len(targets))
    c, s = np.cos(headings), np.sin(headings)
    world = np.column_stack([c * targets[:, 0] - s * targets[:, 1],
                             s * targets[:, 0] + c * targets[:, 1]])
    v, omega = unicycle_commands(world, headings, limits)
    assert np.all(v >= 0) and np.all(v <= limits.max_linear_speed + 1e-12)
    assert np.all(np.abs(omega) <= limits.max_angular_speed + 1e-12)
    theta = np.abs(np.arctan2(targets[:, 1], targets[:, 0]))
    turn_time = np.maximum(limits.time_to_holo, theta / limits.max_angular_speed)
    for i in range(len(targets)):
        # Hold the command for the turn, then drive straight at the holonomic velocity.
        times = np.linspace(0.0, 3.0 * turn_time[i], 300)
        held = np.minimum(times, turn_time[i])
        m = len(times)
        p, _ = integrate_unicycle(np.zeros((m, 2)), np.full(m, headings[i]), np.full(m, v[i]),
                                  np.full(m, omega[i]), held)
        p += np.maximum(0.0, times - turn_time[i])[:, None] * world[i]
        error = np.hypot(*(p - times[:, None] * world[i]).T)
        assert error.max() <= limits.tracking_error * (1 + 1e-9)


def test_unicycle_commands_turn_in_place_for_a_reverse_velocity():
    limits = LIMITS[0]
    v, omega = unicycle_commands([[-0.01, 0.0]], [0.0], limits)
    assert v[0] < 1e-6 and abs(omega[0]) == pytest.approx(limits.max_angular_speed)


def test_integrate_unicycle_is_exact_for_constant_commands():
    p, h = integrate_unicycle(np.zeros((1, 2)), np.zeros(1), np.array([1.0]),
                              np.array([math.pi / 2]), 1.0)
    # Quarter circle of radius 2 / pi.
    assert np.allclose(p[0], [2 / math.pi, 2 / math.pi]) and h[0] == pytest.approx(math.pi / 2)


def test_invalid_limits_raise():
    with pytest.raises(ValueError, match="max_angular_speed"):
        trackable_polygon(DiffDriveLimits(1.0, -1.0, 0.4, 0.1))
    with pytest.raises(ValueError, match="DiffDriveLimits"):
        OrcaSimulator().add_agent((0, 0), diff_drive=(1.0, 1.0, 0.4, 0.1))


SWAP_LIMITS = DiffDriveLimits(0.6, 2.0, 0.4, 0.05)
SWAP_RADIUS = 0.25
SWAP_HORIZON = 2.0


def swap_simulator(n=6, **options):
    """``n`` unicycles on a circle of radius 2.5, facing the centre, to swap places."""
    sim = OrcaSimulator(0.1, 3.0, 10, SWAP_HORIZON, SWAP_HORIZON, SWAP_RADIUS, 0.6, **options)
    angles = np.arange(n) * 2 * np.pi / n
    starts = 2.5 * np.column_stack([np.cos(angles), np.sin(angles)])
    for p, a in zip(starts, angles, strict=True):
        sim.add_agent(p, heading=a + np.pi, diff_drive=SWAP_LIMITS)
    return sim, -starts


def run_swap(n=6, steps=400, **options):
    """Closest distance of the real robots over the run, and the final goal distances."""
    sim, goals = swap_simulator(n, **options)
    closest = np.inf
    for _ in range(steps):
        pos = sim.positions
        d = pos[:, None] - pos[None]
        dist = np.hypot(d[..., 0], d[..., 1]) + np.eye(n) * 1e9
        closest = min(closest, float(dist.min()))
        g = goals - pos
        norm = np.hypot(*g.T)[:, None]
        sim.set_pref_velocities(np.where(norm > 0.5, 0.5 * g / np.maximum(norm, 1e-9), g))
        sim.step()
        cmd = sim.unicycle_commands
        assert np.all(cmd[:, 0] <= SWAP_LIMITS.max_linear_speed + 1e-12)
        assert np.all(np.abs(cmd[:, 1]) <= SWAP_LIMITS.max_angular_speed + 1e-12)
    return closest, np.hypot(*(goals - sim.positions).T)


def test_orca_plans_with_the_radius_inflated_by_the_tracking_error():
    """Read the combined radius back from the ORCA half-planes of the first step.

    The robots start at rest, so each agent half-plane passes through ``u / 2`` with ``u``
    pointing from the cut-off disc (centre ``p / tau``, radius ``R / tau``) to the zero
    relative velocity: its point is ``(|p| - R) / (2 tau)`` along ``p``, which gives ``R``.
    """
    sim, _ = swap_simulator()
    pos = sim.positions
    sim.step()
    polygon_edges = len(trackable_polygon(SWAP_LIMITS))
    inflated = 2 * (SWAP_RADIUS + SWAP_LIMITS.tracking_error)
    checked = 0
    for i in range(sim.num_agents):
        points, _ = sim.orca_lines(i)
        hard = sim.last_result.num_hard_lines[i]
        assert hard == polygon_edges  # the trackable polygon; no separation lines
        assert sim.last_result.num_obstacle_lines[i] == 0
        for k, j in enumerate(sim.neighbors(i)):
            rel = pos[j] - pos[i]
            dist = np.hypot(*rel)
            combined = dist - 2 * SWAP_HORIZON * (points[hard + k] @ rel / dist)
            assert combined == pytest.approx(inflated, abs=1e-9)
            checked += 1
    assert checked == 12  # two neighbours each
    # The simulator keeps the real radius as the agent parameter.
    assert np.allclose(sim.agent_parameter("radius"), SWAP_RADIUS)


def test_diff_drive_robots_swap_without_touching_thanks_to_the_inflated_radius():
    """Six unicycles swap places without keep_apart: ORCA keeps the inflated discs apart
    (up to its tiny least-violation overlaps), so the real discs never touch."""
    closest, dist = run_swap(symmetry_breaking=1e-4, side_preference=0.35)
    assert closest >= 2 * SWAP_RADIUS
    # They come as close as the inflated radii allow (0.5998 measured), not closer: the
    # margin of 2 * tracking_error is what keeps them apart.
    inflated = 2 * (SWAP_RADIUS + SWAP_LIMITS.tracking_error)
    assert inflated - 1e-3 <= closest < inflated + 0.02
    assert dist.max() < 0.3


def test_diff_drive_robots_swap_with_keep_apart():
    """The same swap with hard separation (of the inflated discs) as well."""
    closest, dist = run_swap(symmetry_breaking=1e-4, side_preference=0.35, keep_apart=True)
    assert closest >= 2 * (SWAP_RADIUS + SWAP_LIMITS.tracking_error) - 1e-6
    assert dist.max() < 0.3
