"""orca/status (planning_collision_interfaces/OrcaStatus) from one fleet step, and where the
steps spend their time (orca_node's debug log)."""

from __future__ import annotations

import time

from geometry_msgs.msg import Point, Vector3

from planning_collision_interfaces.msg import OrcaAgentStatus, OrcaStatus

from . import cdr


def status_message(step, names, with_lines: bool) -> OrcaStatus:
    """OrcaStatus (without header and timing) of the controlled agents of ``step`` (a
    :class:`~planning_collision.fleet.FleetStep`); ``with_lines``: fill the half-planes."""
    k = step.commands.shape[0]
    per_agent = step.lines.per_agent if with_lines and step.lines is not None else [None] * k
    active = step.active.tolist()
    agents = []
    for i in range(k):
        st = OrcaAgentStatus(
            name=names[i], active=active[i], inactive_reason=step.reasons[i],
            odometry_age=float(step.ages[i]),
            localization_age=float(step.localization_ages[i]),
            localization_stale=bool(step.localization_stale[i]),
            agent_neighbors=int(step.agent_neighbors[i]),
            obstacle_neighbors=int(step.obstacle_lines[i]),
            infeasible=bool(step.infeasible[i] and active[i]),
            distance_to_goal=float(step.distance_to_goal[i]))
        st.preferred_velocity.x, st.preferred_velocity.y = step.preferred[i].tolist()
        st.velocity.x, st.velocity.y = step.chosen[i].tolist()
        if per_agent[i] is not None:
            st.orca_line_points = [Point(x=x, y=y) for x, y in per_agent[i][0].tolist()]
            st.orca_line_directions = [Vector3(x=x, y=y) for x, y in per_agent[i][1].tolist()]
        agents.append(st)
    return OrcaStatus(agents=agents)


def status_rows(step, names, with_lines: bool):
    """The controlled agents of ``step`` as rows for :func:`.cdr.orca_status_agents` (the same
    fields :func:`status_message` fills)."""
    k = step.commands.shape[0]
    lines = step.lines.per_agent if with_lines and step.lines is not None else [None] * k
    def first(values):  # some of a step's arrays hold every agent, observed ones last
        return values[:k].tolist()

    return zip(names[:k], first(step.active), step.reasons[:k], first(step.ages),
               first(step.localization_ages), first(step.localization_stale),
               first(step.agent_neighbors), first(step.obstacle_lines),
               first(step.infeasible & step.active), first(step.distance_to_goal),
               first(step.preferred), first(step.chosen), lines, strict=True)


def publish_status(publisher, raw: bool, step, names, with_lines: bool, frame_id: str, stamp,
                   achieved_rate: float, started: float) -> None:
    """Publish orca/status of ``step``: serialized bytes when ``raw`` (orca_node's default;
    building 200 message objects took 3.8 ms of a 9.4 ms step), else a message object.
    ``compute_time`` is the time from ``started`` until the message is ready."""
    if raw:
        agents = cdr.orca_status_agents(status_rows(step, names, with_lines))
        publisher.publish(cdr.encode_orca_status(
            frame_id, stamp.sec, stamp.nanosec, time.perf_counter() - started, achieved_rate,
            agents))
        return
    msg = status_message(step, names, with_lines)
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    msg.achieved_rate = achieved_rate
    msg.compute_time = time.perf_counter() - started
    publisher.publish(msg)


class PhaseTimes:
    """Time per step spent in each phase of orca_node's step, averaged over
    ``steps_per_report`` steps: :meth:`mark` ends a phase; :meth:`end_step` returns the
    summary line once per report (else None)."""

    PHASES = ("inputs", "controller", "commands", "status", "markers")

    def __init__(self, steps_per_report: int = 100):
        self.steps_per_report = steps_per_report
        self.totals = dict.fromkeys(self.PHASES, 0.0)
        self.steps = 0
        self._last = time.perf_counter()

    def start(self) -> None:
        self._last = time.perf_counter()

    def mark(self, phase: str) -> None:
        now = time.perf_counter()
        self.totals[phase] += now - self._last
        self._last = now

    def end_step(self) -> str | None:
        self.steps += 1
        if self.steps < self.steps_per_report:
            return None
        text = ", ".join(f"{name} {total * 1e3 / self.steps:.2f}"
                         for name, total in self.totals.items())
        self.totals = dict.fromkeys(self.PHASES, 0.0)
        steps, self.steps = self.steps, 0
        return f"ms per step over {steps} steps: {text}"
