"""call_service re-sends a request whose answer was lost, asks again on the error codes it is
told to wait through, and gives up at its timeout."""

from __future__ import annotations

import time
from concurrent.futures import Future

from planning_collision.ros.service_call import (
    RETRY_INTERVAL,
    call_service,
    has_code,
    warming_up,
)
from planning_collision_interfaces.srv import CheckPath


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


class CodedClient(FakeClient):
    """Answers the ``codes`` in turn (their names on CheckPath.Response), then success."""

    def __init__(self, *codes: str):
        super().__init__(answer_from=1)
        self.codes = codes

    def call_async(self, request):
        self.sent += 1
        future = Future()
        if self.sent > len(self.codes):
            future.set_result(CheckPath.Response(success=True))
        else:
            name = self.codes[self.sent - 1]
            future.set_result(CheckPath.Response(success=False,
                                                 error_code=getattr(CheckPath.Response, name),
                                                 message=name.lower()))
        return future


class SpinningExecutor(FakeExecutor):
    def __init__(self):
        self.waits = []

    def spin_once(self, timeout_sec):
        self.waits.append(timeout_sec)
        time.sleep(timeout_sec)


def test_a_node_warming_up_is_asked_again_until_it_answers():
    client = CodedClient(*["WARMING_UP"] * 3)
    executor = SpinningExecutor()
    reply = call_service(executor, client, "q", timeout=5.0)
    assert reply.success and client.sent == 4
    assert executor.waits == [RETRY_INTERVAL] * 3  # a pause between requests
    # Told not to wait, the first answer comes back as it is.
    client = CodedClient(*["WARMING_UP"] * 3)
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0, while_warming_up=False)
    assert not reply.success and client.sent == 1
    assert reply.error_code == CheckPath.Response.WARMING_UP
    # Never ready: the last WARMING_UP answer at the deadline, not later.
    client = CodedClient(*["WARMING_UP"] * 10**6)
    started = time.monotonic()
    reply = call_service(SpinningExecutor(), client, "q", timeout=0.3)
    assert not reply.success and reply.error_code == CheckPath.Response.WARMING_UP
    assert time.monotonic() - started < 1.0


def test_retry_goes_by_code_not_by_message():
    # Only the named codes are asked again: NO_MAP and INACTIVE when told, others at once.
    client = CodedClient("INACTIVE", "WARMING_UP", "NO_MAP")
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0,
                         retry_codes=("INACTIVE", "WARMING_UP", "NO_MAP"))
    assert reply.success and client.sent == 4
    client = CodedClient("NO_MAP")
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0)
    assert client.sent == 1 and reply.error_code == CheckPath.Response.NO_MAP
    client = CodedClient("BAD_REQUEST")
    reply = call_service(SpinningExecutor(), client, "q", timeout=5.0,
                         retry_codes=("INACTIVE", "WARMING_UP", "NO_MAP"))
    assert client.sent == 1 and reply.error_code == CheckPath.Response.BAD_REQUEST
    # A message that merely mentions warming up is not a code.
    reply = CheckPath.Response(success=False, error_code=CheckPath.Response.BAD_REQUEST,
                               message="kernels warming up")
    assert not warming_up(reply)
    assert warming_up(CheckPath.Response(success=False,
                                         error_code=CheckPath.Response.WARMING_UP))
    assert not has_code(CheckPath.Response(success=True), ("NONE",))
