"""PyTorch's legacy surface that programs still use: ``Tensor(2, 3)``, ``FloatTensor`` and
siblings, ``x.new``, ``x.type``; 0-d tensors in f-strings; ranges, deques and other sequences
as data and as indices."""

from __future__ import annotations

import warnings
from collections import deque

import numpy as np
import pytest

import coretorch as ct

LEGACY = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ---- constructors -------------------------------------------------------------------------


def test_tensor_constructor_sizes_data_and_empty():
    assert ct.Tensor(2, 3).shape == (2, 3) and ct.Tensor(2, 3).dtype is ct.float32
    assert ct.Tensor(ct.Size([4, 1])).shape == (4, 1)
    assert ct.Tensor().shape == (0,)
    t = ct.Tensor([1, 2])
    assert t.dtype is ct.float32 and t.tolist() == [1.0, 2.0]
    assert ct.Tensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, as in PyTorch
    assert ct.Tensor(np.array([1, 2])).dtype is ct.float32


def test_tensor_constructor_follows_the_default_dtype_and_typed_ones_do_not():
    prev = ct.get_default_dtype()
    ct.set_default_dtype(ct.float64)
    try:
        assert ct.Tensor(2).dtype is ct.float64
        assert ct.FloatTensor(2).dtype is ct.float32
    finally:
        ct.set_default_dtype(prev)


def test_tensor_of_a_tensor_is_an_alias():
    src = ct.tensor([1, 2])
    alias = ct.Tensor(src)
    assert alias.dtype is ct.int64 and alias.data_ptr() == src.data_ptr()
    with pytest.raises(TypeError, match="FloatTensor"):
        ct.FloatTensor(src)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((2.5,), TypeError, "data must be a sequence"),
        (("ab",), TypeError, "invalid data type 'str'"),
        ((2, [1]), TypeError, "expected sizes"),
    ],
)
def test_tensor_constructor_rejects_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        ct.Tensor(*args)


def test_legacy_constructors_are_cpu_only_unless_their_module_says_otherwise():
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        ct.Tensor(2, device="meta")
    assert ct.FloatTensor(2, device="cpu").device.type == "cpu"


def test_subclasses_are_not_legacy_constructors():
    class Mine(ct.Tensor):
        pass

    with pytest.raises(TypeError, match="not a constructor"):
        Mine(2)
    p = ct.nn.Parameter(ct.zeros(2))
    assert p.requires_grad and p.shape == (2,)


@pytest.mark.parametrize("name", LEGACY)
def test_typed_constructors_match_pytorch(torch, name):
    data = [1.7, -1.2, 0.0, 2.0] if name not in ("ByteTensor",) else [1.7, 0.0, 2.0]
    ours, theirs = getattr(ct, name)(data), getattr(torch, name)(data)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()
    assert getattr(ct, name)(3, 2).shape == (3, 2)
    assert getattr(ct, name).dtype is ours.dtype
    assert isinstance(ours, getattr(ct, name))
    assert not isinstance(ours, ct.FloatTensor if name != "FloatTensor" else ct.DoubleTensor)
    assert not isinstance(1.0, getattr(ct, name))


# ---- x.type() and x.new() -----------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
)
def test_type_names_match_pytorch(torch, dtype):
    ours = ct.zeros(2, dtype=getattr(ct, dtype))
    assert ours.type() == torch.zeros(2, dtype=getattr(torch, dtype)).type()
    assert (
        ct.zeros(2, dtype=getattr(ct, dtype), device="meta").type()
        == torch.zeros(2, dtype=getattr(torch, dtype), device="meta").type()
    )


def test_type_converts_to_a_name_a_legacy_type_or_a_dtype():
    x = ct.tensor([1.5, -2.5])
    assert x.type("torch.DoubleTensor").dtype is ct.float64
    assert x.type("coretorch.IntTensor").tolist() == [1, -2]
    assert x.type(ct.LongTensor).dtype is ct.int64
    assert x.type(ct.float16).dtype is ct.float16
    assert x.type(ct.FloatTensor) is x and x.type("torch.FloatTensor") is x
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    with pytest.raises(TypeError):
        x.type(3)


