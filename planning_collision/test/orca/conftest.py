"""Fixtures of the ORCA tests: recorded RVO2 runs of the issue's three scenarios."""

import sys
from pathlib import Path

import pytest

# The shared helpers live next to this file (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

from orca_scenarios import (  # noqa: E402
    BLOCKS_OBSTACLES,
    BLOCKS_PARAMS,
    CIRCLE_PARAMS,
    OracleRun,
    blocks_agents,
    circle_positions,
    record_rvo2,
)


@pytest.fixture(scope="session")
def circle250_run() -> OracleRun:
    """RVO2's Circle: 250 agents, radius 200; 150 states from the approach to the jam."""
    starts = circle_positions(250, 200.0)
    return record_rvo2(CIRCLE_PARAMS, starts, -starts, steps=1500, every=10)


@pytest.fixture(scope="session")
def circle32_run() -> OracleRun:
    """32 agents on a circle of radius 30 (neighbours from the first step); 150 states."""
    starts = circle_positions(32, 30.0)
    return record_rvo2(CIRCLE_PARAMS, starts, -starts, steps=600, every=4)


@pytest.fixture(scope="session")
def blocks_run() -> OracleRun:
    """RVO2's Blocks with perturbed preferred velocities; 163 states over the whole run."""
    starts, goals = blocks_agents()
    return record_rvo2(BLOCKS_PARAMS, starts, goals, obstacles=BLOCKS_OBSTACLES, steps=3250,
                       every=20, noise=1e-4, seed=1)
