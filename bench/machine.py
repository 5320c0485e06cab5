"""The machine a benchmark ran on, for the README's tables (shared by every bench script)."""

from __future__ import annotations

import datetime
import os
import platform


def machine_header() -> str:
    """One line: date, CPU model (``/proc/cpuinfo``), core counts and the 1-minute load."""
    model = None
    # A virtual machine's model name can hide the generation ("AMD EPYC"): family and model
    # numbers tell it (AMD family 25 model 17: Zen 4), and a ratio to a peer can differ
    # between generations.
    numbers = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("cpu family", "model") and key not in numbers:
                    numbers[key] = value.strip()
                if model is None and key in ("model name", "Model", "Hardware", "Processor",
                                             "cpu model"):
                    model = value.strip()
                if not line.strip():
                    break  # the first processor is enough
    except OSError:
        pass
    model = model or platform.processor() or platform.machine() or "unknown CPU"
    if numbers:
        model += " (" + ", ".join(f"{key} {value}" for key, value in numbers.items()) + ")"
    cores = os.cpu_count()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = cores
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return (f"date: {now}; CPU: {model}; cores: {cores} ({usable} usable by this process); "
            f"1-min load average: {os.getloadavg()[0]:.2f}")
