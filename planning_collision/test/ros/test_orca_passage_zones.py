"""orca_node's passage_zones parameter (issue #22: passages declared as polygons, fleet/zones.py):
its check at configure. No DDS: the parameter table's defaults stand in for the values."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from planning_collision.ros.orca_parameters import PARAMETERS, check_parameters
from planning_collision.ros.parameters import ParameterError

DOOR_ZONE = "3.6 1.2, 4.4 1.2, 4.4 2.8, 3.6 2.8"


def test_orca_node_refuses_a_bad_zone_by_name():
    """A bad zone is a ParameterError naming it; good ones pass."""
    values = {spec.name: spec.default for spec in PARAMETERS}
    assert values["passage_zones"] == []
    check_parameters(SimpleNamespace(**{**values, "passage_zones": [DOOR_ZONE]}))
    with pytest.raises(ParameterError, match=r"passage_zones\[1\]: vertex 2 must be two"):
        check_parameters(SimpleNamespace(**{**values, "passage_zones": [DOOR_ZONE, "0 0, 1"]}))
