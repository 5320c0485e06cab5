"""Fixtures of the tests that talk to node processes over DDS (loopback, the run's own domain);
the Client helper and the Fast DDS teardown rules are in ros_clients.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The shared helpers live next to this file (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

import ros_clients  # noqa: E402
from ros_clients import LATCHED, Client  # noqa: E402


def pytest_sessionfinish(session, exitstatus):
    """A client abandoned in a DDS deadlock would hang the interpreter's exit: leave now."""
    if ros_clients.ABANDONED:
        print(f"ending the test process at once: DDS teardown hung for {ros_clients.ABANDONED}",
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(int(exitstatus))


@pytest.fixture
def client():
    c = Client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def client_factory():
    """Make extra Client objects for a module's fixtures; any still open are closed at the end
    of the module (fixtures that own processes close theirs first: close_then_stop)."""
    made: list[Client] = []

    def make(name: str) -> Client:
        c = Client(name)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture(scope="session")
def latched_qos():
    return LATCHED
