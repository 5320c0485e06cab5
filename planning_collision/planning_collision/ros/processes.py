"""Starting planning_collision's ROS processes without ``ros2 launch``.

The PyPI ROS wheels have no ``launch``/``ros2`` CLI, so the demo, the tests and the benchmarks
start their nodes through this module. It enforces the project's network rule for every process
it starts: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (DDS traffic stays on loopback) and a
``ROS_DOMAIN_ID`` of the caller's choosing, plus the short Fast DDS discovery profile shipped in
``config/fastdds_discovery.xml``. No rclpy import here: this is plain process management.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
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


# The domain locks this process holds (open files under an exclusive flock), for its lifetime:
# domain id -> file descriptor. Every RosProcess in that domain inherits the descriptor, so the
# domain stays locked while any of them lives, even orphaned (see RosProcess).
_DOMAIN_LOCKS: dict[int, int] = {}


def set_nice(pid: int, nice: int) -> None:
    """Make process ``pid`` and its scheduler group as nice as ``nice`` (at most 19).

    Each RosProcess is a session of its own (``start_new_session``), and where the kernel
    groups processes by session (``/proc/sys/kernel/sched_autogroup_enabled`` = 1, the default
    of most desktop and CI kernels) a new session's group starts at nice 0, whatever the nice
    of its processes: nodes started by ``nice -n 19 make test`` or by a benchmark at nice 19
    would otherwise compete for the CPU at full weight. Failures (no such process, no
    autogroup file, a group that may not be made less nice) change nothing."""
    nice = min(int(nice), 19)
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))


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
        _DOMAIN_LOCKS[domain_id] = fd
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
        profile = str(shipped_profile())
    elif not Path(profile).is_file():
        raise FileNotFoundError(f"{PROFILE_VARIABLE}={profile!r} is not a file")
    env["FASTDDS_DEFAULT_PROFILES_FILE"] = profile
    if fastdds_2_installed():  # Jazzy's Fast DDS 2 reads only the old name
        env["FASTRTPS_DEFAULT_PROFILES_FILE"] = profile
    # The venv root is an ament prefix (the ROS wheels install there); ament_index needs it.
    env.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def shipped_profile() -> Path:
    """The shipped Fast DDS profile for the installed Fast DDS: ``config/fastdds_discovery.xml``
    (Fast DDS 3), or its Fast DDS 2 translation ``config/fastdds2_discovery.xml`` (Jazzy)."""
    if fastdds_2_installed():
        return config_file("fastdds2_discovery.xml")
    return config_file("fastdds_discovery.xml")


# Elements that Fast DDS 3 renamed: its name -> Fast DDS 2's. Fast DDS 2 rejects the whole file
# over one element it does not know, and so does Fast DDS 3.
FASTDDS_2_NAMES = {
    "initial_heartbeat_delay": "initialHeartbeatDelay",
    "heartbeat_period": "heartbeatPeriod",
    "nack_response_delay": "nackResponseDelay",
    "nack_supression_duration": "nackSupressionDuration",
    "heartbeat_response_delay": "heartbeatResponseDelay",
    "initial_acknack_delay": "initialAcknackDelay",
}


def fastdds_2_profile(text: str) -> str:
    """A Fast DDS 3 profile (XML text) in Fast DDS 2's element names."""
    for new, old in FASTDDS_2_NAMES.items():
        text = re.sub(rf"<(/?){new}>", rf"<\1{old}>", text)
    return text


