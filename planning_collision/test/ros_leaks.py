"""A pytest plugin that fails a test which leaves an rclpy Node, Context or Executor alive.

Why: a node nobody destroyed is finalised whenever Python's garbage collector gets to it, in
whatever test runs then. Issue #20: a lifecycle node left by one test was finalised during
another; its finaliser deadlocked inside Fast DDS's shared-memory transport holding the GIL,
and the run hung. Here every such object is destroyed by the test (or fixture) that made it,
or that test fails, naming the object and where it was created.

How: the first time rclpy's modules are imported, ``Node.__init__``, ``Executor.__init__``
and ``Context.init`` are wrapped so that each new object is recorded with a *strong*
reference (so none can reach the garbage collector before it is checked), its owner and the
lines that created it. The owner is the running test, or the fixture being set up when that
fixture's scope is wider than a function (module, package, session: such an object may
legitimately outlive the test). Checks:

* the autouse fixture ``no_ros_leftovers``, at the end of every test, checks what the test
  and its function-scoped fixtures made;
* when a wider fixture is finalised, what it made is checked right after, in the teardown of
  the test that ended its scope;
* at the end of the session, anything else (made outside any test).

"Destroyed" means: a Node's handle was destroyed (``destroy_node``), a Context was shut down
(``ok()`` false; its DDS participant goes with its last node), an Executor was shut down. A
leak fails the test with the list of leaked objects; the plugin then destroys them itself
(bounded: if that hangs too, they are kept referenced for good and the process ends with
``os._exit`` at the end of the session, as test/ros/conftest.py does for stuck clients).
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import os
import sys
import threading
import traceback
from pathlib import Path

import pytest

#: How long the plugin waits for its own clean-up of leaked objects.
CLEANUP_TIMEOUT = 10.0


@dataclasses.dataclass
class Record:
    obj: object
    kind: str  # "Node", "Context" or "Executor"
    what: str  # e.g. "LifecycleNode 'collision_server'"
    owner: object  # a test's node id (str) or a wider fixture's FixtureDef
    owner_label: str
    where: str  # the lines that created it, innermost first


_records: dict[int, Record] = {}
_lock = threading.Lock()
_owners: list[tuple[object, str]] = []  # wider fixtures being set up, innermost last
_test: list[str] = []  # the running test's node id, if any
_pending: list[str] = []  # leak reports of finalised wider fixtures, not yet raised
_stuck: list[Record] = []  # leaked objects whose clean-up hung: kept, never collected
_root = ""  # pytest's rootdir: creation sites are shown relative to it


# --- recording ----------------------------------------------------------------------------


def _creation_site() -> str:
    """The innermost frames outside rclpy, pytest, this file and the import machinery."""
    skip = [d for d in map(_module_dir, ("rclpy", "_pytest", "pytest", "pluggy")) if d]
    skip.append(str(Path(sys.executable).parent))  # the pytest script
    frames = []
    for frame in reversed(traceback.extract_stack()):
        name = frame.filename
        if name == __file__ or name.startswith("<frozen") \
                or any(name.startswith(d + os.sep) for d in skip):
            continue
        frames.append(f"{_short(name)}:{frame.lineno} in {frame.name}")
        if len(frames) == 4:
            break
    return " <- ".join(frames) or "?"


def _module_dir(name: str) -> str | None:
    module = sys.modules.get(name)
    if module is None or not getattr(module, "__file__", None):
        return None
    return str(Path(module.__file__).parent)


def _short(filename: str) -> str:
    if _root and filename.startswith(_root + os.sep):
        return filename[len(_root) + 1:]
    for marker in ("/planning_collision/test/", "/site-packages/", "/planning_collision/"):
        if marker in filename:
            return filename[filename.index(marker) + 1:]
    return filename


def _describe(obj: object, kind: str) -> str:
    name = type(obj).__name__
    if kind == "Node":
        try:
            return f"{name} {obj.get_name()!r}"
        except Exception:  # noqa: BLE001 - a description must never fail
            return name
    return name


def register(obj: object, kind: str) -> None:
    """Record a new rclpy object under the current owner (kept until checked)."""
    with _lock:
        if id(obj) in _records and _records[id(obj)].obj is obj:
            return
        if _owners:
            owner, label = _owners[-1]
        elif _test:
            owner = label = _test[-1]
        else:
            owner, label = None, "no test (collection or session start)"
        _records[id(obj)] = Record(obj, kind, _describe(obj, kind), owner, label,
                                   _creation_site())


def _wrap(cls, method: str, kind: str) -> None:
    original = getattr(cls, method)
    if getattr(original, "_ros_leaks_wrapped", False):
        return

    def wrapper(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        register(self, kind)
        return result

    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = original.__qualname__
    wrapper.__doc__ = original.__doc__
    wrapper._ros_leaks_wrapped = True
    setattr(cls, method, wrapper)


_PATCHES = {
    "rclpy.node": lambda module: _wrap(module.Node, "__init__", "Node"),
    "rclpy.executors": lambda module: _wrap(module.Executor, "__init__", "Executor"),
    "rclpy.context": lambda module: _wrap(module.Context, "init", "Context"),
}


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Wraps rclpy's classes right after their modules load (rclpy is not imported by the
    pure-core tests, so it is not imported here either)."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_patch(module):
            exec_module(module)
            _PATCHES[fullname](module)

        loader.exec_module = exec_then_patch
        return spec


def install() -> None:
    """Wrap rclpy's classes now if they are loaded, else as soon as they are."""
    if not any(isinstance(finder, _PatchAfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PatchAfterImport())
    for name, patch in _PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])


