"""The machine a benchmark ran on, for the README's tables (shared by every bench script)."""

from __future__ import annotations

import datetime
import os
import platform


def machine_header() -> str:
    """One line: date, CPU model (``/proc/cpuinfo``), core counts and the 1-minute load."""
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "Processor", "cpu model"):
                    model = value.strip()
                    break
    except OSError:
        pass
    model = model or platform.processor() or platform.machine() or "unknown CPU"
    cores = os.cpu_count()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = cores
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return (f"date: {now}; CPU: {model}; cores: {cores} ({usable} usable by this process); "
            f"1-min load average: {os.getloadavg()[0]:.2f}")
