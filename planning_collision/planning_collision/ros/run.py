"""Running a node until SIGINT or SIGTERM, promptly and cleanly.

``rclpy.init`` installs handlers for both signals that shut the context down. Spinning in short
``spin_once`` slices (rather than ``rclpy.spin``) makes the loop notice that shutdown even when
the signal lands just after a client disconnected, which plain ``spin`` sometimes missed until a
second signal.

Tearing the node down can hang inside Fast DDS 3.2: a lock-order deadlock between its event
thread and a receive thread (eProsima/Fast-DDS#6502) leaves ``destroy_node`` waiting forever.
:func:`exit_if_teardown_hangs` bounds the teardown, so a stop request always ends the process.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence

import rclpy
from rclpy.callback_groups import CallbackGroup
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)
from rclpy.node import Node

SPIN_SLICE = 0.25
TEARDOWN_TIMEOUT = 3.0


def exit_if_teardown_hangs(name: str, timeout: float = TEARDOWN_TIMEOUT) -> threading.Event:
    """Start a watchdog for the teardown that follows a stop request; set the returned event
    when the teardown is done. If it is not done within ``timeout`` seconds (a DDS deadlock,
    see the module's docstring), the process says so on stderr and exits with status 0: it
    was asked to stop, and it did, without the rest of the DDS clean-up."""
    done = threading.Event()

    def watch() -> None:
        if not done.wait(timeout):
            print(f"[{name}] DDS teardown did not finish within {timeout:g} s (a Fast DDS "
                  f"deadlock, eProsima/Fast-DDS#6502); exiting without it", file=sys.stderr,
                  flush=True)
            os._exit(0)

    threading.Thread(target=watch, name="teardown-watchdog", daemon=True).start()
    return done


def close_within(node: Node, executor: Executor, timeout: float) -> bool:
    """Shut ``executor`` down, destroy ``node`` and shut its context down, giving up after
    ``timeout`` seconds: True when done, False when the DDS teardown hung (see the module's
    docstring; the stuck thread is left behind, and a process that has one should end with
    ``os._exit``, since the interpreter's own exit would wait on it too)."""
    done = threading.Event()

    def teardown() -> None:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=node.context)
        done.set()

    threading.Thread(target=teardown, name=f"close-{node.get_name()}", daemon=True).start()
    return done.wait(timeout)


class InlineGroupsExecutor(MultiThreadedExecutor):
    """A MultiThreadedExecutor that runs the callbacks of chosen groups on the spinning thread.

    Handing a callback to a worker thread costs about 0.3 ms per call in rclpy, which is most
    of a short service call's round trip. Callbacks of ``inline_groups`` (short queries) run
    directly on the thread that spins; every other group's callbacks (map and obstacle
    updates, timers) still run on the worker threads, so they never hold the queries back
    beyond the time they hold the interpreter lock.
    """

    def __init__(self, inline_groups: Iterable[CallbackGroup] = (),
                 num_threads: int | None = None, **kwargs):
        super().__init__(num_threads=num_threads, **kwargs)
        self.inline_groups = set(inline_groups)
        self._pending = []

    def spin_once(self, timeout_sec: float | None = None) -> None:
        try:
            handler, entity, _ = self.wait_for_ready_callbacks(timeout_sec)
        except (ShutdownException, TimeoutException, ConditionReachedException):
            return
        group = getattr(entity, "callback_group", None)
        if group is not None and group in self.inline_groups:
            handler()
            handler.result()  # re-raise what the callback raised
            return
        self._executor.submit(handler)
        self._pending.append(handler)
        for task in [t for t in self._pending if t.done()]:
            self._pending.remove(task)
            task.result()


def run_node(
    make_node: Callable[[], Node],
    args: Sequence[str] | None = None,
    threads: int | None = None,
    make_executor: Callable[[Node], Executor] | None = None,
) -> int:
    """Init rclpy with ``args``, build the node, spin it until shutdown.

    The executor is ``make_executor(node)``, by default an :class:`InlineGroupsExecutor`: a
    node that wants some callback groups run on the spinning thread lists them in an
    ``inline_callback_groups`` attribute.
    """
    rclpy.init(args=list(sys.argv if args is None else args))
    node = None
    executor = None
    try:
        node = make_node()
        executor = (make_executor(node) if make_executor is not None else
                    InlineGroupsExecutor(getattr(node, "inline_callback_groups", ()),
                                         threads or getattr(node, "executor_threads", None)))
        executor.add_node(node)
        while rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_SLICE)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise
        # A signal shut the context down while the node was being built: a clean stop.
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        close = getattr(node, "close", None)
        if close is not None:
            close()  # the node's own last work (e.g. writing a file), before the watchdog
        done = exit_if_teardown_hangs(node.get_name() if node is not None else "node")
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        done.set()
    return 0
