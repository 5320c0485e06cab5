"""Stopping a node's process: the stop signals, the stop watchdog and the stop guardian.

Signals. :class:`StopSignals` handles SIGINT and SIGTERM (``rclpy.init`` installs no handler
of its own): the handler only records the request, so no ``KeyboardInterrupt`` is ever raised
inside a callback, and rclpy never shuts the context down under a callback that is still
publishing. At the first signal both signals are ignored by the operating system from then
on, so a second Ctrl-C, or the SIGTERM that ``ros2 launch`` sends after its grace period,
cannot interrupt the teardown.

The watchdog (:class:`StopWatchdog`) needs no interpreter lock: armed when the stop begins, it
ends the process :data:`STOP_DEADLINE` seconds after the signal was handled, whatever DDS
does (the order of the stop itself is :func:`.run.run_node`'s).

The watchdog is armed by Python code on the main thread, so it needs that thread to get back
to the interpreter: a main thread stuck in a C call (a DDS deadlock while publishing, say)
would never see the signal at all. A small second process, the :class:`StopGuardian`, covers
that case from outside: it learns of the signal from the interpreter's C-level handler (no
Python code of this process has to run) and kills the process if it has not ended
:data:`GUARDIAN_DEADLINE` seconds later. Once the watchdog is armed the node tells the
guardian so (:meth:`StopGuardian.acknowledge`), and the guardian then waits for the
watchdog's deadline plus :data:`EXIT_ALLOWANCE` instead: the two clocks start at different
moments (the signal's arrival; the main thread handling it, up to 0.4 s later under load), and
before the acknowledgement the guardian killed nodes (exit code -9) whose own watchdog was
about to end them cleanly. The guardian can be switched off (:data:`.switches.STOP_GUARDIAN`,
see ``doc/workarounds.md``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import faulthandler
import os
import signal
import subprocess
import sys
import time

from . import stop_guardian
from .switches import STOP_GUARDIAN, switched_on

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The process has ended this many seconds after the first stop signal was handled.
STOP_DEADLINE = 1.8
# Of which at most this long may go to waiting for callbacks that were running at the signal.
CALLBACK_WAIT = 1.0
# The stop guardian kills a process that has not ended this many seconds after the signal,
# unless the process acknowledged the signal first (its own watchdog armed): then it waits
# STOP_DEADLINE + EXIT_ALLOWANCE seconds from the acknowledgement. EXIT_ALLOWANCE is room for
# the operating system to end a process of some 40 threads on a loaded machine (0.2-0.4 s
# measured with 28 nodes stopping at once beside two busy loops on 2 cores).
GUARDIAN_DEADLINE = 2.6
EXIT_ALLOWANCE = 0.8


def flush_output() -> None:
    """Flush Python's and C's standard streams (rcutils logs through C's stderr)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


class _ExitTimer:
    """A POSIX timer whose expiry calls the C library's ``_exit(status)`` on a thread of the C
    library's own (``SIGEV_THREAD``): it ends the process even while another thread holds the
    interpreter lock forever. Linux with glibc; :meth:`arm` returns False where unavailable."""

    SIGEV_THREAD = 2
    CLOCK_MONOTONIC = 1

    class _SigEvent(ctypes.Structure):  # glibc's struct sigevent (64 bytes)
        _fields_ = [
            ("value", ctypes.c_void_p),
            ("signo", ctypes.c_int),
            ("notify", ctypes.c_int),
            ("function", ctypes.c_void_p),
            ("attribute", ctypes.c_void_p),
            ("pad", ctypes.c_byte * 32),
        ]

    class _ITimerSpec(ctypes.Structure):
        _fields_ = [("interval", ctypes.c_long * 2), ("value", ctypes.c_long * 2)]

    def __init__(self):
        self._timer = ctypes.c_void_p()
        self._libc = None

    def arm(self, seconds: float, status: int) -> bool:
        if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8:
            return False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            timer_create = getattr(libc, "timer_create", None)
            if timer_create is None:  # glibc < 2.34 keeps it in librt
                rt = ctypes.util.find_library("rt")
                if rt is None:
                    return False
                libc = ctypes.CDLL(rt, use_errno=True)
                timer_create = libc.timer_create
            exit_function = ctypes.cast(ctypes.CDLL(None)["_exit"], ctypes.c_void_p).value
        except (OSError, AttributeError):
            return False
        timer_create.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        libc.timer_settime.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        libc.timer_delete.argtypes = [ctypes.c_void_p]
        # The notify function receives the sigval union (the first integer argument on the
        # 64-bit Linux ABIs): _exit(status).
        event = self._SigEvent(value=status, notify=self.SIGEV_THREAD, function=exit_function)
        if timer_create(self.CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(self._timer)) != 0:
            return False
        whole = int(seconds)
        spec = self._ITimerSpec()
        spec.value[0], spec.value[1] = whole, max(1, int((seconds - whole) * 1e9))
        if libc.timer_settime(self._timer, 0, ctypes.byref(spec), None) != 0:
            libc.timer_delete(self._timer)
            return False
        self._libc = libc
        return True

    def cancel(self) -> None:
        if self._libc is not None:
            self._libc.timer_delete(self._timer)
            self._libc = None


class StopWatchdog:
    """Ends the process by a deadline without needing the interpreter lock.

    A Python thread cannot bound the teardown: rclpy's ``destroy_node`` keeps the interpreter
    lock while it waits inside Fast DDS, and when Fast DDS deadlocks there
    (eProsima/Fast-DDS#6502) no other Python thread ever runs again. Two stages:

    * the node's own stop work (:meth:`own_work`): ``faulthandler``'s C thread prints every
      thread's stack and exits with status 1 at the deadline: that work did not get done;
    * the DDS teardown (:meth:`dds_teardown`): the same stack dump shortly before the deadline,
      then a POSIX timer calls ``_exit(0)``: the node did everything it owed, only the goodbye
      to its DDS peers was cut short (they drop it when its lease runs out), and a stop that
      did what it should is a success for ``ros2 launch`` and any supervisor. Where that
      timer is unavailable, faulthandler exits with status 1 instead.
    """

    DUMP_LEAD = 0.15  # seconds between the stack dump and the exit

    def __init__(self, deadline: float):
        self.deadline = deadline  # time.monotonic()
        self._timer = _ExitTimer()

    def _remaining(self, lead: float = 0.0) -> float:
        return max(0.05, self.deadline - lead - time.monotonic())

    def own_work(self) -> None:
        faulthandler.dump_traceback_later(self._remaining(), exit=True, file=sys.__stderr__)

    def dds_teardown(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self._timer.arm(self._remaining(), 0):
            faulthandler.dump_traceback_later(
                self._remaining(self.DUMP_LEAD), exit=False, file=sys.__stderr__
            )
        else:
            faulthandler.dump_traceback_later(self._remaining(), exit=True, file=sys.__stderr__)

    def cancel(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        self._timer.cancel()


class StopGuardian:
    """A second process that ends this one when a stop signal was received but the process
    has not ended in time, whatever this process's threads are doing (the program:
    :mod:`.stop_guardian`).

    It listens on a pipe that the interpreter's C-level signal handler writes the signal
    number to (``signal.set_wakeup_fd``): that write happens inside the handler itself, even
    while the main thread is stuck in a C call, holding the interpreter lock or not. When this
    process ends, however it ends, the pipe closes and the guardian ends too. The guardian is
    a bare interpreter (``-I -S``, a few megabytes) in a session of its own, so a Ctrl-C in a
    terminal never reaches it; it ignores SIGINT and SIGTERM anyway.
    """

    def __init__(self, name: str):
        self.process = None
        read_end, write_end = os.pipe()
        try:
            os.set_blocking(write_end, False)
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    stop_guardian.__file__,
                    str(read_end),
                    str(os.getpid()),
                    f"{GUARDIAN_DEADLINE:.3f}",
                    f"{STOP_DEADLINE + EXIT_ALLOWANCE:.3f}",
                    name,
                ],
                pass_fds=(read_end,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._write_end = write_end
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def acknowledge(self) -> None:
        """Tell the guardian that this process has seen the stop signal and armed its own
        watchdog (call right after :meth:`StopWatchdog.own_work`)."""
        try:
            os.write(self._write_end, bytes((stop_guardian.ACKNOWLEDGED,)))
        except OSError:  # a full pipe (it never is: the guardian reads it) or a closed one
            pass


_guardian: StopGuardian | None = None  # kept for the life of the process


def start_guardian(name: str) -> StopGuardian | None:
    """Start this process's stop guardian (once), unless switched off; None without one."""
    global _guardian
    if _guardian is None and switched_on(STOP_GUARDIAN):
        try:
            _guardian = StopGuardian(name)
        except (OSError, ValueError) as exc:  # no process to spare, or not the main thread
            print(f"no stop guardian: {exc}", file=sys.stderr)
    return _guardian


class StopRequested(BaseException):
    """Raised by the signal handler while the node is still being built (nothing spins yet);
    a BaseException, so that no ``except Exception`` in a constructor swallows it."""


class StopSignals:
    """SIGINT and SIGTERM for one node process: the first one starts the stop, later ones are
    ignored by the operating system."""

    def __init__(self):
        self.signal: int | None = None
        self.at: float | None = None  # time.monotonic() of the first signal
        self.building = True  # raise StopRequested while the node is being built

    def install(self) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def _handle(self, signum, frame) -> None:
        if self.signal is not None:
            return
        self.signal, self.at = signum, time.monotonic()
        ignore_stop_signals()
        if self.building:
            raise StopRequested


def ignore_stop_signals() -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
