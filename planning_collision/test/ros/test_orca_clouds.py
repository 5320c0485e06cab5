"""orca_node's cloud_topic (issue #25): a depth camera's PointCloud2 of a walking person, its
floor in the cloud, becomes a track with the person's velocity (one orca_node process, fed by
the test: odometry, and clouds simulated with sim/depth_camera); the height band is checked."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from ros_clients import Client, close_then_stop
from sensor_msgs.msg import PointCloud2
from standing_scout import StandingScout, orca_node

from planning_collision.ros.orca_parameters import PARAMETERS, check_parameters
from planning_collision.ros.parameters import ParameterError
from planning_collision.ros.point_clouds import xyz_cloud
from planning_collision.sim.depth_camera import CameraSpec, simulate_cloud

NS = "clouds"
CAMERA = CameraSpec(beams=160, rows=12, fov=1.5, elevation_min=-0.6, elevation_max=0.2,
                    height=0.4, range_max=6.0, noise=0.01)


def test_a_band_that_is_empty_is_refused_by_name():
    values = {p.name: p.default for p in PARAMETERS}
    check_parameters(SimpleNamespace(**{**values, "agents": ["a"]}))
    with pytest.raises(ParameterError, match="cloud_min_z .* must be below cloud_max_z"):
        check_parameters(SimpleNamespace(**{**values, "agents": ["a"], "cloud_min_z": 2.0}))


def test_clouds_of_a_walking_person_become_a_track(domain_id):
    procs, clients = [], []
    try:
        procs.append(orca_node("orca_clouds", NS, domain_id, **{
            "scout.goal": [-20.0, 0.0], "cloud_topic": "points", "pref_speed": 0.5}))
        client = Client("orca_clouds_test")
        clients.append(client)
        scout = StandingScout(client, NS, start=(3.0, -1.0), velocity=(0.0, 0.8))
        cloud_pub = client.node.create_publisher(PointCloud2, f"/{NS}/scout/points", 10)
        rng = np.random.default_rng(0)

        def cloud():
            stamp, people = scout.sensed_now()
            points = simulate_cloud((0.0, 0.0, 0.0), CAMERA, None, people, [0.25] * len(people),
                                    rng=rng)
            cloud_pub.publish(xyz_cloud(points, "scout/base_link", stamp.to_msg()))

        client.node.create_timer(0.1, cloud)
        assert client.spin_until(scout.tracked, 60.0), \
            f"no track of the person: {scout.tracks[-1:]}\n" + "\n".join(procs[0].lines[-20:])
        # the floor, in every cloud, never made a track: only the person is tracked
        assert all(len(msg.tracks) <= 1 for msg in scout.tracks)
    finally:
        close_then_stop(clients, procs)