def test_new_makes_tensors_like_self():
    x = ct.zeros(2, dtype=ct.float64)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype is ct.float64
    assert x.new([1, 2]).dtype is ct.float64 and x.new([1, 2]).tolist() == [1.0, 2.0]
    assert x.new().shape == (0,)
    assert ct.zeros(1, device="meta").new(4).device.type == "meta"


# ---- f-strings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, spec",
    [
        (lambda m: m.tensor(0.123456789), ".4f"),
        (lambda m: m.tensor(0.123456789), ""),
        (lambda m: m.tensor(3), "d"),
        (lambda m: m.tensor(3), "5"),
        (lambda m: m.tensor(True), ""),
        (lambda m: m.tensor(2.5, requires_grad=True) * 2, ".3e"),
        (lambda m: m.tensor([1.0, 2.0]), ""),
    ],
)
def test_format_matches_pytorch(torch, make, spec):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert format(make(ct), spec) == format(make(torch), spec).replace("torch.", "coretorch.")


def test_format_refuses_a_spec_where_pytorch_does():
    with pytest.raises(TypeError, match="unsupported format string"):
        format(ct.tensor([1.0, 2.0]), ".3f")
    with pytest.raises(TypeError, match="unsupported format string"):
        format(ct.nn.Parameter(ct.tensor(1.5)), ".3f")
    assert f"{ct.tensor(0.25):.2f}" == "0.25"


# ---- sequences as data ------------------------------------------------------------------------


def test_tensor_accepts_ranges_deques_and_nested_sequences():
    r = ct.tensor(range(3))
    assert r.dtype is ct.int64 and r.tolist() == [0, 1, 2]
    d = ct.tensor(deque([1.5, 2]))
    assert d.dtype is ct.float32 and d.tolist() == [1.5, 2.0]
    assert ct.tensor([range(2), deque([3, 4])]).tolist() == [[0, 1], [3, 4]]
    assert ct.tensor(deque()).shape == (0,)
    with pytest.raises(TypeError, match="generator"):
        ct.tensor(x for x in range(3))


# ---- sequences as indices ---------------------------------------------------------------------

INDICES = [
    range(2),
    deque([2, 0]),
    (range(2), deque([1, 3])),
    (slice(None), (0, 2)),
    ([0, 1], [1, 0]),
    [True, False, True],
    (Ellipsis, range(1, 3)),
    (deque([0]), slice(1, 3)),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_sequence_indices_select_what_numpy_selects(idx):
    a = np.arange(12).reshape(3, 4)
    np_idx = (
        tuple(list(i) if isinstance(i, (range, deque, tuple)) else i for i in idx)
        if isinstance(idx, tuple)
        else (list(idx) if isinstance(idx, (range, deque)) else idx)
    )
    assert ct.arange(12).reshape(3, 4)[idx].tolist() == a[np_idx].tolist()


@pytest.mark.parametrize("idx", INDICES + [[[0, 1], [1, 0]], [0, slice(None)], [0, None]], ids=repr)
def test_sequence_indices_match_pytorch(torch, idx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn about a non-tuple sequence of sequences
        ours = ct.arange(12).reshape(3, 4)[idx]
        theirs = torch.arange(12).reshape(3, 4)[idx]
    assert ours.tolist() == theirs.tolist()


def test_a_list_of_sequences_is_read_as_a_tuple_with_pytorch_s_warning():
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        assert ct.arange(12).reshape(3, 4)[[[0, 1], [1, 0]]].tolist() == [1, 4]


def test_assignment_through_a_range_or_deque():
    x = ct.zeros(3, 4)
    x[range(2)] = 1.0
    x[deque([2]), range(2)] = ct.tensor([5.0, 6.0])
    assert x.tolist() == [[1.0] * 4, [1.0] * 4, [5.0, 6.0, 0.0, 0.0]]
