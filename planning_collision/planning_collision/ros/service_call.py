"""Calling a ROS 2 service from a script or a test, robust to a lost first answer.

With Fast DDS a client can see a new service as ready (its request reaches the server)
before the server's reply writer has matched the client's reply reader; the server then drops
the reply (it logs "failed to send response (timeout)") and a plain call waits forever.
:func:`call_service` sends the request again when it has had no answer for ``retry_after``
seconds (the project's services are queries: asking twice is harmless), until ``timeout``.
A node in its first seconds answers ``success: false`` saying its kernels are warming up
(see ``ros/lifecycle.py``); :func:`call_service` asks again until it is ready, unless told
not to.
"""

from __future__ import annotations

import time

RETRY_AFTER = 5.0


def call_service(executor, client, request, timeout: float = 30.0,
                 retry_after: float = RETRY_AFTER, while_warming_up: bool = True):
    """The response to ``request`` on ``client`` (spinning ``executor`` meanwhile), or None
    when no answer came within ``timeout`` seconds; with ``while_warming_up``, a 'warming up'
    answer is followed by another request (the last such answer is returned at the
    deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        wait = min(retry_after, deadline - time.monotonic())
        executor.spin_until_future_complete(future, timeout_sec=max(wait, 0.0))
        if future.done():
            reply = future.result()
            if not (while_warming_up and warming_up(reply)) or time.monotonic() >= deadline:
                return reply
            executor.spin_once(timeout_sec=0.05)
            continue
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None


def warming_up(reply) -> bool:
    """Whether ``reply`` says the node's kernels are still warming up."""
    return getattr(reply, "success", True) is False and "warming up" in getattr(reply,
                                                                              "message", "")
