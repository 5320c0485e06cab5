"""Running a node until SIGINT or SIGTERM, and a stop that always ends, cleanly and in time.

:func:`run_node` handles both signals itself (:class:`.stopping.StopSignals`) and spins in
short slices, noticing a stop request within one. The stop, from the first signal on:

1. both signals are ignored by the operating system from then on;
2. the stop watchdog, which needs no interpreter lock, is armed (:class:`.stopping.StopWatchdog`):
   the process has ended :data:`.stopping.STOP_DEADLINE` seconds after the signal was handled,
   whatever DDS does; the stop guardian is told so (:class:`.stopping.StopGuardian`);
3. spinning stops; callbacks already running finish, queued ones are dropped;
4. ``node.close()`` does the node's own last work (e.g. writing a file);
5. stdout and stderr are flushed, the node is destroyed (and with it the process's DDS
   participant, so its peers learn at once that it left) and the context shut down;
6. ``os._exit(0)``: the interpreter's finalization is skipped (it waits for DDS threads and
   took seconds under load, longer than ``ros2 launch`` waits before escalating).

Exit codes: 0 for a stop (also when the watchdog had to cut the DDS teardown short, see
:class:`.stopping.StopWatchdog`), 1 when the node could not be built, spinning failed, or the
node's own stop work did not finish in time.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import rclpy
import rclpy.logging
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from .node_executor import NodeExecutor, shutdown_now
from .parameters import ParameterError
from .stopping import (
    CALLBACK_WAIT,
    STOP_DEADLINE,
    StopGuardian,
    StopRequested,
    StopSignals,
    StopWatchdog,
    flush_output,
    ignore_stop_signals,
    start_guardian,
)
from .type_registration import register_types_early

SPIN_SLICE = 0.1


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
    guardian = start_guardian(Path(sys.argv[0]).stem)
    stop.install()
    node = executor = None
    status = 0
    try:
        rclpy.init(
            args=list(sys.argv if args is None else args),
            signal_handler_options=SignalHandlerOptions.NO,
        )
        register_types_early()  # before the node's participant discovers anyone
        node = make_node()
        # From here on a signal is only recorded: raised inside rclpy's Executor.__init__ it
        # left a half-built executor whose finaliser printed a traceback at the stop.
        stop.building = False
        if stop.requested:
            raise StopRequested
        executor = (
            make_executor(node)
            if make_executor is not None
            else NodeExecutor(threads or getattr(node, "executor_threads", None))
        )
        executor.add_node(node)
        # An executor may install signal handlers of its own (rclpy's EventsExecutor does):
        # this process keeps its own.
        stop.install()
        if stop.requested:  # a signal that came while the executor was built
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
    _stop(node, executor, stop, status, guardian)
    raise AssertionError("unreachable")  # _stop ends the process


def _stop(
    node: Node | None,
    executor: Executor | None,
    stop: StopSignals,
    status: int,
    guardian: StopGuardian | None,
) -> None:
    """Steps 1 to 6 of the module's docstring; ends the process."""
    stop.building = False
    ignore_stop_signals()
    start = stop.at if stop.at is not None else time.monotonic()
    watchdog = StopWatchdog(start + STOP_DEADLINE)
    watchdog.own_work()
    if guardian is not None:
        guardian.acknowledge()
    context = node.context if node is not None else rclpy.get_default_context()
    if stop.signal is not None:
        name = signal.Signals(stop.signal).name
        if node is not None:
            node.get_logger().info(f"stopping on {name}")
        else:
            rclpy.logging.get_logger(Path(sys.argv[0]).stem).info(
                f"stopping on {name} (while starting)"
            )
    try:
        if isinstance(executor, NodeExecutor):
            executor.stop_callbacks(
                min(CALLBACK_WAIT, max(0.0, watchdog.deadline - 0.5 - time.monotonic()))
            )
        close = getattr(node, "close", None)
        if close is not None:
            close()
    except Exception:
        traceback.print_exc()
        status = 1
    flush_output()
    watchdog.dds_teardown()
    try:
        if executor is not None:
            shutdown_now(executor)  # running callbacks had their chance in stop_callbacks
        if node is not None:
            node.destroy_node()  # with the context's last node goes its DDS participant
        context.try_shutdown()
        context.destroy()
    except Exception:
        traceback.print_exc()
    flush_output()
    os._exit(status)
