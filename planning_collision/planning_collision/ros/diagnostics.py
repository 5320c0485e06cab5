"""``/diagnostics`` (diagnostic_msgs/DiagnosticArray, REP 107) for orca_node and
collision_server: what fleet dashboards, rqt_robot_monitor and diagnostic_aggregator read.

There is no diagnostic_updater on the PyPI route, so this is a small one of our own: pure
functions turn what a node knows into ``DiagnosticStatus`` entries (tested without DDS), and
:class:`DiagnosticsPublisher` sends them about once a second. Entry names follow
diagnostic_updater's ``"<node>: <what>"``, with the node's namespace, so several nodes
side by side never share an entry; ``hardware_id`` is the robot's name for per-robot entries.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

OK, WARN, ERROR, STALE = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR,
                          DiagnosticStatus.STALE)
TOPIC = "/diagnostics"
PERIOD = 1.0  # seconds between publications, as diagnostic_updater's default


def entry(name: str, level: bytes, message: str, values: dict, hardware_id: str = "") \
        -> DiagnosticStatus:
    """One DiagnosticStatus; ``values`` become KeyValues (numbers formatted plainly)."""
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=k, value=_text(v)) for k, v in values.items()])


def _text(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        return "none" if math.isinf(value) or math.isnan(value) else f"{value:.3f}"
    return str(value)


def node_label(node) -> str:
    """The node's name with its namespace, without the leading slash (``per/orca_robot1``)."""
    return node.get_fully_qualified_name().lstrip("/")


class DiagnosticsPublisher:
    """Publishes ``collect()`` (a list of DiagnosticStatus) on /diagnostics every
    :data:`PERIOD` seconds; an error in ``collect`` is logged and never reaches the node."""

    def __init__(self, node, collect: Callable[[], list[DiagnosticStatus]],
                 period: float = PERIOD):
        self.node, self.collect = node, collect
        self.publisher = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self.timer = node.create_timer(period, self.publish)

    def publish(self) -> None:
        try:
            msg = DiagnosticArray(status=self.collect())
            msg.header.stamp = self.node.get_clock().now().to_msg()
            self.publisher.publish(msg)
        except Exception as exc:
            if self.node.context.ok():
                self.node.get_logger().error(f"publishing diagnostics failed: {exc}",
                                             throttle_duration_sec=5.0)


# ---------------------------------------------------------------------- orca_node
class InfeasibleCounter:
    """Steps in which each controlled agent's linear program was infeasible: since start, and
    since the last report."""

    def __init__(self, k: int):
        self.total = np.zeros(k, np.int64)
        self.recent = np.zeros(k, np.int64)

    def add(self, infeasible: np.ndarray) -> None:
        self.total += infeasible
        self.recent += infeasible

    def take_recent(self) -> np.ndarray:
        recent, self.recent = self.recent, np.zeros_like(self.recent)
        return recent


def agent_level(reason: str, active: bool, engaged: bool) -> bytes:
    """OK while commanded or idle by design (no navigation command, handed over); WARN while
    waiting for its inputs; ERROR when an input it had stopped (stale odometry or
    localization: the robot is held)."""
    if active or not reason:
        return OK
    if "stale" in reason:
        return ERROR
    if not engaged:
        return OK
    return WARN


