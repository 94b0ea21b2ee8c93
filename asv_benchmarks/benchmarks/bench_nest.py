"""The loop-nest engine's calls: memory-bound contractions that are not GEMMs.

  Reduce     'ijk->j' and 'ijk->ik' 256^3 f32 (a sum over outer and inner axes)
  ShortRowReduce  'ab->b' (1326872, 6) f32 (short rows summed over a tall block),
             'abcd->c' (2748, 19, 2, 16) f32 (the loop order counts kernel calls),
             'ab->a' (6897, 84) f32 (short contiguous rows, four at a time)
  ShortRowsApart  'ab->a' and 'ab,b->a' on a[:, :16] of (409600, 64) and
             a[:, 4:32] of (102400, 256) f32 (rows of two and three lines far
             apart in memory, prefetched)
  Trace      'ii->' 4096^2 f64 (numpy.trace's own case), 'ijj->ij' (2062,7,7) f64
  Dot        'a,a->' 3.3M complex128, 'ijab,iajb->' (10,10,72,72) f64 (permuted dot)
  Hadamard   'ab,ba->ab' F x C f32 (58,357), 'ij,ij,ij->i' 1000^2 f64 (one pass)
  PermutedGemv  'ij,j->i' 4096^2 f64 with the matrix C- or F-ordered (dot form
             vs axpy form), '...ij,j->...i' (3,5,5146,7) f64 (short rows),
             'ij,j->i' (65536,16) f32 (a vector of rows at a time),
             (219620,14) f32 (rows shorter than a vector, one load each),
             (200,10000) c128 (long complex rows two at a time) and F-ordered
             (8192,2048)[::2] f64 (the axpy form's rows at stride 2)
  ShortKGemm 'ij,jk->ik' with k <= 8: point sets times 3x3 / 4x4 matrices, a
             rank-5 update (the small-edge kernel against the packed engine)
  ShortEdgeGemm  a real GEMM with n <= 4, A unit-stride along m: the
             register-tile kernel reading A once in place (blocks of K
             across all of m when the output is small); edges of 5..8 (one
             AVX-512 strip), a long K shared by two threads; A unit-stride
             along k (the dot form, a block of rows per column of B)
"""
import numpy as np

from .common import IMPLS, ThreadsMixin, THREADS, make_call, rnd, warm


def _complex(shape, seed):
    return (rnd(shape, np.float64, seed=seed) + 1j * rnd(shape, np.float64, seed=seed + 1))


class Reduce(ThreadsMixin):
    """Planner path: one nest, the row along k (unit stride, a reduction),
    threads over j.  Hand-written: A.sum(axis)."""
    params = [["ijk->j", "ijk->ik"], IMPLS, THREADS]
    param_names = ["spec", "impl", "threads"]

    def setup(self, spec, impl, threads):
        A = rnd((256, 256, 256), np.float32, seed=30)
        axis = (0, 2) if spec == "ijk->j" else 1
        self.fn = make_call(impl, spec, [A], hand=lambda: A.sum(axis))
        self.pin(threads)
        warm(self.fn)

    def time_reduce(self, spec, impl, threads):
        self.fn()


class ShortRowReduce(ThreadsMixin):
    """Planner path: one nest whose rows are short: summed over a contiguous
    block in vectors of lcm(row, lanes) ('ab->b'), rows four at a time
    ('ab->a'), the summed loop outside the kept one ('abcd->c').
    Hand-written: A.sum(axis)."""
    params = [["ab->b", "abcd->c", "ab->a"], IMPLS, THREADS]
    param_names = ["spec", "impl", "threads"]

    def setup(self, spec, impl, threads):
        shape, axis = {"ab->b": ((1326872, 6), 0), "abcd->c": ((2748, 19, 2, 16), (0, 1, 3)),
                       "ab->a": ((6897, 84), 1)}[spec]
        A = rnd(shape, np.float32, seed=33)
        self.fn = make_call(impl, spec, [A], hand=lambda: A.sum(axis))
        self.pin(threads)
        warm(self.fn)

    def time_reduce(self, spec, impl, threads):
        self.fn()


