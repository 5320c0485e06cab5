"""ORCA (RVO2) reciprocal collision avoidance: numpy + numba, no ROS.

Public API:

* :class:`OrcaSimulator` -- RVO2's simulator (agents, polygon obstacles, ``step``);
* :func:`compute_velocities` -- one control step over arrays (what the ROS node calls);
* :func:`build_obstacles` / :class:`ObstacleTree` -- obstacles processed once per set (the
  edges and RVO2's tree over them);
* :func:`query_visibility` -- line of sight between two points for a disc;
* :class:`DiffDriveLimits`, :func:`unicycle_commands`, :func:`trackable_polygon`,
  :func:`diff_drive_constraints` -- differential-drive robots (NH-ORCA);
* :func:`warmup` -- compile or load every kernel (call once at start-up).

With default options the results are RVO2's.  Options beyond RVO2 (all opt-in; see
:mod:`planning_collision.orca.velocities` for what each contributes): per-agent
``responsibility`` and ``reactive``; ``symmetry_breaking`` (deterministic perturbation) and
``side_preference``; ``keep_apart`` (hard separation, with ``keep_apart_margin``); and
``overlap_time``: by default (None) overlapping agents are separated as RVO2 does, within
one time step, which can make their speed jump to the maximum at once; setting
``overlap_time`` (seconds) separates them within that time instead, without velocity
spikes.
"""

from .diff_drive import (
    DiffDriveLimits,
    UnicycleCommands,
    UnicyclePoses,
    diff_drive_constraints,
    integrate_unicycle,
    max_holonomic_speed,
    trackable_polygon,
    unicycle_commands,
)
from .obstacles import ObstacleTree, build_obstacles, query_visibility
from .simulator import AgentHalfPlanes, OrcaSimulator
from .velocities import (
    ConstraintLines,
    LineSet,
    NeighborSet,
    VelocityResult,
    compute_velocities,
)
from .warmup import warmup

__all__ = [
    "AgentHalfPlanes",
    "ConstraintLines",
    "DiffDriveLimits",
    "LineSet",
    "NeighborSet",
    "ObstacleTree",
    "OrcaSimulator",
    "UnicycleCommands",
    "UnicyclePoses",
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
