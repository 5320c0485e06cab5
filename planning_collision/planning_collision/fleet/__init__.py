"""ORCA for a robot fleet, between the ORCA core and orca_node (pure: no ROS import).

* :class:`FleetController` -- timestamped samples in (odometry, localization, goals or the
  navigation stack's commands), one ``step(now)`` out (safe body-frame commands, per-agent
  status, the half-planes markers draw);
* :class:`MapFromOdom` -- where a robot's odometry frame lies in the map (a fixed origin,
  the localizer's pose fused by timestamp, or tf's map -> odom).
"""

from .controller import (
    CMD_VEL,
    GOAL,
    PREFERRED_VELOCITY_SOURCES,
    AgentSpec,
    FleetController,
    FleetSettings,
    FleetStep,
    StepLines,
)
from .localization import ODOM_ORIGIN, POSE_SOURCES, POSE_TOPIC, TF, MapFromOdom, PoseHistory
from .warmup import warmup

__all__ = [
    "CMD_VEL",
    "GOAL",
    "ODOM_ORIGIN",
    "POSE_SOURCES",
    "POSE_TOPIC",
    "PREFERRED_VELOCITY_SOURCES",
    "TF",
    "AgentSpec",
    "FleetController",
    "FleetSettings",
    "FleetStep",
    "MapFromOdom",
    "PoseHistory",
    "StepLines",
    "warmup",
]
