"""The nodes' console scripts (``ros2 run planning_collision <node>``, ``ros2 launch``).

A node's modules take a second or more to import (numpy, numba, rclpy), and that is when a
launch is most often stopped. Python would answer a SIGINT there with a ``KeyboardInterrupt``
traceback and exit code 1, and a SIGTERM with death by signal. Nothing has been built yet (no
DDS participant, no file), so a stop signal in that window ends the process at once with exit
code 0, as a stop of a running node does. Once the node is being built, :func:`.run.run_node`
installs its own handling (:mod:`.stopping`). This module imports only the standard library.
"""

from __future__ import annotations

import importlib
import os
import signal


def _stopped_while_importing(signum, frame) -> None:
    os._exit(0)


def _run(module: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stopped_while_importing)
    return importlib.import_module(f"planning_collision.ros.{module}").main()


def collision_server() -> int:
    return _run("collision_server")


def fleet_sim() -> int:
    return _run("fleet_sim")


def map_publisher() -> int:
    return _run("map_publisher")


def orca_node() -> int:
    return _run("orca_node")
