"""Registering every message and service type this package's nodes use before a node's own
participant starts discovering, so that Fast DDS 3 never has to look one up.

Fast DDS 3.x (Kilted) matches a discovered endpoint whose type the local participant does not
know yet only after a TypeLookup exchange with the endpoint's owner, and a race in that
exchange (``TypeLookupManager``, Fast DDS 3.2: an endpoint checked before the reply registers
the type, but queued after the reply's callbacks ran, is deleted unmatched) can drop the
endpoint for good. A node that discovers its peers before it creates its subscriptions (while
its kernels load, or between a lifecycle node's start and its configure) is exposed to it:
one robot of a fleet then never delivers odometry although its publisher is up. Types are
known process-wide once any participant has registered them, so :func:`register_types_early`
creates them on a throwaway participant that discovers nothing, before the node's own
exists. ``config/fastdds_discovery.xml`` also sets ``fastdds.type_propagation`` to
``registration_only`` for every process the project starts, which removes the lookups there
altogether.

This is a workaround for a Fast DDS problem, not a fix of it. We found no upstream issue that
names this race (Fast DDS 3.2.3, the version the Kilted wheels ship); the matching code it sits
in is ``TypeLookupManager`` and the EDP's type-information path. Its costs: a second
participant lives for a few milliseconds at every start-up, and ``ROS_AUTOMATIC_DISCOVERY_RANGE``
is changed in this process's environment for the duration of ``rcl_init`` (no other thread of
the process reads it then: no node exists yet). Switch it off with
``PLANNING_COLLISION_REGISTER_TYPES=0`` (:mod:`.switches`; ``doc/workarounds.md``): with Fast DDS
2.x (Jazzy), whose participants do not look types up by default, or with
``fastdds.type_propagation: registration_only`` in every participant's profile, nothing is
lost.
"""

from __future__ import annotations

import os

import rclpy.logging
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped, Twist, TwistStamped
from lifecycle_msgs.msg import TransitionEvent
from lifecycle_msgs.srv import ChangeState, GetAvailableStates, GetAvailableTransitions, GetState
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.context import Context
from rclpy.node import Node
from std_srvs.srv import SetBool
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from planning_collision_interfaces.msg import ObstacleArray, OrcaStatus
from planning_collision_interfaces.srv import (
    CheckCollision,
    CheckLineOfSight,
    CheckLinesOfSight,
    CheckPath,
    ComputeDistance,
)

from .switches import REGISTER_TYPES, switched_on

MESSAGE_TYPES = (Odometry, PoseStamped, PoseWithCovarianceStamped, Twist, TwistStamped,
                 ObstacleArray, OccupancyGrid, TFMessage, OrcaStatus, MarkerArray,
                 DiagnosticArray, TransitionEvent)
SERVICE_TYPES = (CheckLineOfSight, CheckLinesOfSight, CheckCollision, CheckPath,
                 ComputeDistance, ChangeState, GetState, GetAvailableStates,
                 GetAvailableTransitions, SetBool)


def register_types_early() -> bool:
    """Register MESSAGE_TYPES and SERVICE_TYPES with the middleware on a participant that
    discovers nothing (ROS_AUTOMATIC_DISCOVERY_RANGE=OFF while it starts; the variable is
    restored at once), unless switched off (``PLANNING_COLLISION_REGISTER_TYPES=0``). A
    failure is a warning: the node then still runs, unprotected. True when registered."""
    if not switched_on(REGISTER_TYPES):
        return False
    saved = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE")
    context = Context()
    try:
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "OFF"  # read once, by rcl_init
        try:
            context.init(args=[], initialize_logging=False)
        finally:
            if saved is None:
                os.environ.pop("ROS_AUTOMATIC_DISCOVERY_RANGE", None)
            else:
                os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = saved
        node = Node("type_registration", context=context, use_global_arguments=False,
                    start_parameter_services=False, enable_rosout=False)
        for i, message_type in enumerate(MESSAGE_TYPES):
            node.create_publisher(message_type, f"type_registration/t{i}", 1)
        for i, service_type in enumerate(SERVICE_TYPES):
            node.create_service(service_type, f"type_registration/s{i}", lambda *_: None)
        node.destroy_node()
    except Exception as exc:  # the node still works, only without this protection
        rclpy.logging.get_logger("type_registration").warning(
            f"message types not registered ahead of discovery: {exc}")
        return False
    finally:
        context.try_shutdown()
    return True
