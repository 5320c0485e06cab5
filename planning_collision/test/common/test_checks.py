"""One wording for one problem: the cores' input checks share ``common.checks``."""

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import planning_collision
from planning_collision.common.checks import (
    finite_scalar,
    finite_values,
    float_points,
    float_vector,
    scalar_rule,
)
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


@pytest.mark.parametrize(("value", "bounds", "expected"), [
    (np.nan, dict(above=0.0), "x must be finite and > 0, got nan"),
    (0.0, dict(above=0.0), "x must be finite and > 0, got 0.0"),
    (np.inf, {}, "x must be finite, got inf"),
    (-np.inf, dict(at_least=0.0), "x must be finite and >= 0, got -inf"),
    (-0.1, dict(at_least=0.0, at_most=1.0), "x must be finite and in [0, 1], got -0.1"),
    (1.5, dict(above=0.0, at_most=1.0), "x must be finite and > 0 and <= 1, got 1.5"),
    (2e9, dict(at_most=1e9), "x must be finite and <= 1e+09, got 2000000000.0"),
    ("abc", {}, "x must be a number, got 'abc'"),
    ("0.5", {}, "x must be a number, got '0.5'"),
    (None, {}, "x must be a number, got None"),
    (True, {}, "x must be a number, got True"),
    (np.bool_(False), {}, f"x must be a number, got {np.bool_(False)!r}"),  # numpy's repr
    (1.5, dict(integer=True), "x must be an integer, got 1.5"),
    (-3, dict(integer=True, at_least=0), "x must be an integer >= 0, got -3"),
    (0, dict(integer=True, at_least=1, at_most=100), "x must be an integer in [1, 100], got 0"),
    (np.nan, dict(integer=True), "x must be an integer, got nan"),
    (True, dict(integer=True), "x must be an integer, got True"),
])
def test_one_scalar_rule_in_one_wording(value, bounds, expected):
    with pytest.raises(ValueError) as info:
        finite_scalar(value, "x", **bounds)
    assert str(info.value) == expected


@pytest.mark.parametrize(("value", "bounds", "expected"), [
    (1e-300, dict(above=0.0), 1e-300),
    (0.0, dict(at_least=0.0, at_most=1.0), 0.0),
    (1.0, dict(at_least=0.0, at_most=1.0), 1.0),
    (-5, {}, -5.0),
    (np.float32(0.5), dict(above=0.0), 0.5),
    (np.float64(2.0), {}, 2.0),
    (np.int64(7), {}, 7.0),
    (np.array(3.0), {}, 3.0),
])
def test_a_number_within_its_bounds_comes_back_as_a_python_float(value, bounds, expected):
    out = finite_scalar(value, "x", **bounds)
    assert type(out) is float and out == expected


@pytest.mark.parametrize(("value", "expected"), [
    (3, 3), (np.int64(-2), -2), (np.uint8(200), 200), (4.0, 4), (np.float64(5.0), 5),
    (2 ** 62 + 1, 2 ** 62 + 1),  # no rounding through float
])
def test_an_integer_comes_back_as_a_python_int(value, expected):
    out = finite_scalar(value, "x", integer=True)
    assert type(out) is int and out == expected


def test_the_rule_in_words_is_the_one_the_error_uses():
    assert scalar_rule() == "finite"
    assert scalar_rule(above=0.0) == "finite and > 0"
    assert scalar_rule(at_least=1, at_most=100, integer=True) == "an integer in [1, 100]"
    assert scalar_rule(integer=True) == "an integer"


def test_the_array_form_reports_the_first_bad_value_as_the_scalar_rule_does():
    finite_values(np.array([0.0, 1.0]), "v", at_least=0.0)
    with pytest.raises(ValueError, match=re.escape("v must be finite and >= 0, got -2.0")):
        finite_values(np.array([1.0, -2.0, np.nan]), "v", at_least=0.0)
    with pytest.raises(ValueError, match=re.escape("v must be finite, got nan")):
        finite_values(np.array([[1.0], [np.nan]]), "v")


PACKAGE = Path(planning_collision.__file__).parent
# The rule's wording, built only by checks.finite_scalar / scalar_rule.
RULE_WORDS = ("must be finite and", "must be finite, got", "must be a number, got")


def _strings(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_the_scalar_rule_is_written_once():
    """No module but common/checks.py words the rule itself: a second copy of 'a finite
    number within bounds' would have to (the cores, nodes and parameters call
    finite_scalar, or Param.check, which calls it)."""
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "common" / "checks.py":
            continue
        for line, text in _strings(ast.parse(path.read_text())):
            if any(words in text for words in RULE_WORDS):
                copies.append(f"{path.relative_to(PACKAGE)}:{line}: {text!r}")
    assert copies == []


@pytest.mark.parametrize(("module", "function"), [
    ("planning_collision.grid.map_file", "_number"),
    ("planning_collision.orca.validation", "as_scalar"),
    ("planning_collision.geometry.shapes", "as_scalar"),
    ("planning_collision.sim.scenario", "_number"),
])  # and ros.parameters' Param.check (not imported here: a pure test imports nothing of ros/)
def test_the_functions_that_remain_delegate_to_it(module, function):
    """The old scalar checks that an API still needs call finite_scalar and test nothing
    themselves (grid.validation's finite_float is gone)."""
    target = importlib.import_module(module)
    for part in function.split("."):
        target = getattr(target, part)
    tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    called = {node.func.id if isinstance(node.func, ast.Name) else node.func.attr
              for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "finite_scalar" in called and "isfinite" not in called
    assert not hasattr(importlib.import_module("planning_collision.grid.validation"),
                       "finite_float")
