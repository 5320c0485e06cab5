"""The stop guardian program (ros/stop_guardian.py), run as a node's StopGuardian runs it (a
bare interpreter reading a pipe), guarding a stand-in process: no DDS, no rclpy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from planning_collision.ros import stop_guardian

DEADLINE = 0.5  # seconds after the signal byte
ACKNOWLEDGED_DEADLINE = 1.5  # seconds after the acknowledgement


@pytest.fixture
def guarded():
    """A sleeping stand-in for a node's process, its guardian and the pipe's write end; all
    ended when the test ends."""
    started: list[tuple[subprocess.Popen, subprocess.Popen, list[int]]] = []

    def start() -> tuple[subprocess.Popen, subprocess.Popen, list[int]]:
        victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        read_end, write_end = os.pipe()
        guardian = subprocess.Popen(
            [sys.executable, "-I", "-S", stop_guardian.__file__, str(read_end), str(victim.pid),
             str(DEADLINE), str(ACKNOWLEDGED_DEADLINE), "stand_in"],
            pass_fds=(read_end,), stderr=subprocess.PIPE, text=True)
        os.close(read_end)
        fds = [write_end]
        started.append((victim, guardian, fds))
        return victim, guardian, fds

    yield start
    for victim, guardian, fds in started:
        for fd in fds:
            os.close(fd)
        fds.clear()
        for proc in (victim, guardian):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        guardian.stderr.close()


def _ended_after(proc: subprocess.Popen, since: float, limit: float) -> float:
    proc.wait(timeout=limit)
    return time.monotonic() - since


def test_a_process_that_never_acknowledges_the_signal_is_killed_at_the_first_deadline(guarded):
    victim, guardian, (write_end,) = guarded()
    sent = time.monotonic()
    os.write(write_end, bytes((signal.SIGINT,)))
    took = _ended_after(victim, sent, 10.0)
    assert victim.returncode == -signal.SIGKILL
    assert DEADLINE <= took < DEADLINE + 1.0
    assert guardian.wait(timeout=5.0) == 0
    message = guardian.stderr.read()
    assert "[stand_in] stop guardian: the process had not ended 0.5 s after" in message
    assert "never got back to Python" in message


def test_an_acknowledged_stop_gets_the_watchdogs_time_then_is_killed(guarded):
    """The acknowledgement (the node's own watchdog is armed) moves the deadline: the guardian
    no longer races that watchdog, and still ends a process whose watchdog failed."""
    victim, guardian, (write_end,) = guarded()
    sent = time.monotonic()
    os.write(write_end, bytes((signal.SIGTERM,)))
    time.sleep(0.2)
    acknowledged = time.monotonic()
    os.write(write_end, bytes((stop_guardian.ACKNOWLEDGED,)))
    time.sleep(DEADLINE + 0.3 - (time.monotonic() - sent))
    assert victim.poll() is None  # past the first deadline, alive
    took = _ended_after(victim, acknowledged, 10.0)
    assert victim.returncode == -signal.SIGKILL
    assert ACKNOWLEDGED_DEADLINE <= took < ACKNOWLEDGED_DEADLINE + 1.0
    assert guardian.wait(timeout=5.0) == 0
    assert "its own watchdog did not end it" in guardian.stderr.read()


def test_the_guardian_ends_quietly_when_its_process_ends_in_time(guarded):
    """The pipe's last write end closes when the node's process ends: the guardian ends at once
    and kills nothing, before and after a signal."""
    for signalled in (False, True):
        victim, guardian, fds = guarded()
        if signalled:
            os.write(fds[0], bytes((signal.SIGINT,)))
        os.close(fds.pop())
        assert guardian.wait(timeout=5.0) == 0
        assert victim.poll() is None
        assert guardian.stderr.read() == ""


def test_bytes_that_are_no_stop_signal_start_no_clock(guarded):
    """The interpreter writes every handled signal's number to the pipe (SIGCHLD, say, when
    a node's handler is installed for it): only SIGINT and SIGTERM start the clock."""
    victim, guardian, (write_end,) = guarded()
    os.write(write_end, bytes((signal.SIGCHLD, signal.SIGUSR1)))
    time.sleep(DEADLINE + 0.5)
    assert victim.poll() is None
    assert guardian.poll() is None
