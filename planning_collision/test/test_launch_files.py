"""The launch files, twice.

Under the real ``ros2 launch`` (second half): launch, launch_ros and ros2cli built from their
public sources by ../shared/launch-underlay next to the checkout (CI has it; without it those
tests skip), planning_collision built on top by colcon (launch_underlay.py; both builds are
cached in build/). Each file runs with its defaults and with every argument it declares, as
a user runs it: its nodes come up (lifecycle states asked over DDS), the arguments take
effect, and Ctrl-C (SIGINT to ros2 launch) ends it leaving no process behind.

Without launch (first half, everywhere): each file's generate_launch_description() runs
against small stand-ins of launch's modules that record what the file builds. Checked: every
node is a console script of this package (or an optional package's node, started only when
that package is installed and asked for), every file and inline parameter it names exists,
every LaunchConfiguration it reads is declared before it is read, and no keyword argument is
one the real classes lack. nav2_fleet.launch.py builds its nodes at launch time (from its
robots argument), so only the real launch runs it."""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import types
from importlib.metadata import distribution
from pathlib import Path

import pytest
from ament_index_python import packages as ament_packages

PACKAGE = Path(__file__).resolve().parents[1]
# The first real-launch test also builds the launch tooling (about 1.5 min, more on a loaded
# machine; cached afterwards).
pytestmark = pytest.mark.timeout(900)
LAUNCH_FILES = sorted((PACKAGE / "launch").glob("*.launch.py"))
# Files whose nodes are built at launch time (OpaqueFunction): the real launch only.
AT_LAUNCH_TIME = {"nav2_fleet.launch.py"}
STAND_IN_FILES = [p for p in LAUNCH_FILES if p.name not in AT_LAUNCH_TIME]
NODE_MODULES = {
    "collision_server": "planning_collision.ros.collision_server",
    "fleet_sim": "planning_collision.ros.fleet_sim",
    "map_publisher": "planning_collision.ros.map_publisher",
    "orca_node": "planning_collision.ros.orca_node",
}
OPTIONAL = {"rviz2": "rviz2", "tf2_ros": "static_transform_publisher",
            "nav2_lifecycle_manager": "lifecycle_manager"}  # package: executable

# Keyword arguments of the real classes (launch 3.x, launch_ros 0.2x: Node, its ExecuteLocal
# base and the Action base; DeclareLaunchArgument; LogInfo; LaunchConfiguration).
_ACTION = {"condition"}
ALLOWED = {
    "Node": _ACTION | {
        "executable", "package", "name", "namespace", "exec_name", "parameters", "remappings",
        "ros_arguments", "arguments", "shell", "sigterm_timeout", "sigkill_timeout",
        "emulate_tty", "output", "output_format", "cached_output", "log_cmd", "on_exit",
        "respawn", "respawn_delay", "respawn_max_retries", "cwd", "env", "additional_env",
        "prefix"},
    "DeclareLaunchArgument": _ACTION | {"default_value", "description", "choices"},
    "AndSubstitution": set(),
    "LogInfo": _ACTION | {"msg"},
    "IfCondition": set(),
    "UnlessCondition": set(),
    "LaunchConfiguration": {"default"},
    "NotSubstitution": set(),
    "LaunchDescription": set(),
}


class Recorded:
    """A stand-in of a launch class: keeps its arguments; every instance is listed."""

    made: list[Recorded] = []

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        Recorded.made.append(self)

    @property
    def kind(self) -> str:
        return type(self).__name__


def stand_in_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    classes: dict[str, type] = {}

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr not in ALLOWED:
            raise ImportError(f"the test's stand-in of {name} has no {attr}: add it to "
                              f"ALLOWED with the real class's keyword arguments")
        return classes.setdefault(attr, type(attr, (Recorded,), {}))

    module.__getattr__ = __getattr__
    module.__path__ = []  # a package, so that "launch.actions" imports
    return module


