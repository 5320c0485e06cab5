"""The guards every node puts around what comes in: a service handler that always answers,
a topic or timer callback that never raises into the executor, and the frame check.

A request or message the node cannot use is the sender's error: :class:`.conversions.
RequestError` or :class:`planning_collision.collision_world.QueryError`, whose text names the
field. It is answered ``success: false`` with that text and the error code its ``reason``
names (a service) or logged as a warning (a topic). Anything else is a bug: answered
``internal error`` (INTERNAL_ERROR) or logged as an error, with its traceback, and the node
keeps running.
"""

from __future__ import annotations

import traceback
from functools import wraps

from planning_collision.collision_world import QueryError

from .conversions import RequestError

SENDER_ERRORS = (RequestError, QueryError)


def answers(response_type):
    """Wrap a service handler ``handler(self, request, response)``: a sender's error ->
    success false + its message + the error code its ``reason`` names; any other error ->
    success false + 'internal error' + INTERNAL_ERROR (logged with the traceback). A node
    that is not serving (see ``ManagedNode.not_serving``) answers success false saying why:
    INACTIVE when it is not active, WARMING_UP while its kernels load. Never raises."""

    def failure(self, reason: str, message: str):
        code = getattr(response_type.Response, reason, None)
        if code is None:  # a reason the .srv does not list: the server's bug
            self.get_logger().error(f"{response_type.__name__} has no error code {reason} "
                                    f"(answering INTERNAL_ERROR): {message}")
            code = response_type.Response.INTERNAL_ERROR
        return response_type.Response(success=False, error_code=code, message=message)

    def wrap(handler):
        @wraps(handler)
        def callback(self, request, response):
            why = self.not_serving() if hasattr(self, "not_serving") else ""
            if why:
                return failure(self, "INACTIVE" if not self.active else "WARMING_UP", why)
            try:
                handler(self, request, response)
                response.success = True
                response.error_code = response_type.Response.NONE
            except SENDER_ERRORS as exc:
                response = failure(self, exc.reason, str(exc))
            except Exception as exc:  # a bug must not take the node down
                self.get_logger().error(f"{handler.__name__} failed: {exc}\n"
                                        f"{traceback.format_exc()}")
                response = failure(self, "INTERNAL_ERROR", f"internal error: {exc}")
            return response

        return callback

    return wrap


def topic_callback(what: str):
    """Wrap a subscription or timer callback so that it never raises into the executor (which
    would end the node): a sender's error is logged as a warning, anything else as an error
    with its traceback; the node keeps its previous state."""

    def wrap(handler):
        @wraps(handler)
        def callback(self, *args):
            try:
                handler(self, *args)
            except SENDER_ERRORS as exc:
                self.get_logger().warning(f"{what} ignored: {exc}")
            except Exception as exc:
                self.get_logger().error(f"{what} ignored: {type(exc).__name__}: {exc}\n"
                                        f"{traceback.format_exc()}")

        return callback

    return wrap


def check_frame(frame_id: str, expected: str, field: str) -> None:
    """A request's frame must be ``expected`` (empty means it): there is no tf2_ros here to
    transform it."""
    if frame_id not in ("", expected):
        raise RequestError(f"{field} is '{frame_id}' but this node works in '{expected}' "
                           f"(transform the request first)", "WRONG_FRAME")