def fastdds_2_installed() -> bool:
    """Whether the Fast DDS beside this interpreter (or in an ament prefix) is 2.x, which reads
    its profile from FASTRTPS_DEFAULT_PROFILES_FILE (3.x reads FASTDDS_DEFAULT_PROFILES_FILE and
    warns about the old name)."""
    prefixes = [sys.prefix, *os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    return any(any((Path(prefix) / "lib").glob("libfastrtps.so*"))
               for prefix in prefixes if prefix)


# --- Fast DDS shared-memory segments left by dead processes -------------------------------
#
# rmw_fastrtps gives every participant a shared-memory transport under
# ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, whatever the profile says (doc/dds.md); even unused,
# it creates a segment /dev/shm/fastdds_<16 hex digits> (fastrtps_ with Jazzy's Fast DDS 2;
# about 0.5 MB) and a lock file beside
# it, ``<segment>_el``, which the owner holds locked (flock) for as long as it lives. A process
# that ends cleanly removes both; one that is SIGKILLed (a test's victim, a stop that had to
# kill, the hang watchdog) leaves them in /dev/shm for good: thousands per day on a test
# machine. A segment whose lock file nobody holds has no owner left and can go.

SHM_DIRECTORY = Path("/dev/shm")
_SEGMENT_NAME = re.compile(r"fast(dds|rtps)_[0-9a-f]{16}")  # Fast DDS 3 / 2 (Jazzy)
#: Every segment seen mapped by a process started here (RosProcess), for a last sweep.
SEEN_SEGMENTS: set[str] = set()
#: How often a RosProcess's segments are looked up while it runs: every SEGMENT_LOOK_FIRST
#: seconds until it maps one, then every SEGMENT_LOOK_LATER (a node makes its participant
#: early on; a second context is rare).
SEGMENT_LOOK_FIRST = 0.2
SEGMENT_LOOK_LATER = 5.0


def fastdds_segments(directory: Path = SHM_DIRECTORY) -> set[str]:
    """The names of the Fast DDS data segments in ``directory`` (not their lock files)."""
    try:
        names = os.listdir(directory)
    except OSError:  # no /dev/shm (not Linux): nothing to look after
        return set()
    return {name for name in names if _SEGMENT_NAME.fullmatch(name)}


def segments_of(pid: int) -> set[str]:
    """The Fast DDS data segments process ``pid`` maps (none if it is gone)."""
    try:
        with open(f"/proc/{pid}/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/dev/shm/fast" in line}
    except OSError:
        return set()
    return {Path(path).name for path in paths if _SEGMENT_NAME.fullmatch(Path(path).name)}


def flock_held(path: Path) -> bool:
    """Whether a live process holds a lock (flock) on the file ``path`` (a missing file: no):
    a run's domain lock, a Fast DDS segment's lock file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing lets go of the lock, if this took it
    return False


def segment_owned(name: str, directory: Path = SHM_DIRECTORY) -> bool:
    """Whether a live process holds segment ``name``'s lock file (a missing lock file: no)."""
    return flock_held(directory / f"{name}_el")


def remove_dead_segments(names: Iterable[str], directory: Path = SHM_DIRECTORY) -> list[str]:
    """Remove each of the segments ``names`` (and its lock file) that no live process owns;
    returns the names of those it found and removed. Only names of Fast DDS data segments are
    considered."""
    removed = []
    for name in sorted(set(names)):
        if not _SEGMENT_NAME.fullmatch(name) or segment_owned(name, directory):
            continue
        found = False
        for path in (directory / name, directory / f"{name}_el"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                found = True
        if found:
            removed.append(name)
    return removed


def _process_group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid):
            members.append(int(entry))
    return members


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
        nice: int | None = None,
    ):
        """``nice``: the process's and its scheduler group's niceness (:func:`set_nice`;
        default: this process's own, so the node is no less nice than what started it)."""
        self.name = name
        self.command = list(command)
        env = ros_environment(domain_id)
        env.update(extra_env or {})
        self.lines: list[str] = []
        self._echo = echo
        self._output = output if output is not None else sys.stderr
        # The child holds the run's domain lock too (an inherited descriptor of the same open
        # file): a process orphaned by a run that ended abruptly (pytest-timeout's os._exit,
        # the hang watchdog, a crash) keeps its nodes in the domain, and no later run may pick
        # that domain while it lives (its /orca_node answered another run's requests).
        lock = _DOMAIN_LOCKS.get(int(domain_id))
        self._process = subprocess.Popen(
            self.command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            start_new_session=True,
            pass_fds=() if lock is None else (lock,),
        )
        nice = os.nice(0) if nice is None else nice
        if nice > 0:
            set_nice(self._process.pid, nice)
        self._reader = threading.Thread(target=self._pump, name=f"{name}-output", daemon=True)
        self._reader.start()
        self.segments: set[str] = set()  # Fast DDS segments its process group mapped
        self._segment_watch = threading.Thread(target=self._watch_segments,
                                               name=f"{name}-segments", daemon=True)
        self._segment_watch.start()

    def _note_segments(self, group: bool = False) -> None:
        pids = _process_group(self._process.pid) if group else [self._process.pid]
        for pid in pids:
            self.segments |= segments_of(pid)
        SEEN_SEGMENTS.update(self.segments)

    def _watch_segments(self) -> None:
        """Note the Fast DDS segments the process maps while it runs; once it has ended, remove
        those no one owns (it was killed, or it crashed: nothing else ever removes them)."""
        while True:
            try:
                self._process.wait(SEGMENT_LOOK_LATER if self.segments else SEGMENT_LOOK_FIRST)
                break
            except subprocess.TimeoutExpired:
                self._note_segments()
        remove_dead_segments(self.segments)

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
            # Killed, its DDS participant cannot remove its shared-memory segment: note what
            # its process group maps, and remove what no one owns once they are gone.
            self._note_segments(group=True)
            # (ended and reaped by the segment watch the instant after running() looked)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
            remove_dead_segments(self.segments)
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
