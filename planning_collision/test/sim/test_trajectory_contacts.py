"""Who moved at a contact, read from a recorded run (sim/trajectory_contacts.py): a person
walking into a standing robot is not the robot's doing; a robot driving into someone is, in
whichever order the scenario lists the two."""

from __future__ import annotations

import math

import pytest

from planning_collision.sim.scenario import parse_scenario
from planning_collision.sim.simulation import FleetSimulation
from planning_collision.sim.trajectory_contacts import MOVING, contacts_of, speed_before


def run(robots, drive: dict[str, tuple[float, float, float]], seconds: float = 3.0):
    sim = FleetSimulation(parse_scenario({"robots": robots}), dt=0.02)
    for _ in range(round(seconds / sim.dt)):
        for name, twist in drive.items():
            sim.command(name, twist)
        sim.step()
    return sim.trajectory()


def agent(name, start, goal, orca, speed=0.5):
    return {"name": name, "start": list(start), "goal": list(goal), "radius": 0.25,
            "max_speed": speed, "orca": orca}


@pytest.mark.parametrize("person_first", [False, True])
def test_a_person_walking_into_a_standing_robot_is_not_the_robots_contact(person_first):
    robot = agent("robot", (0.0, 0.0, 0.0), (9.0, 9.0), orca=True)  # never commanded: stands
    person = agent("person", (-2.0, 0.0, 0.0), (2.0, 0.0), orca=False, speed=0.8)
    trajectory = run([person, robot] if person_first else [robot, person], {})
    (contact,) = contacts_of(trajectory)
    assert {contact.robot, contact.other} == {"robot", "person"}
    speeds = {contact.robot: contact.robot_speed, contact.other: contact.other_speed}
    assert speeds["robot"] == pytest.approx(0.0, abs=1e-9)
    assert speeds["person"] == pytest.approx(0.8, rel=1e-6)
    assert not contact.moving
    # The person reaches 0.5 m (the radii) from the robot 1.5 / 0.8 s in, give or take a step.
    assert contact.time == pytest.approx(1.5 / 0.8, abs=0.03)


@pytest.mark.parametrize("person_first", [False, True])
def test_a_robot_driving_into_a_standing_person_is_the_robots_contact(person_first):
    robot = agent("robot", (0.0, 0.0, 0.0), (9.0, 0.0), orca=True)
    person = agent("person", (1.5, 0.0, 0.0), (1.5, 0.0), orca=False)  # at its goal: stands
    trajectory = run([person, robot] if person_first else [robot, person],
                     {"robot": (0.4, 0.0, 0.0)})
    (contact,) = contacts_of(trajectory)
    speeds = {contact.robot: contact.robot_speed, contact.other: contact.other_speed}
    assert speeds["robot"] == pytest.approx(0.4, rel=1e-6)
    assert speeds["person"] == pytest.approx(0.0, abs=1e-9)
    assert contact.moving
    # A slower robot is under the threshold: standing, as far as passive safety goes.
    slow = run([robot, person], {"robot": (0.9 * MOVING, 0.0, 0.0)}, seconds=2.0)
    assert contacts_of(slow) == [] or not contacts_of(slow)[0].moving


def test_a_contact_with_an_obstacle_has_no_other_speed():
    sim = FleetSimulation(parse_scenario({
        "robots": [agent("robot", (0.0, 0.0, 0.0), (9.0, 0.0), orca=True)],
        "obstacles": [{"id": "box", "polygon": [[0.6, -1], [2, -1], [2, 1], [0.6, 1]]}]}),
        dt=0.02)
    for _ in range(100):
        sim.command("robot", (0.3, 0.0, 0.0))
        sim.step()
    (contact,) = contacts_of(sim.trajectory())
    assert contact.other == "box" and math.isnan(contact.other_speed)
    assert contact.robot_speed == pytest.approx(0.3, rel=1e-6) and contact.moving


def test_speed_before_the_first_sample_is_unknown():
    trajectory = run([agent("robot", (0.0, 0.0, 0.0), (9.0, 0.0), orca=True)],
                     {"robot": (0.5, 0.0, 0.0)}, seconds=0.2)
    assert math.isnan(speed_before(trajectory, 0, float(trajectory["times"][0]) - 1.0))
    assert speed_before(trajectory, 0, float(trajectory["times"][-1])) == pytest.approx(0.5)
