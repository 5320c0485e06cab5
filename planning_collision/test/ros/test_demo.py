"""The README's first command, end to end: ``python -m planning_collision.demo`` starts the four
nodes over loopback DDS, every robot arrives without a contact (the person, who publishes
nothing, known to orca_node only through the robots' lasers), all five collision services
answer, and the pictures are written. orca_node starts on a cold numba cache, as on the first
start after a colcon build without the warmup script: it compiles its kernels in another
process while it already runs and holds the robots, and nobody collides meanwhile. The other
cores' kernels (geometry, grid) are copied in from this environment's cache, so CI does not
spend a minute compiling what it compiled at set-up; collision_server's cold start is
test_lifecycle's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from planning_collision.demo import SENSED_SCENARIO
from planning_collision.resources import config_file
from planning_collision.ros import processes
from planning_collision.sim.scenario import load_scenario

SERVICES = ("check_line_of_sight", "check_lines_of_sight", "check_collision", "check_path",
            "compute_distance")


def seed_cache(cache_dir: Path, cores=("common", "geometry", "grid")) -> None:
    """Copy this environment's compiled kernels of ``cores`` to where numba looks for them
    under ``NUMBA_CACHE_DIR=cache_dir``; the other cores' kernels stay uncompiled."""
    from numba.core.caching import UserProvidedCacheLocator

    import planning_collision

    package = Path(planning_collision.__file__).resolve().parent
    own = os.environ.get("NUMBA_CACHE_DIR")
    for core in cores:
        subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(
            str(package / core / "__init__.py"))
        source = Path(own) / subpath if own else package / core / "__pycache__"
        target = cache_dir / subpath
        target.mkdir(parents=True)
        for path in [*source.glob("*.nbi"), *source.glob("*.nbc")]:
            shutil.copy2(path, target)
        assert any(target.glob("*.nbi")), f"no compiled {core} kernels in {source}"


def node_warnings(logs: Path, last: int = 40) -> str:
    """The nodes' last warnings and errors, for a failure message (a failed CI run's
    temporary directory is gone by the time anyone looks)."""
    lines = [line for path in sorted(logs.glob("*.log"))
             for line in path.read_text(errors="replace").splitlines()
             if "[WARN]" in line or "[ERROR]" in line]
    return "\nnode warnings and errors:\n" + "\n".join(lines[-last:])


@pytest.mark.timeout(660)
def test_the_demo_runs_the_fleet_to_its_goals_without_contact(tmp_path, domain_id):
    env = processes.ros_environment(domain_id)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    seed_cache(tmp_path / "numba-cache")
    result = subprocess.run(
        [sys.executable, "-m", "planning_collision.demo", "--output", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout
    why = out[-3000:] + result.stderr[-3000:] + node_warnings(tmp_path / "logs")
    assert result.returncode == 0, why
    assert "outcome: arrived" in out, why
    assert "collisions: 0 (robot-robot 0, obstacles 0, map 0)" in out, why
    for service in SERVICES:
        line = next(line for line in out.splitlines() if line.strip().startswith(service))
        assert "no answer" not in line and "refused" not in line, line
    scenario = load_scenario(config_file(SENSED_SCENARIO))
    assert not scenario.robot("person1").odometry  # seen only by the robots' lasers
    with np.load(tmp_path / "trajectories.npz") as run:
        assert run["names"].tolist() == list(scenario.names)
        assert np.isfinite(run["arrival_time"]).all()  # every robot, and the person, arrived
        assert run["contact_time"].size == 0
    with Image.open(tmp_path / "trajectories.png") as png:
        assert png.size[0] > 500 and png.size[1] > 300
    with Image.open(tmp_path / "robot1_orca.gif") as gif:
        assert gif.n_frames >= 20
    drawn = next(line for line in out.splitlines() if "_orca.gif (tracks in" in line)
    assert not drawn.split("(tracks in ")[1].startswith("0 "), drawn  # the person, tracked
    for node in ("map_publisher", "collision_server", "fleet_sim", "orca_node"):
        assert (tmp_path / "logs" / f"{node}.log").stat().st_size > 0
    logs = {node: (tmp_path / "logs" / f"{node}.log").read_text()
            for node in ("collision_server", "orca_node")}
    assert "compiling them in a separate process" in logs["orca_node"]  # cold indeed
    assert "compiling" not in logs["collision_server"]  # the copied kernels were used
