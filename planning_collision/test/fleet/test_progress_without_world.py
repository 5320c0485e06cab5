"""Deadlock resolution without a world (issue #22: "the antipodal circles have 0 deadlocks").

The progress monitor (fleet/progress.py) was created only by ``FleetController.set_world``,
which the bench calls for scenes with walls and orca_node only when a map arrives: a fleet in
open space, or any deployment without a map, had no deadlock resolution. Seen in the
bench's antipodal circle of 30, seed 87: robot23 stood from 27 s on, 2.6 m short of its
goal, with robot25 parked at its goal right ahead and robot26 parked beside it; nobody asked
them to make room and the bench stopped the run as a deadlock at 86.8 s. The controller now
has its monitor from the start, and a new world (every map orca_node receives) keeps its
stall clocks.
"""

from __future__ import annotations

import numpy as np
from narrow_maps import shipped_settings

from planning_collision.fleet import AgentSpec, FleetController
from planning_collision.fleet.progress import ProgressMonitor
from planning_collision.sim.fleet_loop import run_scenario
from planning_collision.sim.scenario import Robot, Scenario
from planning_collision.sim.scenes import make_scene

# The three robots of that knot as they stood at the end of the failed run (poses, goals).
KNOT = Scenario((
    Robot("robot23", (-2.123, 4.72, 1.389), (0.4991, 4.7485), 0.25, 0.6, "holonomic"),
    Robot("robot25", (-1.448, 4.625, -2.041), (-1.4754, 4.5410), 0.25, 0.6, "unicycle"),
    Robot("robot26", (-2.342, 4.129, 2.174), (-2.3873, 4.1350), 0.25, 0.6, "holonomic"),
))
STEP = 0.02  # the circles' time step in the bench


def without_monitor(controller, grid, obstacles):
    """The former controller in open space: no progress monitor."""
    controller.progress = None


def test_the_controller_has_its_monitor_without_a_world():
    controller = FleetController([AgentSpec("a", goal=(1.0, 0.0)),
                                  AgentSpec("b", goal=(0.0, 1.0))])
    assert isinstance(controller.progress, ProgressMonitor)
    assert controller.progress.best.shape == (2,)
    controller.set_world(None, None)  # a world without routes or passages keeps it
    assert isinstance(controller.progress, ProgressMonitor)


def test_the_knot_from_circle_30_seed_87_clears_in_open_space():
    """robot23 between robot25 parked ahead of it and robot26 parked beside it: plain ORCA
    leaves it standing (20 s here, to the end in the circle); with the monitor, after
    stall_time the parked robot ahead makes room and robot23 arrives, without a contact."""
    settings = shipped_settings(STEP)
    plain = run_scenario(KNOT, settings, control_period=STEP, timeout=20.0,
                         controller_hook=without_monitor)
    assert np.isnan(plain.arrival_times[0]) and plain.longest_wait > 15.0
    result = run_scenario(KNOT, shipped_settings(STEP), control_period=STEP, timeout=20.0)
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times
    # it stood stall_time (8 s) before asking, then drove its 2.6 m
    assert 8.0 < result.arrival_times[0] < 18.0


def republishing(period: float):
    """A controller hook that gives the controller a new (empty) world every ``period``
    seconds, as orca_node does with each changed map (a costmap republished at 1 Hz)."""

    def hook(controller, grid, obstacles):
        step = controller.step
        due = [0.0]

        def step_with_worlds(now, obstacles=None, **options):
            if now >= due[0]:
                controller.set_world(None, None)
                due[0] = now + period
            return step(now, obstacles, **options)

        controller.step = step_with_worlds

    return hook


def test_a_world_given_every_second_keeps_the_stall_clocks():
    """A new world every second must not restart the stall clocks (a new monitor per map
    would: stall_time, 8 s, never runs out and the knot stays tied)."""
    result = run_scenario(KNOT, shipped_settings(STEP), control_period=STEP, timeout=20.0,
                          controller_hook=republishing(1.0))
    assert result.contacts == []
    assert result.all_arrived, result.arrival_times


