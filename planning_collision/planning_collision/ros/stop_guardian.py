"""The stop guardian's program: ends a node's process that was told to stop but has not ended.

:class:`.stopping.StopGuardian` runs it as a bare interpreter (``python -I -S <this file>``, a
few megabytes), so it imports the standard library only, nothing of this package. Arguments:
the read end of a pipe, the node's process id, two deadlines in seconds and the node's name.

What arrives on the pipe:

* the number of a stop signal (SIGINT, SIGTERM), written by the interpreter's C-level signal
  handler in the node's process (``signal.set_wakeup_fd``) the moment the signal arrives, with
  no Python code of that process running: from then on the node has ``deadline`` seconds;
* :data:`ACKNOWLEDGED`, written by the node's own Python code once it has seen the signal and
  armed its own watchdog (:class:`.stopping.StopWatchdog`, which needs no interpreter lock):
  from then on the node has ``acknowledged_deadline`` seconds, its watchdog's deadline plus
  room for the operating system to end a loaded process. The guardian is then only the
  fallback for a watchdog that failed, and no longer races it: a node whose main thread saw
  the signal late (a loaded machine, a long C call that released the interpreter lock) ends
  by its own watchdog, cleanly, instead of being killed;
* end of file: every write end is closed, so the node's process has ended, however it ended.

A node that never acknowledges (its main thread stuck in a C call, holding the interpreter
lock or not) is killed with SIGKILL at the first deadline, and the guardian says so on stderr.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

#: The byte a node writes to the pipe once its own stop watchdog is armed (no signal has it).
ACKNOWLEDGED = 0xFF
STOP_SIGNALS = frozenset((int(signal.SIGINT), int(signal.SIGTERM)))


def watch(fd: int, deadline: float, acknowledged_deadline: float) -> str | None:
    """Read the pipe ``fd`` until the node's process ended (None) or its time is up: then
    why it should have ended by now."""
    end: float | None = None
    why = ""
    while True:
        left = None if end is None else end - time.monotonic()
        if left is not None and left <= 0:
            return why
        if not select.select([fd], [], [], left)[0]:
            continue
        data = os.read(fd, 64)
        if not data:
            return None
        now = time.monotonic()
        for byte in data:
            if byte == ACKNOWLEDGED:
                end = now + acknowledged_deadline
                why = (
                    f"{acknowledged_deadline:g} s after it saw the stop signal (its own "
                    f"watchdog did not end it)"
                )
            elif byte in STOP_SIGNALS and end is None:
                end = now + deadline
                why = (
                    f"{deadline:g} s after the stop signal (its main thread never got back "
                    f"to Python to stop it)"
                )


def main(argv: list[str]) -> int:
    for sig in STOP_SIGNALS:  # a Ctrl-C or a launch's SIGTERM is for the node, not for us
        signal.signal(sig, signal.SIG_IGN)
    fd, pid = int(argv[1]), int(argv[2])
    deadline, acknowledged_deadline, name = float(argv[3]), float(argv[4]), argv[5]
    why = watch(fd, deadline, acknowledged_deadline)
    if why is None:
        return 0
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return 0
    print(
        f"[{name}] stop guardian: the process had not ended {why}; killed it",
        file=sys.stderr,
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
