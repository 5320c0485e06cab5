"""The README's second quick start works as written: its Python block, run unchanged as a
program of its own, gets an answer from a collision_server that has just started (it waits
for the service and asks again while the answer's error_code says WARMING_UP or NO_MAP)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from planning_collision.resources import config_file
from planning_collision.ros.processes import RosProcess, node_command, ros_environment

README = Path(__file__).resolve().parents[3] / "README.md"


def quick_start_code() -> str:
    section = README.read_text().split("## Quick start 2", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


@pytest.mark.timeout(120)
def test_the_service_quick_start_runs_as_written(domain_id):
    code = quick_start_code()
    assert "timeout_sec" in code and "error_code" in code
    # What the quick start's two `ros2 run` lines start, through the project's launcher.
    nodes = [
        RosProcess("map_publisher", node_command(
            "planning_collision.ros.map_publisher", [config_file("map_publisher.yaml")],
            {"map_yaml": str(config_file("maps/swap_room.yaml"))}), domain_id),
        RosProcess("collision_server", node_command(
            "planning_collision.ros.collision_server", [config_file("collision_server.yaml")]),
            domain_id),
    ]
    try:
        # The client starts at once, as a user's would: no wait here for the server's warm-up
        # or its map (the code's own loop is what is tested).
        result = subprocess.run([sys.executable, "-c", code], env=ros_environment(domain_id),
                                capture_output=True, text=True, timeout=90)
    finally:
        for node in nodes:
            node.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    # The path runs along y = 0 from x = 0 to 1.5 in the middle of the swap room: free.
    assert result.stdout.strip() == "valid", result.stdout + result.stderr
