"""Tests for einplan.spec (step 1): parse results, and numpy's exception classes."""
import pickle

import numpy as np
import pytest

from einplan import spec as spec_mod

parse_spec = spec_mod.parse_spec
Spec = spec_mod.Spec
E0, E1 = (chr(spec_mod.ELLIPSIS_BASE + d) for d in range(2))


def ones(*shape):
    return np.ones(shape)


def arange(*shape):
    return np.arange(1, np.prod(shape, dtype=int) + 1, dtype=float).reshape(shape)


# (args, expected inputs, expected output, expected sizes)
PARSE_CASES = [
    (("ij,jk->ik", ones(2, 3), ones(3, 4)), ("ij", "jk"), "ik", {"i": 2, "j": 3, "k": 4}),
    # "ij,jk" (implicitly sum over 'j')
    (("ij,jk", ones(2, 3), ones(3, 4)), ("ij", "jk"), "ik", {"i": 2, "j": 3, "k": 4}),
    # implicit output sorted in ASCII order: upper case first
    (("bA", ones(2, 3)), ("bA",), "Ab", {"b": 2, "A": 3}),
    (("ba", ones(2, 3)), ("ba",), "ab", {"b": 2, "a": 3}),
    # "ii" (trace): the repeated label stays repeated
    (("ii", ones(3, 3)), ("ii",), "", {"i": 3}),
    (("ii->i", ones(3, 3)), ("ii",), "i", {"i": 3}),
    (("iij", ones(3, 3, 2)), ("iij",), "j", {"i": 3, "j": 2}),
    # spaces are ignored anywhere but inside '->'
    ((" i j -> j i ", ones(2, 3)), ("ij",), "ji", {"i": 2, "j": 3}),
    # 0-d operands
    (("", np.float64(2.0)), ("",), "", {}),
    (("->", np.array(2.0)), ("",), "", {}),
    ((",", np.array(2.0), np.array(3.0)), ("", ""), "", {}),
    ((",i->i", np.array(2.0), ones(3)), ("", "i"), "i", {"i": 3}),
    (("...", np.array(2.0)), ("",), "", {}),
    # explicit empty output: sum everything
    (("ij->", ones(2, 3)), ("ij",), "", {"i": 2, "j": 3}),
    # ellipsis: implicit output puts the ellipsis dims first
    (("...ij", ones(4, 5, 2, 3)),
     (E0 + E1 + "ij",), E0 + E1 + "ij", {E0: 4, E1: 5, "i": 2, "j": 3}),
    (("i...", ones(2, 3)), ("i" + E0,), E0 + "i", {"i": 2, E0: 3}),
    (("i...->...", ones(2, 3)), ("i" + E0,), E0, {"i": 2, E0: 3}),
    # ellipsis in the middle of a term and of the output
    (("i...j,j...k->i...k", ones(2, 5, 3), ones(3, 5, 4)),
     ("i" + E0 + "j", "j" + E0 + "k"), "i" + E0 + "k", {"i": 2, E0: 5, "j": 3, "k": 4}),
    # ellipsis dims are right-aligned and broadcast (size 1 against 6)
    (("...ij,...jk", ones(2, 1, 3, 4), ones(6, 4, 5)),
     (E0 + E1 + "ij", E1 + "jk"), E0 + E1 + "ik", {E0: 2, E1: 6, "i": 3, "j": 4, "k": 5}),
    # an ellipsis covering no dims
    (("i...->i", ones(3)), ("i",), "i", {"i": 3}),
    (("ij->...ij", ones(2, 3)), ("ij",), "ij", {"i": 2, "j": 3}),
    (("...i,...i->...", ones(3), ones(2, 3)), ("i", E0 + "i"), E0, {"i": 3, E0: 2}),
    # explicit labels broadcast size 1 against N, as numpy.einsum does
    (("ij,ij->ij", ones(1, 3), ones(2, 3)), ("ij", "ij"), "ij", {"i": 2, "j": 3}),
    (("ij,ij->ij", ones(2, 3), ones(1, 3)), ("ij", "ij"), "ij", {"i": 2, "j": 3}),
    (("ii,i", ones(3, 3), ones(1)), ("ii", "i"), "", {"i": 3}),
    # zero-size dims; 1 broadcasts against 0
    (("ij,jk", ones(0, 3), ones(3, 0)), ("ij", "jk"), "ik", {"i": 0, "j": 3, "k": 0}),
    (("i,i->i", ones(0), ones(1)), ("i", "i"), "i", {"i": 0}),
    (("i,i->i", ones(1), ones(0)), ("i", "i"), "i", {"i": 0}),
    # bytes and str subclasses are subscripts too
    ((b"ij->j", ones(2, 3)), ("ij",), "j", {"i": 2, "j": 3}),
    ((np.str_("ij->j"), ones(2, 3)), ("ij",), "j", {"i": 2, "j": 3}),
    # interleaved: ints 0..25 are 'A'..'Z', 26..51 are 'a'..'z'
    ((ones(2, 3), [0, 1], ones(3, 4), [1, 2]), ("AB", "BC"), "AC", {"A": 2, "B": 3, "C": 4}),
    ((ones(2, 3), [0, 1], ones(3, 4), [1, 2], [2, 0]),
     ("AB", "BC"), "CA", {"A": 2, "B": 3, "C": 4}),
    ((ones(2, 3), [51, 26]), ("za",), "az", {"z": 2, "a": 3}),
    ((ones(2, 3), [Ellipsis, 0], [0, Ellipsis]), (E0 + "A",), "A" + E0, {E0: 2, "A": 3}),
    ((ones(2, 3), (np.int64(1), np.uint8(2)), []), ("BC",), "", {"B": 2, "C": 3}),
    ((ones(2, 3), np.array([0, 1]), ones(3), range(1, 2)), ("AB", "B"), "A", {"A": 2, "B": 3}),
]


