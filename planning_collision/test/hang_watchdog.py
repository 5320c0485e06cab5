"""A pytest plugin that turns a hung test into a fast, explained failure, even when the hung
thread holds the interpreter lock (GIL).

pytest-timeout's thread method needs a Python thread to run, and a finaliser that deadlocks
inside Fast DDS while holding the GIL (issue #20) stops every Python thread; the run then sits
until CI's own limit. So each pytest process (a plain run, every xdist worker and the xdist
controller) is watched from *outside*: a small watcher process, started with the pytest
process's PID and fed one line per test over a pipe. When one test (setup, call and teardown)
runs longer than the bound, the watcher

1. runs ``py-spy dump --native --pid`` (requirements/test.txt), which reads every thread's
   Python and native frames from outside;
2. runs ``gdb -p PID -batch -ex "thread apply all bt"``: the native stack of *every* thread,
   those without Python too (Fast DDS's event and receive threads, which py-spy does not show),
   and a native stack at all where py-spy's unwinder fails (``UNW_EINVAL``, the issue #20 hang);
3. sends SIGUSR2, on which faulthandler (registered here) prints every thread's Python stack
   from a C signal handler, without the GIL (the fallback where py-spy cannot read);
4. kills the pytest process and the processes it started (SIGKILL), so the run fails at once:
   a plain run ends with status -9 (137 in a shell) after the watcher's message naming the
   test; under xdist the controller reports ``worker 'gwN' crashed while running '<test>'``
   and exits non-zero.

Everything goes to the real stderr (not pytest's capture), so it is in CI's log. Also bounded (by
the bound, at least PHASE_BOUND): collection, and the end of a session (sessionfinish to
unconfigure) in a plain run and in the xdist controller, which runs no test itself.

The bound: ``hang_timeout`` in setup.cfg's ``[tool:pytest]`` (seconds), overridden by
``--hang-timeout=SECONDS`` (e.g. ``PYTEST_ADDOPTS=--hang-timeout=600``); 0 turns the watcher
off. A test that declares a longer pytest-timeout (``@pytest.mark.timeout(N)``) gets N plus
INNER_GRACE seconds.

The watcher ends when pytest ends: pytest stops it at session end, and it also leaves on its
own when its pipe closes or its parent is gone (and the kernel kills it with its parent,
PR_SET_PDEATHSIG), so it can never outlive the process it watches.

Run as a script, this file is the watcher itself: ``python hang_watchdog.py PID [PY-SPY [GDB]]``,
fed ``start<TAB>BOUND<TAB>LABEL``, ``end`` and ``stop`` lines on its standard input.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_BOUND = 180.0
#: The least time collection and the end of a session get (whatever the bound of a test).
PHASE_BOUND = 120.0
#: What a test that declares a longer pytest-timeout gets on top of it here.
INNER_GRACE = 30.0
#: The signal on which the watched process prints its Python stacks (faulthandler).
DUMP_SIGNAL = signal.SIGUSR2
#: How long each stack dump (py-spy, gdb) may take before the process is killed anyway.
PYSPY_TIMEOUT = 60.0
GDB_TIMEOUT = 90.0
PR_SET_PDEATHSIG = 1
PR_SET_PTRACER = 0x59616D61  # Yama: let the watcher (a child) read its parent's stacks


def _prctl(option: int, arg: int) -> None:
    with contextlib.suppress(Exception):  # not Linux, or no Yama: nothing to do
        ctypes.CDLL(None, use_errno=True).prctl(option, ctypes.c_ulong(arg), 0, 0, 0)


# --- the pytest plugin --------------------------------------------------------------------


def pytest_addoption(parser):
    parser.addini("hang_timeout", "seconds one test may run before the outside watcher dumps "
                  "every thread's stack and kills the run (0: no watcher)",
                  default=str(DEFAULT_BOUND))
    parser.addoption("--hang-timeout", type=float, default=None, metavar="SECONDS",
                     help="override the ini option hang_timeout (0: no watcher)")


def hang_bound(config) -> float:
    value = config.getoption("--hang-timeout")
    return float(config.getini("hang_timeout") if value is None else value)


def pytest_configure(config):
    bound = hang_bound(config)
    if bound <= 0:
        return
    worker = hasattr(config, "workerinput")
    controller = not worker and getattr(config.option, "dist", "no") != "no"
    watcher = _Watcher(config, bound)
    config.pluginmanager.register(_Controller(watcher) if controller
                                  else _Runner(watcher, worker), "hang-watchdog-events")
    config._hang_watcher = watcher


def pytest_unconfigure(config):
    watcher = getattr(config, "_hang_watcher", None)
    if watcher is not None:
        watcher.stop()
        del config._hang_watcher


def pytest_report_header(config):
    watcher = getattr(config, "_hang_watcher", None)
    if watcher is not None:
        return (f"hang watchdog: pid {watcher.process.pid}, bound {watcher.bound:g} s per test "
                f"(py-spy: {watcher.pyspy or 'not installed'}; "
                f"gdb: {watcher.gdb or 'not installed'})")
    return None


class _Watcher:
    """The watcher process of this pytest process, and the pipe that tells it what runs."""

    def __init__(self, config, bound: float):
        self.bound = bound
        self.pyspy = _find_pyspy()
        self.gdb = shutil.which("gdb")
        capman = config.pluginmanager.getplugin("capturemanager")
        # The real stderr, not pytest's capture file: a dump must reach the log even when the
        # process is killed right after it.
        suspended = capman.global_and_fixture_disabled() if capman else contextlib.nullcontext()
        with suspended:
            self._stderr_fd = os.dup(2)
        self._stderr = os.fdopen(self._stderr_fd, "w", closefd=True)
        faulthandler.register(DUMP_SIGNAL, file=self._stderr, all_threads=True, chain=False)
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(os.getpid()), self.pyspy or "", self.gdb or ""],
            stdin=subprocess.PIPE, stdout=self._stderr_fd, stderr=self._stderr_fd,
            start_new_session=True)  # a Ctrl-C meant for pytest does not end the watcher
        _prctl(PR_SET_PTRACER, self.process.pid)

    def send(self, line: str) -> None:
        if self.process.stdin is None:
            return
        try:
            self.process.stdin.write(line.replace("\n", " ").encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):  # the watcher is gone: nothing to tell
            pass

    def start(self, label: str, bound: float | None = None) -> None:
        self.send(f"start\t{self.bound if bound is None else bound!r}\t{label}")

    def end(self) -> None:
        self.send("end")

    def stop(self) -> None:
        self.send("stop")
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        faulthandler.unregister(DUMP_SIGNAL)
        self._stderr.close()


class _Runner:
    """Events of a process that runs tests (a plain run or an xdist worker)."""

    def __init__(self, watcher: _Watcher, worker: bool):
        self.watcher = watcher
        self.worker = worker
        self.bounds: dict[str, float] = {}  # tests with a longer bound of their own

    def pytest_collection(self, session):
        self.watcher.start("collection", max(self.watcher.bound, PHASE_BOUND))

    def pytest_collection_finish(self, session):
        self.watcher.end()
        for item in session.items:
            bound = bound_of(item, self.watcher.bound)
            if bound != self.watcher.bound:
                self.bounds[item.nodeid] = bound

    def pytest_runtest_logstart(self, nodeid, location):
        self.watcher.start(nodeid, self.bounds.get(nodeid))

    def pytest_runtest_logfinish(self, nodeid, location):
        self.watcher.end()

    def pytest_sessionfinish(self, session):
        if self.worker:  # it now waits for the controller, which waits for the other workers
            self.watcher.end()
        else:
            self.watcher.start("the end of the session", max(self.watcher.bound, PHASE_BOUND))


class _Controller:
    """The xdist controller runs no test: each worker's own watcher bounds its tests (and
    xdist reports the test of a worker it killed). Its watcher bounds the end of the
    session."""

    def __init__(self, watcher: _Watcher):
        self.watcher = watcher

    def pytest_sessionfinish(self, session):
        self.watcher.start("the end of the session", max(self.watcher.bound, PHASE_BOUND))


def bound_of(item, bound: float) -> float:
    """The bound of one test: ``bound``, or more for a test that declares a longer
    pytest-timeout (``@pytest.mark.timeout(N)``: N plus a grace period, so that
    pytest-timeout, the inner bound, fires first where it can)."""
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return bound
    declared = marker.kwargs.get("timeout", marker.args[0] if marker.args else None)
    try:
        return max(bound, float(declared) + INNER_GRACE)
    except (TypeError, ValueError):
        return bound


def _find_pyspy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


# --- the watcher process ------------------------------------------------------------------


def _say(text: str) -> None:
    print(f"hang watchdog: {text}", file=sys.stderr, flush=True)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), the watcher itself left out."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child != os.getpid():
                found.append(child)
                todo.append(child)
    return found


def _hang(pid: int, label: str, ran: float, bound: float, pyspy: str, gdb: str = "") -> None:
    _say(f"{label!r} has run for {ran:.0f} s (bound {bound:g} s) in pytest process {pid}; "
         f"dumping every thread's stack, then killing the process")
    if pyspy:  # first: it reads the process as it is (a signal could end a system call)
        _say(f"--- py-spy dump --native --pid {pid} ---")
        try:
            subprocess.run([pyspy, "dump", "--native", "--pid", str(pid)],
                           stdout=sys.stderr, stderr=sys.stderr, timeout=PYSPY_TIMEOUT,
                           check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _say(f"py-spy failed: {exc}")
    else:
        _say("py-spy is not installed (requirements/test.txt): no Python frames from outside")
    # Second, and always: py-spy shows threads that run Python only, and its unwinder can fail
    # on every thread (UNW_EINVAL, the issue #20 hang); gdb reads every thread's native frames.
    gdb_dump(pid, gdb)
    _say("--- faulthandler: Python stacks, printed by the process without the GIL ---")
    with contextlib.suppress(OSError):
        os.kill(pid, DUMP_SIGNAL)
    time.sleep(1.0)
    os.kill(pid, signal.SIGSTOP)  # frozen, it starts nothing more
    below = _descendants(pid)
    # Said before the kill: the watcher dies with the process it watches (PR_SET_PDEATHSIG).
    _say(f"killing pytest process {pid} (and {len(below)} processes it started): "
         f"{label} hung")
    segments = _segments_of(below)
    for target in below:
        with contextlib.suppress(OSError):
            os.kill(target, signal.SIGKILL)
    _remove_dead_segments(segments)  # before the last kill: this process dies with that one
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _segments_of(pids: list[int]) -> set[str]:
    """The Fast DDS shared-memory segments that processes ``pids`` map (processes.py)."""
    try:
        from planning_collision.ros import processes
    except ImportError:
        return set()
    return set().union(*(processes.segments_of(pid) for pid in pids))


def _remove_dead_segments(segments: set[str], wait: float = 2.0) -> None:
    """Remove the segments of the killed processes once their owners are gone (SIGKILLed, they
    cannot remove them themselves: each would stay in /dev/shm for good)."""
    if not segments:
        return
    from planning_collision.ros import processes

    deadline = time.monotonic() + wait
    while (any(processes.segment_owned(name) for name in segments)
           and time.monotonic() < deadline):
        time.sleep(0.05)
    removed = processes.remove_dead_segments(segments)
    _say(f"removed {len(removed)} Fast DDS shared-memory segments of the killed processes")


def gdb_dump(pid: int, gdb: str, timeout: float = GDB_TIMEOUT) -> None:
    """Print every thread's native stack of process ``pid`` with gdb (attach, backtrace,
    detach: the process goes on as it was)."""
    if not gdb:
        _say("gdb is not installed: no native stacks of the threads without Python")
        return
    _say(f"--- gdb -p {pid} -batch -ex 'thread apply all bt' ---")
    try:
        subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                        "-ex", "thread apply all bt"],
                       stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr,
                       timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _say(f"gdb failed: {exc}")


def watch(pid: int, pyspy: str = "", gdb: str = "") -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != pid:  # the parent died before prctl took effect
        return
    fd = sys.stdin.fileno()
    pending = b""
    label, bound, started = None, 0.0, 0.0
    while True:
        wait = 1.0 if label is None else min(1.0, max(0.0, started + bound - time.monotonic()))
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:  # pytest closed the pipe, or ended
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                command, *args = line.decode(errors="replace").split("\t", 2)
                if command == "start":
                    bound, label, started = float(args[0]), args[1], time.monotonic()
                elif command == "end":
                    label = None
                elif command == "stop":
                    return
        if os.getppid() != pid:
            return
        if label is not None and time.monotonic() - started > bound:
            _hang(pid, label, time.monotonic() - started, bound, pyspy, gdb)
            return


if __name__ == "__main__":
    watch(int(sys.argv[1]), *sys.argv[2:4])
