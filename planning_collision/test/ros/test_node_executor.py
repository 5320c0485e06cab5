"""NodeExecutor (every node's executor): each callback queued once, timers on time while the
workers are busy. rclpy hands out a callback again until a worker starts it; queuing every
copy made the spinning thread loop, holding the GIL, and starved fleet_sim's 50 Hz timer."""

from __future__ import annotations

import time
from collections import Counter

import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup

from planning_collision.ros.run import NodeExecutor


def test_a_callback_is_queued_once_while_the_workers_are_busy(ros_context):
    node = rclpy.create_node("node_executor_test", context=ros_context)
    ticks: list[float] = []
    slow_calls: list[float] = []

    def slow():  # keeps the only worker busy 40 ms of every 50
        slow_calls.append(time.monotonic())
        time.sleep(0.04)

    node.create_timer(0.01, lambda: ticks.append(time.monotonic()),
                      callback_group=MutuallyExclusiveCallbackGroup())
    node.create_timer(0.05, slow, callback_group=MutuallyExclusiveCallbackGroup())
    executor = NodeExecutor(1, context=ros_context)
    submitted: Counter[int] = Counter()
    alive = []  # every callback stays alive, so no two share an id()
    real_submit = executor._executor.submit

    def submit(fn, *args, **kwargs):
        alive.append(fn)
        submitted[id(fn)] += 1
        return real_submit(fn, *args, **kwargs)

    executor._executor.submit = submit
    executor.add_node(node)
    spins = 0
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            executor.spin_once(0.1)
            spins += 1
    finally:
        executor.stop_callbacks(1.0)
        executor.shutdown(0)
        node.destroy_node()
    assert len(slow_calls) >= 15
    assert max(submitted.values()) == 1, submitted.most_common(3)
    # The 10 ms timer still runs between the slow calls (at most one per slow call, as the
    # only worker is busy 40 of every 50 ms), and the spinning thread waited rather than
    # looping: a few spins per callback, not thousands.
    assert len(ticks) >= 20
    assert spins < 20 * (len(ticks) + len(slow_calls))