# --- checking -----------------------------------------------------------------------------


def ended(record: Record) -> bool:
    """Whether the object was destroyed (Node), shut down (Context, Executor)."""
    obj = record.obj
    try:
        if record.kind == "Node":
            with obj.handle:  # raises InvalidHandle once destroy_node() was called
                return False
        if record.kind == "Context":
            return not obj.ok()
        return bool(obj._is_shutdown)
    except Exception:  # noqa: BLE001 - InvalidHandle and the like: it is gone
        return True


def check(owner: object, label: str | None = None) -> str | None:
    """Forget ``owner``'s objects that ended; destroy those that did not and return a report
    naming them (None if there were none)."""
    with _lock:
        mine = [r for r in _records.values() if r.owner is owner or r.owner == owner]
        for r in mine:
            del _records[id(r.obj)]
    leaked = [r for r in mine if not ended(r)]
    if not leaked:
        return None
    label = label or leaked[0].owner_label
    lines = [f"{label} left {len(leaked)} rclpy object(s) alive (destroy every Node, "
             f"shut every Executor and Context down before the end; see test/ros_leaks.py):"]
    lines += [f"  {r.what}, created at {r.where}" for r in leaked]
    if not destroy(leaked):
        lines.append(f"  (destroying them here hung too; they are kept and the process will "
                     f"end with os._exit: see {__name__})")
    return "\n".join(lines)


def destroy(records: list[Record]) -> bool:
    """Destroy leaked objects (executors, then nodes, then contexts), within CLEANUP_TIMEOUT;
    False if it hung (the objects are then kept referenced, never collected)."""
    order = {"Executor": 0, "Node": 1, "Context": 2}

    def run() -> None:
        for r in sorted(records, key=lambda r: order[r.kind]):
            try:
                if r.kind == "Executor":
                    r.obj.shutdown(timeout_sec=2.0)
                elif r.kind == "Node":
                    r.obj.destroy_node()
                else:
                    r.obj.try_shutdown()
            except Exception as exc:  # noqa: BLE001 - clean up the others anyway
                print(f"ros_leaks: destroying {r.what} failed: {exc!r}", file=sys.stderr)
        done.set()

    done = threading.Event()
    threading.Thread(target=run, name="ros-leaks-cleanup", daemon=True).start()
    if done.wait(CLEANUP_TIMEOUT):
        return True
    _stuck.extend(records)
    return False


# --- pytest hooks -------------------------------------------------------------------------


def pytest_configure(config):
    global _root
    _root = str(config.rootpath)
    install()


def pytest_runtest_logstart(nodeid, location):
    _test[:] = [nodeid]


def pytest_runtest_logfinish(nodeid, location):
    _test.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    wide = fixturedef.scope != "function"
    if wide:
        _owners.append((fixturedef, f"fixture {fixturedef.argname!r} "
                                    f"({fixturedef.scope} scope, set up for "
                                    f"{request.node.nodeid})"))
    try:
        yield
    finally:
        if wide:
            _owners.pop()


def pytest_fixture_post_finalizer(fixturedef, request):
    if fixturedef.scope != "function":
        report = check(fixturedef)
        if report:
            _pending.append(report)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After every fixture ending with this test was finalised: report their leaks here."""
    if _pending:
        reports = "\n".join(_pending)
        _pending.clear()
        pytest.fail(reports, pytrace=False)


@pytest.fixture(autouse=True)
def no_ros_leftovers(request):
    """Fail the test if it (or a function-scoped fixture) left an rclpy Node, Context or
    Executor alive; see test/ros_leaks.py."""
    yield
    report = check(request.node.nodeid, f"test {request.node.nodeid}")
    if report:
        pytest.fail(report, pytrace=False)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    report = check(None, "code run outside any test")
    leftovers = [r for r in list(_records.values()) if not ended(r)]
    if leftovers:  # owners that never ended (should not happen): report them too
        report = (report or "") + "\n" + "\n".join(
            f"  {r.what} of {r.owner_label}, created at {r.where}" for r in leftovers)
    if report:
        print(f"\nros_leaks: {report}", file=sys.stderr, flush=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _stuck:
        print(f"ros_leaks: ending the test process at once: destroying "
              f"{', '.join(r.what for r in _stuck)} hung", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(int(session.exitstatus) or 1)
