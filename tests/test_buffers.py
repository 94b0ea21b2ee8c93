"""buffers.py: large outputs and intermediates reuse blocks freed by earlier calls."""
import gc
import threading

import numpy as np
import pytest

import einplan
from einplan import buffers, execute
from einplan.plan import NestStep

RNG = np.random.default_rng(5)
BIG = buffers.POOL_MIN // 8 * 2          # float64 elements of a pooled array


def _ptr(x):
    return x.__array_interface__["data"][0]


@pytest.fixture
def pool():
    buffers.release_buffers()
    old = buffers.set_buffer_pool(64 * buffers.POOL_MIN)
    yield
    buffers.set_buffer_pool(old)
    buffers.release_buffers()


def _operands(k=64):
    # 'ka,kb->ab' and 'ka,kb->ba' with a big output: one packed GEMM into a fresh array
    n = int(np.sqrt(BIG)) + 1
    return RNG.random((k, n)), RNG.random((k, n))


def test_a_freed_output_serves_the_next_call(pool):
    a, b = _operands()
    c = einplan.einsum("ka,kb->ab", a, b)
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-12)
    first = _ptr(c)
    assert buffers.pooled_bytes() == 0
    del c
    assert buffers.pooled_bytes() >= BIG * 8
    d = einplan.einsum("ka,kb->ba", a, b)          # same size, another layout
    assert _ptr(d) == first
    assert buffers.pooled_bytes() == 0
    np.testing.assert_allclose(d, b.T @ a, rtol=1e-12)


def test_a_view_keeps_its_block(pool):
    a, b = _operands()
    c = einplan.einsum("ka,kb->ab", a, b)
    view = c[1:, ::2].T
    keep = view.copy()
    first = _ptr(c)
    del c
    gc.collect()
    d = einplan.einsum("ka,kb->ab", 2 * a, b)
    assert _ptr(d) != first                         # the block is still in use
    np.testing.assert_array_equal(view, keep)
    del view
    e = einplan.einsum("ka,kb->ab", a, b)
    assert _ptr(e) == first
    np.testing.assert_allclose(d, 2 * (a.T @ b), rtol=1e-12)


def test_small_arrays_and_an_off_pool_are_plain_np_empty(pool):
    x = einplan.einsum("ij,jk->ik", RNG.random((30, 40)), RNG.random((40, 50)))
    assert x.flags.owndata
    buffers.set_buffer_pool(0)
    a, b = _operands()
    c = einplan.einsum("ka,kb->ab", a, b)
    assert c.flags.owndata
    del c
    assert buffers.pooled_bytes() == 0


def test_the_limit_drops_the_oldest_blocks(pool):
    buffers.set_buffer_pool(int(BIG * 8 * 1.5))     # room for one block
    a, b = _operands()
    c1 = einplan.einsum("ka,kb->ab", a, b)
    c2 = einplan.einsum("ka,kb->ab", b, a)
    p2 = _ptr(c2)
    del c1
    del c2
    assert BIG * 8 <= buffers.pooled_bytes() <= BIG * 8 * 1.5
    c3 = einplan.einsum("ka,kb->ab", a, b)
    assert _ptr(c3) == p2                           # the newest one stayed
    assert buffers.release_buffers() == 0


def test_release_gives_blocks_back(pool):
    a, b = _operands()
    del_me = einplan.einsum("ka,kb->ab", a, b)
    del del_me
    assert buffers.release_buffers() >= BIG * 8
    assert buffers.pooled_bytes() == 0


