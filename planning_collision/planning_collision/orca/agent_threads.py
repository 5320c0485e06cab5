"""Work sharing over agents: chunks of agents processed by a nogil kernel on threads.

Each step's agents are cut into a few chunks that the calling thread and helper threads
claim one at a time.  The caller only waits for chunks a helper has actually claimed, so
when the machine is busy and a helper does not get a core in time, the caller simply does
the remaining work itself: the step is never much slower than a single-threaded one.
"""

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

#: Below this many agents a step runs on the calling thread only.
PARALLEL_MIN_AGENTS = 2048
#: Chunks per thread (more chunks balance better, each costs one kernel dispatch).
CHUNKS_PER_THREAD = 2

_pool: ThreadPoolExecutor | None = None
_pool_workers = 0
_pool_lock = threading.Lock()


def available_threads() -> int:
    """Number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads, n_agents: int) -> int:
    """``threads`` as given (>= 1), or the automatic choice for ``threads=None``."""
    if threads is None:
        return available_threads() if n_agents >= PARALLEL_MIN_AGENTS else 1
    value = int(threads)
    if value < 1 or value != threads:
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    return value


def _helpers(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < workers:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="orca")
            _pool_workers = workers
        return _pool


def run_in_chunks(process, n: int, threads: int) -> None:
    """Call ``process(lo, hi)`` over chunks covering ``range(n)``, on up to ``threads`` threads.

    ``process`` must release the GIL (a ``nogil`` numba kernel) and write disjoint outputs.
    """
    if threads <= 1 or n < 2:
        process(0, n)
        return
    n_chunks = min(n, threads * CHUNKS_PER_THREAD)
    bounds = [c * n // n_chunks for c in range(n_chunks + 1)]
    counter = itertools.count()
    claimed = threading.Condition()
    busy = [0]
    errors: list[BaseException] = []

    def work(helper: bool) -> None:
        while True:
            with claimed:
                c = next(counter)
                if c >= n_chunks:
                    return
                if helper:
                    busy[0] += 1
            try:
                process(bounds[c], bounds[c + 1])
            except BaseException as exc:  # re-raised on the calling thread
                errors.append(exc)
            finally:
                if helper:
                    with claimed:
                        busy[0] -= 1
                        claimed.notify_all()

    pool = _helpers(threads - 1)
    for _ in range(threads - 1):
        pool.submit(work, True)
    work(False)
    with claimed:
        while busy[0]:
            claimed.wait()
    if errors:
        raise errors[0]