@pytest.fixture
def load(monkeypatch):
    """load(path, missing=()) runs a launch file's generate_launch_description() with the
    stand-ins, as if the packages in ``missing`` were not installed; returns every object
    the file built and the LaunchDescription."""
    for name in ("launch", "launch.actions", "launch.conditions", "launch.substitutions",
                 "launch_ros", "launch_ros.actions"):
        monkeypatch.setitem(sys.modules, name, stand_in_module(name))

    def share(package):
        if package != "planning_collision":
            raise ament_packages.PackageNotFoundError(package)
        return str(PACKAGE)

    def load_file(path: Path, missing=()):
        def prefix(package):
            if package in missing:
                raise ament_packages.PackageNotFoundError(package)
            return "/opt/ros/test"

        monkeypatch.setattr(ament_packages, "get_package_share_directory", share)
        monkeypatch.setattr(ament_packages, "get_package_prefix", prefix)
        spec = importlib.util.spec_from_file_location(f"launch_file_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        Recorded.made = []
        description = module.generate_launch_description()
        assert description.kind == "LaunchDescription"
        return list(Recorded.made), description

    return load_file


def console_scripts() -> set[str]:
    return {ep.name for ep in distribution("planning_collision").entry_points
            if ep.group == "console_scripts"}


def entities(description) -> list[Recorded]:
    (items,) = description.args
    return list(items)


def read_configurations(value) -> set[str]:
    """Names of every LaunchConfiguration inside ``value`` (arguments, lists, dicts)."""
    if isinstance(value, Recorded):
        found = {value.args[0]} if value.kind == "LaunchConfiguration" else set()
        return found.union(*(read_configurations(v)
                             for v in (*value.args, *value.kwargs.values())))
    if isinstance(value, dict):
        return set().union(*(read_configurations(v) for v in (*value, *value.values())))
    if isinstance(value, list | tuple):
        return set().union(*(read_configurations(v) for v in value))
    return set()


def literal(value) -> str | None:
    return value if isinstance(value, str) else None


@pytest.mark.parametrize("path", STAND_IN_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("missing", [(), tuple(OPTIONAL)], ids=["all installed", "no rviz"])
def test_a_launch_file_builds_only_what_exists(load, path, missing):
    made, description = load(path, missing)
    scripts = console_scripts()
    declared = [a.args[0] for a in made if a.kind == "DeclareLaunchArgument"]
    assert len(declared) == len(set(declared)), declared
    for item in made:
        unknown = set(item.kwargs) - ALLOWED[item.kind]
        assert not unknown, f"{path.name}: {item.kind} has no argument {unknown}"
        if item.kind == "LaunchConfiguration":
            assert item.args[0] in declared, f"{path.name}: {item.args[0]!r} is not declared"
    # launch gives a configuration its default only when it reaches the declaration: an
    # action placed before it reads a configuration that does not exist yet.
    declared_so_far = set()
    for entity in entities(description):
        if entity.kind == "DeclareLaunchArgument":
            declared_so_far.add(entity.args[0])
            continue
        early = read_configurations(entity) - declared_so_far
        assert not early, f"{path.name}: {entity.kind} reads {early} before their declaration"
    nodes = [e for e in entities(description) if e.kind == "Node"]
    assert nodes
    for node in nodes:
        package, executable = node.kwargs.get("package"), node.kwargs["executable"]
        if package != "planning_collision":
            assert OPTIONAL.get(package) == executable, f"{path.name}: {package}/{executable}"
            assert package not in missing, f"{path.name} starts {package}, not installed"
            condition = node.kwargs.get("condition")
            assert condition is not None and condition.kind == "IfCondition", \
                f"{path.name}: {executable} is not optional"
            continue
        assert executable in scripts, f"{path.name}: no console script {executable}"
        names = {p.name for p in importlib.import_module(NODE_MODULES[executable]).PARAMETERS}
        for entry in node.kwargs.get("parameters", []):
            if isinstance(entry, dict):
                assert set(entry) <= names | {"use_sim_time"}, \
                    f"{path.name}: {executable} lacks {set(entry) - names}"
            elif literal(entry) is not None:
                assert os.path.isfile(entry), f"{path.name}: {entry} does not exist"
    for argument in (a for a in made if a.kind == "DeclareLaunchArgument"):
        default = literal(argument.kwargs.get("default_value"))
        if default is not None and default.startswith(str(PACKAGE)):
            assert os.path.isfile(default), f"{path.name}: {default} does not exist"


def demo_nodes(description) -> dict[str, Recorded]:
    return {n.kwargs["executable"]: n for n in entities(description) if n.kind == "Node"}


def test_the_demo_starts_rviz_and_its_transform_only_when_installed_and_asked_for(load):
    path = PACKAGE / "launch" / "demo.launch.py"
    _, description = load(path)
    nodes = demo_nodes(description)
    for package, executable in OPTIONAL.items():
        if package == "nav2_lifecycle_manager":
            continue  # started by use_lifecycle_manager (test below)
        condition = nodes[executable].kwargs["condition"]
        (predicate,) = condition.args
        assert predicate.kind == "LaunchConfiguration" and predicate.args == ("rviz",)
        assert nodes[executable].kwargs["package"] == package

    for missing in (("rviz2",), ("tf2_ros",), ("rviz2", "tf2_ros")):
        _, description = load(path, missing)
        nodes = demo_nodes(description)
        assert set(nodes) == {"map_publisher", "collision_server", "fleet_sim", "orca_node",
                              "lifecycle_manager"}
        notes = [e for e in entities(description) if e.kind == "LogInfo"
                 and e.kwargs["condition"].args[0].args == ("rviz",)]
        assert len(notes) == 1
        assert all(package in notes[0].kwargs["msg"] for package in missing)
        assert notes[0].kwargs["condition"].args[0].args == ("rviz",)


def test_the_demo_starts_the_simulated_clock_once_the_robots_are_commanded(load):
    _, description = load(PACKAGE / "launch" / "demo.launch.py")
    fleet_sim = demo_nodes(description)["fleet_sim"]
    inline = [p for p in fleet_sim.kwargs["parameters"] if isinstance(p, dict)]
    assert any(p.get("start") == "commands" for p in inline)


@pytest.mark.parametrize("path", STAND_IN_FILES, ids=lambda p: p.name)
def test_managed_nodes_wait_for_the_lifecycle_manager_when_one_is_asked_for(load, path):
    """use_lifecycle_manager: the managed nodes' autostart is its negation, and
    nav2_lifecycle_manager (only with the argument) drives them, with the bond off."""
    made, description = load(path)
    nodes = [e for e in entities(description) if e.kind == "Node"]
    managed = [n for n in nodes if n.kwargs["executable"] in ("collision_server", "orca_node")]
    assert managed
    for node in managed:
        (flag,) = [p["autostart"] for p in node.kwargs["parameters"] if isinstance(p, dict)]
        assert flag.kind == "AndSubstitution"  # autostart and not use_lifecycle_manager
        asked, not_managed = flag.args
        assert asked.args == ("autostart",)
        assert not_managed.kind == "NotSubstitution"
        assert not_managed.args[0].args == ("use_lifecycle_manager",)
    (manager,) = [n for n in nodes if n.kwargs["executable"] == "lifecycle_manager"]
    assert manager.kwargs["condition"].args[0].args == ("use_lifecycle_manager",)
    (settings,) = [p for p in manager.kwargs["parameters"] if isinstance(p, dict)]
    assert settings["bond_timeout"] == 0.0
    assert settings["autostart"].args == ("autostart",)
    # launch_ros's rule for a list parameter: a substitution directly in the list joins the
    # whole list into one string; a list of strings, or of lists, makes a string array.
    for item in settings["node_names"]:
        assert isinstance(item, str | list | tuple), \
            f"{path.name}: node_names holds a bare {item.kind}: launch_ros makes one string"
    names = [[n] if isinstance(n, str) else list(n) for n in settings["node_names"]]
    expected = [["collision_server"] if n.kwargs["executable"] == "collision_server"
                else [n.kwargs["name"]] for n in managed]
    key = [[x if isinstance(x, str) else x.args for x in n] for n in names]
    assert key == [[x if isinstance(x, str) else x.args for x in n] for n in expected]
    _, without = load(path, ("nav2_lifecycle_manager",))
    assert not [e for e in entities(without) if e.kind == "Node"
                and e.kwargs["executable"] == "lifecycle_manager"]



# ----------------------------------------------------------------- under the real ros2 launch
sys.path.insert(0, str(Path(__file__).parent / "ros"))
import launch_underlay  # noqa: E402

STOP_TIMEOUT = 30.0  # ros2 launch: SIGINT to every node, SIGTERM after 5 s, SIGKILL after 10
START_TIMEOUT = 90.0  # a loaded two-core machine: several Python interpreters start at once
# ros2 launch started as a terminal starts it, whatever this process inherited: SIGINT (Ctrl-C)
# and SIGQUIT at their default actions, then exec (same pid). An ignored signal stays ignored
# through fork and exec, and ros2 launch then ignores Ctrl-C. A shell without job control
# starts a background command (`make test &`, nohup, a script's `cmd &`) with both ignored:
# every launch test of such a run outlived its Ctrl-C and failed (seen while chasing #21).
FROM_A_TERMINAL = ("import os, signal, sys\n"
                   "for sig in (signal.SIGINT, signal.SIGQUIT):\n"
                   "    signal.signal(sig, signal.SIG_DFL)\n"
                   "os.execv(sys.argv[1], sys.argv[1:])\n")
NODE_INFO = re.compile(r"\[INFO\] \[\d+\.\d+\] \[")  # a node's own INFO line (launch's have no
# timestamp)


@pytest.fixture(scope="session")
def launch_env():
    """The environment of a ROS user with the real launch tooling and planning_collision
    built by colcon (built once, cached in build/)."""
    if not launch_underlay.available():
        pytest.skip(f"no {launch_underlay.SOURCE}: the real ros2 launch is built from it (CI "
                    f"has it next to the checkout); the stand-in tests above still ran")
    return launch_underlay.prepare()


class Launch:
    """One ``ros2 launch planning_collision <file> <args>``, in the run's own ROS domain on
    loopback, and a DDS client to look at what it started."""

    def __init__(self, start_process, env, domain_id, file, args):
        from ros_clients import Client

        from planning_collision.ros.processes import ros_environment

        self.env = ros_environment(domain_id, base=env)
        ros2 = shutil.which("ros2", path=self.env["PATH"])
        assert ros2, "ros2 is not on the underlay's PATH"
        self.proc = start_process(f"launch {file}", [
            sys.executable, "-c", FROM_A_TERMINAL, ros2, "launch", "planning_collision", file,
            *args], extra_env=self.env)
        self.client = Client("launch_test")
        self.pids: set[int] = set()

    def look(self) -> None:
        if not self.proc.running():
            raise AssertionError(f"ros2 launch exited with {self.proc.returncode}:\n"
                                 + "\n".join(self.proc.lines[-40:]))
        self.pids |= launch_underlay.descendants(self.proc.pid)

    def until(self, predicate, what: str, timeout: float = START_TIMEOUT) -> None:
        def check():
            self.look()
            return predicate()
        assert self.client.spin_until(check, timeout), \
            f"{what}; the graph's nodes: {sorted(self.nodes())}; ros2 launch said:\n" + \
            "\n".join(self.proc.lines[-40:])

    def nodes(self) -> set[str]:
        return {f"{ns.rstrip('/')}/{name}"
                for name, ns in self.client.node.get_node_names_and_namespaces()}

    def wait_for_nodes(self, names) -> None:
        self.until(lambda: set(names) <= self.nodes(), f"not every node of {names} came up")

    def state(self, node: str) -> str:
        from lifecycle_msgs.srv import GetState

        reply = self.client.call(GetState, f"{node}/get_state", GetState.Request(),
                                 timeout=START_TIMEOUT)
        return reply.current_state.label

    def wait_for_state(self, node: str, label: str) -> None:
        def reached() -> bool:
            # A lifecycle manager that gave up on a transition tries no other: waiting on
            # cannot help (and cost a full START_TIMEOUT of CI time per failure).
            assert not self.said("Failed to change state"), \
                f"{node} never became {label}: the lifecycle manager gave up; ros2 launch " \
                "said:\n" + "\n".join(self.proc.lines[-40:])
            return self.state(node) == label
        self.until(reached, f"{node} never became {label}")

    def parameter(self, node: str, name: str):
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python

        reply = self.client.call(GetParameters, f"{node}/get_parameters",
                                 GetParameters.Request(names=[name]), timeout=START_TIMEOUT)
        return parameter_value_to_python(reply.values[0])

    def topics(self, node: str, kind: str) -> set[str]:
        """The node's topics as this process's graph knows them so far (none while the graph
        does not know the node yet: its services can answer before that)."""
        from rclpy.node import NodeNameNonExistentError

        namespace, _, name = node.rpartition("/")
        get = (self.client.node.get_subscriber_names_and_types_by_node if kind == "sub"
               else self.client.node.get_publisher_names_and_types_by_node)
        try:
            return {topic for topic, _ in get(name, namespace or "/")}
        except NodeNameNonExistentError:
            return set()

    def has(self, node: str, kind: str, topics) -> bool:
        """Whether ``node`` subscribes to (``kind`` "sub") or publishes ("pub") every one of
        ``topics``, as this process's graph maps them to the node. The by-node query answers
        for the first node of that name the graph holds: with two of one name in the domain
        (issue #21: in-process nodes of earlier tests stayed on the graph after their
        destroy_node), it showed the other one's topics for good, so two are an error here."""
        namespace, _, name = node.rpartition("/")
        same = [n for n, ns in self.client.node.get_node_names_and_namespaces()
                if (n, ns) == (name, namespace or "/")]
        assert len(same) <= 1, f"{len(same)} nodes named {node} in the test's domain: one " \
            "launched here, the others left by earlier tests; the graph's answers by node " \
            "are ambiguous"
        return set(topics) <= self.topics(node, kind)

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.proc.lines))

    def stop(self) -> None:
        """Ctrl-C: SIGINT to ros2 launch alone; it ends, and so does everything it started."""
        self.look()
        self.client.close()  # before the nodes leave (Fast DDS teardown rule, ros_clients.py)
        group = self.proc.pid  # its own session and process group (RosProcess)
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(STOP_TIMEOUT)
        assert code == 0, f"ros2 launch exited with {code}:\n" + "\n".join(self.proc.lines[-40:])
        deadline = time.monotonic() + 5.0  # reparented guardians notice their pipe closed
        while time.monotonic() < deadline:
            left = {p for p in self.pids if launch_underlay.alive(p)}
            left |= launch_underlay.in_group(group)
            if not left:
                break
            time.sleep(0.1)
        assert not left, f"processes left after Ctrl-C: {describe(left)}"
        assert not any("Traceback" in line for line in self.proc.lines), \
            "\n".join(self.proc.lines[-60:])


