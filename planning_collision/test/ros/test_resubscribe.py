"""Resubscriber (ros/resubscribe.py): a subscription whose publisher matched but sent nothing
is made again a bounded number of times, then one warning; the last one still delivers."""

from __future__ import annotations

import time

import pytest
import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor

from planning_collision.ros.parameters import ParameterError
from planning_collision.ros.resubscribe import Resubscriber

AFTER = 0.2


@pytest.fixture
def silent_publisher(ros_context):
    """A subscriber node and a publisher node on topic 'resub_odom' that publishes nothing
    until told; destroyed after the test."""
    subscriber = rclpy.create_node("resub_subscriber", context=ros_context)
    publisher_node = rclpy.create_node("resub_publisher", context=ros_context)
    publisher = publisher_node.create_publisher(Odometry, "resub_odom", 10)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(subscriber)
    try:
        yield subscriber, publisher, executor
    finally:
        executor.shutdown(timeout_sec=0.0)
        publisher_node.destroy_node()
        subscriber.destroy_node()


def run_checks(resubscriber: Resubscriber, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        resubscriber.check()
        time.sleep(0.02)


def wait_matched(node, topic: str) -> None:
    deadline = time.monotonic() + 10.0
    while node.count_publishers(topic) == 0 or not any(
            s.get_publisher_count() for s in node.subscriptions if s.topic_name == f"/{topic}"):
        assert time.monotonic() < deadline, "the publisher never matched"
        time.sleep(0.02)


def test_a_silent_matched_publisher_gets_a_few_new_subscriptions_then_one_warning(
        silent_publisher):
    subscriber, publisher, executor = silent_publisher
    warnings: list[str] = []
    received = []
    resubscriber = Resubscriber(subscriber, lambda key, text: warnings.append(text),
                                after=AFTER, tries=2)
    resubscriber.subscribe(0, Odometry, "resub_odom", received.append, 10)
    wait_matched(subscriber, "resub_odom")
    made: list = []  # every subscription made, kept alive so that none shares an id()

    def note_new() -> None:
        for s in subscriber.subscriptions:
            if s.topic_name == "/resub_odom" and not any(s is m for m in made):
                made.append(s)

    note_new()
    # 3 subscriptions (the first and 2 more) of AFTER s each, then well past the next.
    end = time.monotonic() + 6 * AFTER + 1.0
    while time.monotonic() < end:
        resubscriber.check()
        note_new()
        time.sleep(0.02)
    assert len(made) == 3
    assert [w for w in warnings if "; subscribing again" in w] == [
        "resub_odom: its publisher matched but sent nothing in 0.2 s; subscribing again "
        "(1 of 2)",
        "resub_odom: its publisher matched but sent nothing in 0.2 s; subscribing again "
        "(2 of 2)"]
    gave_up = [w for w in warnings if "not subscribing again" in w]
    assert len(gave_up) == 1 and "3 subscriptions of 0.2 s each" in gave_up[0]
    assert len(warnings) == 3
    # The last subscription still delivers what the publisher sends later.
    wait_matched(subscriber, "resub_odom")
    deadline = time.monotonic() + 10.0
    while not received and time.monotonic() < deadline:
        publisher.publish(Odometry())
        executor.spin_once(timeout_sec=0.05)
    assert received


def test_a_publisher_that_sends_is_never_subscribed_again(silent_publisher):
    subscriber, publisher, executor = silent_publisher
    warnings: list[str] = []
    received = []
    resubscriber = Resubscriber(subscriber, lambda key, text: warnings.append(text),
                                after=AFTER, tries=2)
    resubscriber.subscribe(0, Odometry, "resub_odom", received.append, 10)
    wait_matched(subscriber, "resub_odom")
    first = next(s for s in subscriber.subscriptions if s.topic_name == "/resub_odom")
    deadline = time.monotonic() + 10.0
    while not received and time.monotonic() < deadline:
        publisher.publish(Odometry())
        executor.spin_once(timeout_sec=0.05)
    assert received
    run_checks(resubscriber, 3 * AFTER)
    assert [s for s in subscriber.subscriptions if s.topic_name == "/resub_odom"] == [first]
    assert warnings == []


def test_zero_tries_turns_the_workaround_off(silent_publisher):
    subscriber, _, _ = silent_publisher
    warnings: list[str] = []
    resubscriber = Resubscriber(subscriber, lambda key, text: warnings.append(text),
                                after=AFTER, tries=0)
    resubscriber.subscribe(0, Odometry, "resub_odom", lambda msg: None, 10)
    wait_matched(subscriber, "resub_odom")
    first = next(s for s in subscriber.subscriptions if s.topic_name == "/resub_odom")
    run_checks(resubscriber, 3 * AFTER)
    assert [s for s in subscriber.subscriptions if s.topic_name == "/resub_odom"] == [first]
    assert warnings == []


@pytest.mark.parametrize("tries", [-1, 1.5, True])
def test_a_bad_count_is_named(tries):
    with pytest.raises(ParameterError, match="odometry_resubscribe_tries must be an integer"):
        Resubscriber(None, print, tries=tries)
