"""Calling a ROS 2 service from a script or a test, robust to a lost first answer.

With Fast DDS a client can see a new service as ready (its request reaches the server)
before the server's reply writer has matched the client's reply reader; the server then drops
the reply (it logs "failed to send response (timeout)") and a plain call waits forever.
:func:`call_service` sends the request again when it has had no answer for ``retry_after``
seconds (the project's services are queries: asking twice is harmless), until ``timeout``.
"""

from __future__ import annotations

import time

RETRY_AFTER = 5.0


def call_service(executor, client, request, timeout: float = 30.0,
                 retry_after: float = RETRY_AFTER):
    """The response to ``request`` on ``client`` (spinning ``executor`` meanwhile), or None
    when no answer came within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        wait = min(retry_after, deadline - time.monotonic())
        executor.spin_until_future_complete(future, timeout_sec=max(wait, 0.0))
        if future.done():
            return future.result()
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None
