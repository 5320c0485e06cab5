"""The real ``ros2 launch`` for the launch-file tests: ROS 2's launch tooling built from its
public sources by ``../shared/launch-underlay/build.sh`` (next to the checkout; CI has it, a
user's clone does not), with planning_collision built on top by colcon, as a ROS user has it.

Both builds go into build/ and are redone only when what they are built from changed (a
stamp of the sources' digests), under a file lock, so one test session pays for them once
(about a minute and a half on two cores) and later sessions not at all. planning_collision is
built with ``--symlink-install``: its Python sources, launch and config files are the
checkout's, so the numba kernels cached by ``make setup`` serve the launched nodes too (a copy
would compile them again, a minute per node). The interfaces come from the venv, where
``make setup`` installed them (a ROS underlay, as /opt/ros is); test_packaging.py builds both
packages with colcon.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO.parent / "shared" / "launch-underlay"
BUILD = REPO / "build"
VENV = Path(sys.prefix)
SUFFIX = "" if VENV.name == ".venv" else f"-{VENV.name.lstrip('.')}"
UNDERLAY = BUILD / f"launch-underlay{SUFFIX}"
WORKSPACE = BUILD / f"colcon-launch{SUFFIX}"
PACKAGE = REPO / "planning_collision"


def available() -> bool:
    return (SOURCE / "build.sh").is_file()


def _digest(paths, root: Path) -> str:
    digest = hashlib.sha256(str(VENV).encode())
    for path in sorted(paths):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()


def _underlay_digest() -> str:
    return _digest([p for p in SOURCE.rglob("*") if p.is_file()], SOURCE)


def _package_digest() -> str:
    # What the symlink install depends on: the build description and which files exist
    # (setup.py globs launch/ and config/; their contents are read through the links).
    described = [PACKAGE / n for n in ("package.xml", "setup.py", "setup.cfg")]
    listed = [p for folder in ("launch", "config", "resource")
              for p in (PACKAGE / folder).rglob("*") if p.is_file()]
    digest = hashlib.sha256(_digest(described, PACKAGE).encode())
    for path in sorted(listed):
        digest.update(str(path.relative_to(PACKAGE)).encode())
    return digest.hexdigest()


def _stamped(stamp: Path, value: str) -> bool:
    return stamp.is_file() and stamp.read_text() == value


def _run(command: list[str], log: Path, env: dict | None = None) -> None:
    with log.open("w") as out:
        result = subprocess.run(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                env=env, timeout=900)
    if result.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-40:])
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{tail}")


def sourced(*scripts: Path) -> dict[str, str]:
    """The environment after ``source`` of each script, in order."""
    line = " && ".join(f"source {s}" for s in scripts) + " && env -0"
    out = subprocess.run(["bash", "-c", line], check=True, capture_output=True, cwd=REPO).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def prepare() -> dict[str, str]:
    """Build what is missing or stale; return the environment of a ROS user who sourced the
    underlay and the workspace (``ros2`` on PATH)."""
    BUILD.mkdir(exist_ok=True)
    with (BUILD / f".launch-underlay{SUFFIX}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp, value = UNDERLAY / ".stamp", _underlay_digest()
        if not _stamped(stamp, value):
            stamp.unlink(missing_ok=True)
            UNDERLAY.mkdir(exist_ok=True)
            _run(["bash", str(SOURCE / "build.sh"), str(VENV), str(UNDERLAY)],
                 UNDERLAY.with_suffix(".log"))
            stamp.write_text(value)
        env_script = UNDERLAY / "env.sh"
        stamp, value = WORKSPACE / ".stamp", _package_digest() + value
        if not _stamped(stamp, value):
            stamp.unlink(missing_ok=True)
            env = sourced(env_script)
            env["MAKEFLAGS"] = "-j2"
            _run([str(VENV / "bin" / "colcon"), "--log-base", str(WORKSPACE / "log"), "build",
                  "--base-paths", str(PACKAGE), "--build-base", str(WORKSPACE / "build"),
                  "--install-base", str(WORKSPACE / "install"), "--symlink-install",
                  "--event-handlers", "console_cohesion-",
                  "--cmake-args", f"-DPython3_EXECUTABLE={VENV / 'bin' / 'python'}",
                  "-DBUILD_TESTING=OFF"], WORKSPACE.with_suffix(".log"), env)
            stamp.write_text(value)
    return sourced(env_script, WORKSPACE / "install" / "setup.bash")


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (by parent links, sessions of their own included)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def in_group(pgid: int) -> set[int]:
    """Living processes of process group ``pgid``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.add(int(entry))
    return found


if __name__ == "__main__":
    # .ci/run builds both ahead of the tests, while the Jazzy environment is being set up.
    if not available():
        print(f"no {SOURCE}: the real-launch tests will be skipped")
        sys.exit(0)
    prepare()
    print(f"launch underlay and workspace ready in {BUILD}")
