"""Stopping a node always ends the process, in time and cleanly (ros/run.py).

The promise (issue #13): after the first SIGINT or SIGTERM the process has ended within
3 seconds with exit code 0, whatever DDS does; further signals are ignored; nothing it prints
on the way out is an error, a traceback or a FATAL callback exception.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from planning_collision.resources import config_file
from planning_collision.ros import processes

DEADLINE = 3.0  # seconds from the first signal to the end of the process
SWAP_ROOM = str(config_file("scenarios/swap_room.yaml"))
NODES = {  # module, parameters, a line it logs once it spins
    "collision_server": ("planning_collision.ros.collision_server", {}, "ready:"),
    "orca_node": ("planning_collision.ros.orca_node", {"agents": ["robot1", "robot2"]},
                  "ready:"),
    "fleet_sim": ("planning_collision.ros.fleet_sim", {"scenario": SWAP_ROOM}, "simulating"),
    "map_publisher": ("planning_collision.ros.map_publisher", {"scenario": SWAP_ROOM},
                      "published"),
}
COPIES = 7  # of each node, all stopped at once: 28 processes
WAYS = ("SIGINT", "SIGTERM", "SIGINT twice")  # copy i of each node is stopped the (i % 3)th way
NOISE = re.compile(r"Traceback|ERROR|FATAL|KeyboardInterrupt|Exception|step failed")
WATCHDOG_DUMP = "most recent call first"  # faulthandler's stack dump


@pytest.fixture
def cpu_load():
    """Two busy-loop processes (the machine has two cores), started when asked."""
    hogs: list[subprocess.Popen] = []

    def start() -> None:
        for _ in range(2):
            hogs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))

    yield start
    for hog in hogs:
        hog.kill()
        hog.wait()


def stop_all(procs, ways: dict[str, str]) -> tuple[dict[str, float], dict[str, int]]:
    """Signal every process at once, each the way ``ways`` names; the second SIGINT of
    "SIGINT twice" goes to each such process once it logged that it is stopping. Returns the
    seconds from each process's first signal to its end (missing: still running after 15 s)
    and how many got a second signal while still running."""
    sent: dict[str, float] = {}
    for proc in procs:
        sent[proc.name] = time.monotonic()
        proc.send_signal(signal.SIGTERM if ways[proc.name] == "SIGTERM" else signal.SIGINT)
    ended: dict[str, float] = {}
    seconds = {"sent": 0}
    deadline = time.monotonic() + 15.0
    while len(ended) < len(procs) and time.monotonic() < deadline:
        for proc in procs:
            if proc.name in ended:
                continue
            if not proc.running():
                ended[proc.name] = time.monotonic() - sent[proc.name]
            elif (ways[proc.name] == "SIGINT twice" and proc.name not in seconds
                  and any("stopping on" in line for line in list(proc.lines))):
                seconds[proc.name] = 1
                seconds["sent"] += 1
                proc.send_signal(signal.SIGINT)
        time.sleep(0.005)
    return ended, seconds


def test_many_nodes_stopped_at_once_under_load_end_in_time_and_cleanly(start_process, cpu_load):
    """COPIES processes of each node, started together and signalled together while two
    busy loops hold both cores: a harsher stop than one node at a time (every process's DDS
    participant leaves while the others tear theirs down). Every node is stopped each way
    (SIGINT, SIGTERM, SIGINT twice) in the same round: two or three copies of it each way.
    (Three rounds of 28, one per way, took 37-45 s each in CI for the same promise.)"""
    procs, ready, ways = [], {}, {}
    for node, (module, parameters, ready_line) in NODES.items():
        for i in range(COPIES):
            proc = start_process(f"{node}{i}", processes.node_command(
                module, parameters=parameters, namespace=f"stop_{node}_{i}"), echo=False)
            procs.append(proc)
            ready[proc.name] = ready_line
            ways[proc.name] = WAYS[i % len(WAYS)]
    for proc in procs:
        assert proc.wait_for_line(ready[proc.name], 180.0), proc.lines[-20:]
    cpu_load()

    ended, seconds = stop_all(procs, ways)

    late = {p.name: (ended.get(p.name), p.lines[-12:]) for p in procs
            if ended.get(p.name, 99.0) >= DEADLINE}
    assert not late, f"did not end within {DEADLINE} s of the first signal: {late}"
    codes = {p.name: p.returncode for p in procs if p.returncode != 0}
    assert not codes, codes
    for proc in procs:
        noisy = [line for line in proc.lines if NOISE.search(line)]
        assert not noisy, f"{proc.name}: {noisy}"
        word = "SIGTERM" if ways[proc.name] == "SIGTERM" else "SIGINT"
        assert any(f"stopping on {word}" in line for line in proc.lines), proc.lines[-10:]
    # When participants leave together on a loaded machine, Fast DDS 3.2's teardown is slow
    # or deadlocks (eProsima/Fast-DDS#6502): the watchdog then ends the process (exit code 0,
    # checked above) after dumping its stack. How often depends on the load (0 to 11 of 28
    # here), so it is reported, not asserted; what is asserted is the promise itself.
    dumped = [p.name for p in procs if any(WATCHDOG_DUMP in line for line in p.lines)]
    print(f"slowest stop {max(ended.values()):.2f} s, median "
          f"{sorted(ended.values())[len(ended) // 2]:.2f} s; the watchdog ended {len(dumped)} "
          f"of {len(procs)}")
    twice = [name for name, way in ways.items() if way == "SIGINT twice"]
    assert seconds["sent"] >= len(twice) // 2, seconds


PROBE = '''
import ctypes, sys, threading, time
from rclpy.node import Node
from planning_collision.ros.node_executor import NodeExecutor
from planning_collision.ros.run import run_node

HANG = sys.argv[1]
SPUN = threading.Event()


class Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


def busy_in_c(seconds):
    """A C call that releases the interpreter lock and that no signal interrupts (a timed
    wait for a mutex this thread holds already): Python's signal handler waits until it ends."""
    libc = ctypes.CDLL(None)
    mutex = ctypes.create_string_buffer(64)
    libc.pthread_mutex_lock(mutex)
    end = time.time() + seconds
    libc.pthread_mutex_timedlock(mutex, ctypes.byref(Timespec(int(end), int(end % 1 * 1e9))))