@pytest.mark.parametrize("args, inputs, output, sizes", PARSE_CASES)
def test_parse_result(args, inputs, output, sizes):
    spec, operands = parse_spec(args)
    assert isinstance(spec, Spec)
    assert spec.inputs == inputs
    assert spec.output == output
    assert dict(spec.sizes) == sizes
    assert len(operands) == len(inputs)
    assert all(isinstance(op, np.ndarray) for op in operands)


@pytest.mark.parametrize("args", [case[0] for case in PARSE_CASES])
def test_spec_computes_what_numpy_computes(args):
    # The expanded spec, run by numpy itself, must equal the original einsum.
    # distinct values instead of ones (operands are the float arrays; int arrays are sublists)
    args = tuple(arange(*a.shape) if isinstance(a, np.ndarray) and a.dtype == float else a
                 for a in args)
    spec, operands = parse_spec(args)
    expected = np.einsum(*args)
    got = np.einsum(spec.plain_subscripts(), *operands)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


def test_operands_converted_and_arrays_passed_through():
    a = ones(2, 3)
    spec, (a_out, l_out) = parse_spec(("ij,j", a, [1.0, 2.0, 3.0]))
    assert a_out is a
    assert isinstance(l_out, np.ndarray) and l_out.shape == (3,)
    sub = np.ma.masked_array(ones(3))
    assert parse_spec(("i", sub))[1][0] is sub  # subclasses kept (asanyarray)


def test_interleaved_matches_string_form():
    a, b = ones(2, 3, 4), ones(4, 5)
    interleaved, _ = parse_spec((a, [Ellipsis, 26, 27], b, [27, 28], [26, Ellipsis, 28]))
    string, _ = parse_spec(("...ab,bc->a...c", a, b))
    assert interleaved == string


def test_spec_is_hashable_immutable_and_picklable():
    spec, _ = parse_spec(("ij,jk->ik", ones(2, 3), ones(3, 4)))
    again, _ = parse_spec(("ij,jk->ik", ones(2, 3), ones(3, 4)))
    assert spec == again and hash(spec) == hash(again)
    assert spec.subscripts == "ij,jk->ik"
    with pytest.raises(TypeError):
        spec.sizes["i"] = 5
    with pytest.raises(TypeError):
        spec.sizes.update(i=5)
    with pytest.raises(AttributeError):
        spec.output = "ki"
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_sizes_depend_on_shapes_not_just_subscripts():
    # the cache is keyed on shapes: a second call with new extents gets new sizes
    small, _ = parse_spec(("ij,jk", ones(2, 3), ones(3, 4)))
    large, _ = parse_spec(("ij,jk", ones(5, 6), ones(6, 7)))
    assert dict(small.sizes) == {"i": 2, "j": 3, "k": 4}
    assert dict(large.sizes) == {"i": 5, "j": 6, "k": 7}


def test_many_ellipsis_dims():
    a = np.ones((1,) * 40 + (2,))
    spec, _ = parse_spec(("...i->i...", a))
    assert len(spec.output) == 41 and spec.output[0] == "i"
    assert all(spec_mod.is_ellipsis_label(c) for c in spec.output[1:])


