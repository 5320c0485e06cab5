"""One wording for one problem: the cores' input checks share ``common.checks``."""

import re

import numpy as np
import pytest

from planning_collision.common.checks import float_points, float_vector
from planning_collision.geometry import ConvexShape
from planning_collision.geometry.shapes import as_points, as_vector
from planning_collision.geometry.tolerances import MAX_COORD
from planning_collision.orca import OrcaSimulator
from planning_collision.orca.validation import MAX_MAGNITUDE, as_orca_points, as_position

POINT_ARRAYS = [(as_points, MAX_COORD), (as_orca_points, MAX_MAGNITUDE)]
VECTORS = [(as_vector, MAX_COORD), (as_position, MAX_MAGNITUDE)]


def message(check, value):
    with pytest.raises(ValueError) as info:
        check(value, "x")
    return str(info.value)


@pytest.mark.parametrize(("value", "expected"), [
    ("abc", "x must be numeric, got str"),
    ([1.0, 2.0, 3.0], "x must have shape (K, 2), got (3,)"),
    ([[1.0, np.nan]], "x contains NaN or inf"),
    ([[np.inf, 0.0]], "x contains NaN or inf"),
])
def test_point_arrays_read_the_same_in_every_core(value, expected):
    for check, _ in POINT_ARRAYS:
        assert message(check, value) == expected
    assert message(float_points, value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (object(), "x must be numeric, got object"),
    ([1.0, 2.0, 3.0], "x must have shape (2,), got (3,)"),
    ([np.nan, 0.0], "x contains NaN or inf"),
])
def test_vectors_read_the_same_in_every_core(value, expected):
    for check, _ in VECTORS:
        assert message(check, value) == expected
    assert message(float_vector, value) == expected


def test_only_the_working_range_differs():
    for check, limit in POINT_ARRAYS:
        assert check([[limit, -limit]], "x").tolist() == [[limit, -limit]]
        beyond = message(check, [[0.0, 2 * limit]])
        assert beyond == (f"x has a value of magnitude {2 * limit:.3g}, beyond the working "
                          f"range +-{limit:g}")
    for (check, limit), (vector, same) in zip(POINT_ARRAYS, VECTORS, strict=True):
        assert limit == same
        assert message(vector, [0.0, 2 * limit]) == message(check, [[0.0, 2 * limit]])


def test_public_apis_name_their_argument_in_that_wording():
    with pytest.raises(ValueError, match=re.escape("points contains NaN or inf")):
        ConvexShape.hull([[0.0, 0.0], [np.nan, 1.0]])
    sim = OrcaSimulator(0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
    with pytest.raises(ValueError, match=re.escape("position contains NaN or inf")):
        sim.add_agent((np.nan, 0.0))
