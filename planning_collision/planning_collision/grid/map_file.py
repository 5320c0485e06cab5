"""Reading a Nav2 map_server map: a YAML file plus a PGM/PNG image, as an int8 occupancy array.

The YAML keys and their meaning follow map_server: ``image`` (relative to the YAML file),
``resolution`` (m/cell), ``origin`` ``[x, y, yaw]`` (the lower-left pixel's corner),
``negate`` (0/1), ``occupied_thresh``, ``free_thresh`` and ``mode`` (``trinary``, the default;
``scale``; ``raw``). Greyscale pixels count as three equal colour channels; 16-bit images are
scaled to 8 bits. Each pixel's *shade* is the mean of its colour channels scaled to [0, 1] (in
trinary mode the alpha channel, when the image has one, is averaged in as a fourth channel, as
map_server does); its occupancy is ``1 - shade`` (``shade`` when ``negate``). Trinary:
occupancy above ``occupied_thresh`` is 100, below ``free_thresh`` is 0, else -1 (unknown).
Scale: the same ends, in between a linear 0..100, and any pixel that is not fully opaque is
unknown. Raw: the rounded mean colour value itself (``negate`` ignored) when in 0..100, else
unknown. The image's top row is the map's last row (row 0 of the occupancy array is the bottom
of the picture, y up).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from planning_collision.common.checks import finite_scalar

from .gridmap import GridMap

MODES = ("trinary", "scale", "raw")


@dataclass(frozen=True)
class MapFile:
    """A loaded map: ``data`` (height, width) int8, row 0 at the bottom; origin (x, y, yaw)."""

    data: np.ndarray
    resolution: float
    origin: tuple[float, float, float]
    image: Path

    def to_grid(self, occupied_threshold: int = 65, unknown_is_occupied: bool = True) -> GridMap:
        return GridMap(self.data, self.resolution, self.origin,
                       occupied_threshold=occupied_threshold,
                       unknown_is_occupied=unknown_is_occupied)


def load_map_file(yaml_path: str | Path) -> MapFile:
    """Load a map_server YAML map. Raises ValueError naming what is wrong with it."""
    import yaml
    from PIL import Image

    yaml_path = Path(yaml_path)
    try:
        spec = yaml.safe_load(yaml_path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read map file {yaml_path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ValueError(f"map file {yaml_path} is not valid YAML: {exc}") from exc
    if not isinstance(spec, dict):
        raise ValueError(f"map file {yaml_path} must hold a mapping of keys")
    for key in ("image", "resolution", "origin"):
        if key not in spec:
            raise ValueError(f"map file {yaml_path} has no {key!r} key")

    resolution = _number(spec["resolution"], "resolution", yaml_path, above=0.0)
    origin = spec["origin"]
    if not isinstance(origin, list | tuple) or len(origin) != 3:
        raise ValueError(f"map file {yaml_path}: origin must be [x, y, yaw], got {origin!r}")
    origin = tuple(_number(v, "origin", yaml_path) for v in origin)
    mode = str(spec.get("mode", "trinary")).lower()
    if mode not in MODES:
        raise ValueError(f"map file {yaml_path}: mode must be one of {MODES}, got {mode!r}")
    negate = spec.get("negate", 0)
    if isinstance(negate, float) or not isinstance(negate, int):
        raise ValueError(f"map file {yaml_path}: negate must be 0 or 1, got {negate!r}")
    negate = bool(negate)
    occupied = _number(spec.get("occupied_thresh", 0.65), "occupied_thresh", yaml_path)
    free = _number(spec.get("free_thresh", 0.196), "free_thresh", yaml_path)
    if not 0.0 <= free < occupied <= 1.0:
        raise ValueError(f"map file {yaml_path}: need 0 <= free_thresh < occupied_thresh <= 1, "
                         f"got {free} and {occupied}")

    if not isinstance(spec["image"], str) or not spec["image"]:
        raise ValueError(f"map file {yaml_path}: image must be a file name, got {spec['image']!r}")
    image_path = Path(spec["image"])
    if not image_path.is_absolute():
        image_path = yaml_path.parent / image_path
    try:
        with Image.open(image_path) as image:
            image.load()
            colour, alpha = _channels(image)
    except OSError as exc:
        raise ValueError(f"cannot read map image {image_path}: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"map image {image_path}: {exc}") from exc

    if mode == "raw":
        values = np.floor(colour + 0.5)
        cells = np.where((values >= 0) & (values <= 100), values, -1).astype(np.int16)
    else:
        mean = colour if alpha is None or mode != "trinary" else (3.0 * colour + alpha) / 4.0
        shade = mean / 255.0
        occ = shade if negate else 1.0 - shade
        cells = np.full(occ.shape, -1, dtype=np.int16)
        cells[occ > occupied] = 100
        cells[occ < free] = 0
        if mode == "scale":
            between = (occ >= free) & (occ <= occupied)
            cells[between] = np.rint((occ[between] - free) / (occupied - free) * 100.0)
            if alpha is not None:
                cells[alpha < 255] = -1
    data = np.ascontiguousarray(np.flipud(cells).astype(np.int8))
    return MapFile(data=data, resolution=resolution, origin=origin, image=image_path)


def _channels(image) -> tuple[np.ndarray, np.ndarray | None]:
    """(mean colour (H, W) on 0..255, alpha (H, W) on 0..255 or None) of a PIL image."""
    mode = image.mode
    if mode.startswith("I"):  # 16-bit greyscale (PGM with maxval > 255, 16-bit PNG)
        return np.asarray(image, dtype=np.float64) * (255.0 / 65535.0), None
    if mode in ("1", "L"):
        return np.asarray(image.convert("L"), dtype=np.float64), None
    if mode == "LA":
        arr = np.asarray(image, dtype=np.float64)
        return arr[..., 0], arr[..., 1]
    has_alpha = mode in ("RGBA", "PA", "La", "RGBa") or (
        mode == "P" and "transparency" in image.info)
    if has_alpha:
        arr = np.asarray(image.convert("RGBA"), dtype=np.float64)
        return arr[..., :3].mean(axis=-1), arr[..., 3]
    try:
        arr = np.asarray(image.convert("RGB"), dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"unsupported pixel mode {mode!r}") from exc
    return arr.mean(axis=-1), None


def _number(value, name: str, path: Path, **bounds) -> float:
    """:func:`~planning_collision.common.checks.finite_scalar`, the error naming the file."""
    try:
        return finite_scalar(value, name, **bounds)
    except ValueError as exc:
        raise ValueError(f"map file {path}: {exc}") from None