class LateToNotice(NodeExecutor):
    """The main thread is in a long C call when the signal comes, as on a loaded machine."""

    blocked = False

    def spin_once(self, timeout_sec=None):
        super().spin_once(timeout_sec)
        if HANG.startswith("late") and SPUN.is_set() and not self.blocked:
            self.blocked = True
            print("in C", flush=True)
            busy_in_c(0.5)


def hold_the_interpreter_lock():
    ctypes.PyDLL(None).sleep(60)  # a C call made without releasing the lock


def deadlock(library):
    """Lock a (zeroed, so default) pthread mutex twice: a wait that, unlike sleep(), no
    signal interrupts. ``library`` PyDLL: keeping the interpreter lock; CDLL: releasing it."""
    mutex = ctypes.create_string_buffer(64)
    library.pthread_mutex_lock(mutex)
    library.pthread_mutex_lock(mutex)


class Probe(Node):
    def __init__(self):
        if HANG == "build":
            print("building", flush=True)
            time.sleep(60)
        super().__init__("stop_probe_" + "".join(c if c.isalnum() else "_" for c in HANG))
        self.timer = self.create_timer(0.01, self.tick)

    def tick(self):
        print("spinning", flush=True)
        SPUN.set()
        self.destroy_timer(self.timer)
        if HANG.startswith("spin"):
            deadlock(ctypes.PyDLL(None) if "holding" in HANG else ctypes.CDLL(None))

    def close(self):
        print("closing", flush=True)
        if HANG == "close":
            hold_the_interpreter_lock()

    def destroy_node(self):
        if HANG.endswith("destroy"):
            hold_the_interpreter_lock()
        super().destroy_node()


