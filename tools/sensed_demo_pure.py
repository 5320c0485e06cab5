"""The demo's room with its person seen only by the robots' lasers, in the pure closed loop of
the sensed crossings (no ROS; issue #25): where the scanned demo's contacts come from, in
seconds per seed instead of a minute per DDS run.

    nice -n 19 .venv/bin/python tools/sensed_demo_pure.py --seeds 0 6
    nice -n 19 .venv/bin/python tools/sensed_demo_pure.py --accel-noise 0.5 --brake-time 0

The 16 robots of ``config/scenarios/swap_room.yaml`` (their starts, goals and drives, at the
demo's preferred 0.5 m/s) and person1 walking its straight line at 0.4 m/s from the start,
each robot with a 360-beam 10 Hz laser with 1 cm of range noise, run by
:func:`planning_collision.sim.sensed_crossings.run` (its own ORCA settings, a time horizon of
2.5 s; the pillars and walls are not in this loop). One line per seed: every contact as
(time, robot, the robot's speed), how many had the robot moving, and whether all arrived.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from planning_collision.resources import config_file
from planning_collision.sim.scenario import load_scenario
from planning_collision.sim.sensed_crossings import Scene, run
from planning_collision.tracking import TrackerSettings


def demo_scene(person_speed: float = 0.4, robot_speed: float = 0.5) -> Scene:
    scenario = load_scenario(config_file("scenarios/swap_room.yaml"))
    robots = [r for r in scenario.robots if r.orca]
    person = next(r for r in scenario.robots if not r.orca)
    heading = np.subtract(person.goal, person.start[:2])
    heading /= np.hypot(*heading)
    return Scene(robot_starts=np.array([r.start for r in robots]),
                 robot_goals=np.array([r.goal for r in robots]),
                 robot_speeds=np.full(len(robots), robot_speed),
                 holonomic=np.array([r.drive == "holonomic" for r in robots]),
                 people_starts=np.array([person.start[:2]]),
                 people_velocities=np.array([heading * person_speed]),
                 people_t0=np.zeros(1), robot_radius=robots[0].radius,
                 person_radius=person.radius)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs=2, default=(0, 6), metavar=("FIRST", "END"))
    parser.add_argument("--accel-noise", type=float, default=TrackerSettings.accel_noise)
    parser.add_argument("--brake-time", type=float, default=0.3)
    parser.add_argument("--person-speed", type=float, default=0.4)
    args = parser.parse_args()
    scene = demo_scene(args.person_speed)
    settings = TrackerSettings(accel_noise=args.accel_noise)
    total = moving = arrived = 0
    for seed in range(*args.seeds):
        result = run(scene, seed=seed, timeout=60.0, noise=0.01, tracker_settings=settings,
                     brake_time=args.brake_time)
        total += len(result.contacts)
        moving += result.moving_contacts
        arrived += result.arrived
        each = [(round(t, 2), f"robot{i + 1}", round(s, 2)) for t, i, _, s in result.contacts]
        print(f"seed {seed}: contacts {each}, moving {result.moving_contacts}, all arrived "
              f"{result.arrived} at {result.time:.1f} s", flush=True)
    runs = args.seeds[1] - args.seeds[0]
    print(f"{runs} seeds, accel_noise {args.accel_noise}, brake_time {args.brake_time}: "
          f"{total} contacts, {moving} with a moving robot, all arrived in {arrived}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
