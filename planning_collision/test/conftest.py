"""Shared fixtures. Importing this applies the project's network rule to the whole test run:
loopback-only discovery and a ROS domain of the run's own, inherited by every node subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Helpers shared by several test folders (warmup_probe.py) live next to this file; pytest
# runs with --import-mode=importlib, which does not put test folders on sys.path.
sys.path.insert(0, str(Path(__file__).parent))

from planning_collision.ros import processes

DOMAIN_ID = processes.pick_domain_id()
processes.apply_network_rule(DOMAIN_ID)


@pytest.fixture(scope="session")
def domain_id() -> int:
    return DOMAIN_ID


@pytest.fixture
def ros_context():
    """A fresh rclpy context for one test, shut down afterwards."""
    import rclpy
    from rclpy.context import Context

    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)


@pytest.fixture
def start_process():
    """Start RosProcess objects that are stopped (SIGINT first) when the test ends."""
    started: list[processes.RosProcess] = []

    def start(name: str, command: list[str], **kwargs) -> processes.RosProcess:
        proc = processes.RosProcess(name, command, DOMAIN_ID, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in reversed(started):
        proc.stop()
