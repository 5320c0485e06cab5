"""Input checks for the ORCA API: bad input raises ValueError naming the problem."""

import numpy as np


def as_points(value, name: str) -> np.ndarray:
    """A finite float64 array of shape (K, 2) (a fresh, C-contiguous copy)."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric with shape (K, 2): {exc}") from None
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (K, 2), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def as_agent_points(value, n: int, name: str) -> np.ndarray:
    """A finite float64 (n, 2) array."""
    arr = as_points(value, name)
    if arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n}, 2), got {arr.shape}")
    return arr


def as_position(value, name: str) -> np.ndarray:
    """A finite float64 vector of shape (2,)."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-vector: {exc}") from None
    if arr.shape != (2,):
        raise ValueError(f"{name} must have shape (2,), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def as_agent_values(value, n: int, name: str, *, minimum: float = 0.0,
                    strictly_positive: bool = False, maximum: float | None = None) -> np.ndarray:
    """A finite float64 (n,) array from a scalar or a sequence, checked against bounds."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if strictly_positive and np.any(arr <= minimum):
        raise ValueError(f"{name} must be > {minimum}, got {arr.min()}")
    if not strictly_positive and np.any(arr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {arr.min()}")
    if maximum is not None and np.any(arr > maximum):
        raise ValueError(f"{name} must be <= {maximum}, got {arr.max()}")
    return np.ascontiguousarray(arr)


def as_agent_counts(value, n: int, name: str) -> np.ndarray:
    """A non-negative int64 (n,) array from a scalar or a sequence of whole numbers."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer)
                                     or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be integer, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers")
    arr = arr.astype(np.int64)
    if arr.ndim == 0:
        arr = np.full(n, int(arr), np.int64)
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr.min()}")
    return np.ascontiguousarray(arr)


def as_agent_flags(value, n: int, name: str) -> np.ndarray:
    """A bool (n,) array from a scalar or a sequence."""
    arr = np.asarray(value)
    if arr.dtype != np.bool_:
        raise ValueError(f"{name} must be boolean, got dtype {arr.dtype}")
    if arr.ndim == 0:
        arr = np.full(n, bool(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    return np.ascontiguousarray(arr)


def as_scalar(value, name: str, *, minimum: float = 0.0, strictly_positive: bool = False) -> float:
    """A finite float checked against a lower bound."""
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number: {exc}") from None
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    if strictly_positive and x <= minimum:
        raise ValueError(f"{name} must be > {minimum}, got {x}")
    if not strictly_positive and x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return x
