"""The fleet's settings and agents are checked by their bounds table, in the shared wording."""

import math
import re

import pytest

from planning_collision.fleet import AgentSpec, FleetSettings
from planning_collision.fleet.controller import AGENT_BOUNDS, SETTING_BOUNDS


def test_every_number_of_the_settings_has_its_bounds():
    numbers = {name for name, value in vars(FleetSettings()).items()
               if isinstance(value, int | float) and not isinstance(value, bool)}
    assert numbers == set(SETTING_BOUNDS)
    FleetSettings().check()


@pytest.mark.parametrize(("change", "message"), [
    (dict(time_horizon=0.0), "time_horizon must be finite and > 0, got 0.0"),
    (dict(odom_timeout=math.nan), "odom_timeout must be finite and > 0, got nan"),
    (dict(goal_tolerance=-0.1), "goal_tolerance must be finite and >= 0, got -0.1"),
    (dict(plausible_speed_factor=0.5), "plausible_speed_factor must be finite and >= 1, got 0.5"),
    (dict(side_preference=math.inf), "side_preference must be finite, got inf"),
    (dict(max_neighbors=-1), "max_neighbors must be an integer >= 0, got -1"),
    (dict(max_neighbors=2.5), "max_neighbors must be an integer >= 0, got 2.5"),
    (dict(safety_margin=True), "safety_margin must be a number, got True"),
])
def test_a_bad_setting_is_refused_by_name(change, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        FleetSettings(**change).check()


@pytest.mark.parametrize(("change", "message"), [
    (dict(radius=0.0), "r.radius must be finite and > 0, got 0.0"),
    (dict(max_speed=math.inf), "r.max_speed must be finite and > 0, got inf"),
    (dict(responsibility=1.5), "r.responsibility must be finite and in [0, 1], got 1.5"),
    (dict(responsibility=math.nan), "r.responsibility must be finite and in [0, 1], got nan"),
])
def test_a_bad_agent_is_refused_by_its_name_and_field(change, message):
    AgentSpec("r").check()
    assert set(AGENT_BOUNDS) <= {f for f in vars(AgentSpec("r"))}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        AgentSpec("r", **change).check()
