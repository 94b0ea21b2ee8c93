# _test_only.pxi -- entry points only the tests call: they reach C
# functions einsum never runs on their own (part of einplan._kernels, see
# _kernels.pyx).

def ukr(str isa, cnp.ndarray a not None, cnp.ndarray b not None, cnp.ndarray c not None, int64_t k,
        int64_t rs_c, int64_t cs_c, double alpha=1.0, double beta=0.0, int m=-1, int n=-1):
    """Run one micro-kernel of `isa` on packed panels (test twin of the C
    call).  a: k*MR values, b: k*NR values, both C-contiguous and 64-byte
    aligned; c: MR x NR tile reached through (rs_c, cs_c) from c's data, of
    which the m x n corner is stored (default: all of it)."""
    cdef int code = _isa_code(isa)
    cdef ep_dtype_t dt = _dtype_code(a)
    cdef int mr, nr
    if not ep_isa_supported(code):
        raise ValueError(f"ISA {isa!r} is not supported by this CPU")
    ep_isa_tile(code, dt, &mr, &nr)
    m = mr if m < 0 else m
    n = nr if n < 0 else n
    if not (0 <= m <= mr and 0 <= n <= nr):
        raise ValueError(f"m, n must lie in 0..{mr}, 0..{nr}, got {m}, {n}")
    if b.dtype != a.dtype or c.dtype != a.dtype:
        raise TypeError("a, b and c must share one dtype")
    for x, nm, need in ((a, "a", k * mr), (b, "b", k * nr)):
        if not x.flags.c_contiguous or x.size < need or (<size_t>cnp.PyArray_DATA(x)) % 64:
            raise ValueError(f"{nm} must be C-contiguous, 64-byte aligned, >= {need} elements")
    spans = ((mr - 1) * rs_c, (nr - 1) * cs_c)
    _check_bounds(c, "c", (sum(s for s in spans if s < 0), sum(s for s in spans if s > 0)))
    if not c.flags.writeable:
        raise ValueError("c is read-only")
    cdef const void *pa = cnp.PyArray_DATA(a)
    cdef const void *pb = cnp.PyArray_DATA(b)
    cdef void *pc = cnp.PyArray_DATA(c)
    with nogil:
        ep_run_ukr(code, dt, m, n, k, pa, pb, pc, rs_c, cs_c, alpha, beta)
    return c


def gemm_packed_path(cnp.ndarray A not None, cnp.ndarray B not None, cnp.ndarray C not None,
                     m, n, k, batch, double alpha=1.0, double beta=0.0):
    """``gemm`` with its descriptor's schedule forced to the packed path
    (ep_gemm_schedule_packed): the five loops on GEMV / smm shapes, B never
    read in place."""
    cdef GemmCall call = GemmCall(A.dtype, m, n, k, batch)
    cdef ep_schedule_t now
    ep_gemm_schedule_packed(&call.d, &call.sched)
    if ep_call_schedule(&call.d, &now) != &call.sched:
        raise RuntimeError("ep_gemm would not run the schedule it was handed")
    return call(A, B, C, alpha, beta, 0)


def team_cpus(int nthreads):
    """One parallel region of `nthreads` threads, placed as every kernel's
    region is: (placed, the CPU each thread ran on, -1 where unknown).
    placed is False where the team is left to the scheduler or to the
    user's own binding."""
    if not 1 <= nthreads <= ep_max_threads():
        raise ValueError(f"nthreads must lie in 1..{ep_max_threads()}")
    cdef int cpus[512]
    cdef int ran
    with nogil:
        ran = ep_probe_team_cpus(nthreads, cpus)
    return ran > 0, [cpus[t] for t in range(abs(ran))]


def smm_far_state():
    """The smm path's measured block of k for an A whose columns lie a page
    or more apart: (the way chosen, -1 while measuring; the calls that took
    a turn; the multiply-adds timed so far)."""
    cdef int pick
    cdef int64_t turns, work
    ep_smm_far_state(&pick, &turns, &work)
    return pick, turns, work
