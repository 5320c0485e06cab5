"""The workarounds' switches (ros/switches.py, doc/workarounds.md): type registration and the
stop guardian can be turned off with an environment variable; a bad value is named."""

from __future__ import annotations

import os
import sys

import pytest

from planning_collision.ros.switches import REGISTER_TYPES, STOP_GUARDIAN, switched_on
from planning_collision.ros.type_registration import register_types_early


@pytest.mark.parametrize("value, expected", [("0", False), ("off", False), ("False", False),
                                             ("no", False), ("1", True), ("ON", True),
                                             ("true", True), ("yes", True), ("", True)])
def test_switch_values(monkeypatch, value, expected):
    monkeypatch.setenv("PLANNING_COLLISION_TEST_SWITCH", value)
    assert switched_on("PLANNING_COLLISION_TEST_SWITCH") is expected


def test_an_unset_switch_is_its_default_and_a_bad_value_is_named(monkeypatch, capsys):
    monkeypatch.delenv("PLANNING_COLLISION_TEST_SWITCH", raising=False)
    assert switched_on("PLANNING_COLLISION_TEST_SWITCH") is True
    assert switched_on("PLANNING_COLLISION_TEST_SWITCH", default=False) is False
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("PLANNING_COLLISION_TEST_SWITCH", "maybe")
    assert switched_on("PLANNING_COLLISION_TEST_SWITCH", default=False) is False
    err = capsys.readouterr().err
    assert "PLANNING_COLLISION_TEST_SWITCH='maybe' is not a switch value" in err
    assert "using the default, off" in err


def test_type_registration_switched_off_starts_no_participant(monkeypatch):
    """Off: no throwaway context (so no participant) and the discovery range never touched;
    on: one, and the range is restored."""
    from planning_collision.ros import type_registration

    contexts = []
    real_context = type_registration.Context

    def recording_context():
        contexts.append(real_context())
        return contexts[-1]

    monkeypatch.setattr(type_registration, "Context", recording_context)
    range_before = os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"]
    monkeypatch.setenv(REGISTER_TYPES, "0")
    assert register_types_early() is False
    assert contexts == []
    monkeypatch.setenv(REGISTER_TYPES, "on")
    assert register_types_early() is True
    assert len(contexts) == 1 and not contexts[0].ok()  # made, then shut down
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == range_before


PROBE = '''
import sys
from rclpy.node import Node
from planning_collision.ros.run import run_node


class Probe(Node):
    def __init__(self):
        super().__init__("switch_probe")
        self.timer = self.create_timer(0.01, self.tick)

    def tick(self):
        print("spinning", flush=True)
        self.destroy_timer(self.timer)


run_node(Probe, sys.argv[:1])
'''


@pytest.mark.parametrize("value, guardians", [(None, 1), ("0", 0)])
def test_the_stop_guardian_can_be_switched_off(tmp_path, start_process, value, guardians):
    from test_stop import _children, _cmdline

    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = start_process("switch_probe", [sys.executable, str(script)], echo=False,
                         extra_env={} if value is None else {STOP_GUARDIAN: value})
    assert proc.wait_for_line("spinning", 60.0), proc.lines[-20:]
    found = [pid for pid in _children(proc.pid) if b"stop_guardian" in _cmdline(pid)]
    assert len(found) == guardians
    proc.send_signal(2)
    assert proc.wait(timeout=10.0) == 0, proc.lines[-20:]
