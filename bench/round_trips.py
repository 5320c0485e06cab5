"""The one-ray round trip both service benchmarks time (bench_collision_server.py and
bench_transport.py): sequential check_line_of_sight calls between random points of a square,
timed from the request to its answer, the first ones (connection warm-up) left out."""

from __future__ import annotations

import time

import numpy as np

from planning_collision.ros.service_call import call_service
from planning_collision_interfaces.srv import CheckLineOfSight


def one_ray_round_trips(executor, client, rng, side: float, calls: int = 1000,
                        warmup: int = 100, timeout: float = 30.0) -> np.ndarray:
    """Times ``calls`` sequential one-ray queries after ``warmup`` untimed ones; returns the
    round trips in milliseconds. Every answer must succeed (an ``AssertionError`` names the
    first that did not)."""
    times = np.empty(calls)
    for i in range(warmup + calls):
        a, b = rng.uniform(0, side, 2), rng.uniform(0, side, 2)
        request = CheckLineOfSight.Request()
        request.start.x, request.start.y = float(a[0]), float(a[1])
        request.goal.x, request.goal.y = float(b[0]), float(b[1])
        started = time.perf_counter()
        reply = call_service(executor, client, request, timeout)
        elapsed = time.perf_counter() - started
        assert reply is not None, f"one-ray query {i} unanswered within {timeout:g} s"
        assert reply.success, f"one-ray query {i} failed: {reply.message}"
        if i >= warmup:
            times[i - warmup] = elapsed
    return times * 1e3
