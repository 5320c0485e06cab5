"""orca_node's localization inputs: for agents whose ``pose_source`` is ``pose_topic``, the
localizer's pose (``<name>/amcl_pose``); for ``tf``, the ``global_frame -> odom_frame``
transforms on tf_topic and tf_static_topic (one shared topic when absolute, one per agent
when relative, as Nav2's multi-robot bringup has it). Each message becomes a timestamped
sample of the fleet controller, which does the fusion (:mod:`planning_collision.fleet`).

On a full ROS install tf2_msgs is ROS's own; on the PyPI route it is vendor/tf2_msgs. tf2_ros
(no wheel) is not used: the transforms orca_node needs are single map -> odom edges, which
the controller interpolates itself, the same way on both routes.
"""

from __future__ import annotations

from functools import partial

from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from tf2_msgs.msg import TFMessage

from planning_collision.fleet import POSE_TOPIC, TF

from .orca_parameters import POSE_STAMPED
from .qos import RELIABLE, TF_STATIC, TF_TOPIC


def seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def subscribe_pose_sources(node, fleet, p, warn) -> None:
    """Create the localization subscriptions of ``node`` that feed ``fleet``."""
    names = fleet.names
    sources = [spec.pose_source for spec in fleet.specs]
    pose_type = PoseStamped if p.pose_topic_type == POSE_STAMPED else PoseWithCovarianceStamped
    for i, name in enumerate(names):
        if sources[i] == POSE_TOPIC:
            node.create_subscription(pose_type, f"{name}/{p.pose_topic}",
                                     partial(_on_pose, fleet, p.global_frame, warn, i),
                                     RELIABLE)
    tf_agents = [i for i, source in enumerate(sources) if source == TF]
    for topic, qos, static in ((p.tf_topic, TF_TOPIC, False),
                               (p.tf_static_topic, TF_STATIC, True)):
        shared = topic.startswith("/")
        for i in tf_agents[:1] if shared else tf_agents:
            frames = {p.odom_frame.replace("{name}", names[j]): j
                      for j in (tf_agents if shared else [i])}
            node.create_subscription(TFMessage, topic if shared else f"{names[i]}/{topic}",
                                     partial(_on_tf, fleet, p.global_frame, frames, static),
                                     qos)


def _on_pose(fleet, global_frame: str, warn, i: int, msg) -> None:
    name, frame = fleet.names[i], msg.header.frame_id
    if frame != global_frame:
        warn(f"pose-frame/{name}", f"{name}: localized pose in frame '{frame}' ignored: "
             f"global_frame is '{global_frame}'")
        return
    pose = msg.pose.pose if isinstance(msg, PoseWithCovarianceStamped) else msg.pose
    q = pose.orientation
    fleet.localized_pose(i, seconds(msg.header.stamp), pose.position.x, pose.position.y,
                         q.x, q.y, q.z, q.w)


def _on_tf(fleet, global_frame: str, frames: dict[str, int], static: bool, msg) -> None:
    for t in msg.transforms:
        i = frames.get(t.child_frame_id.lstrip("/"))
        if i is not None and t.header.frame_id.lstrip("/") == global_frame:
            v, q = t.transform.translation, t.transform.rotation
            fleet.odom_transform(i, seconds(t.header.stamp), v.x, v.y, q.x, q.y, q.z, q.w,
                                 static)
