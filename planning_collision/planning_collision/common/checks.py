"""Input checks shared by the cores, with one wording for one problem.

Every core refuses bad input with a ValueError that names the argument; the same problem
reads the same everywhere:

* ``<name> must be numeric, got <type>``
* ``<name> must have shape (K, 2), got (3,)``
* ``<name> is empty: at least 1 point needed``
* ``<name> contains NaN or inf``
* ``<name> has a value of magnitude 1e+300, beyond the working range +-1e+150``

The cores differ in their working range (geometry's ``MAX_COORD`` 1e150 keeps squared
distances finite; ORCA's 1e9 keeps its fourth powers far from overflow), so the range is a
parameter, not a second function.
"""

from __future__ import annotations

import numpy as np


def float_points(value, name: str, *, width: int = 2, any_leading: bool = False,
                 min_rows: int = 0, limit: float | None = None,
                 copy: bool = False) -> np.ndarray:
    """``value`` as a finite float64 array of shape (K, width) (``any_leading``: (..., width)),
    C-contiguous and writable; at least ``min_rows`` rows; every magnitude within ``limit``
    when given. ``copy``: always a fresh array (else the input's own when it already fits)."""
    try:
        arr = np.array(value, dtype=np.float64) if copy else np.asarray(value,
                                                                        dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if any_leading:
        if arr.ndim == 0 or arr.shape[-1] != width:
            raise ValueError(f"{name} must have shape (..., {width}), got {arr.shape}")
    elif arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{name} must have shape (K, {width}), got {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} is empty: at least {min_rows} point"
                         f"{'' if min_rows == 1 else 's'} needed")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    if limit is not None:
        check_magnitude(arr, name, limit)
    return np.require(arr, dtype=np.float64, requirements=["C", "W"])


def float_vector(value, name: str, *, limit: float | None = None) -> np.ndarray:
    """``value`` as a fresh finite float64 array of shape (2,), every magnitude within
    ``limit`` when given."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if arr.shape != (2,):
        raise ValueError(f"{name} must have shape (2,), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    if limit is not None:
        check_magnitude(arr, name, limit)
    return arr


def check_magnitude(arr: np.ndarray, name: str, limit: float) -> None:
    """ValueError when a value of ``arr`` is beyond +-``limit`` (NaN is not checked here)."""
    if arr.size:
        largest = float(np.abs(arr).max())
        if largest > limit:
            raise ValueError(f"{name} has a value of magnitude {largest:.3g}, beyond the "
                             f"working range +-{limit:g}")
