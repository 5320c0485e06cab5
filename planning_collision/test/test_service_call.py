"""call_service re-sends a request whose answer was lost, and gives up at its timeout."""

from __future__ import annotations

import time
from concurrent.futures import Future
from types import SimpleNamespace

from planning_collision.ros.service_call import call_service


class FakeClient:
    """Answers only from the ``answer_from``-th request on (earlier ones are lost)."""

    def __init__(self, answer_from: int):
        self.answer_from = answer_from
        self.sent = 0
        self.removed = []

    def call_async(self, request):
        self.sent += 1
        future = Future()
        if self.sent >= self.answer_from:
            future.set_result(("reply to", request, self.sent))
        return future

    def remove_pending_request(self, future):
        self.removed.append(future)


class FakeExecutor:
    def spin_until_future_complete(self, future, timeout_sec):
        if not future.done():
            time.sleep(timeout_sec)


def test_a_lost_answer_is_asked_for_again():
    client = FakeClient(answer_from=3)
    started = time.monotonic()
    reply = call_service(FakeExecutor(), client, "q", timeout=5.0, retry_after=0.05)
    assert reply == ("reply to", "q", 3)
    assert client.sent == 3 and len(client.removed) == 2  # the lost ones are dropped
    assert time.monotonic() - started < 2.0


def test_no_answer_at_all_gives_none_at_the_timeout():
    client = FakeClient(answer_from=10**9)
    started = time.monotonic()
    assert call_service(FakeExecutor(), client, "q", timeout=0.3, retry_after=0.1) is None
    elapsed = time.monotonic() - started
    assert 0.29 <= elapsed < 2.0 and client.sent >= 3


class WarmingClient(FakeClient):
    """Answers 'warming up' to the first ``warm`` requests, then success."""

    def __init__(self, warm: int):
        super().__init__(answer_from=1)
        self.warm = warm

    def call_async(self, request):
        self.sent += 1
        future = Future()
        ready = self.sent > self.warm
        future.set_result(SimpleNamespace(success=ready, message="" if ready else
                                          "collision_server is starting: its kernels are "
                                          "warming up"))
        return future


class SpinningExecutor(FakeExecutor):
    def spin_once(self, timeout_sec):
        time.sleep(timeout_sec)


def test_a_node_warming_up_is_asked_again_until_it_answers():
    client = WarmingClient(warm=3)
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0)
    assert reply.success and client.sent == 4
    # Told not to wait, the first answer comes back as it is.
    client = WarmingClient(warm=3)
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0, while_warming_up=False)
    assert not reply.success and client.sent == 1
    # Never ready: the last 'warming up' answer at the deadline.
    client = WarmingClient(warm=10**9)
    reply = call_service(SpinningExecutor(), client, "q", timeout=0.3)
    assert not reply.success and "warming up" in reply.message
