"""Starting planning_collision's ROS processes without ``ros2 launch``.

The PyPI ROS wheels have no ``launch``/``ros2`` CLI, so the demo, the tests and the benchmarks
start their nodes through this module. It enforces the project's network rule for every process
it starts: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (DDS traffic stays on loopback) and a
``ROS_DOMAIN_ID`` of the caller's choosing, plus the short Fast DDS discovery profile shipped in
``config/fastdds_discovery.xml``. No rclpy import here: this is plain process management.
"""

from __future__ import annotations

import fcntl
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

from ..resources import config_file

# Names a Fast DDS profile to use instead of the shipped config/fastdds_discovery.xml.
PROFILE_VARIABLE = "PLANNING_COLLISION_FASTDDS_PROFILE"


# The domain locks this process holds (open files under an exclusive flock), for its lifetime.
_DOMAIN_LOCKS: list[int] = []


def domain_lock_path(domain_id: int) -> Path:
    return Path(tempfile.gettempdir()) / f"planning_collision-ros-domain-{domain_id}.lock"


def pick_domain_id(rng: random.Random | None = None) -> int:
    """A ROS domain id for one run, from 1 to 100 (valid on every platform, 0 left alone), that
    no other run on this machine holds: each run takes an exclusive lock on its domain for as
    long as it lives (the kernel lets go when the process ends, however it ends). A random
    choice alone let two runs meet now and then (1 in 100 per pair), and then each one's
    ``/orca_node`` answered the other's graph queries and lifecycle requests."""
    rng = rng or random.Random(os.getpid() ^ time.monotonic_ns())
    candidates = list(range(1, 101))
    rng.shuffle(candidates)
    for domain_id in candidates:
        fd = os.open(domain_lock_path(domain_id), os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _DOMAIN_LOCKS.append(fd)
        return domain_id
    raise RuntimeError("every ROS domain from 1 to 100 is held by another run on this machine")


def ros_environment(domain_id: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for a ROS process started by the project: loopback only, its own domain."""
    if not 0 <= int(domain_id) <= 232:
        raise ValueError(f"ROS_DOMAIN_ID must be in 0..232, got {domain_id}")
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["ROS_DOMAIN_ID"] = str(int(domain_id))
    env.pop("ROS_STATIC_PEERS", None)
    # The project's own Fast DDS profile, also over one set in the caller's shell: the tests
    # and the demo must behave the same on every machine. It keeps the processes off Fast DDS's
    # shared memory (UDP only), which a peer killed with SIGKILL can stall or deadlock
    # (eProsima/Fast-DDS#6485; doc/dds.md). PROFILE_VARIABLE names another file instead (to
    # measure or to turn that off); an empty value is an error, not a silent default.
    profile = env.get(PROFILE_VARIABLE)
    if profile is None:
        profile = str(config_file("fastdds_discovery.xml"))
    elif not Path(profile).is_file():
        raise FileNotFoundError(f"{PROFILE_VARIABLE}={profile!r} is not a file")
    env["FASTDDS_DEFAULT_PROFILES_FILE"] = profile
    if fastdds_2_installed():  # Jazzy's Fast DDS 2 reads only the old name
        env["FASTRTPS_DEFAULT_PROFILES_FILE"] = profile
    # The venv root is an ament prefix (the ROS wheels install there); ament_index needs it.
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def fastdds_2_installed() -> bool:
    """Whether the Fast DDS beside this interpreter (or in an ament prefix) is 2.x, which reads
    its profile from FASTRTPS_DEFAULT_PROFILES_FILE (3.x reads FASTDDS_DEFAULT_PROFILES_FILE and
    warns about the old name)."""
    prefixes = [sys.prefix, *os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    return any(any((Path(prefix) / "lib").glob("libfastrtps.so*"))
               for prefix in prefixes if prefix)


def apply_network_rule(domain_id: int) -> None:
    """Apply :func:`ros_environment` to this process (call before ``rclpy.init``)."""
    os.environ.update(ros_environment(domain_id))


def node_command(
    module: str,
    params_files: Iterable[str | os.PathLike] = (),
    parameters: Mapping[str, object] | None = None,
    remappings: Mapping[str, str] | None = None,
    node_name: str | None = None,
    namespace: str | None = None,
) -> list[str]:
    """Command line that runs ``python -m module`` as a ROS node with the given ``--ros-args``."""
    command = [sys.executable, "-m", module, "--ros-args"]
    for path in params_files:
        command += ["--params-file", str(path)]
    for name, value in (parameters or {}).items():
        command += ["-p", f"{name}:={_param_text(value)}"]
    for source, target in (remappings or {}).items():
        command += ["-r", f"{source}:={target}"]
    if node_name:
        command += ["-r", f"__node:={node_name}"]
    if namespace:
        command += ["-r", f"__ns:=/{namespace.lstrip('/')}"]
    return command


def _param_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_param_text(v) for v in value) + "]"
    if isinstance(value, str):
        return value if value else "''"
    return repr(value)


class RosProcess:
    """One child process in the project's ROS environment, stopped with SIGINT, then harder.

    Output lines are prefixed with ``[name]`` and copied to ``output`` (default: this process's
    stderr) and kept in memory (``lines``) so tests can inspect what a node logged.
    """

    def __init__(
        self,
        name: str,
        command: list[str],
        domain_id: int,
        output: IO[str] | None = None,
        echo: bool = True,
        extra_env: Mapping[str, str] | None = None,
    ):
        self.name = name
        self.command = list(command)
        env = ros_environment(domain_id)
        env.update(extra_env or {})
        self.lines: list[str] = []
        self._echo = echo
        self._output = output if output is not None else sys.stderr
        self._process = subprocess.Popen(
            self.command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._pump, name=f"{name}-output", daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if self._echo:
                try:
                    print(f"[{self.name}] {line}", file=self._output, flush=True)
                except ValueError:  # output closed while the child was still talking
                    pass

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    def running(self) -> bool:
        return self._process.poll() is None

    def wait_for_line(self, text: str, timeout: float) -> bool:
        """Wait until the process printed a line containing ``text`` (a timeout of 0: only
        look at what it printed so far)."""
        deadline = time.monotonic() + timeout
        while True:
            if any(text in line for line in list(self.lines)):
                return True
            if not self.running():
                return any(text in line for line in list(self.lines))
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def send_signal(self, sig: int) -> None:
        if self.running():
            self._process.send_signal(sig)

    def stop(self, timeout: float = 5.0) -> int:
        """SIGINT, then SIGTERM, then SIGKILL; returns the exit code."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            if not self.running():
                break
            self._process.send_signal(sig)
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                continue
        if self.running():
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
        self._reader.join(timeout=2.0)
        return self._process.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self._process.wait(timeout)
        self._reader.join(timeout=2.0)
        return code

    def __enter__(self) -> RosProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