def describe(pids) -> list[str]:
    out = []
    for pid in sorted(pids):
        try:
            out.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes()
                       .replace(b"\0", b" ").decode()[:200])
        except OSError:
            out.append(f"{pid}: (gone)")
    return out


@pytest.fixture
def launch(launch_env, start_process, domain_id):
    started: list[Launch] = []

    def start(file, *args):
        started.append(Launch(start_process, launch_env, domain_id, file, list(args)))
        return started[-1]

    yield start
    for run in started:
        run.client.close()
        run.proc.stop()
        # A launch that failed half-way leaves what it had started (the first bug of #21 left
        # map_publisher running): nothing outlives the test.
        for pid in {p for p in run.pids if launch_underlay.alive(p)} \
                | launch_underlay.in_group(run.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def ignoring_ctrl_c():
    """This process with SIGINT and SIGQUIT ignored, as a shell without job control starts a
    background command; what it starts meanwhile inherits that."""
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGQUIT)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def declared_arguments(env, domain_id) -> dict[str, list[str]]:
    """Each launch file's declared arguments, read by the real launch."""
    from planning_collision.ros.processes import ros_environment

    script = (
        "import json, sys\n"
        "from launch.launch_description_sources import "
        "get_launch_description_from_python_launch_file as load\n"
        "print(json.dumps({p: [a.name for a in load(p).get_launch_arguments()] "
        "for p in sys.argv[1:]}))\n")
    share = Path(env["AMENT_PREFIX_PATH"].split(":")[0])
    assert (share / "share" / "planning_collision").is_dir(), share
    files = [str(share / "share" / "planning_collision" / "launch" / p.name)
             for p in LAUNCH_FILES]
    out = subprocess.run([sys.executable, "-c", script, *files], env=ros_environment(
        domain_id, base=env), check=True, capture_output=True, text=True).stdout
    return {Path(k).name: v for k, v in json.loads(out.splitlines()[-1]).items()}


