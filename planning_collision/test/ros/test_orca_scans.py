"""orca_node's sensed objects over DDS (issue #25): a robot's LaserScans of a walking person
become a track on ~/tracks (and a PolygonInstanceStamped for collision_monitor) with the
person's velocity, gone soon after the person is; an external tracker's TrackArray is avoided.
One orca_node process, fed by the test (odometry and scans simulated with sim/laser)."""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import PolygonInstanceStamped
from nav_msgs.msg import Odometry
from ros_clients import Client, close_then_stop
from sensor_msgs.msg import LaserScan

from planning_collision.resources import config_file
from planning_collision.ros.conversions import quaternion_from_yaw
from planning_collision.ros.processes import RosProcess, node_command
from planning_collision.sim.laser import LaserSpec, simulate_scan
from planning_collision_interfaces.msg import OrcaStatus, Track, TrackArray

NS = "sensed"
LASER = LaserSpec(beams=360, range_max=8.0, noise=0.01)


def seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def test_scans_become_tracks_and_external_tracks_are_avoided(domain_id):
    procs, clients = [], []
    try:
        procs.append(RosProcess("orca_scans", node_command(
            "planning_collision.ros.orca_node", [config_file("orca.yaml")], {
                "agents": ["scout"], "scout.goal": [20.0, 0.0], "wait_for_all_agents": False,
                "scan_topic": "scan", "track_polygons_topic": "track_polygons",
                "external_tracks_topic": "people", "publish_markers": False,
                "pref_speed": 0.5}, namespace=NS), domain_id))
        client = Client("orca_scans_test")
        clients.append(client)
        node = client.node
        tracks, polygons, status = [], [], []
        node.create_subscription(TrackArray, f"/{NS}/orca_node/tracks", tracks.append, 10)
        node.create_subscription(PolygonInstanceStamped, f"/{NS}/track_polygons",
                                 polygons.append, 50)
        node.create_subscription(OrcaStatus, f"/{NS}/orca_node/status", status.append, 5)
        odom_pub = node.create_publisher(Odometry, f"/{NS}/scout/odom", 10)
        scan_pub = node.create_publisher(LaserScan, f"/{NS}/scout/scan", 10)
        people_pub = node.create_publisher(TrackArray, f"/{NS}/people", 10)
        world = {"person": True, "start": None}
        rng = np.random.default_rng(0)

        def now() -> float:
            return node.get_clock().now().nanoseconds * 1e-9

        def odometry():
            msg = Odometry()
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.header.frame_id, msg.child_frame_id = "map", "scout/base_link"
            msg.pose.pose.orientation = quaternion_from_yaw(0.0)
            odom_pub.publish(msg)  # the scout stands at the origin (its commands not applied)

        def person_at(t: float):
            """Standing at (3, -3) until the node steps (its first TrackArray: its kernels
            are ready), then walking +y at 1 m/s."""
            if world["start"] is None:
                return np.array([3.0, -3.0])
            return np.array([3.0, -3.0 + 1.0 * max(t - world["start"], 0.0)])

        def scan():
            stamp = node.get_clock().now()
            t = stamp.nanoseconds * 1e-9
            if world["start"] is None and tracks:
                world["start"] = t
            centres = [person_at(t)] if world["person"] else []
            msg = LaserScan()
            msg.header.stamp, msg.header.frame_id = stamp.to_msg(), "scout/base_link"
            msg.angle_min, msg.angle_max = LASER.angle_min, LASER.angle_max
            msg.angle_increment = LASER.angle_increment
            msg.range_min, msg.range_max = LASER.range_min, LASER.range_max
            msg.ranges = simulate_scan((0.0, 0.0, 0.0), LASER, None, centres,
                                       [0.25] * len(centres), rng=rng).tolist()
            scan_pub.publish(msg)

        node.create_timer(0.05, odometry)
        node.create_timer(0.1, scan)

        def tracked():
            if not tracks or not tracks[-1].tracks:
                return False
            t, track = seconds(tracks[-1].header.stamp), tracks[-1].tracks[0]
            truth = person_at(t)
            return (abs(track.position.x - truth[0]) < 0.2
                    and abs(track.position.y - truth[1]) < 0.25
                    and abs(track.velocity.y - 1.0) < 0.3 and abs(track.velocity.x) < 0.3)

        assert client.spin_until(tracked, 60.0), \
            f"no track of the person: {tracks[-1:]}\n" + "\n".join(procs[0].lines[-20:])
        track = tracks[-1].tracks[0]
        assert tracks[-1].header.frame_id == "map" and track.age > 0.0
        assert np.asarray(track.covariance).reshape(4, 4)[2, 2] > 0.0
        assert client.spin_until(lambda: any(p.polygon.id == track.id for p in polygons), 5.0)
        assert len(polygons[-1].polygon.polygon.points) == 8

        world["person"] = False  # gone: the track goes within lost_after (+ DDS)
        gone_at = now()
        assert client.spin_until(lambda: tracks and not tracks[-1].tracks
                                 and seconds(tracks[-1].header.stamp) > gone_at, 5.0)
        assert seconds(tracks[-1].header.stamp) - gone_at < 1.0

        # An external tracker's person standing 0.8 m ahead of the scout, on its way.
        def people():
            msg = TrackArray()
            msg.header.stamp, msg.header.frame_id = node.get_clock().now().to_msg(), "map"
            msg.tracks = [Track(id=7, radius=0.3)]
            msg.tracks[0].position.x = 0.8
            people_pub.publish(msg)

        node.create_timer(0.1, people)

        def avoiding():
            agent = status[-1].agents[0] if status else None
            return (agent is not None and agent.active and agent.agent_neighbors == 1
                    and math.hypot(agent.velocity.x - agent.preferred_velocity.x,
                                   agent.velocity.y - agent.preferred_velocity.y) > 0.05)

        assert client.spin_until(avoiding, 10.0), f"not avoided: {status[-1:]}"
    finally:
        close_then_stop(clients, procs)
