"""Checking, in a fresh interpreter, that a package's warmup() compiles every numba kernel its
public API reaches.

Never in the pytest process: there, other test modules have already compiled every kernel,
so a kernel (or an input type) that warmup() missed would go unnoticed. The child process
imports the package, records the compiled signatures of every numba dispatcher defined in
it (none yet), calls warmup(), records them again, runs the caller's ``use_the_api()``
(the inputs users actually pass) and records them a third time. numba's on-disk cache is
enabled, so the child loads the kernels instead of compiling them and takes a few seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys

_HEAD = r'''
import importlib
import json
import pkgutil

import numpy as np
from numba.core.registry import CPUDispatcher

import {package} as package
import planning_collision.common as common


def signatures():
    """Kernels of the package ("module.name") and of the shared floor ("common.module.name"),
    which the package's kernels and API use."""
    found = {{}}
    for pkg, prefix in ((package, ""), (common, "common.")):
        for info in pkgutil.iter_modules(pkg.__path__):
            module = importlib.import_module(f"{{pkg.__name__}}.{{info.name}}")
            for name, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                    found[f"{{prefix}}{{info.name}}.{{name}}"] = sorted(str(s)
                                                                  for s in obj.signatures)
    return found

'''

_FOOT = r'''

before = signatures()
seconds = package.warmup()
warm = signatures()
use_the_api()
after = signatures()
print(json.dumps({"before": before, "warm": warm, "after": after, "seconds": seconds}))
'''


def check_warmup(package: str, use_the_api: str, entry_points: set[str]) -> dict:
    """Run the probe for ``package`` (``use_the_api``: the source of a function of that name,
    which may use ``np``) and assert: importing compiles nothing, warmup() compiles (or
    loads) every kernel in ``entry_points`` (module.name of the kernels Python code calls),
    and the API calls add no specialisation anywhere. Returns the probe's record."""
    script = _HEAD.format(package=package) + use_the_api + _FOOT
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    before, warm, after = probe["before"], probe["warm"], probe["after"]
    assert isinstance(probe["seconds"], float) and probe["seconds"] >= 0.0
    assert before.keys() == warm.keys()
    assert all(sigs == [] for sigs in before.values()), before
    # Kernels only called from other kernels show signatures too when this process compiled
    # them (empty cache), and none when it loaded them from the cache: only the entry points
    # are checked.
    compiled = {name for name, sigs in warm.items() if sigs}
    assert entry_points <= compiled, entry_points - compiled
    new = {name: sorted(set(after[name]) - set(warm[name])) for name in after}
    assert not any(new.values()), {k: v for k, v in new.items() if v}
    return probe