# Every argument each file declares, with the value the all-arguments run gives it (None:
# set in the test, from tmp_path).
EXERCISED = {
    "collision_server.launch.py": ["namespace", "params_file", "map_topic", "obstacles_topic",
                                   "use_sim_time", "autostart", "use_respawn", "log_level",
                                   "use_lifecycle_manager"],
    "orca.launch.py": ["namespace", "node_name", "params_file", "use_sim_time", "autostart",
                       "use_respawn", "log_level", "use_lifecycle_manager"],
    "demo.launch.py": ["scenario", "orca_params", "rviz", "rviz_config", "autostart",
                       "use_respawn", "log_level", "use_lifecycle_manager"],
    "nav2_fleet.launch.py": ["robots", "orca_params_file", "nav2_params_file", "map",
                             "use_sim_time", "autostart", "use_respawn", "log_level",
                             "use_lifecycle_manager"],
}


def test_every_declared_argument_is_documented_and_run(launch_env, domain_id):
    declared = declared_arguments(launch_env, domain_id)
    assert set(declared) == set(EXERCISED)
    for file, names in declared.items():
        assert sorted(names) == sorted(EXERCISED[file]), file
        docstring = ast.get_docstring(ast.parse((PACKAGE / "launch" / file).read_text()))
        undocumented = [n for n in names if n not in docstring]
        assert not undocumented, f"{file}'s docstring does not name {undocumented}"


