"""No numba kernel of the cores takes more than 15 parameters (issue #16: a kernel with
dozens of positional parameters is unreadable; group them in named tuples)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from numba.core.registry import CPUDispatcher

MAX_PARAMETERS = 15


def kernels(package_name: str):
    package = importlib.import_module(package_name)
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package_name}.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                yield f"{info.name}.{name}", obj.py_func


@pytest.mark.parametrize("core", ["common", "geometry", "grid", "orca"])
def test_no_kernel_takes_more_than_15_parameters(core):
    found = dict(kernels(f"planning_collision.{core}"))
    assert found, f"no kernels found in {core}"
    wide = {name: len(inspect.signature(f).parameters) for name, f in found.items()
            if len(inspect.signature(f).parameters) > MAX_PARAMETERS}
    assert not wide, wide
