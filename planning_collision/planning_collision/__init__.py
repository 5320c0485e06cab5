"""planning_collision: collision checking and multi-robot collision avoidance for ROS 2.

The algorithm modules (:mod:`planning_collision.geometry`, :mod:`planning_collision.grid`,
:mod:`planning_collision.orca`) import only numpy and numba; the ROS adapters live in
:mod:`planning_collision.ros`.
"""

__version__ = "0.1.0"
