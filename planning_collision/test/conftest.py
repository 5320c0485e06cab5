"""Shared fixtures. Importing this applies the project's network rule to the whole test run:
loopback-only discovery and a ROS domain of the run's own, inherited by every node subprocess.

Two plugins (files next to this one) watch every test of every pytest process, xdist workers
included: ros_leaks.py fails a test that leaves an rclpy Node, Context or Executor alive (the
autouse fixture ``no_ros_leftovers``), and hang_watchdog.py has an outside process dump every
thread's stack and end the run when one test exceeds ``hang_timeout`` (setup.cfg), even when
the hung thread holds the GIL."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Helpers shared by several test folders (warmup_probe.py) live next to this file; pytest
# runs with --import-mode=importlib, which does not put test folders on sys.path.
sys.path.insert(0, str(Path(__file__).parent))

from planning_collision.ros import processes

pytest_plugins = ["hang_watchdog", "ros_leaks"]

# Property tests explore new examples on every developer run; CI (HYPOTHESIS_PROFILE=ci, set
# by .ci/run) replays the same ones, so that a merge is judged on the code, not on what the
# random search met that day. A counter-example found anywhere becomes an @example.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

DOMAIN_ID = processes.pick_domain_id()
processes.apply_network_rule(DOMAIN_ID)


@pytest.hookimpl(tryfirst=True)  # before test/ros/conftest.py's, which may end the process
def pytest_sessionfinish(session, exitstatus):
    """Remove the Fast DDS shared-memory segments that the session's node processes mapped and
    that no live process owns any more (a node SIGKILLed by a test, or by a stop that had to
    kill): each is 0.5 MB of /dev/shm that nothing else ever removes. RosProcess removes them
    itself when it sees its process end; this catches those whose owner still held the lock
    then. Segments of other runs are never touched (processes.SEEN_SEGMENTS)."""
    removed = processes.remove_dead_segments(processes.SEEN_SEGMENTS)
    if removed:
        print(f"\nremoved {len(removed)} Fast DDS shared-memory segments left by dead "
              f"processes of this session", file=sys.stderr, flush=True)


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
