"""NodeExecutor (every node's executor): each callback queued once, timers on time while the
workers are busy, on both spin paths (spin_once and spin_until_future_complete). rclpy hands
out a callback again until a worker starts it; queuing every copy made the spinning thread
loop, holding the GIL, and starved fleet_sim's 50 Hz timer. rclpy fixed that itself in
ros2/rclpy#1547; NodeExecutor steps aside where the installed rclpy has the fix."""

from __future__ import annotations

import time
from collections import Counter
from functools import partial

import pytest
import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)
from rclpy.task import Future

from planning_collision.ros.node_executor import NodeExecutor, queues_each_callback_once


class RequeuingExecutor(MultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor as released without ros2/rclpy#1547 (rclpy 7.1 to 9.1):
    every callback handed out is queued again."""

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ShutdownException, ExternalShutdownException, TimeoutException,
                ConditionReachedException):
            return
        self._executor.submit(handler)


def busy_node(context):
    """A node with a 10 ms timer and a slow timer that keeps one worker busy 40 ms of every
    50, each in a group of its own; returns the node and the lists of their call times."""
    node = rclpy.create_node("node_executor_test", context=context)
    ticks: list[float] = []
    slow_calls: list[float] = []

    def slow():
        slow_calls.append(time.monotonic())
        time.sleep(0.04)

    node.create_timer(0.01, lambda: ticks.append(time.monotonic()),
                      callback_group=MutuallyExclusiveCallbackGroup())
    node.create_timer(0.05, slow, callback_group=MutuallyExclusiveCallbackGroup())
    return node, ticks, slow_calls


def count_submissions(executor: NodeExecutor) -> Counter[int]:
    """How many times each callback was handed to the worker pool, by id."""
    submitted: Counter[int] = Counter()
    alive = []  # every callback stays alive, so no two share an id()
    real_submit = executor._executor.submit

    def submit(fn, *args, **kwargs):
        alive.append(fn)
        submitted[id(fn)] += 1
        return real_submit(fn, *args, **kwargs)

    executor._executor.submit = submit
    return submitted


@pytest.mark.parametrize("path", ["spin_once", "spin_until_future_complete"])
def test_a_callback_is_queued_once_while_the_workers_are_busy(ros_context, path):
    node, ticks, slow_calls = busy_node(ros_context)
    executor = NodeExecutor(1, context=ros_context, queue_once=True)
    submitted = count_submissions(executor)
    executor.add_node(node)
    spins = 0
    try:
        if path == "spin_once":
            end = time.monotonic() + 1.5
            while time.monotonic() < end:
                executor.spin_once(0.1)
                spins += 1
        else:
            never = Future()
            executor.spin_until_future_complete(never, timeout_sec=1.5)
            never.cancel()
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


def test_the_detection_tells_an_executor_that_requeues_from_one_that_does_not(ros_context):
    assert not queues_each_callback_once(RequeuingExecutor, ros_context)
    assert queues_each_callback_once(partial(NodeExecutor, queue_once=True), ros_context)
    # Without its own rule NodeExecutor is exactly as good as the installed rclpy, and by
    # default it applies its rule exactly where that rclpy needs it.
    installed = queues_each_callback_once(MultiThreadedExecutor, ros_context)
    assert queues_each_callback_once(partial(NodeExecutor, queue_once=False),
                                     ros_context) == installed
    executor = NodeExecutor(2, context=ros_context)
    try:
        assert executor.queue_once == (not installed)
    finally:
        executor.shutdown_now()
    print(f"rclpy {'queues each callback once' if installed else 're-queues callbacks'}: "
          f"NodeExecutor queue_once={not installed}")


def test_stepping_aside_it_still_runs_callbacks_and_stops_them_in_bounded_time(ros_context):
    """With queue_once False (an rclpy with #1547) rclpy queues the callbacks and NodeExecutor
    keeps the bounded stop: a callback running at the stop is waited for, up to the timeout."""
    node, ticks, slow_calls = busy_node(ros_context)
    executor = NodeExecutor(2, context=ros_context, queue_once=False)
    executor.add_node(node)
    try:
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(0.1)
        started = time.monotonic()
        assert executor.stop_callbacks(1.0)
        assert time.monotonic() - started < 0.2  # at most one slow call (40 ms) to finish
        calls = len(slow_calls)
        time.sleep(0.1)
        assert len(slow_calls) == calls  # nothing started after the stop
    finally:
        executor.shutdown_now()
        node.destroy_node()
    assert len(ticks) >= 10 and len(slow_calls) >= 5