def test_the_demo_with_defaults_starts_four_nodes_and_ctrl_c_leaves_no_process(launch):
    run = launch("demo.launch.py")  # rviz:=true by default: without rviz2, a message
    run.wait_for_nodes(["/map_publisher", "/collision_server", "/fleet_sim", "/orca_node"])
    run.wait_for_state("/collision_server", "active")
    run.wait_for_state("/orca_node", "active")
    if not installed_in(run.env, "rviz2"):
        assert run.said("not starting RViz: rviz2")
    run.until(lambda: run.has("/orca_node", "pub", ["/robot1/cmd_vel"]), "no cmd_vel")
    run.stop()


def test_the_demo_with_every_argument(launch, tmp_path):
    share = PACKAGE / "config"
    scenario = write(tmp_path, "room.yaml", (share / "scenarios" / "swap_room.yaml").read_text()
                     .replace("../maps/", f"{share / 'maps'}/"))
    orca = write(tmp_path, "orca.yaml", (share / "demo_orca.yaml").read_text())
    rviz = write(tmp_path, "my.rviz", (share / "orca.rviz").read_text())
    run = launch("demo.launch.py", f"scenario:={scenario}", f"orca_params:={orca}",
                 "rviz:=false", f"rviz_config:={rviz}", "autostart:=false", "use_respawn:=true",
                 "log_level:=warn", "use_lifecycle_manager:=true")
    run.wait_for_nodes(["/map_publisher", "/collision_server", "/fleet_sim", "/orca_node",
                        "/lifecycle_manager"])
    # autostart:=false: the manager starts, and leaves the managed nodes unconfigured.
    assert run.parameter("/lifecycle_manager", "autostart") is False
    assert run.parameter("/lifecycle_manager", "node_names") == ["collision_server",
                                                                 "orca_node"]
    assert run.state("/collision_server") == "unconfigured"
    assert run.state("/orca_node") == "unconfigured"
    assert run.parameter("/fleet_sim", "scenario") == scenario
    assert not run.said("not starting RViz")
    assert not [line for line in run.proc.lines if NODE_INFO.search(line)]  # log_level warn
    assert_respawned(run, "map_publisher", "/map_publisher")
    run.stop()


