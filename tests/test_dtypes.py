"""dtypes and PyTorch's type promotion: promote_types, result_type (weak scalars, 0-d tensors),
default dtype."""

import json
import pathlib
import threading

import pytest

import coretorch as ct

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "promotion_table.json").read_text())
NAMES = TABLE["dtypes"]


def test_dtype_objects_mirror_torch_names():
    assert [getattr(ct, n).name for n in NAMES] == NAMES
    assert ct.half is ct.float16 and ct.float is ct.float32 and ct.double is ct.float64
    assert ct.short is ct.int16 and ct.int is ct.int32 and ct.long is ct.int64
    assert repr(ct.float32) == "coretorch.float32"
    assert [getattr(ct, n).itemsize for n in NAMES] == [1, 1, 1, 2, 4, 8, 2, 4, 8, 2]
    assert ct.float16.is_floating_point and not ct.int64.is_floating_point
    assert ct.int8.is_signed and not ct.uint8.is_signed and not ct.bool.is_signed


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_matches_checked_in_table(a):
    for b in NAMES:
        got = ct.promote_types(getattr(ct, a), getattr(ct, b))
        assert got.name == TABLE["promote_types"][a][b], (a, b)


def test_promote_types_matches_torch():
    torch = pytest.importorskip("torch")
    for a in NAMES:
        for b in NAMES:
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert ct.promote_types(getattr(ct, a), getattr(ct, b)).name == str(want)[6:], (a, b)


def _operand(kind: str, name: str):
    """A coretorch operand: a 1-d tensor, a 0-d tensor (on meta: no data needed) or a scalar."""
    if kind == "tensor":
        return ct.empty(2, dtype=getattr(ct, name), device="meta")
    if kind == "zerodim":
        return ct.empty((), dtype=getattr(ct, name), device="meta")
    return {"bool": True, "int64": 3, "float32": 2.5}[name]


# (operand a, operand b, expected) from PyTorch's documented rules, checked without torch
RESULT_TYPE_CASES = [
    (("tensor", "int32"), ("scalar", "float32"), "float32"),  # a float scalar raises the category
    (("tensor", "float16"), ("scalar", "float32"), "float16"),  # ... but not the width
    (("tensor", "bfloat16"), ("scalar", "float32"), "bfloat16"),
    (("tensor", "bfloat16"), ("scalar", "int64"), "bfloat16"),
    (("tensor", "bfloat16"), ("tensor", "float16"), "float32"),  # neither holds the other
    (("tensor", "bfloat16"), ("tensor", "int64"), "bfloat16"),
    (("zerodim", "float32"), ("tensor", "bfloat16"), "bfloat16"),
    (("tensor", "uint8"), ("scalar", "int64"), "uint8"),  # same category: scalar ignored
    (("tensor", "int8"), ("zerodim", "int64"), "int8"),  # same category: 0-d ignored
    (("tensor", "int8"), ("zerodim", "float64"), "float64"),  # 0-d float raises the category
    (("tensor", "bool"), ("scalar", "int64"), "int64"),
    (("tensor", "bool"), ("zerodim", "int32"), "int32"),
    (("zerodim", "int32"), ("scalar", "float32"), "float32"),
    (("zerodim", "int32"), ("zerodim", "int64"), "int64"),  # 0-d tensors promote normally
    (("zerodim", "float16"), ("tensor", "int64"), "float16"),
    (("scalar", "bool"), ("scalar", "int64"), "int64"),
    (("scalar", "int64"), ("scalar", "float32"), "float32"),
    (("scalar", "bool"), ("scalar", "bool"), "bool"),
]


@pytest.mark.parametrize("a,b,want", RESULT_TYPE_CASES)
def test_result_type_weak_scalars_and_zero_dim(a, b, want):
    assert ct.result_type(_operand(*a), _operand(*b)).name == want
    assert ct.result_type(_operand(*b), _operand(*a)).name == want


def test_result_type_matches_torch_for_every_pair():
    torch = pytest.importorskip("torch")

    def torch_operand(kind, name):
        if kind == "tensor":
            return torch.empty(2, dtype=getattr(torch, name))
        if kind == "zerodim":
            return torch.empty((), dtype=getattr(torch, name))
        return {"bool": True, "int64": 3, "float32": 2.5}[name]

    kinds = (
        [("tensor", n) for n in NAMES]
        + [("zerodim", n) for n in NAMES]
        + [("scalar", n) for n in ("bool", "int64", "float32")]
    )
    for a in kinds:
        for b in kinds:
            want = torch.result_type(torch_operand(*a), torch_operand(*b))
            got = ct.result_type(_operand(*a), _operand(*b))
            assert got.name == str(want)[6:], (a, b)


def test_result_type_of_many_operands_and_errors():
    t8, f16 = _operand("tensor", "int8"), _operand("zerodim", "float16")
    assert ct.result_type(t8, _operand("tensor", "int16"), 2.5) is ct.float32
    assert ct.result_type(t8, f16, 1) is ct.float16
    with pytest.raises(TypeError, match="result_type"):
        ct.result_type()
    with pytest.raises(TypeError, match="str"):
        ct.result_type(t8, "x")


def test_binary_op_result_dtype_follows_result_type():
    a = ct.empty(3, dtype=ct.int32, device="meta")
    assert (a + 1).dtype is ct.int32
    assert (a + 1.5).dtype is ct.float32
    assert (a + ct.empty((), dtype=ct.float64, device="meta")).dtype is ct.float64
    assert (a + ct.empty((), dtype=ct.int64, device="meta")).dtype is ct.int32


@pytest.fixture
def restore_default_dtype():
    before = ct.get_default_dtype()
    yield
    ct.set_default_dtype(before)


def test_set_default_dtype(restore_default_dtype):
    assert ct.get_default_dtype() is ct.float32
    ct.set_default_dtype(ct.float64)
    assert ct.get_default_dtype() is ct.float64
    assert ct.zeros(2, device="meta").dtype is ct.float64
    assert ct.result_type(_operand("tensor", "int32"), 2.5) is ct.float64
    assert ct.result_type(_operand("tensor", "float16"), 2.5) is ct.float16
    assert ct.result_type(_operand("tensor", "int32"), 2) is ct.int32
    # process-wide, as in PyTorch: another thread sees it too
    seen = []
    th = threading.Thread(target=lambda: seen.append(ct.get_default_dtype()))
    th.start()
    th.join()
    assert seen == [ct.float64]


@pytest.mark.parametrize("bad", ["int32", "int64", "bool"])
def test_set_default_dtype_rejects_non_float(restore_default_dtype, bad):
    with pytest.raises(TypeError, match="set_default_dtype.*floating point"):
        ct.set_default_dtype(getattr(ct, bad))
    assert ct.get_default_dtype() is ct.float32


def test_finfo_iinfo_match_numpy():
    import numpy as np

    assert ct.finfo(ct.float16).eps == float(np.finfo(np.float16).eps)
    assert ct.finfo(ct.float32).max == float(np.finfo(np.float32).max)
    assert ct.finfo().bits == 32
    import ml_dtypes

    bf = ct.finfo(ct.bfloat16)
    bf_max = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert (bf.bits, bf.eps, bf.max) == (16, 0.0078125, bf_max)
    assert bf.tiny == ct.finfo(ct.float32).tiny and ct.bfloat16.is_floating_point
    assert ct.iinfo(ct.int8).min == -128 and ct.iinfo(ct.uint8).max == 255
    with pytest.raises(TypeError, match="finfo"):
        ct.finfo(ct.int32)
    with pytest.raises(TypeError, match="iinfo"):
        ct.iinfo(ct.float32)
