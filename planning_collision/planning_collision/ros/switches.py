"""On/off switches of the project's workarounds, read from environment variables.

Environment variables rather than node parameters: the workarounds they switch run before any
node exists (the stop guardian starts before ``rclpy.init``, type registration before the
node's participant), and one variable set for a whole launch (``SetEnvironmentVariable``, or
the robot's service file) reaches every node the project runs. See ``doc/workarounds.md``.
"""

from __future__ import annotations

import os
import sys

#: Start the stop guardian process next to each node (:mod:`.stopping`).
STOP_GUARDIAN = "PLANNING_COLLISION_STOP_GUARDIAN"
#: Register the message types on a throwaway participant first (:mod:`.type_registration`).
REGISTER_TYPES = "PLANNING_COLLISION_REGISTER_TYPES"

ON = frozenset(("1", "true", "on", "yes"))
OFF = frozenset(("0", "false", "off", "no"))


def switched_on(variable: str, default: bool = True) -> bool:
    """The switch in ``variable``: 1, true, on, yes or 0, false, off, no (any case); unset or
    empty: ``default``. Any other value also gives ``default``, with a warning naming the
    variable and the values it takes."""
    value = os.environ.get(variable, "").strip().lower()
    if value in ON:
        return True
    if value in OFF:
        return False
    if value:
        print(
            f"{variable}={os.environ[variable]!r} is not a switch value (use 1/0, true/false, "
            f"on/off or yes/no); using the default, {'on' if default else 'off'}",
            file=sys.stderr,
            flush=True,
        )
    return default