def test_orca_with_defaults(launch):
    with ignoring_ctrl_c():  # as a background job of a shell: Ctrl-C must still end it
        run = launch("orca.launch.py")
    run.wait_for_state("/orca_node", "active")
    assert not run.said("lifecycle_manager")
    run.stop()


def test_orca_with_every_argument_reaches_active_under_the_lifecycle_manager(launch, tmp_path):
    """use_lifecycle_manager:=true: the manager gets node_names as a string array (a string
    made it exit) and brings orca_node to active."""
    params = write(tmp_path, "fleet.yaml", "/**/orca_x:\n  ros__parameters:\n"
                   "    agents: [r1, r2]\n    pref_speed: 0.3\n")
    run = launch("orca.launch.py", "namespace:=fleet", "node_name:=orca_x",
                 f"params_file:={params}", "use_sim_time:=true", "autostart:=true",
                 "use_respawn:=true", "log_level:=warn", "use_lifecycle_manager:=true")
    run.wait_for_state("/fleet/orca_x", "active")
    assert run.parameter("/fleet/lifecycle_manager_orca", "node_names") == ["orca_x"]
    assert run.parameter("/fleet/orca_x", "autostart") is False  # the manager drove it
    assert run.parameter("/fleet/orca_x", "agents") == ["r1", "r2"]
    assert run.parameter("/fleet/orca_x", "pref_speed") == 0.3
    assert run.parameter("/fleet/orca_x", "use_sim_time") is True
    assert not [line for line in run.proc.lines if NODE_INFO.search(line)]
    assert_respawned(run, "orca_node", "/fleet/orca_x")
    run.stop()


