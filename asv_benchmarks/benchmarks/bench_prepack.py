"""Prepacked constants: einplan.plan(spec, *shapes_or_arrays, constants=[...])
packs the constant operands once into the kernel's panel format; each call
packs only the variable ones (DESIGN.md "Prepacked constants").  Every einplan
plan() row is n/a while einplan has no plan().

Planner path: the plan's gemm step with its B (or A) operand replaced by a
PackedOperand; the jc/pc loops skip pack_b and read the stored panels.
  'ij,jk->ik' W=(512,1536) constant, m = 1, 16, 256 rows per call: the fewer
        the rows, the larger the share of B's packing that prepacking saves
  'ikj,jlk->il' B=(64,512,64) constant: a permuted constant, packed once from
        its strided layout (k group of two axes)
"""
import numpy as np

from .common import EINPLAN, HAND, ThreadsMixin, THREADS, make_call, need, need_attr, oe, rnd, warm

CASES = {
    # name: (spec, variable shape, constant shape, hand-written numpy)
    "ij,jk->ik m=1": ("ij,jk->ik", (1, 512), (512, 1536), lambda A, W: A @ W),
    "ij,jk->ik m=16": ("ij,jk->ik", (16, 512), (512, 1536), lambda A, W: A @ W),
    "ij,jk->ik m=256": ("ij,jk->ik", (256, 512), (512, 1536), lambda A, W: A @ W),
    "ikj,jlk->il i=64": ("ikj,jlk->il", (64, 64, 64), (64, 512, 64),
                         lambda A, B: np.tensordot(A, B, axes=((1, 2), (2, 0)))),
}
PLAN_CONST = "einplan.plan(constants=[1])"
PLAN_VAR = "einplan.plan (no constants)"
OE_CONST = "opt_einsum.contract_expression(constants=[1])"


def operands(case):
    spec, a_shape, w_shape, hand = CASES[case]
    return spec, rnd(a_shape, np.float32, seed=50), rnd(w_shape, np.float32, seed=51), hand


class Prepacked(ThreadsMixin):
    params = [list(CASES), [PLAN_CONST, PLAN_VAR, EINPLAN, HAND, OE_CONST], THREADS]
    param_names = ["case", "impl", "threads"]

    def setup(self, case, impl, threads):
        spec, A, W, hand = operands(case)
        if impl == PLAN_CONST:
            p = need_attr("plan")(spec, A.shape, W, constants=[1])
            self.fn = lambda: p(A)
        elif impl == PLAN_VAR:
            p = need_attr("plan")(spec, A.shape, W.shape, dtype=A.dtype)
            self.fn = lambda: p(A, W)
        elif impl == OE_CONST:
            expr = need(oe, "opt_einsum").contract_expression(spec, A.shape, W, constants=[1])
            self.fn = lambda: expr(A)
        else:
            self.fn = make_call(impl, spec, [A, W], hand=lambda: hand(A, W))
        self.pin(threads)
        warm(self.fn)

    def time_call(self, case, impl, threads):
        self.fn()


class PrepackBuild:
    """The one-off cost: building a plan that packs its constant (einplan) vs
    opt_einsum's contract_expression with the same constant."""
    params = [list(CASES), [PLAN_CONST, OE_CONST]]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        self.spec, self.A, self.W, _ = operands(case)
        self.build = need_attr("plan") if impl == PLAN_CONST else need(oe, "opt_einsum").contract_expression

    def time_build(self, case, impl):
        self.build(self.spec, self.A.shape, self.W, constants=[1])
