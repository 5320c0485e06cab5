"""Running a node until SIGINT or SIGTERM, and a stop that always ends, cleanly and in time.

Signals. :func:`run_node` handles SIGINT and SIGTERM itself (``rclpy.init`` installs no handler
of its own): the handler only records the request, so no ``KeyboardInterrupt`` is ever raised
inside a callback, and rclpy never shuts the context down under a callback that is still
publishing. The main loop spins in short slices and notices the request within one.

The stop, from the first signal on:

1. both signals are ignored by the operating system from then on, so a second Ctrl-C, or the
   SIGTERM that ``ros2 launch`` sends after its grace period, cannot interrupt the teardown;
2. a watchdog that needs no interpreter lock is armed (:class:`StopWatchdog`): the process
   has ended :data:`STOP_DEADLINE` seconds after the signal, whatever DDS does;
3. spinning stops; callbacks already running finish, queued ones are dropped;
4. ``node.close()`` does the node's own last work (e.g. writing a file);
5. stdout and stderr are flushed, the node is destroyed (and with it the process's DDS
   participant, so its peers learn at once that it left) and the context shut down;
6. ``os._exit(0)``: the interpreter's finalization is skipped (it waits for DDS threads and
   took seconds under load, longer than ``ros2 launch`` waits before escalating).

Steps 1 and 2 run in Python on the main thread, so they need that thread to get back to the
interpreter: a main thread stuck in a C call (a DDS deadlock while publishing, say) would
never see the signal at all. A small second process, the :class:`StopGuardian`, covers that
case from outside: it learns of the signal from the interpreter's C-level handler (no Python
code of this process has to run) and kills the process if it has not ended
:data:`GUARDIAN_DEADLINE` seconds later.

Exit codes: 0 for a stop (also when the watchdog had to cut the DDS teardown short, see
:class:`StopWatchdog`), 1 when the node could not be built, spinning failed, or the node's own
stop work did not finish in time.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import faulthandler
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import rclpy
import rclpy.logging
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    MultiThreadedExecutor,
    ShutdownException,
    SingleThreadedExecutor,
    TimeoutException,
)
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from .parameters import ParameterError
from .type_registration import register_types_early

SPIN_SLICE = 0.1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The process has ended this many seconds after the first stop signal was handled.
STOP_DEADLINE = 2.2
# Of which at most this long may go to waiting for callbacks that were running at the signal.
CALLBACK_WAIT = 1.0
# The stop guardian kills a process that has not ended this many seconds after the signal.
GUARDIAN_DEADLINE = STOP_DEADLINE + 0.4


def _flush_output() -> None:
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
        _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                    ("notify", ctypes.c_int), ("function", ctypes.c_void_p),
                    ("attribute", ctypes.c_void_p), ("pad", ctypes.c_byte * 32)]

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
        libc.timer_settime.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                       ctypes.c_void_p]
        libc.timer_delete.argtypes = [ctypes.c_void_p]
        # The notify function receives the sigval union (the first integer argument on the
        # 64-bit Linux ABIs): _exit(status).
        event = self._SigEvent(value=status, notify=self.SIGEV_THREAD, function=exit_function)
        if timer_create(self.CLOCK_MONOTONIC, ctypes.byref(event),
                        ctypes.byref(self._timer)) != 0:
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
            faulthandler.dump_traceback_later(self._remaining(self.DUMP_LEAD), exit=False,
                                              file=sys.__stderr__)
        else:
            faulthandler.dump_traceback_later(self._remaining(), exit=True, file=sys.__stderr__)

    def cancel(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        self._timer.cancel()


_GUARDIAN = r"""
import os, select, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd, pid, deadline, name = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
stops = {int(signal.SIGINT), int(signal.SIGTERM)}
while True:
    data = os.read(fd, 64)
    if not data:
        sys.exit(0)  # the node's process ended
    if stops.intersection(data):
        break
end = time.monotonic() + deadline
while (left := end - time.monotonic()) > 0:
    if select.select([fd], [], [], left)[0]:
        while True:
            data = os.read(fd, 64)
            if not data:
                sys.exit(0)  # ended in time
            if not select.select([fd], [], [], 0)[0]:
                break
