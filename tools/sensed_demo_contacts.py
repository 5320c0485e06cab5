"""The demo over DDS with its person seen only by the robots' lasers, with and without
orca_node using the scans (issue #25): contacts, and whether the robot moved at each.

    nice -n 19 .venv/bin/python tools/sensed_demo_contacts.py --output /tmp/sensed_demo

Both runs use the shipped demo's room, ``scenarios/swap_room_sensed.yaml`` (a laser on every
robot, person1 ``odometry: false``: fleet_sim publishes nothing of it; ``--person-speed``
changes its walk), and ``demo_sensed_orca.yaml``: ``with scans`` as shipped
(``scan_topic: scan``), ``without`` with ``scan_topic`` empty, so orca_node knows nothing of
the person.
Each run is ``python -m planning_collision.demo`` (its own ROS_DOMAIN_ID, loopback only);
both agents' speeds at a contact are read from the run's trajectories (the step into it), and a
contact counts against the robots when an ORCA-driven one of the pair moved faster than
``MOVING`` (0.05 m/s; sim/trajectory_contacts.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from planning_collision.resources import config_file
from planning_collision.sim.trajectory_contacts import contacts_of

PERSON = "radius: 0.3, max_speed: 0.8, orca: false, odometry: false, scan: false}"


def scenario_text(person_speed: float | None = None) -> str:
    """The demo's scenario, its map path absolute; person1 at ``person_speed`` if given."""
    text = config_file("scenarios/swap_room_sensed.yaml").read_text()
    maps = config_file("maps/swap_room.yaml").parent
    for needed in (PERSON, "map: ../maps/"):
        if needed not in text:
            raise SystemExit(f"swap_room_sensed.yaml changed: {needed!r} not found")
    if person_speed is not None:
        text = text.replace(PERSON, PERSON.replace("0.8", repr(float(person_speed))))
    return text.replace("map: ../maps/", f"map: {maps}/")


def orca_text(scans: bool) -> str:
    """demo_sensed_orca.yaml; without ``scans``, orca_node does not read the lasers."""
    text = config_file("demo_sensed_orca.yaml").read_text()
    if "    scan_topic: scan " not in text:
        raise SystemExit("demo_sensed_orca.yaml changed: scan_topic not found")
    if scans:
        return text
    line = next(li for li in text.splitlines() if li.startswith("    scan_topic: scan "))
    return text.replace(line, '    scan_topic: ""  # the lasers are not read')


def contacts(run_dir: Path) -> list[dict]:
    """Every contact of a run, with both agents' speeds over the step into it
    (sim/trajectory_contacts.py: ``moving`` when an ORCA-driven one of the pair moved)."""
    with np.load(run_dir / "trajectories.npz") as run:
        found = contacts_of(dict(run))
    return [{"time": round(c.time, 2), "robot": c.robot, "other": c.other,
             "robot_speed": round(c.robot_speed, 3),
             "other_speed": None if np.isnan(c.other_speed) else round(c.other_speed, 3),
             "moving": c.moving} for c in found]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("output/sensed_demo"))
    parser.add_argument("--only", choices=("with", "without"), default=None)
    parser.add_argument("--person-speed", type=float, default=None,
                        help="person1's walking speed (default: the scenario's 0.8 m/s)")
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    scenario = args.output / "swap_room_sensed.yaml"
    scenario.write_text(scenario_text(args.person_speed))
    for mode in ("with", "without"):
        if args.only and mode != args.only:
            continue
        params = args.output / f"orca_{mode}_scans.yaml"
        params.write_text(orca_text(mode == "with"))
        out = args.output / f"{mode}_scans"
        result = subprocess.run(
            [sys.executable, "-m", "planning_collision.demo", "--scenario", str(scenario),
             "--orca-params", str(params), "--output", str(out)],
            capture_output=True, text=True)
        summary = [line for line in result.stdout.splitlines()
                   if line.startswith(("outcome", "arrived", "collisions", "control rate"))]
        found = contacts(out) if (out / "trajectories.npz").exists() else []
        print(json.dumps({"mode": f"{mode} scans", "exit": result.returncode,
                          "summary": summary, "contacts": len(found),
                          "moving_contacts": sum(c["moving"] for c in found),
                          "each": found}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
