"""The executors the nodes spin on: :class:`NodeExecutor` (rclpy's MultiThreadedExecutor with a
bounded stop, and each ready callback queued once) and :func:`events_executor`.

rclpy's private names (the worker pool ``_executor``, the spin hook ``_spin_once_impl``) are
used in this module only.

Queued once. rclpy's ``Executor`` hands out a ready callback again, on every spin, until a
worker has started it, and rclpy's MultiThreadedExecutor (up to rclpy 9.1.2 on Kilted and 7.1.6
on Jazzy, the wheels installed here) queues it again each time. With every worker busy, the
spinning thread then loops without waiting, holding the interpreter lock the workers need, and
the queue grows: fleet_sim (one callback group, 16 command topics and a 50 Hz timer) reached
1,800 queued copies, 93 % CPU and timer ticks 0.3-0.5 s late, so commands timed out and robots
stopped in a person's path. rclpy fixed this upstream (ros2/rclpy#1547, "Fix performance bug in
MultiThreadedExecutor", released in rclpy 10.0.4 for Rolling, backports to Kilted and Jazzy
requested). :class:`NodeExecutor` backports that fix on the hook both spin paths use
(``spin_once`` and ``spin_until_future_complete``), and steps aside, using rclpy's own
queuing, where :func:`queues_each_callback_once` finds that the installed rclpy already
queues each callback once.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from rclpy.context import Context
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    SingleThreadedExecutor,
    TimeoutException,
)
from rclpy.node import Node

from .cycle_collector import paused as collector_paused

#: How long the spinning thread waits for a worker when rclpy hands it a callback that is
#: already queued.
REQUEUE_WAIT = 0.005


class _CallbackPool(ThreadPoolExecutor):
    """rclpy's worker threads, remembering each callback they were given and its future until
    it is collected (:meth:`collect`)."""

    def __init__(self, threads: int):
        super().__init__(threads)
        self.given: list[tuple[Callable, Future]] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future = super().submit(fn, *args, **kwargs)
        self.given.append((fn, future))
        return future

    def queued(self, callback: Callable) -> bool:
        """Whether ``callback`` was given and has not finished yet."""
        return any(given is callback and not future.done() for given, future in self.given)

    def wait_for_one(self, timeout: float) -> None:
        concurrent.futures.wait(
            [future for _, future in self.given],
            timeout=timeout,
            return_when=concurrent.futures.FIRST_COMPLETED,
        )

    def collect(self) -> list[Callable]:
        """Forget the callbacks that have finished; returns them."""
        done = [item for item in self.given if item[1].done()]
        for item in done:
            self.given.remove(item)
        return [callback for callback, _ in done]

    def stop(self, timeout: float) -> bool:
        """Start nothing more (queued callbacks are dropped) and wait up to ``timeout`` s for
        those running. True when none is left running."""
        self.shutdown(wait=False, cancel_futures=True)
        futures = [future for _, future in self.given if not future.cancelled()]
        _, running = concurrent.futures.wait(futures, timeout=timeout)
        return not running


class NodeExecutor(MultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor, plus what a bounded stop needs: :meth:`stop_callbacks`
    drops the queued callbacks and waits, with a timeout, for those already running (rclpy's
    own shutdown waits for its worker threads without one), and :meth:`shutdown_now` shuts
    down without waiting for its threads at all.

    ``queue_once`` (default: when the installed rclpy does not already, see the module's
    docstring): a ready callback already queued makes the spinning thread wait for a worker
    instead of queuing it again.
    """

    def __init__(
        self,
        num_threads: int | None = None,
        *,
        context: Context | None = None,
        queue_once: bool | None = None,
    ):
        threads = num_threads or len(os.sched_getaffinity(0)) or 2
        super().__init__(num_threads=threads, context=context)
        self._executor.shutdown(wait=False)  # rclpy's pool, no thread started yet
        self._executor = _CallbackPool(threads)
        if queue_once is None:
            queue_once = not rclpy_queues_each_callback_once(self.context)
        self.queue_once = queue_once

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        """One spin of ``spin_once`` and of ``spin_until_future_complete`` alike (rclpy 7.1 to
        9.1 route both through this hook)."""
        if not self.queue_once:
            super()._spin_once_impl(timeout_sec, wait_condition)
            self._executor.collect()
            return
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (
            ShutdownException,
            ExternalShutdownException,
            TimeoutException,
            ConditionReachedException,
        ):
            return
        if self._executor.queued(handler):
            self._executor.wait_for_one(REQUEUE_WAIT)
        else:
            self._executor.submit(handler)
        for callback in self._executor.collect():
            callback.result()  # re-raise what the callback raised

    def _take_service(self, srv):
        """rclpy turns a request into Python messages here, before any callback sees it: with
        Python's cycle collector paused, so that a 100,000-pose request sets off no full
        collection while other queries wait for the interpreter (:mod:`.cycle_collector`)."""
        with collector_paused():
            return super()._take_service(srv)

    def stop_callbacks(self, timeout: float) -> bool:
        """Start no more callbacks: drop the queued ones, wait up to ``timeout`` seconds for
        those already running. True when none is left running."""
        return self._executor.stop(timeout)

    def shutdown_now(self) -> None:
        """Shut down without waiting for the worker threads (rclpy's MultiThreadedExecutor
        waits for them with no timeout, and Jazzy's takes no ``wait_for_threads``); running
        callbacks had their chance in :meth:`stop_callbacks`."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        Executor.shutdown(self, timeout_sec=0.0)


def shutdown_now(executor: Executor) -> None:
    """Shut any executor down without waiting for callbacks or worker threads."""
    if isinstance(executor, NodeExecutor):
        executor.shutdown_now()
    elif isinstance(executor, MultiThreadedExecutor):
        executor._executor.shutdown(wait=False, cancel_futures=True)
        Executor.shutdown(executor, timeout_sec=0.0)
    else:
        executor.shutdown(timeout_sec=0.0)


class _UnstartedPool(_CallbackPool):
    """A worker pool whose workers never start anything: a callback given to it stays queued."""

    def __init__(self):
        super().__init__(1)

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        self.given.append((fn, future))
        return future


def queues_each_callback_once(
    executor_type: Callable[..., MultiThreadedExecutor], context: Context | None = None
) -> bool:
    """Whether an executor made by ``executor_type(2, context=context)`` queues a ready
    callback once while no worker has started it: spun three times around one task, with
    workers that never start anything, it queues that task once (rclpy with ros2/rclpy#1547,
    or :class:`NodeExecutor` queuing once) or three times (rclpy without it)."""
    executor = executor_type(2, context=context)
    pool = _UnstartedPool()
    executor._executor.shutdown(wait=False)
    executor._executor = pool
    try:
        executor.create_task(lambda: None)
        for _ in range(3):
            executor.spin_once(timeout_sec=0.0)
        return len(pool.given) == 1
    finally:
        shutdown_now(executor)


_rclpy_queues_once: bool | None = None


def rclpy_queues_each_callback_once(context: Context | None = None) -> bool:
    """:func:`queues_each_callback_once` for rclpy's own MultiThreadedExecutor, found out once
    per process (``context`` must be initialized; the probe makes no DDS entity)."""
    global _rclpy_queues_once
    if _rclpy_queues_once is None:
        _rclpy_queues_once = queues_each_callback_once(MultiThreadedExecutor, context)
    return _rclpy_queues_once


def events_executor(node: Node | None = None) -> Executor:
    """rclpy's EventsExecutor (much less overhead per message with hundreds of
    subscriptions, as orca_node has), or a SingleThreadedExecutor where this rclpy has none."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()
