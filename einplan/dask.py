"""einplan for dask arrays: every block of a dask einsum runs through einplan.

Two ways in:

``einplan.dask.einsum(subscripts, *dask_arrays, ...)``
    dask.array.einsum's algorithm (dask/array/einsumfuncs.py) with einplan as
    the per-block kernel.  The block function is a module-level function of
    this module, so it pickles by reference and runs on any scheduler,
    including ``dask.distributed`` workers in other processes (they only need
    einplan installed).  Each block shape (and layout) is planned once per
    worker process: plans are cached by ``einplan.einsum``.

``with einplan.dask.use_einplan(): dask.array.einsum(...)``
    registers einplan in dask.array's per-block einsum dispatch
    (``dask.array.core.einsum_lookup``) for numpy blocks *in this process*,
    so existing ``da.einsum`` calls use einplan with the local schedulers
    (threaded, synchronous).  ``register()`` / ``unregister()`` do the same
    without a context; for a distributed cluster call
    ``client.run(einplan.dask.register)`` (or ``register_on_workers(client)``,
    which also covers workers that join later).

How dask contracts across chunks: each output block is the sum, over the
chunks of the contracted indices, of one block-level einsum per combination
of chunks; the partial products are summed by a tree reduction
(``split_every``).  One chunk along the contracted index (``k`` in
``ik,kj->ij``) means no reduction pass: one einplan call per output block,
each a large GEMM.  Many chunks along ``k`` cost an extra reduction pass and
hold ``nchunks(k)`` partial output blocks in memory; rechunk ``k`` to a
single chunk (``a.rechunk({1: -1})``) when a full-``k`` block fits in memory.

This module is ``einplan.dask``; the real dask is imported absolutely.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

try:    # the real dask (absolute imports); dask.array registers numpy's einsum
    import dask.array  # noqa: F401
    from dask import config as _dask_config
    from dask.array.core import blockwise, einsum_lookup
    from dask.array.einsumfuncs import parse_einsum_input
except ImportError as exc:  # pragma: no cover - exercised only without dask
    raise ImportError("einplan.dask needs dask.array: pip install 'dask[array]' "
                      "(and 'distributed' for a cluster)") from exc

from .api import einsum as _einplan_einsum

__all__ = ["einsum", "use_einplan", "register", "unregister", "register_on_workers",
           "chunk_einsum"]


def _aligned(block):
    """``block``, or an aligned copy (same layout) when it is not aligned.

    dask.distributed deserializes arrays received from another worker into the
    message buffer in place, at any byte offset, so a float64 block can arrive
    unaligned; einplan runs unaligned operands through its numpy fallback, not
    its kernels.  Copying the block costs O(block), the product O(m n k).
    """
    return block if block.flags.aligned else block.copy(order="K")


def chunk_einsum(*blocks, subscripts, ncontract_inds, kernel_dtype, optimize, **kwargs):
    """One block of the product: einplan on numpy blocks, dask's dispatch otherwise.

    The ``ncontract_inds`` trailing axes of size 1 stand for the contracted
    indices (dask.array.einsum's trick to keep blockwise from concatenating).
    """
    if all(type(b) is np.ndarray for b in blocks):
        # True is einplan's own default: left out, so numpy's pairwise-path
        # semantics of an explicit optimize=True do not apply to the block
        if optimize is not True:
            kwargs["optimize"] = optimize
        chunk = _einplan_einsum(subscripts, *map(_aligned, blocks), dtype=kernel_dtype,
                                **kwargs)
    else:   # cupy, sparse, ... blocks: whatever dask would have used
        fn = einsum_lookup.dispatch(type(blocks[0]))
        chunk = fn(subscripts, *blocks, dtype=kernel_dtype, optimize=optimize, **kwargs)
    chunk = np.asarray(chunk) if np.isscalar(chunk) else chunk
    return chunk.reshape(chunk.shape + (1,) * ncontract_inds)


def _rechunk_for_output(ops, inputs, outputs, contract_inds):
    """dask.array.einsum's input rechunk: keep output blocks from growing past
    the largest input block (times ``array.chunk-size-tolerance``)."""
    try:
        from dask.array._shuffle import _calculate_new_chunksizes
        from dask.utils import cached_max
    except ImportError:     # pragma: no cover - another dask layout: skip it
        return ops
    max_chunk_sizes, max_chunk_size_input = {}, 1
    for op, term in zip(ops, inputs):
        max_chunk_size_input = max(math.prod(map(cached_max, op.chunks)),
                                   max_chunk_size_input)
        max_chunk_sizes.update({
            ix: max(cached_max(op.chunks[i]), max_chunk_sizes.get(ix, 1))
            for i, ix in enumerate(term) if ix not in contract_inds})
    max_chunk_size_output = math.prod(max_chunk_sizes.values())
    factor = max_chunk_size_output / (
        max_chunk_size_input * _dask_config.get("array.chunk-size-tolerance"))
    new_ops = []
    for op, term in zip(ops, inputs):
        changeable = {i for i, ix in enumerate(term) if ix in outputs}
        f = max(factor ** (len(changeable) / len(outputs)), 1)
        new = _calculate_new_chunksizes(op.chunks, list(op.chunks), changeable,
                                        math.prod(map(cached_max, op.chunks)) / f)
        new_ops.append(op.rechunk(new))
    return new_ops


def einsum(*operands, dtype=None, optimize=True, split_every=None, **kwargs):
    """dask.array.einsum, each block computed by ``einplan.einsum``.

    Same arguments and result as ``dask.array.einsum``; ``optimize`` is
    handed to einplan per block (True: einplan picks the pairwise order for
    the block's shapes), ``split_every`` controls the tree reduction over the
    chunks of contracted indices.  ``kwargs`` (``casting``, ``order``) go to
    every block's einsum.
    """
    inputs, outputs, ops = parse_einsum_input(operands)
    subscripts = "->".join((inputs, outputs))
    result_dtype = np.result_type(*[o.dtype for o in ops]) if dtype is None else dtype

    terms = [tuple(t) for t in inputs.split(",")]
    all_inds = {ix for t in terms for ix in t}
    contract_inds = tuple(sorted(all_inds - set(outputs)))
    ncontract = len(contract_inds)

    if len(terms) > 1 and len(outputs) > 0:
        ops = _rechunk_for_output(ops, terms, outputs, set(contract_inds))

    result = blockwise(
        chunk_einsum,
        tuple(outputs) + contract_inds,
        *(a for pair in zip(ops, terms) for a in pair),
        adjust_chunks=dict.fromkeys(contract_inds, 1),
        dtype=result_dtype,
        subscripts=subscripts,
        kernel_dtype=dtype,
        ncontract_inds=ncontract,
        optimize=optimize,
        **kwargs,
    )
    if ncontract:
        size = len(outputs)
        return result.sum(axis=list(range(size, size + ncontract)),
                          split_every=split_every)
    return result


# -- registering einplan in dask.array's per-block einsum dispatch ---------------

_previous = []          # the functions einplan replaced, innermost last


def _dispatch_einsum(subscripts, *operands, optimize=False, **kwargs):
    """What dask.array.einsum's block function calls for numpy blocks.

    dask's default ``optimize=False`` means "no path search" there; einplan
    always plans a pairwise order (same result up to rounding) and keeps
    numpy's optimize=False semantics when optimize is left out, so False is
    left out.  A path computed by dask (``['einsum_path', ...]``) is used.
    """
    if optimize is not False:
        kwargs["optimize"] = optimize
    operands = [_aligned(op) if type(op) is np.ndarray else op for op in operands]
    return _einplan_einsum(subscripts, *operands, **kwargs)


def register():
    """Make dask.array.einsum use einplan for numpy blocks in this process.

    Idempotent. On a distributed cluster: ``client.run(einplan.dask.register)``
    (current workers) or :func:`register_on_workers` (also later workers).
    """
    current = einsum_lookup.dispatch(np.ndarray)
    if current is not _dispatch_einsum:
        _previous.append(current)
        einsum_lookup.register(np.ndarray, _dispatch_einsum)


def unregister():
    """Undo :func:`register`: dask.array.einsum goes back to what it used before."""
    if einsum_lookup.dispatch(np.ndarray) is _dispatch_einsum:
        einsum_lookup.register(np.ndarray, _previous.pop() if _previous else np.einsum)


@contextlib.contextmanager
def use_einplan():
    """``with use_einplan(): dask.array.einsum(...)`` runs numpy blocks on einplan
    (this process only: the local threaded / synchronous schedulers)."""
    was = einsum_lookup.dispatch(np.ndarray) is _dispatch_einsum
    register()
    try:
        yield
    finally:
        if not was:
            unregister()


def register_on_workers(client, name="einplan-einsum"):
    """Register einplan in dask.array's einsum dispatch on every worker of a
    ``distributed.Client``, including workers that join later (a WorkerPlugin)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class _EinplanPlugin(WorkerPlugin):
        def setup(self, worker):
            import einplan.dask
            einplan.dask.register()

        def teardown(self, worker):
            import einplan.dask
            einplan.dask.unregister()

    plugin = _EinplanPlugin()
    plugin.name = name
    return client.register_plugin(plugin, name=name)

