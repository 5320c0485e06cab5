"""Work sharing for the batch kernels: the rows of one call split among threads.

Every batch kernel of the cores (line of sight, footprints, GJK, penetration, box overlap,
nearest obstacle, segment casts, ORCA's agents) is written as a ``nogil`` numba loop over a
range of rows ``[begin, end)`` that writes each row's answer into preallocated outputs. A
call cuts its rows into a few chunks; the calling thread and helper threads from one pool
shared by the whole process claim them one at a time.

Why threads over chunks and not numba's ``parallel=True``: numba's only threading layer
available from PyPI wheels without TBB (``workqueue``) aborts the process when two Python
threads enter parallel regions at once, and collision_server answers concurrent requests
on several threads. Here each call only shares its own chunks, any number of callers may
run at once, and a kernel that released the GIL runs truly in parallel with them.

Properties:

* **Same answers for any thread count.** Rows are independent and each row's arithmetic
  does not depend on which chunk or thread ran it, so ``threads=1`` and ``threads=N``
  give bit-identical outputs.
* **Never much slower than one thread.** The caller works on chunks itself and waits only
  for chunks a helper has actually claimed: when the machine is busy (or another request
  holds the helpers), the caller simply does the remaining chunks.
* **Small batches stay on the calling thread.** A kernel passes ``rows_per_thread``, the
  fewest rows worth waking a thread for (tens of microseconds of work); a batch of fewer
  than twice that many rows never touches the pool.

``threads`` arguments (every batch API takes one): ``None`` (the default) means every core
this process may run on (:func:`available_threads`); a positive integer is an upper bound;
anything else raises ``ValueError``.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Chunks per thread: more chunks balance uneven rows better, each costs one kernel call.
CHUNKS_PER_THREAD = 2
#: The longest :func:`start_helpers` waits for every helper thread to be running.
START_TIMEOUT = 10.0

_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()


@functools.cache
def available_threads() -> int:
    """Number of cores this process may run on (its CPU affinity, else ``os.cpu_count()``),
    read once: a system call per batch would cost more than a small batch's work."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_threads(threads) -> int | None:
    """``threads`` as an int (or None); ValueError unless it is None or a positive integer."""
    if threads is None:
        return None
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) \
            or threads < 1:
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    return int(threads)


def threads_for(threads, rows: int, rows_per_thread: int) -> int:
    """How many threads share ``rows`` rows: at most ``threads`` (None: every core), at most
    one per ``rows_per_thread`` rows, at least one. Validates ``threads``."""
    limit = check_threads(threads)
    if limit is None:
        limit = available_threads()
    return max(1, min(limit, rows // max(1, rows_per_thread)))


def _helpers(workers: int) -> ThreadPoolExecutor:
    """The process-wide helper pool, grown to at least ``workers`` threads.

    A smaller pool that is replaced is not shut down (another call may be submitting to it
    right now); its idle threads cost nothing and end with the interpreter.
    """
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < workers:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="work-sharing")
            _pool_workers = workers
        return _pool


def start_helpers() -> None:
    """Start the helper threads now (nodes call it at start, from the cores' ``warmup``), so
    that the first large request does not pay for starting them: ``available_threads() - 1``
    threads, all running when this returns.

    ThreadPoolExecutor starts a new thread for a task only when none of its threads is idle,
    so tasks that return at once would run on one or a few threads (6 of 15 on a 16-core
    machine). Here each task waits until every helper runs one, so each gets its own thread;
    the wait is bounded (START_TIMEOUT: helpers busy with another caller's long batch), after
    which the tasks give up and the pool starts the rest when the work needs them.
    """
    helpers = available_threads() - 1
    if helpers > 0:
        pool = _helpers(helpers)
        everyone = threading.Barrier(helpers)

        def meet() -> None:
            try:
                everyone.wait(START_TIMEOUT)
            except threading.BrokenBarrierError:
                pass

        for future in [pool.submit(meet) for _ in range(helpers)]:
            future.result()


def share_rows(process, rows: int, threads: int) -> None:
    """Call ``process(begin, end)`` over chunks covering ``range(rows)`` on up to ``threads``
    threads (the caller included); returns when every chunk is done.

    ``process`` must release the GIL (a ``nogil`` numba kernel) and write only its own rows'
    outputs. An exception raised by any chunk is re-raised here, after the chunks already
    claimed have finished; no further chunk is started once one failed.
    """
    if threads <= 1 or rows < 2:
        process(0, rows)
        return
    n_chunks = min(rows, threads * CHUNKS_PER_THREAD)
    bounds = [c * rows // n_chunks for c in range(n_chunks + 1)]
    lock = threading.Condition()
    state = {"next": 0, "busy": 0}
    errors: list[BaseException] = []

    def work(helper: bool) -> None:
        while True:
            with lock:
                c = state["next"]
                if c >= n_chunks or errors:
                    return
                state["next"] = c + 1
                if helper:
                    state["busy"] += 1
            try:
                process(bounds[c], bounds[c + 1])
            except BaseException as exc:  # re-raised on the calling thread
                with lock:
                    errors.append(exc)
            finally:
                if helper:
                    with lock:
                        state["busy"] -= 1
                        lock.notify_all()

    pool = _helpers(threads - 1)
    try:
        for _ in range(threads - 1):
            pool.submit(work, True)
    except RuntimeError:  # the interpreter is shutting down: no new threads, do it here
        pass
    work(False)
    with lock:
        while state["busy"]:
            lock.wait()
    if errors:
        raise errors[0]
