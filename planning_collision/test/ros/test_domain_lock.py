"""A run's ROS domain stays locked while any process it started lives, orphans included.

A pytest process ended abruptly (pytest-timeout's os._exit, the hang watchdog's SIGKILL)
leaves its node processes running (each in a session of its own), still in the run's domain.
The domain lock was the pytest process's alone, so a later run could pick that domain and meet
the orphans: a collision_server orphaned in a run on 2026-11-26 kept running for more than
half an hour, and two nodes of the same name answer each other's clients."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from planning_collision.ros import processes

PARENT = """
import os, sys
from planning_collision.ros import processes
domain = processes.pick_domain_id()
child = processes.RosProcess("orphan", [sys.executable, "-c", "import time; time.sleep(120)"],
                             domain, echo=False)
print(domain, child.pid, flush=True)
os._exit(0)  # as pytest-timeout ends a run: nothing stopped
"""


def locked(domain_id: int) -> bool:
    path = processes.domain_lock_path(domain_id)
    assert path.exists(), path
    return processes.flock_held(path)


def test_an_orphan_keeps_its_runs_domain_locked_until_it_ends():
    parent = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True,
                            timeout=60, check=True)
    domain, orphan = map(int, parent.stdout.split())
    try:
        assert locked(domain)  # its run is gone; the orphan holds the domain
    finally:
        os.kill(orphan, signal.SIGKILL)
    deadline = time.monotonic() + 10.0
    while locked(domain) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not locked(domain)  # free again once the last holder is gone
