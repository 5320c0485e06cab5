"""The run summaries of sim/trajectory_contacts.py that the judging scripts share: the smallest
gap between two agents (against scipy's pairwise distances, step by step) and the contacts
as lines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from planning_collision.sim.scenario import parse_scenario
from planning_collision.sim.simulation import FleetSimulation
from planning_collision.sim.trajectory_contacts import contact_lines, smallest_separation


def test_smallest_separation_matches_pairwise_distances_step_by_step():
    rng = np.random.default_rng(7)
    steps, n = 40, 6
    trajectory = {"x": rng.uniform(-3, 3, (steps, n)), "y": rng.uniform(-3, 3, (steps, n)),
                  "radius": rng.uniform(0.1, 0.5, n)}
    expected = math.inf
    for t in range(steps):
        points = np.column_stack([trajectory["x"][t], trajectory["y"][t]])
        gaps = cdist(points, points) - (trajectory["radius"][:, None]
                                        + trajectory["radius"][None, :])
        gaps[np.diag_indices(n)] = np.inf
        expected = min(expected, gaps.min())
    assert smallest_separation(trajectory) == pytest.approx(expected, abs=1e-12)


def test_fewer_than_two_agents_or_no_step_have_no_separation():
    one = {"x": np.zeros((5, 1)), "y": np.zeros((5, 1)), "radius": np.array([0.3])}
    empty = {"x": np.zeros((0, 3)), "y": np.zeros((0, 3)), "radius": np.full(3, 0.3)}
    assert smallest_separation(one) == math.inf
    assert smallest_separation(empty) == math.inf


def test_a_recorded_head_on_contact_is_listed_and_overlaps():
    robots = [{"name": name, "start": [x, 0.0, yaw], "goal": [-x, 0.0], "radius": 0.25,
               "max_speed": 0.5} for name, x, yaw in (("a", -1.0, 0.0), ("b", 1.0, math.pi))]
    sim = FleetSimulation(parse_scenario({"robots": robots}), dt=0.02)
    for _ in range(150):  # 3 s towards each other at 0.5 m/s: the discs touch after 1.5 s
        sim.command("a", (0.5, 0.0, 0.0))
        sim.command("b", (0.5, 0.0, 0.0))
        sim.step()
    trajectory = sim.trajectory()
    lines = contact_lines(trajectory)
    assert lines and lines[0].endswith(" s a-b")
    assert float(lines[0].split(" s ")[0]) == pytest.approx(1.5, abs=0.05)
    assert smallest_separation(trajectory) < 0.0
