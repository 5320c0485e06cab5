"""orca/status (planning_collision_interfaces/OrcaStatus) from one fleet step, and where the
steps spend their time (orca_node's debug log)."""

from __future__ import annotations

import time

from geometry_msgs.msg import Point, Vector3

from planning_collision_interfaces.msg import OrcaAgentStatus, OrcaStatus


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
