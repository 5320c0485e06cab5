"""Input checks for the ORCA API: bad input raises ValueError naming the problem.

Besides shape and finiteness, every number must lie in ORCA's working range, which keeps all
of the kernels' float64 arithmetic (squares, products with inverse times, fourth powers in
the cone test) far from overflow and underflow:

* coordinates, velocities, lengths and speeds (m, m/s) within +-``MAX_MAGNITUDE`` (1e9:
  at a billion metres float64 still resolves 1e-7 m; nothing a robot measures comes close);
* times (time step, time horizons, overlap time; s) between ``MIN_TIME`` and
  ``MAX_MAGNITUDE`` (their inverses multiply positions);
* numbers smaller in magnitude than ``TINY`` (1e-100) are taken as exactly zero, so that no
  difference, square or product of the inputs falls into float64's subnormal range.

A value beyond these bounds is refused (a sensor fault or a unit error upstream), with the
argument named; the ROS node bounds what it measures before calling the core.
"""

import numpy as np

from planning_collision.common.checks import (
    check_magnitude,
    finite_scalar,
    finite_values,
    float_points,
    float_vector,
)

#: Largest magnitude of any coordinate, velocity, length or speed (m, m/s), and of any time.
MAX_MAGNITUDE = 1e9
#: Smallest time (s) accepted for the time step, the time horizons and the overlap time.
MIN_TIME = 1e-9
#: Input numbers smaller than this in magnitude are replaced by zero.
TINY = 1e-100


def _in_range(arr: np.ndarray, name: str) -> np.ndarray:
    """Refuse magnitudes beyond ``MAX_MAGNITUDE``; flush those below ``TINY`` to zero."""
    check_magnitude(arr, name, MAX_MAGNITUDE)
    arr[np.abs(arr) < TINY] = 0.0
    return arr


def as_orca_points(value, name: str) -> np.ndarray:
    """A finite float64 array of shape (K, 2) within ORCA's working range (a fresh,
    C-contiguous copy; :func:`planning_collision.common.checks.float_points`)."""
    return _in_range(float_points(value, name, copy=True), name)


def as_agent_points(value, n: int, name: str) -> np.ndarray:
    """A finite float64 (n, 2) array."""
    arr = as_orca_points(value, name)
    if arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n}, 2), got {arr.shape}")
    return arr


def as_position(value, name: str) -> np.ndarray:
    """A finite float64 vector of shape (2,) within ORCA's working range."""
    return _in_range(float_vector(value, name), name)


def as_agent_values(value, n: int, name: str, *, minimum: float = 0.0,
                    strictly_positive: bool = False, maximum: float = MAX_MAGNITUDE,
                    time: bool = False) -> np.ndarray:
    """A finite float64 (n,) array from a scalar or a sequence, checked against bounds.

    ``time``: a time (s), strictly positive and at least ``MIN_TIME``.
    """
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got {arr.shape}")
    finite_values(arr, name, **_bounds(minimum, strictly_positive, maximum, time))
    return np.ascontiguousarray(_in_range(arr, name))


def _bounds(minimum: float, strictly_positive: bool, maximum: float, time: bool) -> dict:
    """The keywords of :func:`~planning_collision.common.checks.finite_scalar` for these
    options (a ``minimum`` of -inf: no lower bound)."""
    if time:
        return dict(at_least=max(minimum, MIN_TIME), at_most=maximum)
    low = None if minimum == -np.inf else minimum
    if strictly_positive:
        return dict(above=low, at_most=maximum)
    return dict(at_least=low, at_most=maximum)


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


def as_scalar(value, name: str, *, minimum: float = 0.0, strictly_positive: bool = False,
              maximum: float = MAX_MAGNITUDE, time: bool = False) -> float:
    """:func:`~planning_collision.common.checks.finite_scalar` with ORCA's options
    (``time`` as in :func:`as_agent_values`) and working range."""
    x = finite_scalar(value, name, **_bounds(minimum, strictly_positive, maximum, time))
    return float(_in_range(np.array([x]), name)[0])


def agent_arrays(positions, velocities, pref_velocities, radius, max_speed, responsibility,
                 max_neighbors, reactive):
    """The agents' arrays checked in one pass, or None when they need the per-argument checks.

    Takes C-contiguous ndarrays only: float64 (n, 2) ``positions``, ``velocities`` and
    ``pref_velocities``, float64 (n,) ``radius``, ``max_speed`` and ``responsibility``, int64
    (n,) ``max_neighbors`` and bool (n,) ``reactive``, n > 0; returns them as
    :func:`as_agent_points`, :func:`as_agent_values` (``responsibility`` at most 1),
    :func:`as_agent_counts` and :func:`as_agent_flags` would: the floats copied into one fresh
    buffer (its views C-contiguous float64 arrays), numbers of magnitude below ``TINY``, zeros
    of either sign included, flushed to +0.0; the counts and flags as given. Anything else
    (another type, dtype, shape or layout, a scalar, a value out of range or not finite) gives
    None: those checks then answer, or raise the error that names the argument.
    """
    n = positions.shape[0] if type(positions) is np.ndarray and positions.ndim == 2 else 0
    if not (n and _plain(positions, np.float64, (n, 2))
            and _plain(velocities, np.float64, (n, 2))
            and _plain(pref_velocities, np.float64, (n, 2))
            and _plain(radius, np.float64, (n,)) and _plain(max_speed, np.float64, (n,))
            and _plain(responsibility, np.float64, (n,))
            and _plain(max_neighbors, np.int64, (n,)) and _plain(reactive, np.bool_, (n,))):
        return None
    values = np.concatenate((positions.ravel(), velocities.ravel(), pref_velocities.ravel(),
                             radius, max_speed, responsibility))
    magnitude = np.abs(values)
    if not magnitude.max() <= MAX_MAGNITUDE:  # NaN and inf fail too
        return None
    # radius, max_speed, responsibility: >= 0, responsibility <= 1; max_neighbors >= 0
    if not (values[6 * n:].min() >= 0.0 and responsibility.max() <= 1.0
            and max_neighbors.min() >= 0):
        return None
    values[magnitude < TINY] = 0.0  # as _in_range flushes (-0.0 becomes +0.0 too)
    return (values[:2 * n].reshape(n, 2), values[2 * n:4 * n].reshape(n, 2),
            values[4 * n:6 * n].reshape(n, 2), values[6 * n:7 * n], values[7 * n:8 * n],
            values[8 * n:], max_neighbors, reactive)


def _plain(value, dtype, shape) -> bool:
    """``value`` is a C-contiguous ndarray of this dtype and shape."""
    return (type(value) is np.ndarray and value.dtype == dtype and value.shape == shape
            and value.flags.c_contiguous)
