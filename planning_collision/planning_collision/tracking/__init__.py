"""People and other moving things seen only by sensors, tracked for ORCA (pure: no ROS).

* :mod:`.scan_points` -- a LaserScan's ranges placed in the global frame with the robot's pose
  at the scan's stamp, without the points of the static map and of agents already known
  (:class:`StaticMask`, :func:`scan_to_points`, :func:`drop_known`);
* :mod:`.clustering` -- consecutive-beam gap clustering into discs (:func:`cluster_scan`);
* :mod:`.tracker` -- a constant-velocity Kalman filter per track, optimal assignment, confirm
  and delete (:class:`Tracker`), and what ORCA avoids (:meth:`Tracker.discs`).
"""

from .clustering import Clusters, cluster_scan
from .scan_points import ScanPoints, StaticMask, drop_known, drop_near, scan_to_points
from .tracker import Discs, Tracker, TrackerSettings, Tracks

__all__ = [
    "Clusters",
    "Discs",
    "ScanPoints",
    "StaticMask",
    "Tracker",
    "TrackerSettings",
    "Tracks",
    "cluster_scan",
    "drop_known",
    "drop_near",
    "scan_to_points",
]
