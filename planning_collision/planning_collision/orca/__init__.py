"""ORCA (RVO2) reciprocal collision avoidance: numpy + numba, no ROS.

Public API:

* :class:`OrcaSimulator` -- RVO2's simulator (agents, polygon obstacles, ``step``);
* :func:`compute_velocities` -- one control step over arrays (what the ROS node calls);
* :func:`build_obstacles` / :class:`ObstacleSet` -- obstacles processed once per set;
* :func:`query_visibility` -- line of sight between two points for a disc;
* :class:`DiffDriveLimits`, :func:`unicycle_commands`, :func:`trackable_polygon`,
  :func:`diff_drive_constraints` -- differential-drive robots (NH-ORCA);
* :func:`warmup` -- compile or load every kernel (call once at start-up).
"""

from .diff_drive import (
    DiffDriveLimits,
    diff_drive_constraints,
    integrate_unicycle,
    max_holonomic_speed,
    trackable_polygon,
    unicycle_commands,
)
from .obstacles import ObstacleSet, build_obstacles, query_visibility
from .simulator import OrcaSimulator
from .velocities import (
    ConstraintLines,
    LineSet,
    NeighborSet,
    VelocityResult,
    compute_velocities,
)
from .warmup import warmup

__all__ = [
    "ConstraintLines",
    "DiffDriveLimits",
    "LineSet",
    "NeighborSet",
    "ObstacleSet",
    "OrcaSimulator",
    "VelocityResult",
    "build_obstacles",
    "compute_velocities",
    "diff_drive_constraints",
    "integrate_unicycle",
    "max_holonomic_speed",
    "query_visibility",
    "trackable_polygon",
    "unicycle_commands",
    "warmup",
]
