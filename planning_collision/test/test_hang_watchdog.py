"""The hang watchdog (hang_watchdog.py): a test hung in C with the GIL held is dumped and the
run fails at once, with and without xdist; the watcher never outlives pytest."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

HUNG_TESTS = '''
import ctypes


def test_before():
    pass


def test_hang():
    # A self-deadlock on a futex, the GIL held (ctypes.PyDLL keeps it during the call), as
    # Fast DDS's shared-memory transport did (issue #20); no signal ends this wait.
    libc = ctypes.PyDLL(None)
    mutex = ctypes.create_string_buffer(64)  # a zeroed pthread_mutex_t: a default mutex
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_lock(mutex)


def test_after():
    pass
'''


def run_pytest(tmp_path: Path, *args: str, source: str = HUNG_TESTS, timeout: float = 90.0):
    """Run pytest on ``source`` (as test_hang.py) in a subprocess with the watchdog plugin;
    returns (exit code, output, seconds)."""
    (tmp_path / "test_hang.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=str(HERE))
    env.pop("PYTEST_ADDOPTS", None)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "hang_watchdog", "-p", "no:cacheprovider",
         "--timeout=0", *args, "test_hang.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return result.returncode, result.stdout + result.stderr, time.monotonic() - started


def assert_dumped(output: str) -> None:
    # the watcher names the test, then py-spy's native and Python frames of the hung thread
    assert "hang watchdog: 'test_hang.py::test_hang' has run for" in output, output
    assert "py-spy dump --native --pid" in output, output
    assert "pthread_mutex_lock" in output, output  # native frame
    assert "test_hang (test_hang.py:" in output, output  # Python frame, as py-spy shows it
    # gdb's native stacks of every thread, whatever py-spy managed
    if shutil.which("gdb"):
        gdb = output.split("--- gdb -p ")[1].split("--- faulthandler")[0]
        assert "pthread_mutex_lock" in gdb, output
    else:
        assert "hang watchdog: gdb is not installed" in output, output
    # faulthandler's dump, written by the hung process itself without the GIL
    assert 'test_hang.py", line ' in output and " in test_hang" in output, output
    assert "hang watchdog: killing pytest process" in output, output


def test_a_test_hung_holding_the_gil_is_dumped_and_the_run_ends_at_once(tmp_path):
    code, output, seconds = run_pytest(tmp_path, "--hang-timeout=3")
    assert_dumped(output)
    assert code == -signal.SIGKILL, output  # 137 in a shell: make and CI see a failure
    assert seconds < 60, f"took {seconds:.1f} s:\n{output}"


def test_under_xdist_the_worker_is_killed_and_the_test_named_as_failed(tmp_path):
    code, output, seconds = run_pytest(tmp_path, "--hang-timeout=3", "-n", "2")
    assert_dumped(output)
    assert "crashed while running 'test_hang.py::test_hang'" in output, output
    assert "FAILED test_hang.py::test_hang" in output, output
    assert code == 1, output
    assert seconds < 90, f"took {seconds:.1f} s:\n{output}"


def process_gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` ends (or is only a zombie left to reap) within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def start_session(tmp_path: Path, source: str) -> tuple[subprocess.Popen, int]:
    """Start a pytest session with the watchdog; returns it and its watcher's PID."""
    (tmp_path / "test_hang.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=str(HERE))
    env.pop("PYTEST_ADDOPTS", None)
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "hang_watchdog", "-p", "no:cacheprovider",
         "--hang-timeout=60", "-s", "test_hang.py"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in session.stdout:
        if line.startswith("hang watchdog: pid "):
            return session, int(line.split()[3].rstrip(","))
    session.kill()
    raise AssertionError("no watcher was announced")


def test_the_watcher_ends_with_pytest(tmp_path):
    # a session that ends normally stops its watcher
    session, watcher = start_session(tmp_path, "def test_quick():\n    pass\n")
    output = session.stdout.read()
    assert session.wait(30) == 0, output
    assert process_gone(watcher, 5.0)
    # and a session killed in the middle of a test takes its watcher along
    session, watcher = start_session(
        tmp_path, "import time\n\ndef test_slow():\n    print('running', flush=True)\n"
                  "    time.sleep(60)\n")
    try:
        for line in session.stdout:
            if "running" in line:
                break
        assert not process_gone(watcher, 0.0)
        session.kill()
        session.wait(10)
        assert process_gone(watcher, 5.0)
    finally:
        session.kill()
        session.wait(10)
        session.stdout.close()


def test_a_test_with_a_longer_timeout_of_its_own_gets_it(tmp_path):
    """@pytest.mark.timeout(N) (pytest-timeout, the inner bound) raises the outer one to N plus
    a grace period: the marked test outlives the 1 s bound, the unmarked one does not."""
    source = ("import time\n\nimport pytest\n\n\n@pytest.mark.timeout(5)\n"
              "def test_marked():\n    time.sleep(2)\n\n\n"
              "def test_unmarked():\n    time.sleep(30)\n")
    code, output, _ = run_pytest(tmp_path, "--hang-timeout=1", "-v", source=source)
    assert "test_hang.py::test_marked PASSED" in output, output
    assert "hang watchdog: 'test_hang.py::test_unmarked' has run for" in output, output
    assert code == -signal.SIGKILL, output


VICTIM = '''
import ctypes, faulthandler, signal
faulthandler.register(signal.SIGUSR2, all_threads=True)  # as the plugin does in pytest
print("locked", flush=True)
libc = ctypes.PyDLL(None)  # the GIL held through the call, as in the issue #20 hang
mutex = ctypes.create_string_buffer(64)
libc.pthread_mutex_lock(mutex)
libc.pthread_mutex_lock(mutex)
'''


def test_without_py_spy_gdb_still_dumps_every_threads_native_frames(capfd):
    """py-spy failed on the issue #20 hang (UNW_EINVAL on every thread), leaving no native
    frame; gdb reads them anyway. Here py-spy is missing altogether (its path empty): the
    dump still holds the hung thread's native frames, from gdb, then the process is killed."""
    import hang_watchdog

    gdb = shutil.which("gdb")
    if gdb is None:  # the watcher says so, and goes on
        hang_watchdog.gdb_dump(os.getpid(), "")
        assert "hang watchdog: gdb is not installed" in capfd.readouterr().err
        return
    victim = subprocess.Popen([sys.executable, "-c", VICTIM], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert victim.stdout.readline().strip() == "locked"
        time.sleep(0.2)  # into the second lock
        hang_watchdog._hang(victim.pid, "victim", 3.0, 3.0, pyspy="", gdb=gdb)
        assert victim.wait(10) == -signal.SIGKILL
    finally:
        victim.kill()
        victim.wait(10)
        victim.stdout.close()
    output = capfd.readouterr().err
    assert "py-spy is not installed" in output, output
    dump = output.split(f"--- gdb -p {victim.pid} ")[1].split("--- faulthandler")[0]
    assert "pthread_mutex_lock" in dump, output  # the hung thread's native frame
    assert "Thread 1 " in dump, output
    assert "hang watchdog: killing pytest process" in output, output


NODE_PARENT = '''
import ctypes, faulthandler, signal, subprocess, sys
faulthandler.register(signal.SIGUSR2, all_threads=True)
node = subprocess.Popen([sys.executable, "-c", "import rclpy, time; rclpy.init(); "
                         "n = rclpy.create_node('under_a_hung_test'); print('up', flush=True); "
                         "time.sleep(120)"], stdout=subprocess.PIPE, text=True)
node.stdout.readline()
print(node.pid, flush=True)
libc = ctypes.PyDLL(None)
mutex = ctypes.create_string_buffer(64)
libc.pthread_mutex_lock(mutex)
libc.pthread_mutex_lock(mutex)
'''


def test_the_shared_memory_of_the_processes_it_kills_is_removed(capfd, domain_id):
    """The node processes of a hung test die by SIGKILL with it, so their Fast DDS segments
    (/dev/shm/fastdds_*) would stay behind for good: the watcher removes them."""
    import hang_watchdog

    from planning_collision.ros import processes

    parent = subprocess.Popen([sys.executable, "-c", NODE_PARENT], stdout=subprocess.PIPE,
                              text=True, env=processes.ros_environment(domain_id))
    try:
        node = int(parent.stdout.readline())
        segments = processes.segments_of(node)
        assert segments and all(processes.segment_owned(name) for name in segments)
        hang_watchdog._hang(parent.pid, "parent", 3.0, 3.0, pyspy="", gdb="")
        assert parent.wait(10) == -signal.SIGKILL
    finally:
        parent.kill()
        parent.wait(10)
        parent.stdout.close()
    assert not any((processes.SHM_DIRECTORY / name).exists() for name in segments)
    output = capfd.readouterr().err
    assert "(and 1 processes it started)" in output, output
    assert f"removed {len(segments)} Fast DDS shared-memory segments" in output, output
