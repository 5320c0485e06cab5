"""Build both packages with colcon, as a ROS user would, and import them from the install tree.

    python tools/colcon_check.py WORKSPACE_DIR

Runs colcon (colcon-common-extensions from PyPI) against the ROS 2 wheels in this venv, which
stand in for /opt/ros/<distro>: the venv root is put on AMENT_PREFIX_PATH and CMAKE_PREFIX_PATH,
as `source /opt/ros/<distro>/setup.bash` would. Then, in a shell that sources the workspace's
install/setup.bash, checks that planning_collision and the generated interfaces import from
install/, and that the executables and the launch/config files are where `ros2 run` and
`ros2 launch` look for them. Exits non-zero on any failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("planning_collision_interfaces", "planning_collision")

CHECK = r"""
import pathlib, sys
import planning_collision, planning_collision_interfaces
from planning_collision_interfaces.srv import CheckLineOfSight
from ament_index_python.packages import get_package_prefix, get_package_share_directory
install = pathlib.Path(sys.argv[1]).resolve()
for module in (planning_collision, planning_collision_interfaces):
    where = pathlib.Path(module.__file__).resolve()
    assert install in where.parents, f"{module.__name__} imported from {where}, not {install}"
CheckLineOfSight.Request()
share = pathlib.Path(get_package_share_directory("planning_collision"))
assert install in share.parents, share
print("share", share)
"""


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    workspace = Path(argv[1]).resolve()
    shutil.rmtree(workspace, ignore_errors=True)
    (workspace / "src").mkdir(parents=True)
    for package in PACKAGES:
        (workspace / "src" / package).symlink_to(REPO / package)

    prefix = sys.prefix
    env = dict(os.environ)
    env["AMENT_PREFIX_PATH"] = prefix
    env["CMAKE_PREFIX_PATH"] = prefix
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    colcon = Path(sys.executable).parent / "colcon"
    build = [
        str(colcon), "--log-base", str(workspace / "log"), "build",
        "--base-paths", str(workspace / "src"),
        "--build-base", str(workspace / "build"),
        "--install-base", str(workspace / "install"),
        "--event-handlers", "console_cohesion+",
        "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
    ]
    result = subprocess.run(build, cwd=workspace, env=env)
    if result.returncode != 0:
        print("colcon build failed", file=sys.stderr)
        return result.returncode

    install = workspace / "install"
    script = (
        f"source {install / 'setup.bash'} && "
        f"cd {workspace} && "
        f"{sys.executable} -c {_quote(CHECK)} {install}"
    )
    env_check = dict(env)
    # Keep the editable checkout of planning_collision out of the way: the import must come
    # from the install tree, which setup.bash puts on PYTHONPATH.
    env_check["PYTHONNOUSERSITE"] = "1"
    result = subprocess.run(["bash", "-c", script], env=env_check, capture_output=True, text=True)
    print(result.stdout, end="")
    if result.returncode != 0:
        print(result.stderr, file=sys.stderr)
        print("imports from the colcon install tree failed", file=sys.stderr)
        return result.returncode

    missing = []
    lib = install / "planning_collision" / "lib" / "planning_collision"
    for executable in _console_scripts():
        if not (lib / executable).is_file():
            missing.append(str(lib / executable))
    share = install / "planning_collision" / "share" / "planning_collision"
    package = REPO / "planning_collision"
    for folder in ("launch", "config"):
        for source in sorted((package / folder).rglob("*")):
            if source.is_file() and not (share / source.relative_to(package)).is_file():
                missing.append(str(share / source.relative_to(package)))
    if missing:
        print("missing from the install tree:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    print(f"colcon build OK: {', '.join(PACKAGES)} import from {install}")
    return 0


def _console_scripts() -> list[str]:
    """Console scripts declared by setup.py, read from the venv's (editable) install metadata."""
    from importlib.metadata import distribution

    return [ep.name for ep in distribution("planning_collision").entry_points
            if ep.group == "console_scripts"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