def test_a_block_serves_no_request_much_smaller_or_larger(pool):
    a, b = _operands()
    first = einplan.einsum("ka,kb->ab", a, b)
    p = _ptr(first)
    del first
    n = a.shape[1]
    small = einplan.einsum("ka,kb->ab", a[:, : n // 2], b)      # half the bytes
    assert _ptr(small) != p
    big = einplan.einsum("ka,kb->ab", np.hstack([a, a]), b)
    assert _ptr(big) != p
    np.testing.assert_allclose(small, a[:, : n // 2].T @ b, rtol=1e-12)


def test_loop_nest_outputs_written_in_rows_are_pooled(pool):
    # a nest whose row runs along the output's unit stride writes whole
    # vectors one after another, as the packed GEMM does
    n = int(np.sqrt(BIG)) + 1
    x, y = RNG.random(n), RNG.random(n)
    for runs in range(2):                  # the compiled runner, then the cached plan's
        a, b = _operands()
        c = einplan.einsum("ka,kb->ab", a, b)
        block = _ptr(c)
        del c                                         # a block waits in the pool
        outer = einplan.einsum("i,j->ij", x, y)       # the loop-nest engine
        np.testing.assert_allclose(outer, np.outer(x, y), rtol=1e-12)
        assert _ptr(outer) == block, runs
        assert not outer.flags.owndata
        del outer


@pytest.mark.parametrize("case", ["outer", "small-edge"])
def test_short_rows_written_in_address_order_are_pooled(pool, case):
    # rows shorter than a kilobyte stored one after another, the output one
    # run: a single stream of stores, as a long row is ('i,j->ij' with rows
    # of 30 f64; the small-edge kernel's 'ij,jk->ik' with k = 24 c64, the
    # summed j held in registers)
    if case == "outer":
        ops = (RNG.random(BIG // 30 + 1), RNG.random(30))
        spec, want = "i,j->ij", lambda x, y: np.outer(x, y)
    else:
        x = RNG.random((BIG // 24 + 1, 3)) + 1j * RNG.random((BIG // 24 + 1, 3))
        y = RNG.random((3, 24)) - 1j * RNG.random((3, 24))
        ops = (x.astype(np.complex64), y.astype(np.complex64))
        spec, want = "ij,jk->ik", lambda x, y: x @ y
    (step,) = einplan.explain(spec, *ops).plan.steps
    row = step.loops[-1].extent * ops[0].dtype.itemsize
    assert isinstance(step, NestStep) and row < execute.POOL_ROW_BYTES, step
    assert bool(step.short) == (case == "small-edge"), step
    a, b = _operands()
    c = einplan.einsum("ka,kb->ab", a, b)
    block = _ptr(c)
    del c
    r = einplan.einsum(spec, *ops)
    np.testing.assert_allclose(r, want(*ops), rtol=1e-5)
    assert _ptr(r) == block and not r.flags.owndata


def test_loop_nest_outputs_scattered_across_lines_are_fresh_memory(pool):
    # a row striding across the output scatters its stores, which run
    # faster into freshly zeroed pages
    x, y = RNG.random((3, BIG // 3 + 1)), RNG.random((3, BIG // 3 + 1))
    (step,) = einplan.explain("ab,ab->ba", x, y, order="C").plan.steps
    assert abs(step.loops[-1].strides[-1]) > 1, step
    a, b = _operands()
    c = einplan.einsum("ka,kb->ab", a, b)
    del c
    t = einplan.einsum("ab,ab->ba", x, y, order="C")
    np.testing.assert_array_equal(t, (x * y).T)
    assert t.flags.owndata
    assert buffers.pooled_bytes() >= BIG * 8


def test_threads_get_distinct_blocks(pool):
    a, b = _operands()
    ref = a.T @ b
    errors, ptrs, lock = [], [], threading.Lock()

    def work(i):
        for _ in range(6):
            c = einplan.einsum("ka,kb->ab", a, b)
            with lock:
                ptrs.append(_ptr(c))
            c += i
            if not np.allclose(c - i, ref, rtol=1e-12):
                errors.append(i)
            del c

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(ptrs)) <= 6            # blocks were reused, not made afresh each time


def test_errors():
    with pytest.raises(ValueError):
        buffers.set_buffer_pool(-1)
