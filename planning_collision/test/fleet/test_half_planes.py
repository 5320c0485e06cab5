"""Which ORCA half-planes the fleet controller reports for which robot (``step(want_lines=True)``,
what orca_node's markers and status show): every line of an active robot, none of a robot
that is not commanded, and the drawing without the differential-drive limits."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from planning_collision import orca
from planning_collision.common import se2
from planning_collision.fleet import AgentSpec, FleetController, FleetSettings
from planning_collision.fleet.controller import half_planes
from planning_collision.orca.velocities import LineSet

SETTINGS = FleetSettings(wait_for_all_agents=False, keep_apart=False)


def feed(c: FleetController, i: int, t: float, x: float, y: float, yaw: float = 0.0):
    qx, qy, qz, qw = se2.quaternion_from_yaw(yaw)
    assert c.odometry(i, t, None, x, y, qx, qy, qz, qw, 0.0, 0.0, 0.0)


def fleet() -> tuple[FleetController, orca.ObstacleTree]:
    """Controlled: ``unplaced`` (never fed), ``a`` (holonomic, a wall ahead, ``off`` beside
    it), ``d`` (differential drive, the observed ``p`` beside it), ``off`` (disabled);
    observed: ``p``, and ``gone`` (never fed). ``a`` and ``d`` are 10 m apart."""
    c = FleetController(
        [AgentSpec("unplaced"), AgentSpec("a", goal=(5.0, 0.0)),
         AgentSpec("d", holonomic=False, goal=(10.0, 5.0)), AgentSpec("off", enabled=False)],
        [AgentSpec("p"), AgentSpec("gone")], SETTINGS)
    feed(c, 1, 1.0, 0.0, 0.0)
    feed(c, 2, 1.0, 10.0, 0.0, yaw=0.3)
    feed(c, 3, 1.0, 0.0, 0.8)
    feed(c, 4, 1.0, 10.0, 0.9)
    wall = orca.build_obstacles([np.array([[0.6, -0.5], [1.0, -0.5], [1.0, 0.5], [0.6, 0.5]])])
    return c, wall


def drawn(lines, i: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = lines.drawn_offsets[i], lines.drawn_offsets[i + 1]
    return lines.drawn_points[lo:hi], lines.drawn_directions[lo:hi]


def test_lines_only_when_asked_and_only_when_someone_is_in_the_problem():
    c, wall = fleet()
    assert c.step(1.0, wall).lines is None
    assert c.step(1.0, wall, want_lines=True).lines is not None
    nobody = FleetController([AgentSpec("r")], settings=SETTINGS)
    assert nobody.step(1.0, want_lines=True).lines is None


def test_an_agent_not_commanded_has_no_lines_and_each_active_one_has_its_own():
    c, wall = fleet()
    step = c.step(1.0, wall, want_lines=True)
    assert step.active.tolist() == [False, True, True, False]
    lines = step.lines
    assert len(lines.per_agent) == 4  # controlled agents only: observed ones have none
    assert lines.per_agent[0] is None and lines.per_agent[3] is None
    assert np.diff(lines.drawn_offsets).tolist()[0] == 0
    assert np.diff(lines.drawn_offsets).tolist()[3] == 0
    # a: the wall's lines first, then one line for its one neighbour (off); nothing of d's.
    points, directions = lines.per_agent[1]
    assert step.obstacle_lines[1] > 0 and step.agent_neighbors[1] == 1
    assert len(points) == step.obstacle_lines[1] + 1
    # d: no wall near it; its differential-drive limits, then one line for p.
    assert step.obstacle_lines[2] == 0 and step.agent_neighbors[2] == 1
    polygon = c.trackable[2]
    assert len(lines.per_agent[2][0]) == len(polygon) + 1


def test_the_drawing_leaves_out_exactly_the_differential_drive_limits():
    c, wall = fleet()
    step = c.step(1.0, wall, want_lines=True)
    lines = step.lines
    # Holonomic a: everything is drawn.
    for got, want in zip(drawn(lines, 1), lines.per_agent[1], strict=True):
        np.testing.assert_array_equal(got, want)
    # Differential-drive d: all but its limits, which are the trackable polygon at its heading.
    limits = orca.diff_drive_constraints(step.headings[2:3], [c.trackable[2]])
    m = len(c.trackable[2])
    hard = step.obstacle_lines[2]
    points, directions = lines.per_agent[2]
    np.testing.assert_array_equal(points[hard:hard + m], limits.points)
    np.testing.assert_array_equal(directions[hard:hard + m], limits.directions)
    kept = np.r_[0:hard, hard + m:len(points)]
    np.testing.assert_array_equal(drawn(lines, 2)[0], points[kept])
    np.testing.assert_array_equal(drawn(lines, 2)[1], directions[kept])
    assert lines.drawn_offsets[-1] == len(lines.drawn_points) == len(lines.drawn_directions)


def test_each_robot_chose_a_velocity_its_own_lines_permit():
    c, wall = fleet()
    for t in (1.0, 1.05, 1.1):
        step = c.step(t, wall, want_lines=True)
        for i in np.flatnonzero(step.active & ~step.infeasible):
            points, directions = step.lines.per_agent[i]
            rel = step.chosen[i] - points
            # permitted: on the left of each direction (tolerance: the symmetry breaking)
            left = directions[:, 0] * rel[:, 1] - directions[:, 1] * rel[:, 0]
            assert (left >= -(SETTINGS.symmetry_breaking + 1e-9)).all(), (t, i)


class _Result(NamedTuple):
    lines: LineSet
    num_obstacle_lines: np.ndarray


def test_rows_map_back_to_agents_and_only_the_limit_lines_are_left_out_of_the_drawing():
    # Controlled 0 is not in the problem, 1 is active (row 0), 2 is in it but not active
    # (row 1), observed 3 is row 2. Row 0: 2 obstacle lines, 2 limits, 1 agent line.
    points = np.arange(16.0).reshape(8, 2)
    directions = -points
    result = _Result(LineSet(np.array([0, 5, 7, 8]), points, directions),
                     num_obstacle_lines=np.array([2, 0, 0]))
    lines = half_planes(result, rows=np.array([1, 2, 3]), row_of=np.array([-1, 0, 1, 2]),
                        active=np.array([False, True, False]),
                        constraint_counts=np.array([2, 0, 0]))
    assert lines.per_agent[0] is None and lines.per_agent[2] is None
    np.testing.assert_array_equal(lines.per_agent[1][0], points[0:5])
    np.testing.assert_array_equal(lines.per_agent[1][1], directions[0:5])
    assert lines.drawn_offsets.tolist() == [0, 0, 3, 3]
    np.testing.assert_array_equal(lines.drawn_points, points[[0, 1, 4]])
    np.testing.assert_array_equal(lines.drawn_directions, directions[[0, 1, 4]])


@pytest.mark.parametrize("holonomic", [True, False])
def test_an_agent_that_stops_being_commanded_loses_its_lines(holonomic):
    c = FleetController([AgentSpec("r", holonomic=holonomic, goal=(5.0, 0.0)), AgentSpec("s")],
                        settings=SETTINGS)
    feed(c, 0, 1.0, 0.0, 0.0)
    feed(c, 1, 1.0, 1.0, 0.0)
    assert c.step(1.0, want_lines=True).lines.per_agent[0] is not None
    c.set_agent("r", enabled=False)
    step = c.step(1.0, want_lines=True)
    lines = step.lines
    assert lines.per_agent[0] is None and lines.drawn_offsets[1] == 0
    # s still has its own lines, and among them one for r, which stays in the problem.
    assert step.agent_neighbors[1] == 1 and len(lines.per_agent[1][0]) == 1
    assert lines.drawn_offsets[2] == 1
