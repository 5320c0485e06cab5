"""The fleet demo (make demo). Not built yet: see the ORCA node / demo issue."""

import sys


def main() -> int:
    print("The planning_collision demo is not built yet (it needs orca_node, fleet_sim and "
          "map_publisher). Nothing was run.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