# Bad inputs: numpy.einsum (default, optimize=False) and parse_spec must raise
# the same class. numpy's C parser raises UnicodeEncodeError for non-ASCII
# subscripts; parse_spec raises its base class ValueError.
BAD_CASES = {
    "no args": (),
    "no operands": ("ij",),
    "empty subscripts, no operands": ("",),
    "interleaved without sublist": (ones(3),),
    "label size mismatch": ("ij,jk", ones(2, 3), ones(4, 4)),
    "label size mismatch 0 vs 2": ("i,i->i", ones(0), ones(2)),
    "diagonal extents differ": ("ii", ones(2, 3)),
    "diagonal does not broadcast 1": ("ii", ones(1, 3)),
    "ellipsis broadcast mismatch": ("...,...", ones(2, 3), ones(4)),
    "too many subscripts": ("ijk", ones(2, 3)),
    "too many subscripts with ellipsis": ("ijk...", ones(2, 3)),
    "too few subscripts": ("i", ones(2, 3)),
    "subscripts for 0-d": ("i", np.array(1.0)),
    "empty term for 1-d": ("", ones(3)),
    "lone dot": ("i.j", ones(2, 3)),
    "four dots": ("....", ones(3)),
    "two ellipses": ("...i...", ones(2, 3)),
    "digit": ("i2", ones(2, 3)),
    "non-ascii letter": ("ä", ones(3)),
    "output label not in inputs": ("ij->k", ones(2, 3)),
    "output label repeated": ("ij->ii", ones(2, 3)),
    "output lone dot": ("ij->i.", ones(2, 3)),
    "output two ellipses": ("...i->......", ones(2, 3)),
    "output invalid char": ("ij->i2", ones(2, 3)),
    "output drops ellipsis dims": ("i...->i", ones(2, 3)),
    "output drops ellipsis dims of size 1": ("i...->i", ones(3, 1)),
    "ellipsis summed to scalar": ("...->", ones(2, 3)),
    "more terms than operands": ("ij,jk", ones(2, 3)),
    "more operands than terms": ("ij", ones(2, 3), ones(2, 3)),
    "trailing comma": ("i,", ones(3)),
    "dash without >": ("ij-jk", ones(2, 3)),
    "> without dash": ("ij>jk", ones(2, 3)),
    "two arrows": ("ij->j->i", ones(2, 3)),
    "spaced arrow": ("i - > i", ones(3)),
    "output in first operand slot": ("->i", ones(3)),
    "int subscripts arg": (123, ones(3)),
    "sublist item out of range": (ones(3), [52]),
    "sublist negative item": (ones(3), [-1]),
    "sublist str item": (ones(3), ["a"]),
    "sublist str": (ones(3), "a"),
    "sublist ellipsis as text": (ones(3), ["..."]),
    "sublist float item": (ones(3), [1.0]),
    "sublist bool item": (ones(3), [True]),
    "sublist numpy bool item": (ones(3), [np.bool_(True)]),
    "sublist None item": (ones(3), [None]),
    "sublist float array": (ones(3), np.array([1.0])),
    "sublist 2-d array": (ones(2, 3), np.array([[0], [1]])),
    "sublist not iterable": (ones(3), 3),
    "output sublist not iterable": (ones(3), [0], 0),
    "sublist two ellipses": (ones(3), [Ellipsis, 0, Ellipsis]),
    "output sublist two ellipses": (ones(3), [0], [Ellipsis, 0, Ellipsis]),
    "output sublist label not in input": (ones(3), [0], [1]),
    "output sublist repeated": (ones(2, 3), [0, 1], [0, 0]),
    "sublist too long": (ones(3), [0, 1]),
    "interleaved size mismatch": (ones(2, 3), [0, 1], ones(2, 3), [1, 2]),
    "ragged operand": ("i", [[1], [1, 2]]),
}


def _base_class(exc_type):
    # UnicodeEncodeError -> ValueError etc.: compare the classes users catch
    for base in (TypeError, ValueError, IndexError, KeyError):
        if issubclass(exc_type, base):
            return base
    return exc_type


@pytest.mark.parametrize("args", list(BAD_CASES.values()), ids=list(BAD_CASES))
def test_error_class_matches_numpy(args):
    with pytest.raises(Exception) as numpy_error:
        np.einsum(*args)
    with pytest.raises(Exception) as our_error:
        parse_spec(args)
    assert _base_class(our_error.type) is _base_class(numpy_error.type)
    assert issubclass(our_error.type, (TypeError, ValueError))   # UnicodeEncodeError is one


@pytest.mark.parametrize("args, words", [
    (("ij,jk", ones(2, 3), ones(4, 4)), ["label 'j'", "operand 1", "(4)", "(3)"]),
    (("ii", ones(2, 3)), ["operand 0", "'i'", "2 != 3"]),
    (("...,...", ones(2, 3), ones(4)), ["ellipsis", "operand 1", "(4)", "(3)"]),
    (("ijk", ones(2, 3)), ["too many", "operand 0"]),
    (("i", ones(2, 3)), ["operand 0", "'...'"]),
    (("ij->k", ones(2, 3)), ["'k'", "never appeared"]),
    (("ij->ii", ones(2, 3)), ["'i'", "multiple times"]),
    (("i2", ones(2, 3)), ["'2'", "operand 0"]),
    (("i,j.", ones(2), ones(2)), ["'.'", "operand 1"]),
    (("ij,jk", ones(2, 3)), ["2 operand", "1 operand"]),
    ((ones(3), [60]), ["60", "[0, 52)"]),
])
def test_error_messages_say_what_is_wrong(args, words):
    with pytest.raises(ValueError) as error:
        parse_spec(args)
    for word in words:
        assert word in str(error.value)