def test_collision_server_with_defaults(launch):
    run = launch("collision_server.launch.py")
    run.wait_for_state("/collision_server", "active")
    # Its subscriptions reach this process's graph after its state service did.
    run.until(lambda: run.has("/collision_server", "sub", ["/map", "/obstacles"]),
              "map and obstacles subscriptions")
    run.stop()


def test_collision_server_with_every_argument(launch, tmp_path):
    params = write(tmp_path, "cs.yaml", "/**/collision_server:\n  ros__parameters:\n"
                   "    robot_radius: 0.31\n")
    run = launch("collision_server.launch.py", "namespace:=robot1", f"params_file:={params}",
                 "map_topic:=/shared_map", "obstacles_topic:=/shared_obstacles",
                 "use_sim_time:=true", "autostart:=true", "use_respawn:=true",
                 "log_level:=warn", "use_lifecycle_manager:=true")
    run.wait_for_state("/robot1/collision_server", "active")
    assert run.parameter("/robot1/collision_server", "robot_radius") == 0.31
    assert run.parameter("/robot1/collision_server", "use_sim_time") is True
    run.until(lambda: run.has("/robot1/collision_server", "sub",
                              ["/shared_map", "/shared_obstacles"]), "remapped subscriptions")
    assert not [line for line in run.proc.lines if NODE_INFO.search(line)]
    run.stop()


