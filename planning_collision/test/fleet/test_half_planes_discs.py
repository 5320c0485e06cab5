"""The half-planes a step reports when tracked discs (what only sensors see) are in the
problem: orca_node draws them each step with publish_orca_lines or markers on, so with a
scan_topic every step failed (a boolean index over the robots' lines applied to the discs'
lines too: "step failed, commanding zero velocity"), and the robots stood still."""

from __future__ import annotations

import numpy as np

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.tracking import Discs


def test_lines_with_discs_are_the_robots_own_and_drawn():
    c = FleetController([AgentSpec("a", goal=(5.0, 0.0)),
                         AgentSpec("d", holonomic=False, goal=(10.0, 5.0))],
                        settings=FleetSettings(wait_for_all_agents=False, keep_apart=False))
    for i, (x, y, yaw) in enumerate(((0.0, 0.0, 0.0), (10.0, 0.0, 0.3))):
        qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
        assert c.odometry(i, 1.0, None, x, y, qx, qy, qz, qw, 0.0, 0.0, 0.0)
    wall = orca.build_obstacles([np.array([[0.6, -0.5], [1.0, -0.5], [1.0, 0.5],
                                           [0.6, 0.5]])])
    # A person walking between the robots, one standing beside d, one far from both.
    discs = Discs(np.array([[1.5, 1.0], [10.8, 0.6], [30.0, 30.0]]),
                  np.array([[0.0, -1.0], [0.0, 0.0], [1.0, 0.0]]), np.array([0.3, 0.4, 0.3]))
    step = c.step(1.0, wall, want_lines=True, discs=discs)
    assert step.active.tolist() == [True, True]
    lines = step.lines
    # Holonomic a: every line is drawn, the disc's among them (more than the wall's).
    lo, hi = lines.drawn_offsets[0], lines.drawn_offsets[1]
    np.testing.assert_array_equal(lines.drawn_points[lo:hi], lines.per_agent[0][0])
    np.testing.assert_array_equal(lines.drawn_directions[lo:hi], lines.per_agent[0][1])
    assert len(lines.per_agent[0][0]) > step.obstacle_lines[0]
    # Differential-drive d: all but its limits.
    limits = len(c.trackable[1])
    assert hi + len(lines.per_agent[1][0]) - limits == lines.drawn_offsets[2]
    assert lines.drawn_offsets[-1] == len(lines.drawn_points) == len(lines.drawn_directions)
