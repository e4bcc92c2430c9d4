"""Python numbers a tensor cannot hold raise instead of wrapping: ``tensor(2**63)`` and
``tensor([2**64 - 1])`` used to give -2**63 and -1. Data, fill values and scalar arguments
raise PyTorch's RuntimeError "value cannot be converted to type int64 without overflow"."""

from __future__ import annotations

import pytest

import coretorch as ct

_OVERFLOW = "value cannot be converted to type {} without overflow"


def _raises(dtype: str = "int64"):
    return pytest.raises(RuntimeError, match=_OVERFLOW.format(dtype))


@pytest.mark.parametrize(
    "data",
    [2**63, [2**64 - 1], [-(2**63) - 1], [[1], [2**70]], (3, 2**63)],
    ids=["2**63", "2**64-1", "-2**63-1", "nested-2**70", "tuple"],
)
def test_tensor_of_too_large_python_int_raises(data, device):
    with _raises():
        ct.tensor(data, device=device)


@pytest.mark.parametrize(
    "data, dtype",
    [
        ([2**40], ct.int32),
        ([300], ct.uint8),
        ([-129], ct.int8),
        ([2**63], ct.int64),
        ([2**15], ct.int16),
    ],
)
def test_tensor_with_integer_dtype_checks_its_range(data, dtype, device):
    with _raises(dtype.name):
        ct.tensor(data, dtype=dtype, device=device)


def test_tensor_edges_that_fit(data_device):
    assert ct.tensor([2**63 - 1, -(2**63)], device=data_device).tolist() == [2**63 - 1, -(2**63)]
    assert ct.tensor([-1], dtype=ct.uint8, device=data_device).tolist() == [255]  # wraps, as torch
    assert ct.tensor([2**63, 1.5], device=data_device).dtype is ct.float32
    assert ct.tensor([2**70], dtype=ct.float64, device=data_device).tolist() == [2.0**70]
    assert ct.tensor([127, -128], dtype=ct.int8, device=data_device).tolist() == [127, -128]


@pytest.mark.parametrize(
    "call",
    [
        lambda d: ct.full((2,), 2**63, device=d),
        lambda d: ct.full((2,), -(2**63) - 1, dtype=ct.int64, device=d),
        lambda d: ct.zeros(2, dtype=ct.int64, device=d).fill_(2**64),
        lambda d: ct.full_like(ct.zeros(2, dtype=ct.int64, device=d), 2**63),
        lambda d: ct.zeros(2, dtype=ct.int64, device=d).new_full((2,), 2**63),
        lambda d: ct.arange(2**63, 2**63 + 2, device=d),
        lambda d: ct.arange(0, 2**64, 2**62, device=d),
    ],
    ids=["full", "full-negative", "fill_", "full_like", "new_full", "arange", "arange-end"],
)
def test_fill_values_that_overflow_int64_raise(call, device):
    with _raises():
        call(device)


@pytest.mark.parametrize(
    "call",
    [
        lambda i: i + 2**63,
        lambda i: i * 2**64,
        lambda i: i - (-(2**63) - 1),
        lambda i: ct.add(i, i, alpha=2**63),
        lambda i: i.clamp(max=2**63),
        lambda i: i == 2**63,
        lambda i: ct.where(i > 1, i, 2**63),
        lambda i: i.clone().add_(2**63),
    ],
    ids=["add", "mul", "sub", "alpha", "clamp", "eq", "where", "add_"],
)
def test_scalar_arguments_that_overflow_int64_raise(call, device):
    with _raises():
        call(ct.tensor([1, 2], device=device))


def test_float_tensors_take_large_python_ints(data_device):
    x = ct.ones(2, device=data_device)
    assert (x * 2**63).tolist() == [2.0**63] * 2
    assert ct.full((1,), 2**63, dtype=ct.float32, device=data_device).tolist() == [2.0**63]


@pytest.mark.parametrize(
    "dtype, too_large",
    [(ct.float16, 70000.0), (ct.bfloat16, 1e39), (ct.float32, 1e39)],
    ids=lambda v: str(v),
)
def test_float_fill_refuses_finite_values_it_cannot_hold(dtype, too_large, device):
    h = ct.zeros(2, dtype=dtype, device=device)
    with _raises(dtype.name):
        h.fill_(too_large)
    with _raises(dtype.name):
        ct.full((2,), -too_large, dtype=dtype, device=device)
    h.fill_(float("inf"))  # inf and nan are values every float dtype has
    h.fill_(float("nan"))
    h.fill_(ct.finfo(dtype).max)


def test_matches_pytorch_on_what_raises():
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.full((2,), 2**63),
        lambda m: m.tensor([300], dtype=m.uint8),
        lambda m: m.tensor([2**40], dtype=m.int32),
        lambda m: m.zeros(2).half().fill_(1e6),
        lambda m: m.arange(2**63, 2**63 + 2),
        lambda m: m.tensor([1]).clamp(max=2**63),
        lambda m: m.tensor(2**63),
        lambda m: m.tensor([2**64 - 1]),
        lambda m: m.zeros(2).fill_(1e39),
        lambda m: m.zeros(2, dtype=m.bfloat16).fill_(1e39),
    ]
    for case in cases:
        with pytest.raises((RuntimeError, ValueError, OverflowError)):
            case(torch)
        with pytest.raises(RuntimeError, match="without overflow"):
            case(ct)
