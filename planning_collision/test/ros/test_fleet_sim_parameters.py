"""Parameter bounds declared once in the table: the rule in words, the start-up check in the
project's wording, the descriptor's range (what ``ros2 param describe`` shows and rclpy
enforces at run time), and parameters without bounds declared exactly as before; fleet_sim's
table and its checks."""

from __future__ import annotations

import math
import sys

import pytest
import rclpy
from rclpy.parameter import Parameter

from planning_collision.ros.fleet_sim_parameters import PARAMETERS, check_parameters
from planning_collision.ros.parameters import Param, ParameterError, check_bounds, declare


@pytest.mark.parametrize("spec, rule", [
    (Param("rate", 1.0, "d", above=0.0), "finite and > 0"),
    (Param("delay", 0.0, "d", at_least=0.0), "finite and >= 0"),
    (Param("loss", 0.0, "d", at_least=0.0, at_most=1.0), "finite and in [0, 1]"),
    (Param("share", 0.5, "d", above=0.0, at_most=1.0), "finite and > 0 and <= 1"),
    (Param("seed", 0, "d", at_least=0), "an integer >= 0"),
    (Param("threshold", 65, "d", at_least=1, at_most=100), "an integer in [1, 100]"),
])
def test_the_rule_in_words(spec, rule):
    assert spec.rule() == rule
    assert spec.descriptor().additional_constraints == rule


@pytest.mark.parametrize("spec, good, bad", [
    (Param("rate", 1.0, "d", above=0.0), [1e-9, 50.0], [0.0, -1.0, math.nan, math.inf]),
    (Param("delay", 0.0, "d", at_least=0.0), [0.0, 3.5], [-1e-9, math.nan, math.inf]),
    (Param("loss", 0.0, "d", at_least=0.0, at_most=1.0), [0.0, 0.05, 1.0],
     [-0.1, 1.5, math.nan]),
    (Param("seed", 0, "d", at_least=0), [0, 7], [-1]),
])
def test_the_check_names_the_parameter_and_its_rule(spec, good, bad):
    for value in good:
        spec.check(value)
    for value in bad:
        with pytest.raises(ParameterError) as caught:
            spec.check(value)
        assert str(caught.value) == f"{spec.name} must be {spec.rule()}, got {value}"


def test_the_descriptor_holds_an_inclusive_range_and_no_range_for_an_exclusive_bound():
    (delay,) = Param("delay", 0.0, "d", at_least=0.0).descriptor().floating_point_range
    assert (delay.from_value, delay.to_value) == (0.0, sys.float_info.max)
    (loss,) = Param("loss", 0.0, "d", at_least=0.0, at_most=1.0).descriptor()\
        .floating_point_range
    assert (loss.from_value, loss.to_value) == (0.0, 1.0)
    (seed,) = Param("seed", 0, "d", at_least=0).descriptor().integer_range
    assert (seed.from_value, seed.to_value) == (0, 2 ** 63 - 1)
    rate = Param("rate", 1.0, "d", above=0.0).descriptor()
    assert not rate.floating_point_range and rate.additional_constraints == "finite and > 0"


@pytest.fixture(scope="module")
def shared_context():
    """One rclpy context, and so one DDS participant, for the whole module: its anchor node
    keeps the participant alive between the tests. A context per test made a participant
    per test (20 here, created and deleted within milliseconds), and one of those deletions,
    in a test's ``destroy_node``, hung a fresh-clone CI run with the GIL held (issue #20). Now
    a test's ``destroy_node`` only removes a node from a participant that lives on."""
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    anchor = rclpy.create_node("bounds_test_anchor", context=context,
                               start_parameter_services=False, enable_rosout=False)
    try:
        yield context
    finally:
        anchor.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def make_node(shared_context):
    made = []

    def make(overrides: dict):
        node = rclpy.create_node(
            "bounds_test", context=shared_context, start_parameter_services=False,
            enable_rosout=False,
            parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()])
        made.append(node)
        return node

    yield make
    for node in made:
        node.destroy_node()


TABLE = (
    Param("plain", 2.0, "No bounds: declared as always."),
    Param("mode", "a", "Choices.", choices=("a", "b"), dynamic=True),
    Param("rate", 20.0, "Exclusive bound.", above=0.0),
    Param("delay", 0.0, "Inclusive bound, may change at run time.", at_least=0.0,
          dynamic=True),
    Param("seed", 0, "Integer bound.", at_least=0),
)


