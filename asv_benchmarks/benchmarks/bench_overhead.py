"""Per-call overhead on tiny operands (float64), where planning and dispatch
cost more than the arithmetic (compare.py "overhead").

Planner path: a plan-cache hit (make_plan is lru-cached on the spec, shapes,
strides and dtypes), then
  'ij,jk->ik' 3x3          kind gemm, m=(i:3) n=(k:3) k=(j:3): one fringe tile
  'i,i->' n=8              kind dot, k=(i:8), scalar result
  'bij,bjk->bik' (8,4,4)   kind gemm, batch=(b:8), 4x4 tiles
einplan.plan: a plan object built once, called with the operands (no cache
lookup) -- n/a while einplan has no plan().
"""
import numpy as np

from .common import IMPLS, ThreadsMixin, THREADS, make_call, need, need_attr, oe, rnd

CASES = {
    "ij,jk->ik 3x3": ("ij,jk->ik", [(3, 3)] * 2, np.matmul),
    "i,i-> 8": ("i,i->", [(8,)] * 2, np.dot),
    "bij,bjk->bik (8,4,4)": ("bij,bjk->bik", [(8, 4, 4)] * 2, np.matmul),
}
PLAN = "einplan.plan"
OE_EXPR = "opt_einsum.contract_expression"


class Overhead(ThreadsMixin):
    params = [list(CASES), IMPLS + [PLAN, OE_EXPR], THREADS]
    param_names = ["case", "impl", "threads"]

    def setup(self, case, impl, threads):
        spec, shapes, hand = CASES[case]
        ops = [rnd(s, np.float64, seed=40 + i) for i, s in enumerate(shapes)]
        if impl == PLAN:
            p = need_attr("plan")(spec, *shapes, dtype=np.float64)
            self.fn = lambda: p(*ops)
        elif impl == OE_EXPR:
            expr = need(oe, "opt_einsum").contract_expression(spec, *shapes)
            self.fn = lambda: expr(*ops)
        else:
            self.fn = make_call(impl, spec, ops, hand=lambda: hand(*ops))
        self.pin(threads)
        self.fn()  # fill the plan cache: the benchmark times the cached call

    def time_call(self, case, impl, threads):
        self.fn()
