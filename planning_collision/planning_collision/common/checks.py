"""Input checks shared by the cores, with one wording for one problem.

Every core refuses bad input with a ValueError that names the argument; the same problem
reads the same everywhere:

* ``<name> must be numeric, got <type>``
* ``<name> must have shape (K, 2), got (3,)``
* ``<name> is empty: at least 1 point needed``
* ``<name> contains NaN or inf``
* ``<name> has a value of magnitude 1e+300, beyond the working range +-1e+150``
* ``<name> must be a number, got 'abc'`` (a bool or a string is no number)
* ``<name> must be finite and > 0, got nan`` / ``<name> must be an integer in [1, 100], got 0``

The last is the one rule for a single number: :func:`finite_scalar` (and
:func:`finite_values`, the same rule over an array), with its bounds in words by
:func:`scalar_rule`; ROS parameters (``ros.parameters.Param``) and every core check it.

The cores differ in their working range (geometry's ``MAX_COORD`` 1e150 keeps squared
distances finite; ORCA's 1e9 keeps its fourth powers far from overflow), so the range is a
parameter, not a second function.
"""

from __future__ import annotations

import math
import numbers

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


def scalar_rule(*, above: float | None = None, at_least: float | None = None,
                at_most: float | None = None, integer: bool = False) -> str:
    """The rule of :func:`finite_scalar` in words: 'finite', 'finite and > 0',
    'finite and in [0, 1]', 'an integer >= 0', 'an integer in [1, 100]'."""
    if above is None and at_least is not None and at_most is not None:
        bounds = [f"in [{at_least:g}, {at_most:g}]"]
    else:
        bounds = [f"{sign} {bound:g}" for sign, bound in
                  ((">", above), (">=", at_least), ("<=", at_most)) if bound is not None]
    if integer:
        return " ".join(["an integer", " and ".join(bounds)]).rstrip()
    return " and ".join(["finite", *bounds])


def finite_scalar(value, name: str, *, above: float | None = None,
                  at_least: float | None = None, at_most: float | None = None,
                  integer: bool = False) -> float:
    """``value`` as a finite Python float (``integer``: a Python int, whole floats
    accepted) that is greater than ``above`` and within [``at_least``, ``at_most``], each
    bound only when given. Python and numpy numbers are accepted; a bool or a string is not.
    ValueError names ``name`` and the rule: ``<name> must be finite and > 0, got nan``."""
    if type(value) is float:  # the common case, first
        number = value
    elif isinstance(value, (bool, np.bool_, str, bytes)):
        number = None
    elif integer and isinstance(value, numbers.Integral):
        number = int(value)
    else:
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float
            number = None
    if number is None:
        raise ValueError(f"{name} must be {'an integer' if integer else 'a number'}, "
                         f"got {value!r}")
    if not ((type(number) is int or math.isfinite(number)) and (above is None or number > above)
            and (at_least is None or number >= at_least)
            and (at_most is None or number <= at_most)
            and (not integer or type(number) is int or number.is_integer())):
        rule = scalar_rule(above=above, at_least=at_least, at_most=at_most, integer=integer)
        raise ValueError(f"{name} must be {rule}, got {number}")
    return int(number) if integer else number


def finite_values(arr: np.ndarray, name: str, *, above: float | None = None,
                  at_least: float | None = None, at_most: float | None = None) -> None:
    """The rule of :func:`finite_scalar` for every value of a float array (vectorised; the
    first value that breaks it is reported as :func:`finite_scalar` reports it)."""
    bad = ~(np.isfinite(arr) & _within(arr, above, at_least, at_most))
    if bad.any():
        finite_scalar(arr[bad].flat[0], name, above=above, at_least=at_least, at_most=at_most)


def _within(value, above, at_least, at_most):
    """Whether ``value`` (a number or an array) keeps the bounds given (NaN never does)."""
    ok = np.True_ if isinstance(value, np.ndarray) else True
    if above is not None:
        ok = ok & (value > above)
    if at_least is not None:
        ok = ok & (value >= at_least)
    if at_most is not None:
        ok = ok & (value <= at_most)
    return ok
