"""Declaring a node's parameters from one table (name, default, description).

Each node module keeps a single ``PARAMETERS`` tuple of :class:`Param`; :func:`declare` declares
them all with descriptions and returns their values as attributes of one object. A parameter is
read-only (changing it means restarting the node) unless its ``Param`` says ``dynamic=True``:
the node then validates and applies new values while it runs (as Nav2's controllers do). The
shipped ``config/*.yaml`` files list the same names; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter


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

    @property
    def type(self) -> Parameter.Type:
        if self.type_hint is not None:
            return self.type_hint
        return Parameter.Type.from_parameter_value(self.default)


class ParameterError(ValueError):
    """A parameter value the node cannot run with."""


def relative_topic(name: str, value: str) -> str:
    """``value`` of the topic parameter ``name``, which must be relative (it is resolved
    inside each agent's namespace)."""
    if not value or value.startswith(("/", "~")):
        raise ParameterError(f"{name} must be a relative topic name, got {value!r}")
    return value


def declare(node: Node, params: tuple[Param, ...]) -> SimpleNamespace:
    """Declare every parameter of ``params`` on ``node`` (one declared already keeps its
    value: a lifecycle node configured again); return their values by name."""
    values = {}
    for spec in params:
        if node.has_parameter(spec.name):  # declared by an earlier configure: keep it
            values[spec.name] = node.get_parameter(spec.name).value
            continue
        descriptor = ParameterDescriptor(
            description=spec.description + (f" One of: {', '.join(spec.choices)}."
                                             if spec.choices else ""),
            read_only=not spec.dynamic,
            type=spec.type.value,
        )
        if spec.default == []:
            parameter = _declare_array(node, spec, descriptor)
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
