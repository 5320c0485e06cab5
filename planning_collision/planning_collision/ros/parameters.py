"""Declaring a node's parameters from one table (name, default, description).

Each node module keeps a single ``PARAMETERS`` tuple of :class:`Param`; :func:`declare` declares
them all with descriptions and returns their values as attributes of one object. A parameter is
read-only (changing it means restarting the node) unless its ``Param`` says ``dynamic=True``:
the node then validates and applies new values while it runs (as Nav2's controllers do). The
shipped ``config/*.yaml`` files list the same names; a test keeps the two in step.

A number may carry its bounds (``above``: exclusive, ``at_least`` / ``at_most``: inclusive).
:func:`declare` checks the value it starts with (:class:`ParameterError` naming the parameter)
and writes the bounds into the parameter's descriptor: an inclusive range as rclpy's
``floating_point_range`` / ``integer_range`` (``ros2 param describe`` shows it, and rclpy
refuses a value outside it at run time), and the rule in words as ``additional_constraints``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import SimpleNamespace

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter

from planning_collision.common.checks import finite_scalar, scalar_rule


@dataclass(frozen=True)
class Param:
    name: str
    default: object
    description: str
    choices: tuple[str, ...] = ()
    # Needed only when the default cannot tell the type, e.g. an empty list of strings.
    type_hint: Parameter.Type | None = None
    # May change while the node runs (the node validates and applies it); else read-only.
    dynamic: bool = False
    # Bounds of a number, None for none: greater than ``above``; within [at_least, at_most].
    above: float | None = None
    at_least: float | None = None
    at_most: float | None = None

    @property
    def type(self) -> Parameter.Type:
        if self.type_hint is not None:
            return self.type_hint
        return Parameter.Type.from_parameter_value(self.default)

    @property
    def bounded(self) -> bool:
        return (self.above, self.at_least, self.at_most) != (None, None, None)

    @property
    def bounds(self) -> dict:
        """The bounds as keywords of :func:`~planning_collision.common.checks.finite_scalar`."""
        return dict(above=self.above, at_least=self.at_least, at_most=self.at_most,
                    integer=self.type == Parameter.Type.INTEGER)

    def rule(self) -> str:
        """The bounds in words, e.g. 'finite and > 0', 'finite and in [0, 1]',
        'an integer >= 0' (:func:`~planning_collision.common.checks.scalar_rule`)."""
        return scalar_rule(**self.bounds)

    def check(self, value) -> None:
        """ParameterError (naming the parameter and its rule) when ``value`` breaks the
        bounds: :func:`~planning_collision.common.checks.finite_scalar`."""
        if self.bounded:
            try:
                finite_scalar(value, self.name, **self.bounds)
            except ValueError as exc:
                raise ParameterError(str(exc)) from None

    def descriptor(self) -> ParameterDescriptor:
        """The descriptor ``ros2 param describe`` shows: description, choices, read-only,
        type, and the bounds (as a range where they are one)."""
        descriptor = ParameterDescriptor(
            description=self.description + (f" One of: {', '.join(self.choices)}."
                                             if self.choices else ""),
            read_only=not self.dynamic,
            type=self.type.value,
        )
        if self.bounded:
            descriptor.additional_constraints = self.rule()
        if self.above is not None or (self.at_least, self.at_most) == (None, None):
            return descriptor  # an exclusive bound is no rclpy range
        if self.type == Parameter.Type.DOUBLE:
            top = sys.float_info.max  # finite, so that rclpy refuses inf
            descriptor.floating_point_range = [FloatingPointRange(
                from_value=float(-top if self.at_least is None else self.at_least),
                to_value=float(top if self.at_most is None else self.at_most))]
        elif self.type == Parameter.Type.INTEGER:
            descriptor.integer_range = [IntegerRange(
                from_value=-(2 ** 63) if self.at_least is None else int(self.at_least),
                to_value=2 ** 63 - 1 if self.at_most is None else int(self.at_most))]
        return descriptor


class ParameterError(ValueError):
    """A parameter value the node cannot run with."""


def relative_topic(name: str, value: str) -> str:
    """``value`` of the topic parameter ``name``, which must be relative (it is resolved
    inside each agent's namespace)."""
    if not value or value.startswith(("/", "~")):
        raise ParameterError(f"{name} must be a relative topic name, got {value!r}")
    return value


def check_bounds(params: tuple[Param, ...], values) -> None:
    """:meth:`Param.check` of every parameter with bounds, on its value among ``values``
    (an object with the parameters as attributes): what rclpy does not enforce at run time
    (an exclusive bound, a value set before the node read it) is refused here."""
    for spec in params:
        if spec.bounded:
            spec.check(getattr(values, spec.name))


def declare(node: Node, params: tuple[Param, ...], *, refuse: bool = True) -> SimpleNamespace:
    """Declare every parameter of ``params`` on ``node`` (one declared already keeps its
    value: a lifecycle node configured again); return their values by name.

    ``refuse`` False (a lifecycle node declaring in its constructor): a start value outside
    its bounds is kept, without the range rclpy would refuse it by, for the node's configure
    to refuse (:func:`check_bounds`): the node reaches its unconfigured state, fails configure
    by name, and a dynamic parameter can be set right."""
    values = {}
    for spec in params:
        if node.has_parameter(spec.name):  # declared by an earlier configure: keep it
            values[spec.name] = node.get_parameter(spec.name).value
            continue
        descriptor = spec.descriptor()
        if spec.default == []:
            parameter = _declare_array(node, spec, descriptor)
        elif spec.bounded:
            parameter = _declare_bounded(node, spec, descriptor, refuse)
        else:
            parameter = node.declare_parameter(spec.name, spec.default, descriptor)
        value = parameter.value
        if value is None:
            value = list(spec.default) if isinstance(spec.default, list) else spec.default
        if spec.choices and value not in spec.choices:
            raise ParameterError(
                f"parameter {spec.name!r} is {value!r}; expected one of {', '.join(spec.choices)}"
            )
        values[spec.name] = value
    return SimpleNamespace(**values)


def _declare_bounded(node: Node, spec: Param, descriptor: ParameterDescriptor,
                     refuse: bool) -> Parameter:
    """Declare a number with bounds: first without them, so that a value outside is refused
    by :meth:`Param.check` in the project's words (rclpy would raise its own exception), then
    with its real descriptor (``refuse`` False and a value outside: without its range)."""
    writable = ParameterDescriptor(description=descriptor.description, type=descriptor.type)
    parameter = node.declare_parameter(spec.name, spec.default, writable)
    try:
        spec.check(parameter.value)
    except ParameterError:
        if refuse:
            raise
        descriptor.floating_point_range, descriptor.integer_range = [], []
    node.set_descriptor(spec.name, descriptor)
    return node.get_parameter(spec.name)


def _declare_array(node: Node, spec: Param, descriptor: ParameterDescriptor) -> Parameter:
    """Declare an array parameter whose default is empty, so that it holds a typed empty
    array rather than no value at all.

    An empty list says nothing about its element type: rclpy infers none from it, and an empty
    YAML list (``agents: []``) arrives as an override with no value. Declared by type only,
    the parameter would stay unset, and ``GetParameters`` (``ros2 param get``/``dump``) would
    answer nothing for it, and nothing either for every other name asked with it. So: declare
    it by type, writable; if it got no value, set an empty array of that type; then give it its
    real descriptor (read-only unless the Param is dynamic).
    """
    writable = ParameterDescriptor(description=descriptor.description, type=descriptor.type)
    parameter = node.declare_parameter(spec.name, spec.type, writable)
    if parameter.type_ == Parameter.Type.NOT_SET:
        result, = node.set_parameters([Parameter(spec.name, spec.type, [])])
        if not result.successful:
            raise ParameterError(f"parameter {spec.name!r}: {result.reason}")
    node.set_descriptor(spec.name, descriptor)
    return node.get_parameter(spec.name)
