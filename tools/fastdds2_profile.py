"""Write config/fastdds2_discovery.xml, the shipped Fast DDS profile in Fast DDS 2's element
names (Jazzy), from config/fastdds_discovery.xml (Fast DDS 3). ``--check``: exit 1 when the
file written would differ from the one in the tree."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planning_collision.ros.processes import fastdds_2_profile

CONFIG = Path(__file__).resolve().parents[1] / "planning_collision" / "config"
SOURCE = CONFIG / "fastdds_discovery.xml"
TARGET = CONFIG / "fastdds2_discovery.xml"
HEADER = ("<!-- Made by tools/fastdds2_profile.py from fastdds_discovery.xml (Fast DDS 3):\n"
          "     the same profile in Fast DDS 2's element names, for Jazzy. Edit that file, not\n"
          "     this one. -->\n")


def expected() -> str:
    first, rest = SOURCE.read_text().split("\n", 1)  # the XML declaration stays first
    return f"{first}\n{HEADER}{fastdds_2_profile(rest)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = expected()
    if args.check:
        if not TARGET.is_file() or TARGET.read_text() != text:
            print(f"{TARGET} is out of date: run tools/fastdds2_profile.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