try:
    os.kill(pid, signal.SIGKILL)
except ProcessLookupError:
    sys.exit(0)
print(f"[{name}] stop guardian: the process had not ended {deadline:g} s after the stop "
      f"signal (its main thread never got back to Python to stop it); killed it",
      file=sys.stderr, flush=True)
"""


class StopGuardian:
    """A second process that ends this one when a stop signal was received but the process
    has not ended :data:`GUARDIAN_DEADLINE` seconds later, whatever this process's threads
    are doing.

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
                [sys.executable, "-I", "-S", "-c", _GUARDIAN, str(read_end), str(os.getpid()),
                 f"{GUARDIAN_DEADLINE:.3f}", name],
                pass_fds=(read_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                start_new_session=True)
        except OSError:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._write_end = write_end
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)


_guardian: StopGuardian | None = None  # kept for the life of the process


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


def close_within(node: Node, executor: Executor, timeout: float) -> bool:
    """Shut ``executor`` down, destroy ``node`` and shut its context down, giving up after
    ``timeout`` seconds: True when done, False when the DDS teardown hung (see
    :class:`StopWatchdog`; the stuck thread is left behind, and a process that has one should
    end with ``os._exit``, since the interpreter's own exit would wait on it too). If the stuck
    teardown keeps the interpreter lock, nothing in this process can run again: after twice
    ``timeout`` a C-level watchdog prints every thread's stack and ends the process (status 1).
    """
    done = threading.Event()

    def teardown() -> None:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=node.context)
        done.set()

    faulthandler.dump_traceback_later(2.0 * timeout, exit=True, file=sys.__stderr__)
    try:
        threading.Thread(target=teardown, name=f"close-{node.get_name()}", daemon=True).start()
        return done.wait(timeout)
    finally:
        faulthandler.cancel_dump_traceback_later()


#: How long the spinning thread waits for a worker when rclpy hands it a callback that is
#: already queued (see :meth:`NodeExecutor.spin_once`).
REQUEUE_WAIT = 0.005


