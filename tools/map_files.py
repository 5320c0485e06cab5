"""Writing a ROS map file pair (the PGM image and its YAML, as map_server reads them and
planning_collision.grid.map_file loads them), for the scripts that generate the shipped maps
(make_demo_map.py, make_narrow_scenes.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

MAP_YAML = """\
image: {name}.pgm
mode: trinary
resolution: {resolution}
origin: [{ox}, {oy}, 0.0]
negate: 0
occupied_thresh: 0.65
free_thresh: 0.196
"""


def write_map(maps: Path, name: str, image: np.ndarray, resolution: float,
              origin: tuple[float, float], made_by: str) -> None:
    """``maps/<name>.pgm`` (``image``: uint8 rows top-down, 0 occupied, 254 free) and
    ``maps/<name>.yaml`` (lower-left corner at ``origin``); the PGM's comment names the
    script that made it."""
    header = f"P5\n# {name}, made by {made_by}\n{image.shape[1]} {image.shape[0]}\n255\n"
    (maps / f"{name}.pgm").write_bytes(header.encode() + image.tobytes())
    (maps / f"{name}.yaml").write_text(MAP_YAML.format(
        name=name, resolution=resolution, ox=origin[0], oy=origin[1]))
