"""Multi-operand chains: the pairwise path (step 2a, opt_einsum's path finders)
followed by one gemm step per pair into np.empty intermediates.

  'ab,bc,cd,de->ae' 256x256 f32 (compare.py "chain"): three 256^3 gemm steps,
        (AB)(CD) -- hand-written: A@B@C@D
  'ab,bc,cd->ad' A=(1024,16) B=(16,1024) C=(1024,1024) f32: the order matters;
        the path contracts B with C first (16M + 16M multiply-adds instead of
        16M + 1G left to right) -- hand-written: np.linalg.multi_dot
"""
import numpy as np

from .common import EINPLAN, IMPLS, OE, OPT, ThreadsMixin, THREADS, make_call, rnd, temp_bytes, warm

CASES = {
    "ab,bc,cd,de->ae 256": ("ab,bc,cd,de->ae", [(256, 256)] * 4, lambda A, B, C, D: A @ B @ C @ D),
    "ab,bc,cd->ad 1024/16": ("ab,bc,cd->ad", [(1024, 16), (16, 1024), (1024, 1024)],
                             lambda *ops: np.linalg.multi_dot(ops)),
}


def case_call(case, impl):
    spec, shapes, hand = CASES[case]
    ops = [rnd(s, np.float32, seed=30 + i) for i, s in enumerate(shapes)]
    return make_call(impl, spec, ops, hand=lambda: hand(*ops))


class Chain(ThreadsMixin):
    params = [list(CASES), IMPLS, THREADS]
    param_names = ["case", "impl", "threads"]

    def setup(self, case, impl, threads):
        self.fn = case_call(case, impl)
        self.pin(threads)
        warm(self.fn)

    def time_chain(self, case, impl, threads):
        self.fn()


class ChainTemporaries:
    """Bytes numpy allocates beyond the result: a chain needs its pairwise
    intermediates (2 x 256 KiB for the first case, 64 KiB for the second),
    einplan should need no more than those."""
    params = [list(CASES), [EINPLAN, OPT, OE]]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        self.fn = case_call(case, impl)
        self.result_nbytes = np.asarray(self.fn()).nbytes

    def track_temp_bytes(self, case, impl):
        return temp_bytes(self.fn, self.result_nbytes)

    track_temp_bytes.unit = "bytes"