def orca_statuses(label: str, state: str, rate_hz: float, achieved_rate: float,
                  compute_time: float, names, step, publishing: np.ndarray | None,
                  infeasible: InfeasibleCounter | None) -> list[DiagnosticStatus]:
    """orca_node's entries: the control loop (state, achieved rate), then one per agent
    (controlled agents: commanded or not and why, odometry and localization ages,
    infeasible steps; observed: avoided or forgotten). ``step`` is the latest FleetStep (None
    before the first), ``publishing`` the agents that got a command at that step."""
    level = OK
    message = f"{achieved_rate:.1f} of {rate_hz:g} Hz"
    if state != "active":
        level, message = WARN, f"{state}: not commanding"
    elif step is None:
        level, message = WARN, "no control step yet (kernels warming up)"
    elif achieved_rate < 0.8 * rate_hz:
        level, message = WARN, f"slow: {message}"
    out = [entry(f"{label}: control loop", level, message, {
        "state": state, "rate_hz": rate_hz, "achieved_rate": achieved_rate,
        "compute_time": compute_time})]
    if step is None:
        return out
    k = step.commands.shape[0]
    recent = infeasible.take_recent() if infeasible is not None else np.zeros(k, np.int64)
    for i, name in enumerate(names):
        values = {"odometry_age": float(step.ages[i]),
                  "localization_age": float(step.localization_ages[i]),
                  "localization_stale": bool(step.localization_stale[i])}
        if i < k:
            reason, active = step.reasons[i], bool(step.active[i])
            values.update(
                role="controlled", active=active, commanded=bool(
                    publishing[i] if publishing is not None else step.publish[i]),
                engaged=bool(step.engaged[i]), inactive_reason=reason,
                infeasible_steps=int(recent[i]),
                infeasible_steps_total=int(infeasible.total[i]) if infeasible else 0)
            level = agent_level(reason, active, bool(step.engaged[i]))
            if level == OK and active and recent[i]:
                level = WARN
                message = f"active; infeasible in {recent[i]} steps"
            else:
                message = "active" if active else reason
        else:
            values["role"] = "observed"
            fresh = bool(step.fresh[i])
            if not fresh:
                level = WARN if math.isfinite(step.ages[i]) else OK
                message = ("forgotten: odometry stale" if math.isfinite(step.ages[i])
                           else "no odometry yet")
            elif step.localization_stale[i]:
                level, message = WARN, "avoided; localization stale"
            else:
                level, message = OK, "avoided"
        out.append(entry(f"{label}: {name}", level, message, values, hardware_id=name))
    return out


# ---------------------------------------------------------------------- collision_server
class RequestCounter:
    """Requests per service and those answered ``success: false``."""

    def __init__(self):
        self.requests: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.last_failure = ""
        self._lock = threading.Lock()  # the services run on several threads

    def counted(self, service: str, handler):
        """``handler(request, response) -> response`` counted (it never raises: see
        guards.answers)."""
        self.requests.setdefault(service, 0)
        self.failed.setdefault(service, 0)

        def callback(request, response):
            response = handler(request, response)
            with self._lock:
                self.requests[service] += 1
                if not getattr(response, "success", True):
                    self.failed[service] += 1
                    self.last_failure = f"{service}: {response.message}"
            return response

        return callback


def server_status(label: str, state: str, warm: bool, map_received: float | None,
                  map_size: tuple[int, int] | None, obstacles: int | None,
                  counter: RequestCounter, now: float | None = None) -> DiagnosticStatus:
    """collision_server's entry: lifecycle state, kernel warm-up, the map's age (seconds
    since it arrived) and size, the obstacle count, requests and failed requests."""
    now = time.monotonic() if now is None else now
    values = {"state": state, "kernels_ready": warm,
              "map_age": math.inf if map_received is None else now - map_received,
              "map_size": "none" if map_size is None else f"{map_size[0]} x {map_size[1]}",
              "obstacles": "none" if obstacles is None else obstacles,
              "requests": sum(counter.requests.values()),
              "failed_requests": sum(counter.failed.values())}
    for service, n in list(counter.requests.items()):
        values[f"requests.{service}"] = n
        values[f"failed_requests.{service}"] = counter.failed[service]
    if counter.last_failure:
        values["last_failure"] = counter.last_failure
    if state != "active":
        level, message = WARN, f"{state}: not serving"
    elif not warm:
        level, message = WARN, "kernels warming up: not serving yet"
    elif map_received is None:
        level, message = WARN, "no map yet: grid queries fail"
    else:
        level, message = OK, "serving"
    return entry(f"{label}: world", level, message, values)


def find(statuses: Iterable[DiagnosticStatus], name: str) -> DiagnosticStatus | None:
    """The entry named ``name`` (None when absent)."""
    return next((s for s in statuses if s.name == name), None)
