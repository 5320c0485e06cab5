"""Calling a ROS 2 service from a script or a test: with a timeout, robust to a lost first
answer, and asking again while the answer's ``error_code`` says to wait.

With Fast DDS a client can see a new service as ready (its request reaches the server)
before the server's reply writer has matched the client's reply reader; the server then drops
the reply (it logs "failed to send response (timeout)") and a plain call waits forever.
:func:`call_service` sends the request again when it has had no answer for ``retry_after``
seconds (the project's services are queries: asking twice is harmless), until ``timeout``.

Every response of this package's services carries ``error_code`` with named constants in its
.srv (``CheckPath.Response.WARMING_UP``, ...). A node in its first seconds answers WARMING_UP
(see ``ros/lifecycle.py``); :func:`call_service` asks again on the codes named in
``retry_codes`` (WARMING_UP unless told) until ``timeout``, and returns the last answer then.
A client that starts with the server may add INACTIVE (not activated yet) and NO_MAP (no map
received yet); anything else is an answer to act on, returned at once.
"""

from __future__ import annotations

import time

RETRY_AFTER = 5.0
RETRY_INTERVAL = 0.1  # seconds between two requests answered with a code to retry on
WAIT_FOR_WARM_UP = ("WARMING_UP",)


def call_service(executor, client, request, timeout: float = 30.0,
                 retry_after: float = RETRY_AFTER, while_warming_up: bool = True,
                 retry_codes: tuple[str, ...] | None = None,
                 retry_interval: float = RETRY_INTERVAL):
    """The response to ``request`` on ``client`` (spinning ``executor`` meanwhile), or None
    when no answer came within ``timeout`` seconds. An answer whose ``error_code`` is one of
    ``retry_codes`` (constant names; default WARMING_UP, none when ``while_warming_up`` is
    false) is followed by another request ``retry_interval`` seconds later; at the deadline
    the last such answer is returned."""
    if retry_codes is None:
        retry_codes = WAIT_FOR_WARM_UP if while_warming_up else ()
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        wait = min(retry_after, deadline - time.monotonic())
        executor.spin_until_future_complete(future, timeout_sec=max(wait, 0.0))
        if future.done():
            reply = future.result()
            if not has_code(reply, retry_codes) or time.monotonic() >= deadline:
                return reply
            executor.spin_once(timeout_sec=min(retry_interval,
                                               max(deadline - time.monotonic(), 0.0)))
            continue
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None


def has_code(reply, names) -> bool:
    """Whether ``reply`` failed with one of the error codes ``names`` (constant names of its
    own type, e.g. ``("WARMING_UP", "NO_MAP")``); False for a reply without error_code."""
    if getattr(reply, "success", True) is not False:
        return False
    code = getattr(reply, "error_code", None)
    return code is not None and any(getattr(type(reply), name, None) == code for name in names)


def warming_up(reply) -> bool:
    """Whether ``reply`` says the node's kernels are still warming up."""
    return has_code(reply, WAIT_FOR_WARM_UP)
