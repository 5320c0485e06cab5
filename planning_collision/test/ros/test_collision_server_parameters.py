"""collision_server's footprint parameters: checked at configure without numba (a cold cache
must not hold the node before its services exist), built into a shape once serving."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from planning_collision.fleet.controller import AGENT_BOUNDS, SETTING_BOUNDS
from planning_collision.geometry import ConvexShape
from planning_collision.ros import collision_server_parameters, orca_parameters
from planning_collision.ros.collision_server_parameters import check_footprint, default_footprint
from planning_collision.ros.parameters import ParameterError


def params(footprint="[[0.3, 0.2], [-0.3, 0.2], [-0.3, -0.2], [0.3, -0.2]]", robot_radius=0.0,
           footprint_padding=0.0):
    return SimpleNamespace(footprint=footprint, robot_radius=robot_radius,
                           footprint_padding=footprint_padding)


@pytest.mark.parametrize("p, problem", [
    (params("[[0, 0], [2, 0], [2, 2], [1, 2], [1, -1], [0, -1]]"),
     "footprint: polygon is self-intersecting"),
    (params("[[0, 0], [1, 0], [2, 0]]"), "footprint: polygon has zero area"),
    (params("[[0, 0], [1, 0], [nan, 1]]"), "footprint must be a list of finite"),
    (params("[]", robot_radius=0.0), "one of them must give a shape"),
    (params(footprint_padding=-0.1), "footprint_padding must be finite and >= 0, got -0.1"),
    (params(footprint_padding=float("nan")), "footprint_padding must be finite and >= 0, got nan"),
])
def test_a_bad_footprint_is_refused_by_name(p, problem):
    with pytest.raises(ParameterError, match=problem.replace("(", r"\(")):
        check_footprint(p)
    with pytest.raises(ParameterError):
        default_footprint(p)


def test_the_built_footprint_is_the_polygon_padded_or_the_disc():
    (shape,) = default_footprint(params(footprint_padding=0.05)).parts
    want = ConvexShape.polygon(np.array([[0.3, 0.2], [-0.3, 0.2], [-0.3, -0.2], [0.3, -0.2]]))
    np.testing.assert_array_equal(shape.points, want.points)
    assert shape.radius == 0.05
    (disc,) = default_footprint(params("[]", robot_radius=0.4, footprint_padding=0.1)).parts
    assert disc.points.shape == (1, 2) and disc.radius == pytest.approx(0.5)


def test_a_concave_footprint_parameter_is_accepted_and_split():
    """A forklift's footprint (body and two forks) was refused as not convex although
    decompose exists (issue #26); now it passes the configure check and is built as its
    convex parts, each padded."""
    from shapely.geometry import Polygon
    from shapely.ops import unary_union

    forklift = ("[[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], [0.5, -0.3], [0.5, -0.25], "
                "[1.2, -0.25], [1.2, -0.15], [0.5, -0.15], [0.5, 0.15], [1.2, 0.15], "
                "[1.2, 0.25], [0.5, 0.25]]")
    check_footprint(params(forklift))
    footprint = default_footprint(params(forklift, footprint_padding=0.02))
    assert len(footprint.parts) >= 3 and all(p.radius == 0.02 for p in footprint.parts)
    union = unary_union([Polygon(p.points) for p in footprint.parts])
    assert union.equals(Polygon(collision_server_parameters.parse_footprint(forklift)))


PROBE = """
import importlib, pkgutil
from types import SimpleNamespace
from numba.core.registry import CPUDispatcher
from planning_collision.ros.collision_server_parameters import check_footprint
check_footprint(SimpleNamespace(footprint="[[0.3, 0.2], [-0.3, 0.2], [-0.3, -0.2], [0.3, -0.2]]",
                                robot_radius=0.0, footprint_padding=0.0))
compiled = []
for core in ("common", "geometry", "grid"):
    package = importlib.import_module("planning_collision." + core)
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(package.__name__ + "." + info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.signatures:
                compiled.append(info.name + "." + name)
print(sorted(set(compiled)))
"""


def test_checking_the_footprint_runs_no_numba_kernel():
    """In a fresh interpreter (here every kernel is already compiled): checking the
    parameters compiles or loads no kernel, so on a cold cache it costs no compile."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _rules(params):
    return {p.name: p.descriptor().additional_constraints for p in params if p.bounded}


def test_collision_server_declares_its_bounds_where_ros2_param_describe_shows_them():
    assert _rules(collision_server_parameters.PARAMETERS) == {
        "occupied_threshold": "an integer in [1, 100]",
        "footprint_padding": "finite and >= 0",
        "max_obstacle_markers": "an integer >= 1",
        "max_request_size": "an integer >= 1",
        "query_threads": "an integer >= 0",
        "kernel_threads": "an integer >= 0",
        "sensor_decay": "finite and > 0",
        "sensor_layer_resolution": "finite and > 0",
        "sensor_layer_width": "finite and > 0",
        "sensor_layer_height": "finite and > 0",
    }
    threshold = collision_server_parameters.BY_NAME["occupied_threshold"].descriptor()
    assert (threshold.integer_range[0].from_value, threshold.integer_range[0].to_value) == (1, 100)
    with pytest.raises(ParameterError, match=r"^max_request_size must be an integer >= 1, got 0$"):
        collision_server_parameters.BY_NAME["max_request_size"].check(0)


def test_orca_node_declares_the_fleets_bounds_and_its_own():
    rules = _rules(orca_parameters.PARAMETERS)
    assert {name: rules[name] for name in ("rate_hz", "marker_rate_hz", "occupied_threshold",
                                           "map_simplify_tolerance", "radius")} == {
        "rate_hz": "finite and > 0", "marker_rate_hz": "finite and > 0",
        "occupied_threshold": "an integer in [1, 100]",
        "map_simplify_tolerance": "finite and >= 0", "radius": "finite and > 0"}
    by_name = orca_parameters.BY_NAME
    for name, bounds in SETTING_BOUNDS.items():  # declared once, in the fleet controller
        if name in by_name:
            assert by_name[name].bounds == {"above": None, "at_least": None, "at_most": None,
                                            "integer": False, **bounds}, name
    agents = orca_parameters.agent_parameters(SimpleNamespace(
        agents=["a"], observed=["b"], pose_source="odom_origin", radius=0.25, max_speed=0.6,
        holonomic=True, max_linear_accel=0.0, max_angular_accel=0.0))
    agent_rules = _rules(agents)
    limits = {f"{who}.{name}": "finite and >= 0" for who in "ab"
              for name in ("max_linear_accel", "max_angular_accel")}
    assert agent_rules == {"a.radius": "finite and > 0", "a.max_speed": "finite and > 0",
                           "b.radius": "finite and > 0", "b.max_speed": "finite and > 0",
                           "b.responsibility": "finite and in [0, 1]", **limits}
    assert set(AGENT_BOUNDS) == {name.split(".")[1] for name in agent_rules}
