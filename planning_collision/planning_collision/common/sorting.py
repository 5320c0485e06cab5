"""A small stable argsort kernel (bottom-up merge sort) for the other numba modules.

numba's built-in ``np.argsort(kind="mergesort")`` is correct but takes many seconds to
compile; this plain loop compiles in a fraction of that, which keeps the first
:func:`.warmup` (and a cold test run) short. O(n log n), stable. Callers pass contiguous
float64 keys and int64 indices, so it has a single compiled specialisation.
"""

from numba import njit


@njit(cache=True)
def argsort_into(keys, idx, n, tmp):
    """Stably sort ``idx[:n]`` (int64 indices into float64 ``keys``) by ``keys[idx]``.

    Bottom-up merge sort; ``tmp`` is int64 scratch with at least ``n`` slots.
    """
    width = 1
    in_tmp = False
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while k < hi:
                if in_tmp:
                    take_j = j < hi and (i >= mid or keys[tmp[j]] < keys[tmp[i]])
                    if take_j:
                        idx[k] = tmp[j]
                        j += 1
                    else:
                        idx[k] = tmp[i]
                        i += 1
                else:
                    take_j = j < hi and (i >= mid or keys[idx[j]] < keys[idx[i]])
                    if take_j:
                        tmp[k] = idx[j]
                        j += 1
                    else:
                        tmp[k] = idx[i]
                        i += 1
                k += 1
            lo = hi
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for s in range(n):
            idx[s] = tmp[s]