run_node(Probe, sys.argv[:1], make_executor=lambda node: LateToNotice(context=node.context))
print("run_node returned", flush=True)
'''


@pytest.mark.parametrize("hang, code", [("nothing", 0), ("build", 0), ("destroy", 0),
                                        ("close", 1)])
def test_a_stop_ends_the_process_even_when_a_step_hangs_holding_the_interpreter_lock(
        tmp_path, start_process, hang, code):
    """A node that hangs while being built, in its own close() or in destroy_node (as rclpy
    does inside a Fast DDS deadlock, keeping the interpreter lock so that no Python thread can
    run) still ends within the deadline. Exit code 0 when only the DDS teardown was cut
    short; 1 when the node's own last work (close) did not finish."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = start_process(f"probe_{hang}", [sys.executable, str(script), hang], echo=False)
    assert proc.wait_for_line("building" if hang == "build" else "spinning", 60.0), \
        proc.lines[-20:]
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    assert proc.wait(timeout=30.0) == code, proc.lines[-30:]
    assert time.monotonic() - started < DEADLINE, proc.lines[-30:]
    lines = proc.lines
    assert not any("run_node returned" in line for line in lines)
    assert not any(re.search(r"Traceback|KeyboardInterrupt", line) for line in lines), lines
    dump = "\n".join(lines[next((i for i, line in enumerate(lines) if "Timeout (" in line),
                                len(lines)):])
    if hang in ("destroy", "close"):
        assert WATCHDOG_DUMP in dump and f"in {hang}" in dump, lines[-30:]
    else:
        assert not dump, dump
    assert any("stopping on SIGINT" in line for line in lines), lines[-30:]
    if hang != "build":
        assert any("closing" in line for line in lines), lines[-30:]
    else:
        assert any("(while starting)" in line for line in lines), lines[-30:]


def test_a_signal_handled_late_still_ends_the_process_by_its_own_watchdog(tmp_path,
                                                                          start_process):
    """The main thread is in a C call for 0.5 s when SIGINT arrives (as under load, when it
    gets back to Python late), then the DDS teardown hangs holding the interpreter lock. The
    stop guardian's clock starts at the signal, the node's own watchdog's when Python handles
    it: the guardian used to kill the process (exit code -9) just before that watchdog ended
    it cleanly, as it did to map_publisher6 in a CI run. Now the node acknowledges the signal
    to the guardian, and its watchdog ends it with exit code 0, still within the deadline."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = start_process("probe_late", [sys.executable, str(script), "late, destroy"],
                         echo=False)
    assert proc.wait_for_line("in C", 60.0), proc.lines[-20:]
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    assert proc.wait(timeout=30.0) == 0, proc.lines[-30:]
    took = time.monotonic() - started
    assert took < DEADLINE, (took, proc.lines[-30:])
    assert not any("stop guardian" in line for line in proc.lines), proc.lines[-30:]
    assert any("stopping on SIGINT" in line for line in proc.lines), proc.lines[-30:]
    assert any(WATCHDOG_DUMP in line for line in proc.lines), proc.lines[-30:]


@pytest.mark.parametrize("hang, code", [("spin, holding the lock", -signal.SIGKILL),
                                        ("spin, in C", 0)])
def test_a_callback_stuck_in_a_c_call_does_not_stop_the_stop(tmp_path, start_process, hang,
                                                             code):
    """A callback is stuck for good in a C call (a mutex wait no signal interrupts, as in a
    DDS deadlock while publishing) when the signal arrives. Releasing the interpreter lock,
    it is left behind and the stop goes on as usual (exit code 0). Holding it, no Python code
    of the process can ever run again, so the process cannot even notice the signal: the
    stop guardian process kills it by the deadline and says why."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = start_process("probe_spin", [sys.executable, str(script), hang], echo=False)
    assert proc.wait_for_line("spinning", 60.0), proc.lines[-20:]
    time.sleep(0.2)  # inside the stuck call
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    assert proc.wait(timeout=30.0) == code, proc.lines[-30:]
    assert time.monotonic() - started < DEADLINE, proc.lines[-30:]
    guardian = "stop guardian: the process had not ended"
    if code:
        assert any(guardian in line for line in proc.lines), proc.lines[-30:]
        assert not any("stopping on" in line for line in proc.lines)
    else:
        assert not any(guardian in line for line in proc.lines), proc.lines[-30:]
        assert any("stopping on SIGINT" in line for line in proc.lines), proc.lines[-30:]


def test_the_stop_guardian_ends_with_its_process(tmp_path, start_process):
    """The guardian leaves no process behind: it ends when its node's process ends, also
    when that process is killed without any signal reaching Python."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = start_process("probe_guarded", [sys.executable, str(script), "nothing"], echo=False)
    assert proc.wait_for_line("spinning", 60.0), proc.lines[-20:]
    guardians = [pid for pid in _children(proc.pid) if b"stop_guardian" in _cmdline(pid)]
    assert len(guardians) == 1
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10.0)
    deadline = time.monotonic() + 5.0
    while _alive(guardians[0]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(guardians[0])


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
