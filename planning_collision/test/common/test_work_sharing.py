"""The work-sharing mechanism of the batch kernels: coverage, errors, concurrency, validation."""

import threading

import numpy as np
import pytest

from planning_collision.common import work_sharing
from planning_collision.common.work_sharing import (
    available_threads,
    check_threads,
    share_rows,
    threads_for,
)
from planning_collision.orca.agent_threads import PARALLEL_MIN_AGENTS, resolve_threads


@pytest.mark.parametrize("bad", [0, -1, 1.5, 2.0, True, False, np.bool_(True), "2", [2]])
def test_threads_must_be_a_positive_integer_or_none(bad):
    with pytest.raises(ValueError, match="threads must be a positive integer or None"):
        check_threads(bad)
    with pytest.raises(ValueError, match="threads must be a positive integer or None"):
        threads_for(bad, 10_000, 10)


def test_threads_for_caps_by_rows_and_by_the_argument():
    assert check_threads(None) is None and check_threads(np.int64(3)) == 3
    assert threads_for(1, 10**6, 10) == 1
    assert threads_for(5, 10**6, 10) == 5
    assert threads_for(5, 29, 10) == 2  # one thread per 10 rows at most
    assert threads_for(5, 19, 10) == 1  # under twice the minimum: the calling thread only
    assert threads_for(8, 0, 10) == 1
    assert threads_for(None, 10**6, 10) == available_threads() >= 1


def record(rows, threads):
    """share_rows over ``rows`` with a process that records its ranges and threads."""
    seen = []
    lock = threading.Lock()

    def process(begin, end):
        with lock:
            seen.append((begin, end, threading.get_ident()))

    share_rows(process, rows, threads)
    return seen


@pytest.mark.parametrize(("rows", "threads"), [(0, 1), (0, 4), (1, 4), (7, 4), (8, 4),
                                               (1000, 1), (1001, 3), (5, 16)])
def test_every_row_is_processed_exactly_once(rows, threads):
    seen = record(rows, threads)
    covered = np.zeros(rows, int)
    for begin, end, _ in seen:
        assert 0 <= begin < end <= rows or (rows == 0 and begin == end == 0)
        covered[begin:end] += 1
    assert (covered == 1).all()
    if threads <= 1 or rows < 2:
        assert len(seen) == 1  # one call on the calling thread
        assert seen[0][2] == threading.get_ident()
    else:
        assert len(seen) == min(rows, threads * work_sharing.CHUNKS_PER_THREAD)


def test_an_error_in_a_chunk_is_raised_in_the_caller():
    def process(begin, end):
        if begin <= 500 < end:
            raise ZeroDivisionError("chunk with row 500")

    with pytest.raises(ZeroDivisionError, match="row 500"):
        share_rows(process, 1000, 3)
    # and the pool still works afterwards
    assert sum(e - b for b, e, _ in record(1000, 3)) == 1000


def test_concurrent_callers_each_get_all_their_rows():
    """Several Python threads sharing their batches at once over the one pool (as concurrent
    service requests do): every call covers its own rows exactly once."""
    results = {}

    def caller(k):
        out = np.zeros(3000 + k, int)

        def process(begin, end):
            out[begin:end] += np.arange(begin, end) + 1

        share_rows(process, out.size, 2 + k % 3)
        results[k] = out

    callers = [threading.Thread(target=caller, args=(k,)) for k in range(6)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(timeout=60)
    assert sorted(results) == list(range(6))
    for k, out in results.items():
        np.testing.assert_array_equal(out, np.arange(3000 + k) + 1)


def test_orca_keeps_its_own_choice_of_threads():
    assert resolve_threads(3, 10) == 3  # explicit: as given, whatever the crowd
    assert resolve_threads(None, PARALLEL_MIN_AGENTS - 1) == 1
    assert resolve_threads(None, PARALLEL_MIN_AGENTS) == available_threads()
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        resolve_threads(0, 10)


@pytest.mark.parametrize("cores", [None, 2, 16])
@pytest.mark.parametrize("before", ["nothing", "a shared batch"])
def test_start_helpers_starts_every_helper_thread(monkeypatch, cores, before):
    """start_helpers starts ``available_threads() - 1`` helper threads, however many cores
    (this machine's, or 2 or 16 simulated) and whatever ran before: ThreadPoolExecutor starts
    a thread for a task only when none of its threads is idle, so tasks that return at once
    ran on one or a few threads (6 of 15 on a 16-core machine). The test uses a pool of its
    own, so the order of the tests does not matter."""
    if cores is not None:
        monkeypatch.setattr(work_sharing, "available_threads", lambda: cores)
    cores = work_sharing.available_threads()
    monkeypatch.setattr(work_sharing, "_pool", None)
    monkeypatch.setattr(work_sharing, "_pool_workers", 0)
    try:
        if before == "a shared batch":  # a pool of cores - 1 workers, with few threads started
            assert sum(e - b for b, e, _ in record(1000, cores)) == 1000
        work_sharing.start_helpers()
        pool = work_sharing._pool
        if cores == 1:
            assert pool is None
            return
        assert work_sharing._pool_workers == cores - 1
        assert len(pool._threads) == cores - 1
        assert all(thread.is_alive() for thread in pool._threads)
        work_sharing.start_helpers()
        assert work_sharing._pool is pool  # not started again
        assert len(pool._threads) == cores - 1
    finally:
        if work_sharing._pool is not None:  # this test's own pool
            work_sharing._pool.shutdown()
