"""layout.py (step 2d): merge contiguous axes within each role."""
import pytest

from einplan.layout import merge_axes, merge_group
from einplan.plan import Role
from einplan.roles import assign_roles


def dense(order, sizes):
    st, acc = {}, 1
    for c in reversed(order):
        st[c] = acc
        acc *= sizes[c]
    return st


def test_tract_merges_b_and_i_into_one_m():
    # bij,jk->bik, A (77, 6, 512) and C (77, 6, 1536) C-contiguous
    sizes = {"b": 77, "i": 6, "j": 512, "k": 1536}
    r = assign_roles("bij", "jk", "bik")
    lay = merge_axes(r, sizes, dense("bij", sizes), dense("jk", sizes), dense("bik", sizes))
    assert len(lay.m.axes) == 1
    ax = lay.m.axes[0]
    assert (ax.labels, ax.extent, ax.strides) == ("bi", 77 * 6, (512, 1536))
    assert lay.breaks == ()


def test_merge_blocked_by_gap_records_break():
    # A = X[:, :6, :] of a (4, 7, 512) array: b, i no longer merge; A broke it
    sizes = {"b": 4, "i": 6, "j": 512, "k": 8}
    sa = {"b": 7 * 512, "i": 512, "j": 1}
    r = assign_roles("bij", "jk", "bik")
    lay = merge_axes(r, sizes, sa, dense("jk", sizes), dense("bik", sizes))
    assert [a.labels for a in lay.m.axes] == ["b", "i"]
    (br,) = lay.breaks
    assert (br.role, br.outer, br.inner, br.operands) == (Role.M, "b", "i", ("A",))


def test_order_within_group_follows_strides_not_subscripts():
    # "ij->" style k group given as 'ji' but memory order i, j: still merges
    sizes = {"i": 3, "j": 4}
    strides = {"A": {"i": 4, "j": 1}, "B": {"i": 4, "j": 1}}
    g, br = merge_group(Role.K, "ji", sizes, strides, "A")
    assert [(a.labels, a.extent, a.strides) for a in g.axes] == [("ij", 12, (1, 1))]


def test_negative_strides_merge():
    sizes = {"i": 3, "j": 4}
    strides = {"A": {"i": -4, "j": -1}, "C": {"i": 4, "j": 1}}
    g, _ = merge_group(Role.M, "ij", sizes, strides, "C")
    assert [(a.labels, a.extent, a.strides) for a in g.axes] == [("ij", 12, (-1, 1))]


def test_mixed_sign_does_not_merge():
    sizes = {"i": 3, "j": 4}
    strides = {"A": {"i": 4, "j": -1}, "C": {"i": 4, "j": 1}}
    g, br = merge_group(Role.M, "ij", sizes, strides, "C")
    assert len(g.axes) == 2 and br[0].operands == ("A",)


def test_fortran_operand_breaks_merge_c_order():
    sizes = {"i": 3, "j": 4, "k": 5}
    strides = {"A": {"i": 1, "j": 3}, "C": {"i": 4, "j": 1}}
    g, br = merge_group(Role.M, "ij", sizes, strides, "C")
    assert len(g.axes) == 2 and br[0].operands == ("A",)


@pytest.mark.parametrize("order_by", ["A", "B"])
def test_k_group_tries_both_operands(order_by):
    # "abcd,dbef->aecf" on 16^4: k = {b, d} not contiguous in either -> 2 axes
    sizes = dict.fromkeys("abcdef", 16)
    r = assign_roles("abcd", "dbef", "aecf")
    lay = merge_axes(r, sizes, dense("abcd", sizes), dense("dbef", sizes), dense("acef", sizes))
    assert len(lay.k.axes) == 2
    assert [a.labels for a in lay.m.axes] == ["a", "c"]  # b sits between a, c in A
    assert [a.labels for a in lay.n.axes] == ["ef"]


@pytest.mark.parametrize("n", [350, 20])
def test_k_group_left_apart_takes_the_order_of_the_larger_operand(n):
    # 'ijk,jkl->il': A unit along j (k then 506 apart), B unit along k (j 68
    # apart), neither merges.  With B the larger operand (n = 350 > m = 22)
    # k runs in B's order, so B's k axis is unit-stride as a whole and its
    # panels pack through the transposes; with B the smaller, A's order
    sizes = {"i": 22, "j": 23, "k": 68, "l": n}
    sa = {"i": 23, "j": 1, "k": 506}
    sb = {"j": 68, "k": 1, "l": 1564}
    r = assign_roles("ijk", "jkl", "il")
    lay = merge_axes(r, sizes, sa, sb, {"i": n, "l": 1})
    assert len(lay.k.axes) == 2
    order = [a.labels for a in lay.k.axes]
    assert order == (["j", "k"] if n > 22 else ["k", "j"]), order
    assert lay.k.axes[-1].strides[1 if n > 22 else 0] == 1


@pytest.mark.parametrize("unit", [2, 3])
def test_k_group_takes_the_larger_b_order_at_a_stride_of_a_complex_pair(unit):
    # The same with the strides of complex operands' real views (1m: a
    # complex apart is 2 reals): B's order when its k is 2 apart
    # ('ijk,jkl->il' (5,616,563):T x (616,563,43):T c128 packed B an element
    # a line in A's order, 0.37x numpy; 0.82x in B's), A's at 3 apart
    sizes = {"i": 5, "j": 616, "k": 563, "l": 43}
    sa = {"i": 2 * 346808, "j": 2, "k": 1232}
    sb = {"j": 563 * unit, "k": unit, "l": 2 * 346808}
    r = assign_roles("ijk", "jkl", "il")
    lay = merge_axes(r, sizes, sa, sb, {"i": 86, "l": 2})
    order = [a.labels for a in lay.k.axes]
    assert order == (["j", "k"] if unit == 2 else ["k", "j"]), order
