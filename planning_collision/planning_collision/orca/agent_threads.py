"""Work sharing over agents: ORCA's use of :mod:`planning_collision.common.work_sharing`.

Agents are rows: each step's agents are cut into chunks that the calling thread and the
shared helper threads claim one at a time (see that module for the guarantees: identical
answers for any thread count, never much slower than one thread).

ORCA's choice of threads differs from the batch kernels' in one way: an explicit ``threads``
is used as given, whatever the crowd size (orca_node and the benchmarks set it), and the
automatic choice (``None``) shares only crowds of :data:`PARALLEL_MIN_AGENTS` or more.
"""

from planning_collision.common.work_sharing import (
    CHUNKS_PER_THREAD,
    available_threads,
    check_threads,
    share_rows,
)

__all__ = [
    "CHUNKS_PER_THREAD",
    "PARALLEL_MIN_AGENTS",
    "available_threads",
    "resolve_threads",
    "run_in_chunks",
]

#: Below this many agents a step runs on the calling thread only (``threads=None``).
PARALLEL_MIN_AGENTS = 2048


def resolve_threads(threads, n_agents: int) -> int:
    """``threads`` as given (>= 1), or the automatic choice for ``threads=None``."""
    value = check_threads(threads)
    if value is None:
        return available_threads() if n_agents >= PARALLEL_MIN_AGENTS else 1
    return value


def run_in_chunks(process, n: int, threads: int) -> None:
    """Call ``process(lo, hi)`` over chunks covering ``range(n)``, on up to ``threads`` threads.

    ``process`` must release the GIL (a ``nogil`` numba kernel) and write disjoint outputs.
    """
    share_rows(process, n, threads)