class NodeExecutor(MultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor, plus what a bounded stop needs: it keeps the future of
    every callback it handed to a worker thread, so :meth:`stop_callbacks` can drop the
    queued ones and wait, with a timeout, for those already running (rclpy's own shutdown
    waits for its worker threads without one).

    It also queues each callback once. rclpy yields a callback again, on every call, until a
    worker has started it; its own MultiThreadedExecutor queues it again each time. With
    every worker busy, the spinning thread then loops without waiting, holding the GIL the
    workers need, and the queue grows: fleet_sim (one group, 16 command topics and a 50 Hz
    timer) reached 1,800 queued copies, 93 % CPU and timer ticks 0.3-0.5 s late, so commands
    timed out and robots stopped in a person's path. Here a callback already queued makes
    the spinning thread wait for a worker instead.
    """

    def __init__(self, num_threads: int | None = None, **kwargs):
        super().__init__(num_threads=num_threads, **kwargs)
        self._pending: list[tuple[object, concurrent.futures.Future]] = []

    def spin_once(self, timeout_sec: float | None = None) -> None:
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec)
        except (ShutdownException, TimeoutException, ConditionReachedException):
            return
        if any(queued is handler and not future.done() for queued, future in self._pending):
            concurrent.futures.wait([future for _, future in self._pending],
                                    timeout=REQUEUE_WAIT,
                                    return_when=concurrent.futures.FIRST_COMPLETED)
        else:
            self._pending.append((handler, self._executor.submit(handler)))
        for item in [item for item in self._pending if item[1].done()]:
            self._pending.remove(item)
            item[0].result()  # re-raise what the callback raised

    def stop_callbacks(self, timeout: float) -> bool:
        """Start no more callbacks: drop the queued ones, wait up to ``timeout`` seconds for
        those already running. True when none is left running."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        futures = [future for _, future in self._pending if not future.cancelled()]
        _, running = concurrent.futures.wait(futures, timeout=timeout)
        return not running


def events_executor(node: Node | None = None) -> Executor:
    """rclpy's EventsExecutor (much less overhead per message with hundreds of
    subscriptions, as orca_node has), or a SingleThreadedExecutor where this rclpy has none."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()


def run_node(
    make_node: Callable[[], Node],
    args: Sequence[str] | None = None,
    threads: int | None = None,
    make_executor: Callable[[Node], Executor] | None = None,
) -> int:
    """Init rclpy with ``args``, build the node, spin it until SIGINT or SIGTERM, stop it (see
    the module's docstring) and end the process with ``os._exit``: this never returns.

    The executor is ``make_executor(node)``, by default a :class:`NodeExecutor` with
    ``threads`` worker threads, or as many as the node's ``executor_threads`` attribute asks
    for (rclpy's default when neither is given). A node's ``close()`` method, if any, is its
    last work before the DDS teardown.
    """
    stop = StopSignals()
    global _guardian
    try:
        _guardian = StopGuardian(Path(sys.argv[0]).stem)
    except (OSError, ValueError) as exc:  # no process to spare, or not the main thread
        print(f"no stop guardian: {exc}", file=sys.stderr)
    stop.install()
    node = executor = None
    status = 0
    try:
        rclpy.init(args=list(sys.argv if args is None else args),
                   signal_handler_options=SignalHandlerOptions.NO)
        register_types_early()  # before the node's participant discovers anyone
        node = make_node()
        executor = (make_executor(node) if make_executor is not None else
                    NodeExecutor(threads or getattr(node, "executor_threads", None)))
        executor.add_node(node)
        # An executor may install signal handlers of its own (rclpy's EventsExecutor does):
        # this process keeps its own.
        stop.install()
        stop.building = False
        if stop.requested:  # a signal that came while the handlers were replaced
            raise StopRequested
        context = node.context
        while not stop.requested and context.ok():
            executor.spin_once(timeout_sec=SPIN_SLICE)
    except StopRequested:
        stop.building = False
    except ParameterError as exc:  # the user's error, named: no traceback
        stop.building = False
        name = node.get_name() if node is not None else Path(sys.argv[0]).stem
        rclpy.logging.get_logger(name).error(f"cannot start: {exc}")
        status = 1
    except BaseException:
        stop.building = False  # from here on a signal only starts the stop
        traceback.print_exc()
        status = 1
    _stop(node, executor, stop, status)
    raise AssertionError("unreachable")  # _stop ends the process


def _stop(node: Node | None, executor: Executor | None, stop: StopSignals, status: int) -> None:
    """Steps 1 to 6 of the module's docstring; ends the process."""
    stop.building = False
    ignore_stop_signals()
    start = stop.at if stop.at is not None else time.monotonic()
    watchdog = StopWatchdog(start + STOP_DEADLINE)
    watchdog.own_work()
    context = node.context if node is not None else rclpy.get_default_context()
    if stop.signal is not None:
        name = signal.Signals(stop.signal).name
        if node is not None:
            node.get_logger().info(f"stopping on {name}")
        else:
            rclpy.logging.get_logger(Path(sys.argv[0]).stem).info(
                f"stopping on {name} (while starting)")
    try:
        if isinstance(executor, NodeExecutor):
            executor.stop_callbacks(min(CALLBACK_WAIT, max(0.0, watchdog.deadline - 0.5
                                                           - time.monotonic())))
        close = getattr(node, "close", None)
        if close is not None:
            close()
    except Exception:
        traceback.print_exc()
        status = 1
    _flush_output()
    watchdog.dds_teardown()
    try:
        if isinstance(executor, MultiThreadedExecutor):
            # Not MultiThreadedExecutor.shutdown: it waits for its worker threads, with no
            # timeout (and Jazzy's takes no wait_for_threads). Running callbacks had their
            # chance in stop_callbacks.
            executor._executor.shutdown(wait=False, cancel_futures=True)
            Executor.shutdown(executor, timeout_sec=0.0)
        elif executor is not None:
            executor.shutdown(timeout_sec=0.0)
        if node is not None:
            node.destroy_node()  # with the context's last node goes its DDS participant
        context.try_shutdown()
        context.destroy()
    except Exception:
        traceback.print_exc()
    _flush_output()
    os._exit(status)
