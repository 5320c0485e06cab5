"""The leak check (ros_leaks.py): a test or fixture that leaves an rclpy Node, Context or
Executor alive fails, naming the object and where it was created; the plugin destroys it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import ros_leaks

HERE = Path(__file__).parent

LEAKY_TESTS = '''
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor


def make_node(name):
    context = Context()
    rclpy.init(context=context)
    return rclpy.create_node(name, context=context)


def test_leaves_everything():
    node = make_node("leaky")
    SingleThreadedExecutor(context=node.context)


def test_drops_its_node():
    make_node("dropped")  # no reference left: the garbage collector's, were it not recorded


def test_destroys_everything():
    node = make_node("clean")
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.spin_once(timeout_sec=0.01)
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown(context=node.context)


@pytest.fixture(scope="module")
def module_node():
    node = make_node("module_node")
    yield node  # and never destroyed


@pytest.fixture(scope="module")
def tidy_module_node():
    node = make_node("tidy_module_node")
    yield node
    node.destroy_node()
    rclpy.try_shutdown(context=node.context)


def test_first_user(module_node, tidy_module_node):
    assert module_node.get_name() == "module_node"


def test_last_user(module_node, tidy_module_node):
    assert tidy_module_node.get_name() == "tidy_module_node"
'''


def run_leaky_session(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    env = dict(os.environ, PYTHONPATH=str(HERE))  # the network rule is in os.environ already
    env.pop("PYTEST_ADDOPTS", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ros_leaks", "-p", "no:cacheprovider", "-rA",
         *args, "test_leaky.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    return result.returncode, result.stdout + result.stderr


def error_section(output: str, test: str) -> str:
    """The text of the ``ERROR at teardown of <test>`` section."""
    head = f"ERROR at teardown of {test} "
    assert head in output, output
    return output.split(head, 1)[1].split("\n____", 1)[0].split("\n====", 1)[0]


def line(text: str) -> str:
    """``test_leaky.py:N``, N the line of LEAKY_TESTS that holds ``text``."""
    number = next(n for n, source in enumerate(LEAKY_TESTS.splitlines(), 1) if text in source)
    return f"test_leaky.py:{number}"


def check_outcomes(output: str) -> None:
    # each leak fails its own test, naming every object and the line that created it
    made_here = f"{line('return rclpy.create_node')} in make_node"
    leaky, dropped_at, module_at = (line(f'make_node("{name}")')
                                    for name in ("leaky", "dropped", "module_node"))
    leaks = error_section(output, "test_leaves_everything")
    assert "test test_leaky.py::test_leaves_everything left 3 rclpy object(s) alive" in leaks
    assert f"Context, created at {line('rclpy.init(context')} in make_node" in leaks
    assert f"Node 'leaky', created at {made_here} <- " \
           f"{leaky} in test_leaves_everything" in leaks
    assert f"SingleThreadedExecutor, created at {line('    SingleThreadedExecutor(')} " \
           f"in test_leaves_everything" in leaks
    dropped = error_section(output, "test_drops_its_node")
    assert f"Node 'dropped', created at {made_here} <- " \
           f"{dropped_at} in test_drops_its_node" in dropped
    # a module fixture's objects are checked when its scope ends, in the last test using it
    module = error_section(output, "test_last_user")
    assert "fixture 'module_node' (module scope" in module
    assert f"Node 'module_node', created at {made_here} <- " \
           f"{module_at} in module_node" in module
    assert "tidy_module_node" not in module
    for passed in ("test_destroys_everything", "test_first_user", "test_last_user"):
        assert f"PASSED test_leaky.py::{passed}" in output, output
    assert "ERROR at teardown of test_destroys_everything" not in output
    assert "ERROR at teardown of test_first_user" not in output
    assert "5 passed" in output and "3 errors" in output, output


def test_a_leak_fails_the_test_that_made_it(tmp_path):
    code, output = run_leaky_session(tmp_path)
    assert code == 1, output
    check_outcomes(output)


def test_a_leak_fails_the_test_that_made_it_under_xdist(tmp_path):
    code, output = run_leaky_session(tmp_path, "-n", "2", "--dist", "loadfile")
    assert code == 1, output
    check_outcomes(output)


def test_check_names_the_leak_and_destroys_it(request, ros_context):
    import rclpy

    node = rclpy.create_node("leak_probe", context=ros_context)
    line = sys._getframe().f_lineno - 1
    report = ros_leaks.check(request.node.nodeid, "this test")
    assert report is not None
    assert report.startswith("this test left 2 rclpy object(s) alive")  # node and context
    assert f"Node 'leak_probe', created at test/test_ros_leaks.py:{line} " \
           f"in test_check_names_the_leak_and_destroys_it" in report
    with pytest.raises(Exception, match="destruction was requested|InvalidHandle|destroyed"):
        with node.handle:
            pass
    assert not ros_context.ok()
    # and nothing of this test is left to report at its end
    assert ros_leaks.check(request.node.nodeid) is None
