"""roles.py (steps 2b-2c): diagonal views, pre-sums, batch/m/n/k per step."""
import numpy as np
import pytest

from einplan.roles import assign_roles, diagonal_view, presum_labels


@pytest.mark.parametrize("a, b, c, batch, m, n, k", [
    ("ij", "jk", "ik", "", "i", "k", "j"),            # plain matmul
    ("bij", "bjk", "bik", "b", "i", "k", "j"),        # batched matmul
    ("ij", "j", "i", "", "i", "", "j"),               # matvec: n empty
    ("i", "i", "", "", "", "", "i"),                  # dot: m, n empty
    ("i", "j", "ij", "", "i", "j", ""),               # outer: k empty
    ("ij", "ij", "ij", "ij", "", "", ""),             # elementwise: batch only
    ("abcd", "dbef", "aecf", "", "ac", "ef", "bd"),   # permuted GEMM
    ("bij", "jk", "bik", "", "bi", "k", "j"),         # tract: b is an m label
])
def test_assign_roles(a, b, c, batch, m, n, k):
    r = assign_roles(a, b, c)
    assert (r.batch, r.m, r.n, r.k) == (batch, m, n, k)
    assert r.presum_a == r.presum_b == ""


def test_assign_roles_presum_and_swap():
    # "abc,cd->d": 'a', 'b' only in A and not in C -> summed out of A first
    r = assign_roles("abc", "cd", "d")
    assert r.presum_a == "ab" and r.k == "c" and r.n == "d"
    s = r.swapped()
    assert (s.m, s.n, s.presum_a, s.presum_b) == (r.n, r.m, r.presum_b, r.presum_a)


def test_assign_roles_unknown_output_label():
    with pytest.raises(ValueError):
        assign_roles("ij", "jk", "iz")


def test_diagonal_view_sums_strides():
    # "ii" on a C-contiguous (3, 3): one axis of stride 3 + 1
    v = diagonal_view("ii", (3, 3), (3, 1))
    assert (v.labels, v.shape, v.strides, v.diagonal) == ("i", (3,), (4,), "i")
    a = np.arange(9.0).reshape(3, 3)
    view = np.lib.stride_tricks.as_strided(a, v.shape, [s * 8 for s in v.strides])
    np.testing.assert_array_equal(view, np.diag(a))


def test_diagonal_view_three_way_and_mixed():
    v = diagonal_view("ijii", (2, 5, 2, 2), (20, 4, 2, 1))
    assert (v.labels, v.shape, v.strides) == ("ij", (2, 5), (23, 4))


def test_diagonal_view_drops_extent_one():
    # size-1 or broadcast axes carry no data: dropped, they never block merges
    v = diagonal_view("bij", (1, 4, 5), (20, 5, 1))
    assert (v.labels, v.shape, v.strides, v.dropped) == ("ij", (4, 5), (5, 1), "b")


def test_presum_labels():
    # "ab,bc->c": 'a' only in the first operand
    assert presum_labels("ab", ["bc"], "c") == "a"
    assert presum_labels("ab", ["bc"], "ac") == ""
    assert presum_labels("abc", [], "") == "abc"
