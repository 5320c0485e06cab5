"""A Shape message's numbers are refused by field, in the shared wording (no rclpy node)."""

import math
import re

import pytest

from planning_collision.ros.conversions import RequestError, shape_from_msg
from planning_collision_interfaces.msg import Shape


@pytest.mark.parametrize(("fields", "message"), [
    (dict(type=Shape.TYPE_CIRCLE, radius=math.nan),
     "shape.radius must be finite and >= 0, got nan"),
    (dict(type=Shape.TYPE_BOX, radius=-0.1, length=1.0, width=1.0),
     "shape.radius must be finite and >= 0, got -0.1"),
    (dict(type=Shape.TYPE_BOX, length=0.0, width=1.0),
     "shape.length must be finite and > 0, got 0.0"),
    (dict(type=Shape.TYPE_BOX, length=1.0, width=math.inf),
     "shape.width must be finite and > 0, got inf"),
])
def test_a_bad_number_of_a_shape_is_named_once(fields, message):
    msg = Shape(**fields)
    msg.pose.orientation.w = 1.0
    with pytest.raises(RequestError, match=f"^{re.escape(message)}$"):
        shape_from_msg(msg, "shape")


def test_a_good_box_is_built():
    msg = Shape(type=Shape.TYPE_BOX, length=2.0, width=1.0, radius=0.1)
    msg.pose.orientation.w = 1.0
    assert shape_from_msg(msg, "shape").radius == pytest.approx(0.1)
