"""orca_node's cloud_topic (issue #25): a depth camera's PointCloud2 of a walking person, its
floor in the cloud, becomes a track with the person's velocity (one orca_node process, fed by
the test: odometry, and clouds simulated with sim/depth_camera); the height band is checked."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from ros_clients import Client, close_then_stop
from sensor_msgs.msg import PointCloud2

from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.orca_parameters import PARAMETERS, check_parameters
from planning_collision.ros.parameters import ParameterError
from planning_collision.ros.point_clouds import xyz_cloud
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.depth_camera import CameraSpec, simulate_cloud
from planning_collision_interfaces.msg import TrackArray

NS = "clouds"
CAMERA = CameraSpec(beams=160, rows=12, fov=1.5, elevation_min=-0.6, elevation_max=0.2,
                    height=0.4, range_max=6.0, noise=0.01)


def seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def test_a_band_that_is_empty_is_refused_by_name():
    values = {p.name: p.default for p in PARAMETERS}
    check_parameters(SimpleNamespace(**{**values, "agents": ["a"]}))
    with pytest.raises(ParameterError, match="cloud_min_z .* must be below cloud_max_z"):
        check_parameters(SimpleNamespace(**{**values, "agents": ["a"], "cloud_min_z": 2.0}))


def test_clouds_of_a_walking_person_become_a_track(domain_id):
    procs, clients = [], []
    try:
        procs.append(RosProcess("orca_clouds", node_command(
            "planning_collision.ros.orca_node", [config_file("orca.yaml")], {
                "agents": ["scout"], "scout.goal": [-20.0, 0.0], "wait_for_all_agents": False,
                "cloud_topic": "points", "publish_markers": False, "pref_speed": 0.5},
            namespace=NS), domain_id))
        client = Client("orca_clouds_test")
        clients.append(client)
        node = client.node
        tracks = []
        node.create_subscription(TrackArray, f"/{NS}/orca_node/tracks", tracks.append, 10)
        odom_pub = node.create_publisher(Odometry, f"/{NS}/scout/odom", 10)
        cloud_pub = node.create_publisher(PointCloud2, f"/{NS}/scout/points", 10)
        world = {"start": None}
        rng = np.random.default_rng(0)

        def odometry():
            msg = Odometry()
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.header.frame_id, msg.child_frame_id = "map", "scout/base_link"
            msg.pose.pose.orientation = quaternion_from_yaw(0.0)
            odom_pub.publish(msg)  # the scout stands at the origin (its commands not applied)

        def person_at(t: float):
            """Standing at (3, -1) until the node steps (its first TrackArray), then walking
            +y at 0.8 m/s."""
            if world["start"] is None:
                return np.array([3.0, -1.0])
            return np.array([3.0, -1.0 + 0.8 * max(t - world["start"], 0.0)])

        def cloud():
            stamp = node.get_clock().now()
            t = stamp.nanoseconds * 1e-9
            if world["start"] is None and tracks:
                world["start"] = t
            points = simulate_cloud((0.0, 0.0, 0.0), CAMERA, None, [person_at(t)], [0.25],
                                    rng=rng)
            cloud_pub.publish(xyz_cloud(points, "scout/base_link", stamp.to_msg()))

        node.create_timer(0.05, odometry)
        node.create_timer(0.1, cloud)

        def tracked():
            if not tracks or world["start"] is None or len(tracks[-1].tracks) != 1:
                return False
            t, track = seconds(tracks[-1].header.stamp), tracks[-1].tracks[0]
            truth = person_at(t)
            return (abs(track.position.x - truth[0]) < 0.2
                    and abs(track.position.y - truth[1]) < 0.25
                    and abs(track.velocity.y - 0.8) < 0.3 and abs(track.velocity.x) < 0.3)

        assert client.spin_until(tracked, 60.0), \
            f"no track of the person: {tracks[-1:]}\n" + "\n".join(procs[0].lines[-20:])
        # the floor, in every cloud, never made a track: only the person is tracked
        assert all(len(msg.tracks) <= 1 for msg in tracks)
    finally:
        close_then_stop(clients, procs)