def test_circle_30_seed_87_all_arrive():
    """The bench's scene itself (sim/scenes.py, no walls, so no set_world): all 30 arrive
    without a contact (before: 29, stopped as a deadlock)."""
    scene = make_scene("circle", 30, 87)
    result = run_scenario(scene.scenario, shipped_settings(scene.time_step),
                          control_period=scene.time_step, timeout=60.0)
    assert result.contacts == []
    assert result.all_arrived, np.flatnonzero(np.isnan(result.arrival_times))
    assert result.makespan < 45.0


def test_rebase_keeps_the_clock_and_takes_the_new_distance():
    """After :meth:`ProgressMonitor.rebase` (a new route map) the stall clock keeps running,
    and progress counts from the distance by the new map: a route 2 m longer than the best
    so far does not make a robot that then advances look stalled."""
    monitor = ProgressMonitor(2, stall_time=4.0, min_progress=0.2)
    wants = np.array([True, True])
    for t in np.arange(0.0, 3.0, 0.5):  # neither moves for 3 s
        assert not monitor.stalled(t, np.array([5.0, 5.0]), wants).any()
    monitor.rebase()
    # robot 0: the new map's route is 7 m, then it advances 0.3 m a second along it;
    # robot 1: stands, the new map changes nothing for it
    stalled = [monitor.stalled(t, np.array([7.0 - 0.3 * (t - 3.0), 5.0]), wants)
               for t in np.arange(3.0, 6.0, 0.5)]
    assert not any(s[0] for s in stalled)
    # robot 1's clock started at 0 s: stalled from 4 s on, as without the new map
    assert [bool(s[1]) for s in stalled] == [False, False, True, True, True, True]
    # without the rebase robot 0 (7 m > 5 m best) would have counted as stalled at 4 s
    fresh = ProgressMonitor(1, stall_time=4.0, min_progress=0.2)
    for t in np.arange(0.0, 3.0, 0.5):
        fresh.stalled(t, np.array([5.0]), wants[:1])
    assert any(fresh.stalled(t, np.array([7.0 - 0.3 * (t - 3.0)]), wants[:1])[0]
               for t in np.arange(3.0, 6.0, 0.5))


def test_rebase_leaves_a_robot_measured_afresh():
    """An idle robot (or one that just yielded: best distance inf) is measured afresh at its
    next step, rebase or not: its clock starts then."""
    monitor = ProgressMonitor(1, stall_time=2.0)
    wants = np.array([True])
    monitor.stalled(0.0, np.array([3.0]), ~wants)  # idle
    monitor.rebase()
    assert not monitor.stalled(1.0, np.array([3.0]), wants)[0]
    assert monitor.since[0] == 1.0
    assert monitor.stalled(3.0, np.array([3.0]), wants)[0]


def test_a_new_goal_after_an_idle_fleet_starts_a_fresh_stall_clock():
    """Two robots 1 m apart want to move for 1 s, then stand at their goals for 10 s (nobody
    wants to move: the controller does not resolve then), then get goals 5 m away. The
    stall clocks start at the new goals: nobody yields in the first second (before, robot 1
    kept its clock from 0 s and its best distance from the old goal, counted as stalled at
    once and backed away from robot 0)."""
    controller = FleetController([AgentSpec("a", goal=(1.0, 1.0)),
                                  AgentSpec("b", goal=(2.0, 1.0))],
                                 settings=shipped_settings(0.05))
    starts = ((0.0, 0.0), (1.0, 0.0))

    def step(now):
        for i, (x, y) in enumerate(starts):  # they stand (no simulation)
            controller.odometry(i, now, now, x, y, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        return controller.step(now)

    now = 0.0
    for _ in range(20):
        step(now)
        now += 0.05
    assert np.isfinite(controller.progress.since).all()  # both wanted to move
    for i, start in enumerate(starts):
        controller.goal(i, *start)  # at their goals: nobody wants to move
    for _ in range(200):
        step(now)
        now += 0.05
    controller.goal(0, 5.0, 0.0)
    controller.goal(1, 6.0, 0.0)
    renewed = now
    for _ in range(20):
        result = step(now)
        assert (controller.progress.yield_until <= now).all(), now
        assert result.commands[1][0] >= 0.0  # heads on, does not back away
        now += 0.05
    assert (controller.progress.since == renewed).all()
