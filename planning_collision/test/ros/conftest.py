"""Helpers for tests that talk to node processes over DDS (loopback, the run's own domain)."""

from __future__ import annotations

import time

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Client:
    """A test-side node with a private context: service calls and latched publishers."""

    def __init__(self, name: str = "test_client"):
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}

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
        client = self.client(srv_type, name)
        self.wait_for_service(srv_type, name, timeout, process)
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout)
        if not future.done():
            raise TimeoutError(f"{name} did not answer within {timeout} s")
        return future.result()

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
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def client():
    c = Client()
    yield c
    c.close()


@pytest.fixture(scope="session")
def client_factory():
    """Make extra Client objects (any scope); all are closed at the end of the session."""
    made: list[Client] = []

    def make(name: str) -> Client:
        c = Client(name)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture(scope="session")
def latched_qos() -> QoSProfile:
    return LATCHED
