"""The package's shipped files (``config/``: node parameters, scenarios, maps, the Fast DDS
profile): where they are, installed by colcon or read from the source checkout. Plain files,
no rclpy: the simulator, the nodes, the demo and the tests all read them through here."""

from __future__ import annotations

from pathlib import Path

PACKAGE = "planning_collision"


def share_directory() -> Path:
    """The package's share directory (``config/``, ``launch/``).

    Installed by colcon, ament_index finds it; in the editable venv install (``make setup``) the
    files are read from the source checkout next to the Python package.
    """
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )

        try:
            return Path(get_package_share_directory(PACKAGE))
        except (PackageNotFoundError, KeyError, ValueError, OSError):
            pass
    except ImportError:
        pass
    source = Path(__file__).resolve().parents[1]
    if (source / "config").is_dir():
        return source
    raise FileNotFoundError(f"cannot find the share directory of {PACKAGE}")


def config_file(name: str) -> Path:
    """Path of a file shipped in the package's ``config/`` directory."""
    path = share_directory() / "config" / name
    if not path.is_file():
        raise FileNotFoundError(f"{PACKAGE} has no config file {name!r} (looked in {path})")
    return path
