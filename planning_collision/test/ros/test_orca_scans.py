"""orca_node's sensed objects over DDS (issue #25): a robot's LaserScans of a walking person
become a track on ~/tracks (and a PolygonInstanceStamped for collision_monitor) with the
person's velocity, gone soon after the person is; an external tracker's TrackArray is avoided.
One orca_node process, fed by the test (odometry and scans simulated with sim/laser)."""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import PolygonInstanceStamped
from ros_clients import Client, close_then_stop
from sensor_msgs.msg import LaserScan
from standing_scout import StandingScout, orca_node, seconds

from planning_collision.sim.laser import LaserSpec, simulate_scan
from planning_collision_interfaces.msg import OrcaStatus, Track, TrackArray

NS = "sensed"
LASER = LaserSpec(beams=360, range_max=8.0, noise=0.01)


def test_scans_become_tracks_and_external_tracks_are_avoided(domain_id):
    procs, clients = [], []
    try:
        procs.append(orca_node("orca_scans", NS, domain_id, **{
            "scout.goal": [20.0, 0.0], "scan_topic": "scan",
            "track_polygons_topic": "track_polygons", "external_tracks_topic": "people",
            "pref_speed": 0.5}))
        client = Client("orca_scans_test")
        clients.append(client)
        node = client.node
        scout = StandingScout(client, NS, start=(3.0, -3.0), velocity=(0.0, 1.0))
        tracks, polygons, status = scout.tracks, [], []
        node.create_subscription(PolygonInstanceStamped, f"/{NS}/track_polygons",
                                 polygons.append, 50)
        node.create_subscription(OrcaStatus, f"/{NS}/orca_node/status", status.append, 5)
        scan_pub = node.create_publisher(LaserScan, f"/{NS}/scout/scan", 10)
        people_pub = node.create_publisher(TrackArray, f"/{NS}/people", 10)
        rng = np.random.default_rng(0)

        def now() -> float:
            return node.get_clock().now().nanoseconds * 1e-9

        def scan():
            stamp, centres = scout.sensed_now()
            msg = LaserScan()
            msg.header.stamp, msg.header.frame_id = stamp.to_msg(), "scout/base_link"
            msg.angle_min, msg.angle_max = LASER.angle_min, LASER.angle_max
            msg.angle_increment = LASER.angle_increment
            msg.range_min, msg.range_max = LASER.range_min, LASER.range_max
            msg.ranges = simulate_scan((0.0, 0.0, 0.0), LASER, None, centres,
                                       [0.25] * len(centres), rng=rng).tolist()
            scan_pub.publish(msg)

        node.create_timer(0.1, scan)
        assert client.spin_until(scout.tracked, 60.0), \
            f"no track of the person: {tracks[-1:]}\n" + "\n".join(procs[0].lines[-20:])
        track = tracks[-1].tracks[0]
        assert tracks[-1].header.frame_id == "map" and track.age > 0.0
        assert np.asarray(track.covariance).reshape(4, 4)[2, 2] > 0.0
        assert client.spin_until(lambda: any(p.polygon.id == track.id for p in polygons), 5.0)
        assert len(polygons[-1].polygon.polygon.points) == 8

        scout.present = False  # gone: the track goes within lost_after (+ DDS)
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
