"""The fleet simulator and what it is shown with: scenarios (YAML worlds of robots, a person
and obstacles), the pure simulation that fleet_sim runs, its pacing clock and status values,
and the plots. All pure: nothing here imports rclpy or ``planning_collision.ros`` (the demo,
which starts the nodes over DDS and draws what happened, is ``planning_collision.demo``)."""

from .warmup import warmup

__all__ = ["warmup"]
