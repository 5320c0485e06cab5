"""Input checks shared by the grid module: every problem becomes a ValueError naming it."""

from __future__ import annotations

import numpy as np

from planning_collision.common import checks

#: Largest cell coordinate magnitude accepted by the line-of-sight kernels. Beyond it the
#: exact integer arithmetic of the traversals (products of two coordinate differences)
#: could overflow int64. 2**29 cells is 26,000 km at 5 cm resolution.
MAX_CELL_COORD = 2**29

MODES = ("bresenham", "supercover", "conservative")
MODE_CODES = {name: code for code, name in enumerate(MODES)}
OUT_OF_MAP_CHOICES = ("blocked", "free")


def mode_code(mode: str) -> int:
    """Integer code of a line-of-sight mode name, ValueError for an unknown one."""
    if not isinstance(mode, str) or mode not in MODE_CODES:
        raise ValueError(f"unknown line-of-sight mode {mode!r}; expected one of {MODES}")
    return MODE_CODES[mode]


def out_of_map_blocked(out_of_map: str) -> bool:
    """True when cells outside the map count as blocked, ValueError for an unknown policy."""
    if not isinstance(out_of_map, str) or out_of_map not in OUT_OF_MAP_CHOICES:
        raise ValueError(
            f"unknown out_of_map policy {out_of_map!r}; expected one of {OUT_OF_MAP_CHOICES}"
        )
    return out_of_map == "blocked"


def float_points(points, name: str, width: int = 2) -> np.ndarray:
    """Points as a float64 array of shape (..., width), finite, C-contiguous and writable
    (:func:`planning_collision.common.checks.float_points`)."""
    return checks.float_points(points, name, width=width, any_leading=True)


def cell_points(cells, name: str) -> np.ndarray:
    """Integer cell coordinates as int64 (..., 2), C-contiguous and writable.

    Float input is accepted when every value is finite and integral; the magnitude must
    not exceed :data:`MAX_CELL_COORD`.
    """
    try:
        arr = np.asarray(cells)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be integer cell coordinates, got {cells!r}") from exc
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must be integer cell coordinates, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] != 2:
        raise ValueError(f"{name} must have shape (..., 2), got {arr.shape}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or inf")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold whole cell indices, got fractional values")
        if arr.size and np.max(np.abs(arr)) > MAX_CELL_COORD:
            raise ValueError(f"{name} has cell coordinates beyond +-{MAX_CELL_COORD}")
        arr = arr.astype(np.int64)
    elif arr.size:
        # Compare in the input's own dtype range before casting (uint64 could wrap).
        if arr.max() > MAX_CELL_COORD or arr.min() < -MAX_CELL_COORD:
            raise ValueError(f"{name} has cell coordinates beyond +-{MAX_CELL_COORD}")
    return np.require(arr, dtype=np.int64, requirements=["C", "W"])
