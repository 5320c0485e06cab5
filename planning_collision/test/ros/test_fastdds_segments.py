"""Fast DDS shared-memory segments of killed processes do not pile up in /dev/shm.

Under ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST every participant creates a segment
(/dev/shm/fastdds_<16 hex>, about 0.5 MB, and its lock file ``_el``), even though the shipped
profile sends nothing through it; a SIGKILLed process leaves both behind. A test machine had
4,800 such files (1.2 GB) after a day. A RosProcess removes those of its process once it has
ended (killed by a test, by its own stop, or crashed); the test session removes any left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from planning_collision.ros import processes

OWNER = """
import signal, time
import rclpy
from rclpy.signals import SignalHandlerOptions
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
if {deaf}:  # only SIGKILL ends it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
node = rclpy.create_node("segment_owner")
print("up", flush=True)
time.sleep(120)
"""


def owner_command(deaf: bool = False) -> list[str]:
    return [sys.executable, "-c", OWNER.format(deaf=deaf)]


def start_owner(start_process, name: str, deaf: bool = False) -> processes.RosProcess:
    proc = start_process(name, owner_command(deaf))
    assert proc.wait_for_line("up", 60.0), proc.lines
    return proc


def present(names) -> list[str]:
    """Those of the segments ``names`` of which the segment or its lock file still exists."""
    return [name for name in names if (processes.SHM_DIRECTORY / name).exists()
            or (processes.SHM_DIRECTORY / f"{name}_el").exists()]


def gone_within(names, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while present(names) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not present(names)


def test_what_a_killed_process_leaves_is_removed_and_a_live_ones_is_kept(domain_id):
    """remove_dead_segments on processes not started through RosProcess: the segment of a
    SIGKILLed one stays (nothing removes it) until removed; a live one's is never touched."""
    env = processes.ros_environment(domain_id)
    owners = [subprocess.Popen(owner_command(), env=env, stdout=subprocess.PIPE, text=True)
              for _ in range(2)]
    try:
        for owner in owners:
            assert owner.stdout.readline().strip() == "up"
        victim, survivor = owners
        mine, theirs = processes.segments_of(victim.pid), processes.segments_of(survivor.pid)
        assert mine and theirs and not mine & theirs, (mine, theirs)
        assert all(processes.segment_owned(name) for name in mine | theirs)

        victim.kill()
        assert victim.wait(10.0) == -signal.SIGKILL
        time.sleep(0.5)
        assert present(mine) == sorted(mine)  # the dead owner removed nothing
        assert not any(processes.segment_owned(name) for name in mine)

        assert processes.remove_dead_segments(mine | theirs) == sorted(mine)
        assert present(mine) == []
        assert present(theirs) == sorted(theirs)
        assert all(processes.segment_owned(name) for name in theirs)
        assert processes.remove_dead_segments({"fastdds_port7411", "not_fastdds"}) == []
    finally:
        for owner in owners:
            owner.kill()
            owner.wait(10.0)
            owner.stdout.close()
    assert processes.remove_dead_segments(theirs) == sorted(theirs)


def test_a_ros_process_killed_by_a_test_leaves_no_segment(start_process):
    victim = start_owner(start_process, "victim")
    survivor = start_owner(start_process, "survivor")
    assert gone_within([], 0)
    deadline = time.monotonic() + 5.0
    while not (victim.segments and survivor.segments) and time.monotonic() < deadline:
        time.sleep(0.05)
    mine, theirs = set(victim.segments), set(survivor.segments)
    assert mine and theirs and mine == processes.segments_of(victim.pid)
    assert mine <= processes.SEEN_SEGMENTS  # the session's last sweep knows them too

    os.kill(victim.pid, signal.SIGKILL)
    assert gone_within(mine, 5.0), present(mine)
    assert present(theirs) == sorted(theirs)


def test_a_stop_that_has_to_kill_removes_the_segment(start_process):
    deaf = start_owner(start_process, "deaf", deaf=True)
    segments = processes.segments_of(deaf.pid)
    assert segments
    assert deaf.stop(timeout=0.5) == -signal.SIGKILL  # SIGINT and SIGTERM were ignored
    assert present(segments) == []  # at once, not only by the watching thread


def test_a_process_that_shuts_down_cleanly_removes_its_own(domain_id):
    """The case that needs no help (a plain process, no RosProcess to clean after it): rclpy
    shut down, Fast DDS removes the segment itself."""
    owner = subprocess.Popen(
        [sys.executable, "-c", "import rclpy; rclpy.init(); n = rclpy.create_node('owner'); "
         "print('up', flush=True); input(); n.destroy_node(); rclpy.shutdown()"],
        env=processes.ros_environment(domain_id), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "up"
        segments = processes.segments_of(owner.pid)
        assert segments
        owner.stdin.write("\n")
        owner.stdin.flush()
        assert owner.wait(30.0) == 0
    finally:
        owner.kill()
        owner.wait(10.0)
        owner.stdin.close()
        owner.stdout.close()
    assert present(segments) == []
