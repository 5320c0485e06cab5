"""Running a node until SIGINT or SIGTERM, promptly and cleanly.

``rclpy.init`` installs handlers for both signals that shut the context down. Spinning in short
``spin_once`` slices (rather than ``rclpy.spin``) makes the loop notice that shutdown even when
the signal lands just after a client disconnected, which plain ``spin`` sometimes missed until a
second signal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

SPIN_SLICE = 0.25


def run_node(
    make_node: Callable[[], Node],
    args: Sequence[str] | None = None,
    threads: int | None = None,
) -> int:
    """Init rclpy with ``args``, build the node, spin a MultiThreadedExecutor until shutdown."""
    rclpy.init(args=list(sys.argv if args is None else args))
    node = None
    executor = MultiThreadedExecutor(num_threads=threads)
    try:
        node = make_node()
        executor.add_node(node)
        while rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_SLICE)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise
        # A signal shut the context down while the node was being built: a clean stop.
    finally:
        executor.shutdown(timeout_sec=1.0)
        if node is not None:
            close = getattr(node, "close", None)
            if close is not None:
                close()
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