def test_nav2_fleet_with_defaults_wires_orca_between_smoother_and_collision_monitor(launch):
    run = launch("nav2_fleet.launch.py")
    run.wait_for_state("/orca_node", "active")
    if not installed_in(run.env, "nav2_bringup"):
        assert run.said("nav2_bringup is not installed")
    for robot in ("robot1", "robot2"):
        run.until(lambda r=robot: run.has("/orca_node", "sub", [
            f"/{r}/cmd_vel_smoothed", f"/{r}/odom", f"/{r}/tf"]), f"{robot}'s inputs")
        run.until(lambda r=robot: run.has("/orca_node", "pub", [f"/{r}/cmd_vel_orca"]),
                  f"{robot}'s output")
    assert "/robot1/cmd_vel" not in run.topics("/orca_node", "pub")
    assert run.client.node.count_publishers("/robot1/cmd_vel") == 0
    run.stop()


def test_nav2_fleet_with_every_argument(launch, tmp_path):
    orca = write(tmp_path, "orca.yaml", (PACKAGE / "config" / "nav2_fleet_orca.yaml")
                 .read_text().replace("max_speed: 0.5", "max_speed: 0.4"))
    nav2 = write(tmp_path, "nav2.yaml", "collision_monitor:\n  ros__parameters:\n"
                 "    cmd_vel_in_topic: cmd_vel_smoothed\n")
    run = launch("nav2_fleet.launch.py", "robots:=robot1,robot2,robot3",
                 f"orca_params_file:={orca}", f"nav2_params_file:={nav2}",
                 f"map:={tmp_path / 'map.yaml'}", "use_sim_time:=true", "autostart:=true",
                 "use_respawn:=true", "log_level:=warn", "use_lifecycle_manager:=true")
    run.wait_for_state("/orca_node", "active")
    assert run.parameter("/orca_node", "agents") == ["robot1", "robot2", "robot3"]
    assert run.parameter("/orca_node", "max_speed") == 0.4
    assert run.parameter("/orca_node", "use_sim_time") is True
    assert run.parameter("/lifecycle_manager_orca", "node_names") == ["orca_node"]
    run.until(lambda: run.has("/orca_node", "pub", ["/robot3/cmd_vel_orca"]), "robot3")
    run.stop()


def test_nav2_fleet_names_a_bad_robot_list(launch):
    run = launch("nav2_fleet.launch.py", "robots:=robot1,2robot")
    assert run.proc.wait(START_TIMEOUT) != 0
    assert run.said("'2robot' is not a valid namespace")


def installed_in(env, package: str) -> bool:
    return any((Path(prefix) / "share" / "ament_index" / "resource_index" / "packages"
                / package).exists() for prefix in env["AMENT_PREFIX_PATH"].split(":"))


def assert_respawned(run, executable: str, node: str) -> None:
    """use_respawn:=true: a node killed outright comes back (after 2 s)."""
    (pid,) = [p for p in launch_underlay.descendants(run.proc.pid)
              if f"/lib/planning_collision/{executable}" in cmdline(p)]
    os.kill(pid, signal.SIGKILL)
    run.until(lambda: any(f"/lib/planning_collision/{executable}" in cmdline(p)
                          for p in launch_underlay.descendants(run.proc.pid) if p != pid),
              f"{executable} was not respawned")
    # The killed process never told DDS it left, so the graph still lists it: only a reply
    # shows the new one is up (and SIGINT during its imports would be a KeyboardInterrupt).
    run.parameter(node, "use_sim_time")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