def test_declared_bounds_are_in_the_descriptor_and_enforced_at_run_time(make_node):
    node = make_node({"delay": 0.2})
    values = declare(node, TABLE)
    assert (values.plain, values.rate, values.delay, values.seed) == (2.0, 20.0, 0.2, 0)
    plain = node.describe_parameter("plain")
    assert plain.read_only and plain.description == "No bounds: declared as always."
    assert not plain.floating_point_range and plain.additional_constraints == ""
    assert node.describe_parameter("mode").description == "Choices. One of: a, b."
    delay = node.describe_parameter("delay")
    assert not delay.read_only and delay.additional_constraints == "finite and >= 0"
    assert delay.floating_point_range[0].from_value == 0.0
    assert node.describe_parameter("rate").read_only
    assert node.describe_parameter("seed").integer_range[0].from_value == 0
    # rclpy refuses a value outside the range; the old one stays.
    (result,) = node.set_parameters([Parameter("delay", value=-0.5)])
    assert not result.successful and "out of range" in result.reason
    (result,) = node.set_parameters([Parameter("delay", value=math.inf)])
    assert not result.successful
    assert node.get_parameter("delay").value == 0.2
    (result,) = node.set_parameters([Parameter("delay", value=0.3)])
    assert result.successful and node.get_parameter("delay").value == 0.3


@pytest.mark.parametrize("name, value, message", [
    ("rate", 0.0, "rate must be finite and > 0, got 0.0"),
    ("rate", math.nan, "rate must be finite and > 0, got nan"),
    ("delay", -0.1, "delay must be finite and >= 0, got -0.1"),
    ("delay", math.inf, "delay must be finite and >= 0, got inf"),
    ("seed", -3, "seed must be an integer >= 0, got -3"),
])
def test_a_start_value_outside_the_bounds_is_refused_by_name(make_node, name, value, message):
    node = make_node({name: value})
    with pytest.raises(ParameterError) as caught:
        declare(node, TABLE)
    assert str(caught.value) == message


@pytest.mark.parametrize("name, value", [
    ("rate_hz", 0.0), ("status_rate_hz", -2.0), ("marker_rate_hz", math.nan),
    ("cmd_vel_timeout", 0.0), ("goal_tolerance", -0.1), ("max_linear_accel", -1.0),
    ("max_angular_accel", math.inf), ("odom_rate_hz", -10.0), ("odom_latency", -0.05),
    ("localization_rate_hz", -1.0), ("localization_latency", math.nan),
    ("localization_position_noise", -0.01), ("localization_yaw_noise", -0.01),
    ("noise_seed", -1),
])
def test_fleet_sim_refuses_each_number_outside_its_bounds(make_node, name, value):
    """noise_seed -1 used to reach numpy's default_rng, which raised a ValueError of its own
    (a traceback, not the parameter's name)."""
    node = make_node({name: value})
    with pytest.raises(ParameterError, match=f"^{name} must be"):
        declare(node, PARAMETERS)


def test_fleet_sim_defaults_pass_and_topics_must_be_relative(make_node):
    values = declare(make_node({}), PARAMETERS)
    check_parameters(values)
    for name in ("cmd_vel_topic", "odom_topic", "pose_topic"):
        with pytest.raises(ParameterError, match=f"{name} must be a relative topic name"):
            check_parameters(type(values)(**{**vars(values), name: "/absolute"}))


def test_a_lifecycle_node_keeps_a_bad_start_value_for_configure_to_refuse(make_node):
    node = make_node({"delay": -0.1, "seed": 4})
    values = declare(node, TABLE, refuse=False)
    assert values.delay == -0.1  # kept; the node lives to fail its configure by name
    delay = node.describe_parameter("delay")
    assert not delay.floating_point_range and delay.additional_constraints == "finite and >= 0"
    assert node.describe_parameter("seed").integer_range[0].from_value == 0  # a good one: ranged
    with pytest.raises(ParameterError, match=r"^delay must be finite and >= 0, got -0.1$"):
        check_bounds(TABLE, values)
    (result,) = node.set_parameters([Parameter("delay", value=0.5)])  # dynamic: set right
    assert result.successful
