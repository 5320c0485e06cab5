"""What orca_node's sensor tests share (issue #25): one orca_node process controlling a scout
that stands at the origin (the test publishes its odometry and never applies its commands),
and a person who stands at ``start`` until the node's first TrackArray (its kernels are then
ready) and then walks at ``velocity``. The test publishes the sensor's messages of that person
and waits for :meth:`StandingScout.tracked`."""

from __future__ import annotations

import numpy as np
from nav_msgs.msg import Odometry

from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision_interfaces.msg import TrackArray


def seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def orca_node(name: str, namespace: str, domain_id: int, **parameters) -> RosProcess:
    """orca_node with the shipped orca.yaml, controlling only the scout, with no markers."""
    return RosProcess(name, node_command(
        "planning_collision.ros.orca_node", [config_file("orca.yaml")], {
            "agents": ["scout"], "wait_for_all_agents": False, "publish_markers": False,
            **parameters}, namespace=namespace), domain_id)


class StandingScout:
    def __init__(self, client, namespace: str, start, velocity):
        self.node = node = client.node
        self.start, self.velocity = np.asarray(start, float), np.asarray(velocity, float)
        self.walking_since: float | None = None
        self.present = True  # the test may take the person away
        self.tracks: list[TrackArray] = []
        node.create_subscription(TrackArray, f"/{namespace}/orca_node/tracks",
                                 self.tracks.append, 10)
        self._odom_pub = node.create_publisher(Odometry, f"/{namespace}/scout/odom", 10)
        node.create_timer(0.05, self._odometry)

    def _odometry(self) -> None:
        msg = Odometry()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.header.frame_id, msg.child_frame_id = "map", "scout/base_link"
        msg.pose.pose.orientation = quaternion_from_yaw(0.0)
        self._odom_pub.publish(msg)

    def person_at(self, t: float) -> np.ndarray:
        if self.walking_since is None:
            return self.start
        return self.start + self.velocity * max(t - self.walking_since, 0.0)

    def sensed_now(self):
        """The stamp of a sensor message measured now, and the people it sees (centres)."""
        stamp = self.node.get_clock().now()
        t = stamp.nanoseconds * 1e-9
        if self.walking_since is None and self.tracks:
            self.walking_since = t
        return stamp, ([self.person_at(t)] if self.present else [])

    def tracked(self, along: float = 0.25) -> bool:
        """The latest TrackArray holds one track, on the person (0.2 m across the walk,
        ``along`` m along it) with the person's velocity (within 0.3 m/s per axis)."""
        if not self.tracks or self.walking_since is None or len(self.tracks[-1].tracks) != 1:
            return False
        t, track = seconds(self.tracks[-1].header.stamp), self.tracks[-1].tracks[0]
        truth = self.person_at(t)
        return (abs(track.position.x - truth[0]) < 0.2 and abs(track.position.y - truth[1]) < along
                and abs(track.velocity.x - self.velocity[0]) < 0.3
                and abs(track.velocity.y - self.velocity[1]) < 0.3)
