"""How often PolledSubscriptions.take asks a reader for a message: once for keep-last depth 1
(orca_node's odometry: the second take only found nothing), to the bound for deeper queues
(test_orca_polled_odometry checks both hand on the newest, once)."""

from rclpy.qos import HistoryPolicy, QoSProfile

from planning_collision.ros.polled_subscriptions import MAX_TAKEN, takes_per_poll
from planning_collision.ros.qos import LATEST


def test_a_depth_one_reader_is_taken_once_a_deeper_one_drained():
    assert takes_per_poll(LATEST) == 1
    assert takes_per_poll(QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST)) == MAX_TAKEN
    assert takes_per_poll(QoSProfile(depth=1, history=HistoryPolicy.KEEP_ALL)) == MAX_TAKEN