class ShortRowsApart(ThreadsMixin):
    """Planner path: one nest of short contiguous rows two or more lines
    apart, beyond L3 (100 MB of lines), each spanning two or three lines,
    summed or dotted with one vector: prefetched rows ahead.  Hand-written:
    A.sum(1), A @ w."""
    params = [["ab->a", "ab,b->a"], ["16 of 64", "28 of 256"], IMPLS, THREADS]
    param_names = ["spec", "rows", "impl", "threads"]

    def setup(self, spec, rows, impl, threads):
        n, width = (int(x) for x in rows.split(" of "))
        start = 0 if width == 64 else 4
        A = rnd(((100 << 20) // (4 * width), width), np.float32, seed=34)[:, start:start + n]
        w = rnd((n,), np.float32, seed=35)
        ops, hand = ([A], lambda: A.sum(1)) if spec == "ab->a" else ([A, w], lambda: A @ w)
        self.fn = make_call(impl, spec, ops, hand=hand)
        self.pin(threads)
        warm(self.fn)

    def time_rows(self, spec, rows, impl, threads):
        self.fn()


class Trace(ThreadsMixin):
    """Planner path: a diagonal is a strided view, summed ('ii->') or
    returned ('ijj->ij', numpy's view).  Hand-written: np.trace / np.diagonal."""
    params = [["ii->", "ijj->ij"], IMPLS, THREADS]
    param_names = ["spec", "impl", "threads"]

    def setup(self, spec, impl, threads):
        if spec == "ii->":
            A = rnd((4096, 4096), np.float64, seed=31)
            hand = lambda: np.trace(A)  # noqa: E731
        else:
            A = rnd((2062, 7, 7), np.float64, seed=32)
            hand = lambda: np.diagonal(A, axis1=1, axis2=2)  # noqa: E731
        self.fn = make_call(impl, spec, [A], hand=hand)
        self.pin(threads)
        warm(self.fn)

    def time_trace(self, spec, impl, threads):
        self.fn()


class Dot(ThreadsMixin):
    """Planner path: one nest reducing to a scalar (per-thread partial sums
    combined in thread order); the permuted dot runs with tiles where the
    operands disagree on the unit-stride axis, 'ab,ab->' of a Fortran and a
    C array in the transposing kernel.  Hand-written: np.vdot-free
    np.dot / np.tensordot."""
    params = [["a,a->", "ijab,iajb->", "ab,ab->"], IMPLS, THREADS]
    param_names = ["spec", "impl", "threads"]

    def setup(self, spec, impl, threads):
        if spec == "a,a->":
            x, y = _complex(3300000, 33), _complex(3300000, 35)
            ops, hand = [x, y], (lambda: np.dot(x, y))
        elif spec == "ab,ab->":
            # a Fortran times a C array: crossed unit strides, 68 MB (past L3)
            A = np.asfortranarray(rnd((12503, 339), np.float64, seed=39))
            B = rnd((12503, 339), np.float64, seed=40)
            ops, hand = [A, B], (lambda: np.tensordot(A, B, 2))
        else:
            A = rnd((10, 10, 72, 72), np.float64, seed=37)
            B = rnd((10, 72, 10, 72), np.float64, seed=38)
            ops = [A, B]
            hand = lambda: np.tensordot(A, B.transpose(0, 2, 1, 3), 4)  # noqa: E731
        self.fn = make_call(impl, spec, ops, hand=hand)
        self.pin(threads)
        warm(self.fn)

    def time_dot(self, spec, impl, threads):
        self.fn()


class Hadamard(ThreadsMixin):
    """Planner path: one nest; the transposed product merges into one loop
    when both operands agree on the order, three operands in one pass.
    Hand-written: a * b.T, (a * b * c).sum(1)."""
    params = [["ab,ba->ab", "ij,ij,ij->i"], IMPLS, THREADS]
    param_names = ["spec", "impl", "threads"]

    def setup(self, spec, impl, threads):
        if spec == "ab,ba->ab":
            a = np.asfortranarray(rnd((58, 357), np.float32, seed=39))
            b = rnd((357, 58), np.float32, seed=40)
            ops, hand = [a, b], (lambda: a * b.T)
        else:
            a, b, c = (rnd((1000, 1000), np.float64, seed=41 + i) for i in range(3))
            ops, hand = [a, b, c], (lambda: (a * b * c).sum(1))
        self.fn = make_call(impl, spec, ops, hand=hand)
        self.pin(threads)
        warm(self.fn)

    def time_hadamard(self, spec, impl, threads):
        self.fn()


class PermutedGemv(ThreadsMixin):
    """Planner path: a GEMV reads the matrix once, the dot form (rows along
    the unit-stride k, reductions) for a C-ordered matrix, the axpy form
    (rows along the unit-stride m) for an F-ordered one; short rows run the
    loop around them in one call; short contiguous rows a vector of rows at
    a time, long complex rows two at a time.  Hand-written: A @ x."""
    params = [["C", "F", "batched-short", "rows16-f32", "rows14-f32", "long-c128"], IMPLS,
              THREADS]
    param_names = ["layout", "impl", "threads"]

    def setup(self, layout, impl, threads):
        spec = "ij,j->i"
        if layout == "batched-short":
            A, x = rnd((3, 5, 5146, 7), np.float64, seed=44), rnd((7,), np.float64, seed=45)
            spec = "...ij,j->...i"
        elif layout == "rows16-f32":
            A, x = rnd((65536, 16), np.float32, seed=50), rnd((16,), np.float32, seed=51)
        elif layout == "rows14-f32":
            A, x = rnd((219620, 14), np.float32, seed=55), rnd((14,), np.float32, seed=56)
        elif layout == "long-c128":
            A, x = _complex((200, 10000), 52), _complex((10000,), 54)
        elif layout == "F-sliced":
            A = np.asfortranarray(rnd((8192, 2048), np.float64, seed=57))[::2]
            x = rnd((2048,), np.float64, seed=58)
        else:
            A, x = rnd((4096, 4096), np.float64, seed=46), rnd((4096,), np.float64, seed=47)
            A = np.asfortranarray(A) if layout == "F" else A
        self.fn = make_call(impl, spec, [A, x], hand=lambda: A @ x)
        self.pin(threads)
        warm(self.fn)

    def time_gemv(self, layout, impl, threads):
        self.fn()


class ShortKGemm(ThreadsMixin):
    """Planner path: a GEMM whose k is at most a short loop, priced on both
    engines; the small-edge kernel holds k in registers, and runs rows
    shorter than a vector across in whole vectors.  'points3' (200000, 3) x
    (3, 3) f32 and 'points4' (200000, 4) x (4, 4) f64 (a point set times a
    small matrix), 'rank5' (2000, 5) x (5, 300) f64 (a rank-5 update).
    Hand-written: A @ B."""
    params = [["points3", "points4", "rank5"], IMPLS, THREADS]
    param_names = ["case", "impl", "threads"]
    SHAPES = {"points3": ((200000, 3), (3, 3), np.float32),
              "points4": ((200000, 4), (4, 4), np.float64),
              "rank5": ((2000, 5), (5, 300), np.float64)}

    def setup(self, case, impl, threads):
        sa, sb, dt = self.SHAPES[case]
        A, B = rnd(sa, dt, seed=48), rnd(sb, dt, seed=49)
        self.fn = make_call(impl, "ij,jk->ik", [A, B], hand=lambda: A @ B)
        self.pin(threads)
        warm(self.fn)

    def time_short_k(self, case, impl, threads):
        self.fn()


class ShortEdgeGemm(ThreadsMixin):
    """Planner path: a real GEMM with a short output edge (n <= 4, one strip
    of the register-tile kernel) and, but for 'dots3', A unit-stride along m: the nest's
    register-tile kernel reads A once in place, the output tile in
    registers, priced against the packed engine.  'proj2' F (30000, 30) x
    (30, 2) f32 (a projection onto two vectors), 'proj3' F (30000, 30) x
    (30, 3) f64, 'iab' 'iab,bc->aic' (2, 5713, 28) with b outermost x
    (28, 2) f64 (the sweep's case), 'tall' F (557, 14213) x (14213, 3) f32
    (a long k, the small output re-visited per block of k); 'edge7' F
    (20000, 200) x (200, 7) f64 and 'row5' (5, 5000) x (5000, 3000) f64
    (edges of one AVX-512 strip), 'longk' F (110, 48807) x (48807, 5) f64
    (W and V short: threads share K); 'dots3' C (40000, 15) x (15, 3) f64
    (the dot form: B's three columns each against a block of A's rows, a
    vector of rows at a time).  Hand-written: A @ B (tensordot for 'iab')."""
    params = [["proj2", "proj3", "iab", "tall", "edge7", "row5", "longk", "dots3"], IMPLS,
              THREADS]
    param_names = ["case", "impl", "threads"]

    def setup(self, case, impl, threads):
        if case == "iab":
            A = np.ascontiguousarray(rnd((28, 2, 5713), np.float64, seed=50)).transpose(1, 2, 0)
            B = np.asfortranarray(rnd((28, 2), np.float64, seed=51))
            self.fn = make_call(impl, "iab,bc->aic", [A, B],
                                hand=lambda: np.tensordot(A, B, 1).transpose(1, 0, 2))
        elif case == "row5":
            A = rnd((5, 5000), np.float64, seed=54)
            B = rnd((5000, 3000), np.float64, seed=55)
            self.fn = make_call(impl, "ij,jk->ik", [A, B], hand=lambda: A @ B)
        elif case == "dots3":
            A = rnd((40000, 15), np.float64, seed=56)
            B = np.asfortranarray(rnd((15, 3), np.float64, seed=57))
            self.fn = make_call(impl, "ij,jk->ik", [A, B], hand=lambda: A @ B)
        else:
            m, k, n, dt = {"proj2": (30000, 30, 2, np.float32), "proj3": (30000, 30, 3, np.float64),
                           "tall": (557, 14213, 3, np.float32),
                           "edge7": (20000, 200, 7, np.float64),
                           "longk": (110, 48807, 5, np.float64)}[case]
            A = np.asfortranarray(rnd((m, k), dt, seed=52))
            B = rnd((k, n), dt, seed=53)
            self.fn = make_call(impl, "ij,jk->ik", [A, B], hand=lambda: A @ B)
        self.pin(threads)
        warm(self.fn)

    def time_short_edge(self, case, impl, threads):
        self.fn()
