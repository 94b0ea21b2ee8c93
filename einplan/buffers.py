"""Memory for outputs and intermediates: ``np.empty``, or for a large array a
block freed by an earlier call.

Fresh memory is paid for when it is first written: a page fault per page,
and the kernel zeroing it.  On bare metal that is about 30 ms for 600 MB; in a
virtual machine that hands memory freed for a second or two back to its host
(free page reporting, ballooning) every page is faulted in from the host
again: 0.5-2 s for 600 MB.  Iterative programs make the same large results on
every iteration (PySCF's coupled-cluster Wvvvv, 600 MB, twice per iteration)
and pay it each time.

So an array of at least ``POOL_MIN`` bytes written in rows of whole vectors
(execute.writes_out_in_rows: the packed GEMM, or a loop nest whose row runs
along the output's unit stride; a nest's stores scattered across lines are
faster into freshly zeroed pages) is a block that waits, once the last
array viewing it is gone, in a pool of at most ``pool_limit()`` bytes (least recently freed
dropped first) for the next request it fits: no smaller than asked and at
most a quarter larger.  ``set_buffer_pool(0)`` turns the pool off;
``release_buffers()`` gives the blocks back to the system.  The arrays
handed out are ordinary ndarrays; their ``base`` is the block.
"""
from __future__ import annotations

import collections
import math
import os
import threading

import numpy as np

__all__ = ["empty", "nbytes", "pool_limit", "set_buffer_pool", "release_buffers", "pooled_bytes"]

# below this, malloc keeps freed memory itself and a fault costs less than
# the pool's bookkeeping (numpy asks for huge pages from 4 MiB up, too)
POOL_MIN = 4 << 20
# a block serves a request up to this much smaller than itself
_SLACK = 1.25


def _default_limit() -> int:
    env = os.environ.get("EINPLAN_BUFFER_POOL")
    if env is not None:
        return max(int(env), 0)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return min(total // 16, 2 << 30)


_lock = threading.Lock()
_returned: collections.deque = collections.deque()
_free: "collections.OrderedDict[int, np.ndarray]" = collections.OrderedDict()  # id -> raw, oldest first
_state = {"limit": _default_limit(), "bytes": 0}


class _Block:
    """The owner of one pooled allocation: numpy arrays made from it keep it
    alive (it is their ``base``), and when the last one goes it returns its
    memory to the pool."""

    __slots__ = ("raw", "__array_interface__")

    def __init__(self, raw: np.ndarray, nbytes: int):
        self.raw = raw
        self.__array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "version": 3,
            "data": (raw.__array_interface__["data"][0], False),
        }

    def __del__(self, _append=_returned.append, _lock=_lock):
        # runs in whichever thread drops the last view, possibly inside a pool
        # operation of its own (garbage collection): the append is atomic, and
        # the free list is tidied only when the lock is free
        _append(self.raw)
        if _lock.acquire(blocking=False):
            try:
                _drain_locked()
            except Exception:     # interpreter shutdown: the module may be torn down
                pass
            finally:
                _lock.release()


def _drain_locked() -> None:
    """Blocks whose arrays are gone join the free list; the oldest leave past the limit."""
    while _returned:
        raw = _returned.popleft()
        _free[id(raw)] = raw
        _state["bytes"] += raw.nbytes
    limit = _state["limit"]
    while _state["bytes"] > limit and _free:
        _, raw = _free.popitem(last=False)
        _state["bytes"] -= raw.nbytes


def nbytes(shape, dtype: np.dtype) -> int:
    """The bytes of an array of this shape and dtype."""
    return math.prod(shape) * dtype.itemsize


def empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` (C order); a large one may be a reused block."""
    dtype = np.dtype(dtype)
    n = nbytes(shape, dtype)
    if n < POOL_MIN or _state["limit"] < n:
        return np.empty(shape, dtype)
    raw = None
    with _lock:
        _drain_locked()
        fits = [(blk.nbytes, key) for key, blk in _free.items()
                 if n <= blk.nbytes <= n * _SLACK]
        if fits:
            best = min(fits)[1]
            raw = _free.pop(best)
            _state["bytes"] -= raw.nbytes
    if raw is None:
        raw = np.empty(n, np.uint8)
    block = _Block(raw, n)
    return np.asarray(block).view(dtype).reshape(shape)


def pool_limit() -> int:
    """The most bytes of freed blocks the pool keeps."""
    return _state["limit"]


def pooled_bytes() -> int:
    """Bytes of freed blocks waiting in the pool now."""
    with _lock:
        _drain_locked()
        return _state["bytes"]


def set_buffer_pool(max_bytes: int) -> int:
    """Keep at most ``max_bytes`` of freed large blocks (0: none); returns the old limit."""
    max_bytes = int(max_bytes)
    if max_bytes < 0:
        raise ValueError("set_buffer_pool: max_bytes must be >= 0")
    with _lock:
        old, _state["limit"] = _state["limit"], max_bytes
        _drain_locked()
    return old


def release_buffers() -> int:
    """Give every pooled block back to the system; returns the bytes released."""
    with _lock:
        _drain_locked()
        freed = _state["bytes"]
        _free.clear()
        _state["bytes"] = 0
    return freed
