"""Python's cycle collector paused while messages are made or unmade in bulk.

A full collection scans every tracked object and holds the interpreter lock from start to
end. Turning a 100,000-pose request into Python messages (rclpy does it before any callback
sees the request) makes 300,000 objects, and each growth of the live objects by a quarter sets
off a full collection over all of them: in collision_server every other query, a one-ray line
of sight included, waited behind those scans (issue #20). ROS messages hold no reference
cycles, so reference counting frees them all without the collector.

:func:`paused` is counted across threads: the collector is enabled again when the last pause
ends, and only if it was enabled when the first began.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_pauses = 0  # pauses running now
_was_enabled = False  # whether the collector was enabled when the first of them began


@contextlib.contextmanager
def paused(when: bool = True):
    """Pause the cycle collector for the ``with`` block (a no-op when ``when`` is false)."""
    global _pauses, _was_enabled
    if not when:
        yield
        return
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
