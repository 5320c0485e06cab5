"""A node process is as nice as what started it, scheduler group included.

Each RosProcess is a session of its own, and where the kernel groups processes by session
(``sched_autogroup_enabled``) a new session's group starts at nice 0: nodes started under
``nice -n 19`` (a benchmark, a test run beside a measurement) competed for the CPU at full
weight until RosProcess set its group's nice too (found with tools/crossing_per_robot.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from planning_collision.ros import processes

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]

PARENT = """
import sys
from planning_collision.ros import processes
child = processes.RosProcess("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"],
                             processes.pick_domain_id(), echo=False)
print(child.pid, flush=True)
sys.stdin.readline()  # until the test has looked
child.stop()
"""


def niceness(pid: int) -> tuple[int, int | None]:
    """The process's nice, and its autogroup's (None where the kernel has no autogroups)."""
    nice = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
    group = Path(f"/proc/{pid}/autogroup")
    return nice, int(group.read_text().split()[-1]) if group.exists() else None


def test_a_node_process_gets_the_nice_it_is_given_for_itself_and_its_group():
    child = processes.RosProcess("sleeper", SLEEP, processes.pick_domain_id(), echo=False,
                                 nice=7)
    try:
        nice, group = niceness(child.pid)
        assert nice == 7
        assert group in (7, None)
    finally:
        child.stop()


def test_a_node_process_started_under_nice_is_as_nice_by_default():
    parent = subprocess.Popen(["nice", "-n", "5", sys.executable, "-c", PARENT],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = int(parent.stdout.readline())
        nice, group = niceness(pid)
        assert nice == 5
        assert group in (5, None)  # None: this kernel has no autogroups
        parent.stdin.write("\n")
        parent.stdin.flush()
        assert parent.wait(timeout=30) == 0
    finally:
        if parent.poll() is None:
            os.kill(parent.pid, signal.SIGKILL)
            parent.wait()
            if pid is not None and Path(f"/proc/{pid}").exists():
                os.kill(pid, signal.SIGKILL)
