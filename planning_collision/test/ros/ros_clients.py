"""Helpers for tests that talk to node processes over DDS (loopback, the run's own domain).

Fast DDS 3.2 can deadlock a participant when a remote participant leaves while the local one is
announcing itself (eProsima/Fast-DDS#6502): a receive thread holds the discovery lock and waits
for the event thread, which waits for that lock. Two rules keep the test process out of it as
far as it can be: fixtures that own node processes close their clients *before* stopping the
processes (so the test's participants do not process those departures), and a client whose
teardown hangs anyway is abandoned after CLOSE_TIMEOUT seconds; the session then ends with
``os._exit`` (see ``pytest_sessionfinish``) instead of waiting on the stuck participant at exit.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from planning_collision.ros.run import close_within
from planning_collision.ros.service_call import call_service

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
CLOSE_TIMEOUT = 10.0
ABANDONED: list[str] = []  # clients whose DDS teardown hung


@contextlib.contextmanager
def spinning(executor, period: float = 0.02, join: float = 10.0):
    """``executor`` spun in a daemon thread (``spin_once`` every ``period`` s at most) until
    the block ends; the thread is then joined (up to ``join`` s)."""
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            executor.spin_once(timeout_sec=period)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(join)


@contextlib.contextmanager
def spun_orca_node(overrides, helper_name: str):
    """An in-process OrcaNode with ``overrides`` and a test node named ``helper_name``, in a
    private context, spun by one SingleThreadedExecutor in a thread: yields (orca node, test
    node, executor); everything is destroyed at the end, the context shut down."""
    from planning_collision.ros.orca_node import OrcaNode

    context = Context()
    rclpy.init(context=context)
    try:
        node = OrcaNode(context=context, parameter_overrides=overrides)
    except BaseException:
        rclpy.try_shutdown(context=context)
        raise
    helper = rclpy.create_node(helper_name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(helper)
    try:
        with spinning(executor):
            yield node, helper, executor
    finally:
        node.close()
        executor.shutdown()
        node.destroy_node()
        helper.destroy_node()
        rclpy.try_shutdown(context=context)


class Client:
    """A test-side node with a private context: service calls and latched publishers."""

    def __init__(self, name: str = "test_client"):
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}
        self.name = name
        self.closed = False

    def client(self, srv_type, name: str):
        key = (srv_type, name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, name)
        return self._clients[key]

    def wait_for_service(self, srv_type, name: str, timeout: float = 60.0,
                         process=None) -> None:
        """Wait for a service; fail at once (with its output) if ``process`` has died."""
        client = self.client(srv_type, name)
        deadline = time.monotonic() + timeout
        while not client.service_is_ready():
            if process is not None and not process.running():
                raise RuntimeError(f"{process.name} exited with {process.returncode}:\n"
                                   + "\n".join(process.lines[-30:]))
            if time.monotonic() > deadline:
                raise TimeoutError(f"service {name} did not appear within {timeout} s")
            self.executor.spin_once(timeout_sec=0.05)

    def call(self, srv_type, name: str, request, timeout: float = 30.0, process=None):
        """Call a service (asking again while the node's kernels are warming up)."""
        client = self.client(srv_type, name)
        self.wait_for_service(srv_type, name, timeout, process)
        reply = call_service(self.executor, client, request, timeout)
        if reply is None:
            raise TimeoutError(f"{name} did not answer within {timeout} s")
        return reply

    def call_async(self, srv_type, name: str, request):
        return self.client(srv_type, name).call_async(request)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return predicate()

    def close(self) -> None:
        """Destroy the node and its context (idempotent); give up after CLOSE_TIMEOUT."""
        if self.closed:
            return
        self.closed = True
        if not close_within(self.node, self.executor, CLOSE_TIMEOUT):
            ABANDONED.append(self.name)
            print(f"test client {self.name!r}: DDS teardown hung (Fast DDS deadlock, "
                  f"eProsima/Fast-DDS#6502); abandoned", file=sys.stderr, flush=True)


@contextlib.contextmanager
def stopping(clients: list, procs):
    """A fixture's clients and processes, closed and stopped (:func:`close_then_stop`) when
    the block ends, however it ends. A fixture that waits for its nodes before its ``yield``
    and stops them after it left them running when the wait failed: each RosProcess is a
    session of its own, so they outlived the test run (found with fleet_sim's processes still
    importing numba under a load of 140). ``clients`` may grow inside the block."""
    try:
        yield
    finally:
        close_then_stop(clients, list(procs))


def close_then_stop(clients, procs) -> None:
    """End of a fixture that owns processes: close the test's clients first (see the module
    docstring), then stop every process, all signalled at once so they stop in parallel."""
    for client in clients:
        client.close()
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    for proc in procs:
        proc.stop()
