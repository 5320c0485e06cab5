"""A Ctrl-C that reaches a node while its modules are still being imported (numpy, numba,
rclpy: a second or more on a loaded machine, the moment ``ros2 launch`` is most often stopped)
ends the process quietly with exit code 0, as one during spinning does (ros/entry_points.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from importlib.metadata import distribution
from pathlib import Path

import pytest

from planning_collision.ros import processes

NODES = ("collision_server", "fleet_sim", "map_publisher", "orca_node")


def console_script(name: str) -> str:
    (target,) = [ep.value for ep in distribution("planning_collision").entry_points
                 if ep.group == "console_scripts" and ep.name == name]
    return target


def catches(pid: int, sig: int) -> bool:
    """Whether the process has a handler of its own for ``sig`` (Linux: /proc's SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


@pytest.mark.parametrize("name", NODES)
def test_a_stop_while_the_node_is_still_importing_ends_it_quietly(name, domain_id):
    module, _, function = console_script(name).partition(":")
    # What the console script that colcon and pip write does, and nothing more.
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    proc = subprocess.Popen([sys.executable, "-c", code], env=processes.ros_environment(domain_id),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Python catches SIGINT from its start; SIGTERM is caught only once the entry point
        # runs. Signal then, or after 0.3 s at most: either way the imports are under way.
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline and not catches(proc.pid, signal.SIGTERM):
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
