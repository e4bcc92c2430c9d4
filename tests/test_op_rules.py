"""Meta rules of the first-wave ops (reductions, linalg, shape ops, indexing, nn ops): output
shapes and dtypes, PyTorch's error types and messages, FLOP formulas, and the shapes the
derivative formulas produce. Runs on the meta device (no data needed); where torch is installed
the rules are also swept against torch's own meta/cpu results."""

from __future__ import annotations

import pytest

import coretorch as ct
from coretorch.ops import REGISTRY
from coretorch.ops.meta_rules import broadcast_shapes

F32, F64, I64, I32, BOOL, U8 = ct.float32, ct.float64, ct.int64, ct.int32, ct.bool, ct.uint8


def m(*shape, dtype=F32):
    return ct.empty(shape, dtype=dtype, device="meta")


def spec(t):
    return tuple(t.shape), t.dtype


# ---- reductions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, shape, dtype",
    [
        (lambda: m(2, 3, 4).sum(), (), F32),
        (lambda: m(2, 3, 4).sum(1), (2, 4), F32),
        (lambda: m(2, 3, 4).sum((0, -1), keepdim=True), (1, 3, 1), F32),
        (lambda: m(2, 3, 4).sum([]), (), F32),
        (lambda: m(2, 3, dtype=BOOL).sum(0), (3,), I64),
        (lambda: m(2, 3, dtype=I32).sum(), (), I64),
        (lambda: m(2, 3, dtype=I32).sum(1, dtype=F64), (2,), F64),
        (lambda: m().sum(0), (), F32),
        (lambda: m(2, 3, dtype=U8).prod(1, keepdim=True), (2, 1), I64),
        (lambda: m(2, 3).mean(-1), (2,), F32),
        (lambda: m(2, 3, dtype=I64).mean(dtype=F64), (), F64),
        (lambda: m(2, 3, 4).amax((0, 2)), (3,), F32),
        (lambda: m(2, 3, 4).amin(), (), F32),
        (lambda: m(2, 3, 4).argmax(), (), I64),
        (lambda: m(2, 3, 4).argmax(keepdim=True), (1, 1, 1), I64),
        (lambda: m(2, 3, 4).argmin(1, keepdim=True), (2, 1, 4), I64),
        (lambda: m(2, 3, dtype=F64).all(1), (2,), BOOL),
        (lambda: m(2, 3, dtype=U8).any(), (), U8),
        (lambda: m(2, 3).any(()), (2, 3), BOOL),
        (lambda: m(2, 3, dtype=BOOL).cumsum(1), (2, 3), I64),
        (lambda: m(2, 3).cumprod(0, dtype=F64), (2, 3), F64),
        (lambda: m(5, 3).var(0), (3,), F32),
        (lambda: m(5, 3).std(1, keepdim=True, correction=0), (5, 1), F32),
        (lambda: m(5, 3).var(unbiased=False), (), F32),
        (lambda: m(5, 3, dtype=I64).logsumexp(1), (5,), F32),
        (lambda: m(5, 3).norm(), (), F32),
        (lambda: m(5, 3).norm(1, dim=0, keepdim=True), (1, 3), F32),
        (lambda: m(5, 3).norm(float("inf"), dim=1), (5,), F32),
        (lambda: ct.max(m(2, 3)), (), F32),
        (lambda: ct.min(m(2, 3), m(3)), (2, 3), F32),
    ],
)
def test_reduction_shapes_and_dtypes(call, shape, dtype):
    assert spec(call()) == (shape, dtype)


def test_max_with_dim_is_a_namedtuple():
    r = ct.max(m(2, 3, 4), 1)
    assert r._fields == ("values", "indices")
    assert spec(r.values) == ((2, 4), F32) and spec(r.indices) == ((2, 4), I64)
    v, i = m(2, 3).min(dim=0, keepdim=True)
    assert spec(v) == ((1, 3), F32) and spec(i) == ((1, 3), I64)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda m: m(2, 3).sum(2), IndexError, r"sum\(\): Dimension out of range .*\[-2, 1\].* 2"),
        (lambda m: m(2, 3).sum((0, 0)), RuntimeError, r"sum\(\): dim \[0, 0\] appears multiple"),
        (lambda m: m(2, 3).prod((0, 1)), TypeError, r"prod\(\): argument 'dim' .*must be int"),
        (lambda m: m(2, 3, dtype=I64).mean(), RuntimeError, r"mean\(\).*Input dtype.*Got: int64"),
        (lambda m: m(2, 3).mean(dtype=I32), RuntimeError, r"mean\(\).*Optional dtype.*Got: int32"),
        (
            lambda m: m(2, 0).amax(1),
            IndexError,
            r"amax\(\): Expected reduction dim 1 to have non-zero",
        ),
        (lambda m: m(2, 0).max(1), IndexError, r"max\(\): Expected reduction dim 1"),
        (
            lambda m: ct.max(m(0, 3)),
            RuntimeError,
            r"max\(\): Expected reduction dim to be specified",
        ),
        (
            lambda m: m(0).argmax(),
            IndexError,
            r"argmax\(\): Expected reduction dim to be specified",
        ),
        (lambda m: m(3, dtype=BOOL).argmax(), RuntimeError, r"argmax\(\): does not support bool"),
        (
            lambda m: m(0, 3).amin(()),
            RuntimeError,
            r"amin\(\): Expected reduction dim to be specified",
        ),
        (
            lambda m: m(2, 3).sum(True),
            TypeError,
            r"sum\(\): argument 'dim' .*must be tuple of ints",
        ),
        (lambda m: m(2, 3).var(0, unbiased=True, correction=1), TypeError, r"var\(\): give either"),
        (lambda m: m(2, 3).norm("abc"), RuntimeError, r"norm\(\): only valid string values"),
        (lambda m: m(2, 3, 4).norm("fro", (0, 1, 2)), RuntimeError, r"norm\(\): p='fro' over more"),
        (
            lambda m: m(2, 3, dtype=I64).softmax(0),
            NotImplementedError,
            r"softmax\(\): not implemented",
        ),
        (lambda m: m(2, 3, dtype=I64).var(), RuntimeError, r"var\(\).*floating point.*int64"),
        (lambda m: m(2, 3, dtype=I64).norm(), RuntimeError, r"norm\(\).*floating point.*int64"),
        (lambda m: m(3).norm("nuc"), RuntimeError, r"norm\(\): p='nuc' is a matrix norm"),
        (lambda m: m(2, 3).cumsum(5), IndexError, r"cumsum\(\): Dimension out of range"),
        (lambda m: m(2, 0).argmin(1), IndexError, r"argmin\(\): Expected reduction dim 1"),
        (lambda m: m(2, 0).amin(1), IndexError, r"amin\(\): Expected reduction dim 1"),
        (lambda m: m(2, 0).min(-1), IndexError, r"min\(\): Expected reduction dim 1"),
        (lambda m: m(0, 2).min(), RuntimeError, r"min\(\): Expected reduction dim to be specified"),
        (lambda m: m(2, 3).max(1.5), TypeError, r"max\(\): argument 'dim' must be int, not float"),
        (lambda m: m(2, 3).max(keepdim=True), TypeError, r"max\(\): keepdim=True needs a dim"),
        (lambda m: m(2, 3).all(2), IndexError, r"all\(\): Dimension out of range"),
        (lambda m: m(2, 3).log_softmax(-3), IndexError, r"log_softmax\(\): Dimension out of range"),
        (lambda m: m(2, 3).logsumexp(2), IndexError, r"logsumexp\(\): Dimension out of range"),
        (lambda m: m(0, 3).norm(float("inf")), RuntimeError, r"norm\(\): cannot compute the inf"),
        (lambda m: m(0, 3).norm(float("-inf"), 0), RuntimeError, r"norm\(\): .* -inf norm on the"),
    ],
)
def test_reduction_errors(device, call, exc, match):
    # the meta rule is the only validator: every device refuses the same calls the same way
    def make(*shape, dtype=F32):
        return ct.zeros(shape, dtype=dtype, device=device)

    with pytest.raises(exc, match=match):
        call(make)


# ---- linalg -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, shape",
    [
        ((3,), (3,), ()),
        ((2, 3), (3,), (2,)),
        ((3,), (3, 4), (4,)),
        ((2, 3), (3, 4), (2, 4)),
        ((5, 2, 3), (3, 4), (5, 2, 4)),
        ((5, 2, 3), (3,), (5, 2)),
        ((3,), (5, 3, 4), (5, 4)),
        ((2, 1, 2, 3), (5, 3, 4), (2, 5, 2, 4)),
        ((1, 2, 3), (6, 3, 4), (6, 2, 4)),
        ((2, 3), (7, 3, 4), (7, 2, 4)),
    ],
)
def test_matmul_broadcasting(a, b, shape):
    assert spec(ct.matmul(m(*a), m(*b))) == (shape, F32)
    assert spec(m(*a) @ m(*b)) == (shape, F32)


def test_linalg_shapes():
    assert spec(ct.mm(m(2, 3), m(3, 4))) == ((2, 4), F32)
    assert spec(ct.bmm(m(5, 2, 3), m(5, 3, 4))) == ((5, 2, 4), F32)
    assert spec(ct.addmm(m(4), m(2, 3), m(3, 4))) == ((2, 4), F32)
    assert spec(ct.dot(m(3, dtype=F64), m(3, dtype=F64))) == ((), F64)
    assert spec(ct.mv(m(2, 3), m(3))) == ((2,), F32)
    assert spec(ct.outer(m(2), m(3, dtype=F64))) == ((2, 3), F64)
    assert spec(ct.linear(m(8, 3), m(4, 3), m(4))) == ((8, 4), F32)
    assert spec(ct.linear(m(2, 8, 3), m(4, 3))) == ((2, 8, 4), F32)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: ct.mm(m(2, 3), m(3, 4, dtype=F64)),
            RuntimeError,
            r"mm\(\): expected m1 and m2 to have the same dtype, but got: float32 != float64",
        ),
        (
            lambda: ct.mm(m(2, 3), m(4, 4)),
            RuntimeError,
            r"mm\(\): mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x4\)",
        ),
        (lambda: ct.mm(m(2, 3, 1), m(1, 4)), RuntimeError, r"mm\(\): expected 2-D"),
        (
            lambda: ct.bmm(m(2, 3, 4), m(3, 4, 5)),
            RuntimeError,
            r"bmm\(\): Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but "
            r"got: \[3, 4\]",
        ),
        (lambda: ct.bmm(m(3, 4), m(2, 4, 5)), RuntimeError, r"bmm\(\): expected 3-D"),
        (lambda: ct.matmul(m(), m(2, 3)), RuntimeError, r"matmul\(\): both arguments .* 0D and 2D"),
        (lambda: ct.matmul(m(4, 2, 3), m(4, 4, 5)), RuntimeError, r"matmul\(\): .*2x3 and 4x5"),
        (
            lambda: ct.matmul(m(2, 2, 3), m(3, 3, 4)),
            RuntimeError,
            r"matmul\(\): The size of tensor",
        ),
        (lambda: ct.dot(m(3), m(3, dtype=F64)), RuntimeError, r"dot\(\).*same dtype"),
        (lambda: ct.dot(m(3, 1), m(3)), RuntimeError, r"dot\(\): 1D tensors expected, but got 2D"),
        (lambda: ct.dot(m(3), m(4)), RuntimeError, r"dot\(\): inconsistent tensor size"),
        (lambda: ct.mv(m(3, 2), m(3)), RuntimeError, r"mv\(\): size mismatch"),
        (lambda: ct.addmm(m(3), m(2, 3), m(3, 1)), RuntimeError, r"addmm\(\)"),
    ],
)
def test_linalg_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- shape ops ----------------------------------------------------------------------------------


def test_cat_promotes_and_skips_1d_empty_tensors():
    assert spec(ct.cat([m(2, 3), m(4, 3, dtype=F64)])) == ((6, 3), F64)
    assert spec(ct.cat([m(2, 3, dtype=I32), m(2, 3, dtype=BOOL)], 1)) == ((2, 6), I32)
    assert spec(ct.cat([m(2, 3, dtype=U8), m(1, 3, dtype=ct.int8)])) == ((3, 3), ct.int16)
    # a 1-D empty tensor joins any shape (skipped), but its dtype still takes part in promotion
    assert spec(ct.cat([m(0, dtype=F64), m(2, 3)], dim=1)) == ((2, 3), F64)
    assert spec(ct.cat([m(2, 3), m(0), m(2, 3)], dim=-1)) == ((2, 6), F32)
    assert spec(ct.cat([m(0), m(0, dtype=I64)])) == ((0,), F32)
    # a (0, 3) tensor is not skipped: it must match in the other dims
    assert spec(ct.cat([m(0, 3), m(2, 3)])) == ((2, 3), F32)
    with pytest.raises(
        RuntimeError,
        match=r"cat\(\): Sizes of tensors must match except in "
        r"dimension 1. Expected 3 in dimension 0 but got 2 for "
        r"tensor number 1",
    ):
        ct.cat([m(3, 0), m(2, 3)], dim=1)


def test_cat_of_no_tensors(data_device):
    # no tensor argument: dispatch picks the default device's backend, whose meta rule raises
    with pytest.raises(ValueError, match=r"cat\(\): expected a non-empty list of Tensors"):
        ct.cat([])


def test_stack_and_copies():
    assert spec(ct.stack([m(2, 3), m(2, 3)])) == ((2, 2, 3), F32)
    assert spec(ct.stack([m(2, 3), m(2, 3)], dim=-1)) == ((2, 3, 2), F32)
    assert spec(m(2, 3).repeat(2, 1, 3)) == ((2, 2, 9), F32)
    assert spec(ct.tile(m(2, 3), (2,))) == ((2, 6), F32)
    assert spec(ct.roll(m(2, 3), 1)) == ((2, 3), F32)
    assert spec(ct.roll(m(2, 3), (1, -1), (0, 1))) == ((2, 3), F32)
    assert spec(ct.flip(m(2, 3), (0, 1))) == ((2, 3), F32)
    assert spec(m(2, 3, 4, dtype=I64).triu(1)) == ((2, 3, 4), I64)
    t = m(3, 3)
    assert t.tril_(-1) is t


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: ct.cat(m(2)), TypeError, r"cat\(\): argument 'tensors'"),
        (
            lambda: ct.cat([m(2, 3), m(2, 4)]),
            RuntimeError,
            r"cat\(\): Sizes of tensors must match except in "
            r"dimension 0. Expected 3 in dimension 1 but "
            r"got 4 for tensor number 1",
        ),
        (
            lambda: ct.cat([m(2, 3), m(2, 3, 4)]),
            RuntimeError,
            r"cat\(\): Tensors must have same number of "
            r"dimensions: expected 2-D tensors, but got 3-D",
        ),
        (
            lambda: ct.cat([m(), m(2)]),
            RuntimeError,
            r"cat\(\): zero-dimensional tensor \(at position "
            r"0\) cannot be concatenated",
        ),
        (lambda: ct.cat([m(2, 3), m(2, 3)], 2), IndexError, r"cat\(\): Dimension out of range"),
        (
            lambda: ct.stack([m(2, 3), m(2, 4)]),
            RuntimeError,
            r"stack\(\): stack expects each tensor to be "
            r"equal size, but got \[2, 3\] at entry 0 and "
            r"\[2, 4\] at entry 1",
        ),
        (
            lambda: ct.flip(m(2, 3), "0"),
            TypeError,
            r"flip\(\): argument 'dims' \(position 2\) must be tuple of ints, not str",
        ),
        (lambda: ct.flip(m(2, 3), (0, -2)), RuntimeError, r"flip\(\): dims has duplicates"),
        (
            lambda: m(3, 4).repeat(2),
            RuntimeError,
            r"repeat\(\): Number of dimensions of repeat dims "
            r"can not be smaller",
        ),
        (
            lambda: ct.roll(m(3, 4), (1, 2), 0),
            RuntimeError,
            r"roll\(\): shifts and dimensions must align. shifts: 2, dims: 1",
        ),
        (lambda: ct.triu(m(3)), RuntimeError, r"triu\(\): input tensor must have at least 2 dim"),
        (
            lambda: m(3, 3).tril_(0.5),
            TypeError,
            r"tril_\(\): argument 'diagonal' \(position 2\) must be int, not float",
        ),
    ],
)
def test_shape_op_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- indexing -----------------------------------------------------------------------------------


def ix(*shape):
    return m(*shape, dtype=I64)


@pytest.mark.parametrize(
    "shape, indices, expected",
    [
        ((3, 4), [ix(2)], (2, 4)),
        ((3, 4), [None, ix(5)], (3, 5)),
        ((3, 4), [ix(2, 1), ix(3)], (2, 3)),
        ((3, 4), [ix(3, 4, 5)], (3, 4, 5, 4)),
        # adjacent advanced indices: the broadcast dims stay in place
        ((2, 3, 4, 5), [None, ix(2), ix(2)], (2, 2, 5)),
        ((2, 3, 4, 5), [None, ix(2, 1), ix(3), None], (2, 2, 3, 5)),
        # non-adjacent advanced indices: the broadcast dims go first
        ((2, 3, 4, 5), [None, ix(2), None, ix(2)], (2, 2, 4)),
        ((2, 3, 4, 5), [ix(7), None, None, ix(1)], (7, 3, 4)),
        ((2, 3, 4, 5), [ix(2, 3), None, ix(3)], (2, 3, 3, 5)),
        ((5,), [ix()], ()),
    ],
)
def test_advanced_index_result_shape(shape, indices, expected):
    assert spec(ct.index(m(*shape), indices)) == (expected, F32)
    assert spec(REGISTRY["_index"].op(m(*shape), indices)) == (expected, F32)


def test_getitem_advanced_shapes():
    x = m(2, 3, 4, 5)
    assert x[:, [0, 1], :, [0, 1]].shape == (2, 2, 4)
    assert x[:, [0, 1], [1, 2]].shape == (2, 2, 5)
    assert x[[[0], [1]], :, [0, 1, 2]].shape == (2, 3, 3, 5)
    assert x[..., [0, 1]].shape == (2, 3, 4, 2)
    assert x[0, [0, 1], 1:3].shape == (2, 2, 5)
    assert x[ix(6)].shape == (6, 3, 4, 5)


def test_bool_mask_shape_is_checked_before_data_is_needed():
    with pytest.raises(
        IndexError,
        match=r"index\(\): The shape of the mask \[4\] at index 0 does "
        r"not match the shape of the indexed tensor",
    ):
        ct.index(m(3, 4), [m(4, dtype=BOOL)])
    # the number of selected elements is data: meta cannot know it (the message names the op
    # called, not the _nonzero it is written with)
    with pytest.raises(
        NotImplementedError,
        match=r"index\(\): the output shape depends on the "
        r"data",
    ):
        ct.index(m(3, 4), [m(3, dtype=BOOL)])


def test_bool_masks_on_data(data_device):
    x = ct.arange(24, device=data_device).reshape(2, 3, 4)
    mask = x.sum(2).gt(30)  # [[F, F, T], [T, T, T]]
    assert x[mask].shape == (4, 4)
    assert x[mask].tolist()[0] == [8, 9, 10, 11]
    assert x[:, x[0, :, 0].ge(4)].shape == (2, 2, 4)
    # a 2-D mask covers two dims, then an int index on the third (aten::index convention)
    picked = ct.index(x, [mask, ct.tensor([0, 1, 2, 3], device=data_device)])
    assert picked.tolist() == [8, 13, 18, 23]
    assert ct.masked_select(x, x.gt(20)).tolist() == [21, 22, 23]
    y = ct.zeros(2, 3, device=data_device)
    y[y.eq(0)] = 1.5
    assert y.sum().item() == 9.0


@pytest.mark.parametrize(
    "call, shape, dtype",
    [
        (lambda: ct.index_select(m(3, 4), 1, ix(5)), (3, 5), F32),
        (lambda: ct.index_select(m(3, 4), 0, ix()), (1, 4), F32),
        (lambda: ct.index_select(m(), 0, ix(1)), (), F32),
        (lambda: ct.index_select(m(3, 4), 0, m(2, dtype=I32)), (2, 4), F32),
        (lambda: ct.gather(m(3, 4), 1, ix(3, 7)), (3, 7), F32),
        (lambda: ct.gather(m(3, 4), 0, ix(5, 2)), (5, 2), F32),
        (lambda: ct.scatter(m(3, 4), 0, ix(2, 2), m(2, 3)), (3, 4), F32),
        (lambda: ct.scatter(m(3, 4), 0, ix(2, 2), 1.5), (3, 4), F32),
        (lambda: m(3, 4).scatter_add_(1, ix(3, 2), m(3, 2)), (3, 4), F32),
        (lambda: ct.index_add(m(3, 4), 1, ix(2), m(3, 2), alpha=2), (3, 4), F32),
        (lambda: ct.masked_fill(m(3), m(2, 3, dtype=BOOL), 1.0), (2, 3), F32),
        (lambda: m(2, 3, dtype=I64).masked_fill_(m(3, dtype=BOOL), ct.tensor(2.0)), (2, 3), I64),
        (lambda: ct.index_put(m(3, 4), [ix(2)], m(4)), (3, 4), F32),
        (lambda: m(3, 4).index_put_([ix(2), ix(2)], m(1), accumulate=True), (3, 4), F32),
    ],
)
def test_indexing_op_shapes(call, shape, dtype):
    assert spec(call()) == (shape, dtype)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: ct.index_select(m(3, 4), 0, ix(1, 1)),
            IndexError,
            r"index_select\(\): Index is supposed to be a vector",
        ),
        (
            lambda: ct.index_select(m(3, 4), 0, m(2)),
            RuntimeError,
            r"index_select\(\): Expected dtype int32 or int64 for index",
        ),
        (
            lambda: ct.gather(m(3, 4), 0, ix(2, 5)),
            RuntimeError,
            r"gather\(\): Expected index \[2, 5\] to be no larger than self \[3, 4\] apart from "
            r"dimension 0",
        ),
        (
            lambda: ct.gather(m(3, 4), 0, ix(2)),
            RuntimeError,
            r"gather\(\): Index tensor must have the same number of dimensions as input",
        ),
        (
            lambda: ct.gather(m(3, 4), 0, m(2, 2, dtype=U8)),
            RuntimeError,
            r"gather\(\): Expected dtype int32/int64 for index",
        ),  # int32 is taken, as PyTorch
        (
            lambda: ct.scatter(m(3, 4), 0, ix(2, 2), m(2, 2, dtype=F64)),
            RuntimeError,
            r"scatter\(\): Expected self.dtype to be equal to src.dtype",
        ),
        (
            lambda: ct.scatter(m(3, 4), 0, ix(2, 2), m(1, 2)),
            RuntimeError,
            r"scatter\(\): Expected index \[2, 2\] .* no larger size than src \[1, 2\]",
        ),
        (
            lambda: ct.scatter_add(m(3, 4), 0, ix(2, 2), 1.0),
            TypeError,
            r"scatter_add\(\): argument 'src' \(position 4\) must be Tensor, not float",
        ),
        (
            lambda: ct.index_add(m(3, 4), 0, ix(2), m(2, 4, dtype=F64)),
            RuntimeError,
            r"index_add\(\): self \(float32\) and source "
            r"\(float64\) must have the same scalar type",
        ),
        (
            lambda: ct.index_add(m(3, 4), 0, ix(2), m(3, 4)),
            RuntimeError,
            r"index_add\(\): Number of indices \(2\) should be equal to source.size\(dim\): \(3\)",
        ),
        (
            lambda: m(3, 4).masked_fill(m(3, 4), 1),
            RuntimeError,
            r"masked_fill\(\): only supports boolean masks, but got mask with dtype float32",
        ),
        (
            lambda: m(3, 4).masked_fill(m(4, dtype=BOOL), m(1)),
            RuntimeError,
            r"masked_fill\(\): only supports a 0-dimensional value tensor",
        ),
        (
            lambda: m(3).masked_fill_(m(2, 3, dtype=BOOL), 1.0),
            RuntimeError,
            r"masked_fill_\(\): output with shape \[3\] doesn't match the broadcast shape \[2, 3\]",
        ),
        (
            lambda: ct.index(m(3, 4), [ix(2), ix(3)]),
            IndexError,
            r"index\(\): shape mismatch: indexing tensors "
            r"could not be broadcast together with shapes "
            r"\[2\], \[3\]",
        ),
        (
            lambda: ct.index(m(3, 4), [ix(2), ix(2), ix(2)]),
            IndexError,
            r"index\(\): too many indices for tensor of dimension 2 \(got 3\)",
        ),
        (
            lambda: ct.index(m(3, 4), [m(2)]),
            IndexError,
            r"index\(\): tensors used as indices must be long, int, byte or bool tensors",
        ),
        (
            lambda: m(3, 4).index_put_([ix(2)], m(3)),
            RuntimeError,
            r"index_put_\(\): shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
            r"indexing result of shape \[2, 4\]",
        ),
        (
            lambda: REGISTRY["_index_put_"].op(m(3, 4), [ix(2)], m(4, dtype=F64)),
            RuntimeError,
            r"index_put_\(\): Index put requires the source and destination dtypes match",
        ),
        (
            lambda: ct.masked_select(m(3), m(3)),
            RuntimeError,
            r"masked_select\(\): expected BoolTensor for mask",
        ),
    ],
)
def test_indexing_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- nn ops -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, w, kwargs, shape",
    [
        ((1, 3, 5, 5), (4, 3, 3, 3), {}, (1, 4, 3, 3)),
        ((2, 3, 7, 9), (4, 3, 3, 3), dict(stride=2, padding=1), (2, 4, 4, 5)),
        (
            (2, 3, 7, 9),
            (4, 3, 3, 2),
            dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
            (2, 4, 4, 7),
        ),
        ((1, 3, 5, 6), (4, 3, 2, 2), dict(padding="same"), (1, 4, 5, 6)),
        ((1, 3, 5, 6), (4, 3, 3, 2), dict(padding="same", dilation=2), (1, 4, 5, 6)),
        ((1, 3, 5, 6), (4, 3, 3, 3), dict(padding="valid"), (1, 4, 3, 4)),
        ((2, 6, 5, 5), (4, 3, 3, 3), dict(groups=2), (2, 4, 3, 3)),
        ((2, 6, 5, 5), (6, 1, 3, 3), dict(groups=6, padding=1), (2, 6, 5, 5)),
        ((3, 5, 5), (4, 3, 3, 3), {}, (4, 3, 3)),
    ],
)
def test_conv2d_output_size(x, w, kwargs, shape):
    assert spec(ct.conv2d(m(*x), m(*w), **kwargs)) == (shape, F32)
    assert spec(ct.conv2d(m(*x), m(*w), m(w[0]), **kwargs)) == (shape, F32)


def test_conv1d_output_size():
    assert spec(ct.conv1d(m(2, 3, 10), m(4, 3, 3), stride=2, padding=1)) == ((2, 4, 5), F32)
    assert spec(ct.conv1d(m(3, 10), m(4, 3, 4), padding="same")) == ((4, 10), F32)
    assert spec(ct.conv1d(m(2, 6, 10), m(6, 2, 3), dilation=2, groups=3)) == ((2, 6, 6), F32)


@pytest.mark.parametrize(
    "x, k, kwargs, shape",
    [
        ((1, 2, 5, 5), 2, {}, (1, 2, 2, 2)),
        ((1, 2, 5, 5), 2, dict(ceil_mode=True), (1, 2, 3, 3)),
        ((1, 2, 5, 5), 3, dict(stride=2, padding=1), (1, 2, 3, 3)),
        ((1, 2, 6, 6), 3, dict(stride=2, padding=1, ceil_mode=True), (1, 2, 4, 4)),
        # ceil_mode: the last window may not start in the right padding
        ((1, 1, 5, 5), 2, dict(stride=2, padding=1, ceil_mode=True), (1, 1, 3, 3)),
        ((2, 7, 6), (2, 3), dict(stride=1), (2, 6, 4)),
        ((1, 1, 8, 8), 3, dict(stride=3, ceil_mode=True), (1, 1, 3, 3)),
    ],
)
def test_pool_output_size(x, k, kwargs, shape):
    v, i = ct.max_pool2d(m(*x), k, return_indices=True, **kwargs)
    assert spec(v) == (shape, F32) and spec(i) == (shape, I64)
    assert spec(ct.avg_pool2d(m(*x), k, **kwargs)) == (shape, F32)


def test_max_pool_dilation_and_softmax_embedding():
    assert ct.max_pool2d(m(1, 1, 9, 9), 3, stride=1, dilation=2).shape == (1, 1, 5, 5)
    assert spec(ct.softmax(m(2, 3), 1)) == ((2, 3), F32)
    assert spec(m(2, 3).log_softmax(-1, F64)) == ((2, 3), F64)
    assert spec(ct.softmax(m(2, 3, dtype=I64), 0, dtype=F32)) == ((2, 3), F32)
    assert spec(ct.embedding(m(10, 4), ix(2, 3))) == ((2, 3, 4), F32)
    assert spec(ct.embedding(m(10, 4), m(5, dtype=I32), padding_idx=-1)) == ((5, 4), F32)
    gi, gw, gb = REGISTRY["convolution_backward"].op(
        m(2, 4, 3, 3), m(2, 6, 5, 5), m(4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 2
    )
    assert (gi.shape, gw.shape, gb.shape) == ((2, 6, 5, 5), (4, 3, 3, 3), (4,))
    gx = REGISTRY["avg_pool2d_backward"].op(
        m(1, 2, 3, 3), m(1, 2, 5, 5), 3, 2, 1, False, True, None
    )
    assert gx.shape == (1, 2, 5, 5)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: ct.conv2d(m(1, 4, 5, 5), m(8, 3, 3, 3)),
            RuntimeError,
            r"conv2d\(\): Given groups=1, weight of size "
            r"\[8, 3, 3, 3\], expected input\[1, 4, 5, 5\] "
            r"to have 3 channels, but got 4 channels instead",
        ),
        (
            lambda: ct.conv2d(m(1, 6, 5, 5), m(4, 3, 3, 3), groups=3),
            RuntimeError,
            r"conv2d\(\): Given groups=3, expected weight to be divisible by 3 at dimension 0",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 2, 2), m(4, 3, 3, 3)),
            RuntimeError,
            r"conv2d\(\): Calculated padded input size per "
            r"channel: \(2 x 2\). Kernel size: \(3 x 3\)",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5), m(4, 3, 3, 3), m(3)),
            RuntimeError,
            r"conv2d\(\): Given weight of size \[4, 3, 3, "
            r"3\], expected bias to be 1-dimensional with 4 "
            r"elements, but got bias of size \[3\]",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5), m(4, 3, 2, 2), padding="same", stride=2),
            RuntimeError,
            r"conv2d\(\): padding='same' is not supported for strided convolutions",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5), m(4, 3, 2, 2), padding="full"),
            RuntimeError,
            r"conv2d\(\): Invalid padding string: 'full'",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5), m(4, 3, 3, 3), padding=-1),
            RuntimeError,
            r"conv2d\(\): negative padding is not supported",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5), m(4, 3, 3, 3), stride=0),
            RuntimeError,
            r"conv2d\(\): non-positive stride is not supported",
        ),
        (
            lambda: ct.conv2d(m(1, 3, 5, 5, dtype=F64), m(4, 3, 3, 3)),
            RuntimeError,
            r"conv2d\(\): expected input and weight of the "
            r"same non-bool dtype, got input float64 and "
            r"weight float32",
        ),
        (
            lambda: ct.conv2d(m(3, 5), m(4, 3, 3, 3)),
            RuntimeError,
            r"conv2d\(\): Expected 3D \(unbatched\) or 4D "
            r"\(batched\) input to conv2d, but got input of "
            r"size: \[3, 5\]",
        ),
        (
            lambda: ct.max_pool2d(m(1, 2, 5, 5), 3, padding=2),
            RuntimeError,
            r"max_pool2d\(\): pad should be at most half "
            r"of kernel size, but got pad=2, kernel_size=3",
        ),
        (
            lambda: ct.avg_pool2d(m(1, 2, 5, 5), 2, padding=2),
            RuntimeError,
            r"avg_pool2d\(\): pad should be at most half of kernel size",
        ),
        (
            lambda: ct.max_pool2d(m(1, 2, 1, 1), 2),
            RuntimeError,
            r"max_pool2d\(\): Given input size: \(2x1x1\). "
            r"Calculated output size: \(2x0x0\). Output "
            r"size is too small",
        ),
        (
            lambda: ct.max_pool2d(m(2, 5), 2),
            RuntimeError,
            r"max_pool2d\(\): non-empty 3D or 4D \(batch mode\) tensor expected for input",
        ),
        (
            lambda: ct.max_pool2d(m(1, 2, 5, 5), (2, 2, 2)),
            RuntimeError,
            r"max_pool2d\(\): kernel_size must either be a single int, or a tuple of two ints",
        ),
        (
            lambda: ct.avg_pool2d(m(1, 2, 5, 5), 2, divisor_override=0),
            RuntimeError,
            r"avg_pool2d\(\): divisor must be not zero",
        ),
        (
            lambda: ct.softmax(m(2, 3, dtype=I64), 1),
            NotImplementedError,
            r"softmax\(\): not implemented for int64",
        ),
        (
            lambda: ct.log_softmax(m(2, 3), 2),
            IndexError,
            r"log_softmax\(\): Dimension out of range",
        ),
        (
            lambda: ct.embedding(m(10, 4), m(3)),
            RuntimeError,
            r"embedding\(\): Expected tensor for argument "
            r"#1 'indices' to have one of the following "
            r"scalar types: Long, Int; but got float32",
        ),
        (
            lambda: ct.embedding(m(10, 4), ix(3), padding_idx=10),
            AssertionError,
            r"embedding\(\): Padding_idx must be within num_embeddings",
        ),
        (
            lambda: REGISTRY["convolution_backward"].op(
                m(2, 4, 4, 4), m(2, 6, 5, 5), m(4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 2
            ),
            RuntimeError,
            r"convolution_backward\(\): expected grad_output of shape \[2, 4, 3, 3\]",
        ),
    ],
)
def test_nn_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- composites of comparisons ------------------------------------------------------------------


def test_isclose_rules():
    assert spec(ct.isclose(m(2, 3), m(3))) == ((2, 3), BOOL)
    assert spec(ct.isclose(m(3, dtype=I64), m(3, dtype=I64))) == ((3,), BOOL)
    with pytest.raises(
        RuntimeError,
        match=r"isclose\(\): expected both tensors to have the same "
        r"dtype, got float32 and float64",
    ):
        ct.isclose(m(3), m(3, dtype=F64))
    with pytest.raises(RuntimeError, match=r"isclose\(\): rtol and atol must be non-negative"):
        ct.isclose(m(3), m(3), rtol=-1.0)
    assert ct.equal(m(2, 3), m(3, 2)) is False


def test_comparisons_on_data(data_device):
    a = ct.tensor([1.0, float("inf"), float("nan"), 2.0], device=data_device)
    b = ct.tensor([1.0 + 1e-7, float("inf"), float("nan"), 2.1], device=data_device)
    assert ct.isclose(a, b).tolist() == [True, True, False, False]
    assert ct.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False]
    assert ct.allclose(a[:2], b[:2]) is True
    assert ct.equal(a[:2], a[:2].clone()) is True


# ---- FLOP formulas ------------------------------------------------------------------------------


def flops(name, *args, **kwargs):
    d = REGISTRY[name]
    record = d.op.bind(*args, **kwargs) if d.schema is not None else args
    return d.flops(d.op(*args, **kwargs), *record, **({} if d.schema is not None else kwargs))


def test_flop_formulas():
    assert flops("mm", m(2, 3), m(3, 5)) == 2 * 2 * 5 * 3
    assert flops("bmm", m(4, 2, 3), m(4, 3, 5)) == 2 * 4 * 2 * 5 * 3
    assert flops("addmm", m(5), m(2, 3), m(3, 5)) == 2 * 2 * 5 * 3 + 2 * 5
    out = 2 * 8 * 3 * 3  # N * C_out * H_out * W_out
    assert flops("conv2d", m(2, 6, 5, 5), m(8, 3, 3, 3), None, 1, 0, 1, 2) == 2 * out * 3 * 9
    assert flops("conv2d", m(2, 6, 5, 5), m(8, 3, 3, 3), m(8), 1, 0, 1, 2) == 2 * out * 27 + out
    assert flops("sum", m(4, 5), 1) == 20
    assert flops("amax", m(4, 5)) == 20
    assert flops("_max_dim", m(4, 5), 0) == 20
    assert flops("softmax", m(4, 5), 1) == 5 * 20


def test_kinds():
    primitives = {
        "sum",
        "prod",
        "amax",
        "argmax",
        "cumsum",
        "cumprod",
        "mm",
        "bmm",
        "cat",
        "_nonzero",
        "_index",
        "_index_put_",
        "_copy_",
        "fill_",
        "arange",
        "uniform_",
        "normal_",
        "random_",
        "conv2d",
        "convolution_backward",
        "max_pool2d_with_indices",
        "avg_pool2d",
        "avg_pool2d_backward",
    }
    assert primitives <= set(ct.ops.primitives())
    for name in (
        "mean",
        "max",
        "min",
        "argmin",
        "any",
        "all",
        "var",
        "logsumexp",
        "matmul",
        "dot",
        "mv",
        "outer",
        "linear",
        "stack",
        "repeat",
        "tile",
        "roll",
        "nonzero",
        "index",
        "index_put",
        "masked_select",
        "conv1d",
        "max_pool2d",
        "isclose",
        "allclose",
        "equal",
        "index_select",
        "masked_fill",
        "reshape",
        "flatten",
    ):
        assert REGISTRY[name].kind == "composite_implicit", name
    for name in (
        "addmm",
        "embedding",
        "amin",
        "_max_dim",
        "_min_dim",
        "std",
        "norm",
        "softmax",
        "log_softmax",
        "flip",
        "triu",
        "tril",
        "gather",
        "scatter",
        "scatter_add",
        "index_add",
        "bernoulli_",
        "bernoulli",
        "linspace",
        "zeros",
        "view",
        "copy_",
    ):
        assert REGISTRY[name].kind == "composite_explicit", name
    assert not REGISTRY["_nonzero"].structured
    for name in ("argmax", "argmin", "all", "any", "_nonzero", "nonzero"):
        assert not REGISTRY[name].differentiable, name


# ---- derivative formulas produce gradients of the inputs' shapes --------------------------------


class Ctx:
    """What autograd hands a derivative formula (see coretorch.ops.declare): the argument
    record, each argument also by its schema name (``ctx.self``)."""

    def __init__(self, name, args, kwargs):
        d = REGISTRY[name]
        self.decl = d
        self.result = d.op(*args, **kwargs) if d.inplace_only is False else None
        if d.schema is not None:
            args, kwargs = d.op.bind(*args, **kwargs), {}
            for n, v in zip(d.schema.names, args):
                setattr(self, n, v)
        self.args, self.kwargs = args, kwargs
        self.needs_input_grad = tuple(isinstance(a, ct.Tensor) or isinstance(a, list) for a in args)


def _grads_of(name, *args, **kwargs):
    d = REGISTRY[name]
    ctx = Ctx(name, args, kwargs)
    out = ctx.result if ctx.result is not None else args[0]
    outs = out if isinstance(out, tuple) else (out,)
    grads = [o.new_empty(o.shape) if o.dtype.is_floating_point else None for o in outs]
    return d.derivative(ctx, *grads)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("sum", (m(2, 3, 4), (0, 2)), {}),
        ("sum", (m(2, 3), 1), dict(keepdim=True, dtype=F64)),
        ("prod", (m(2, 3), 1), {}),
        ("prod", (m(2, 3),), {}),
        ("amax", (m(2, 3, 4), (1,)), {}),
        ("amin", (m(2, 3),), {}),
        ("_max_dim", (m(2, 3, 4), 1), {}),
        ("_min_dim", (m(2, 3), -1, True), {}),
        ("cumsum", (m(2, 3), 1), {}),
        ("cumprod", (m(2, 3), 0), {}),
        ("mm", (m(2, 3), m(3, 4)), {}),
        ("bmm", (m(5, 2, 3), m(5, 3, 4)), {}),
        ("addmm", (m(4), m(2, 3), m(3, 4)), dict(beta=0.5, alpha=2)),
        ("flip", (m(2, 3), (0,)), {}),
        ("triu", (m(3, 3), 1), {}),
        ("tril", (m(3, 3),), {}),
        ("gather", (m(3, 4), 1, ix(3, 2)), {}),
        ("scatter", (m(3, 4), 0, ix(2, 2), m(2, 3)), {}),
        ("scatter_add", (m(3, 4), 0, ix(2, 2), m(3, 3)), {}),
        ("index_add", (m(3, 4), 1, ix(2), m(3, 2)), dict(alpha=3)),
        ("_index", (m(3, 4, 5), [None, ix(2), ix(2)]), {}),
        ("softmax", (m(3, 4), 1), {}),
        ("log_softmax", (m(3, 4), 0), {}),
        ("conv2d", (m(2, 6, 5, 6), m(4, 3, 3, 3), m(4), 2, 1, 1, 2), {}),
        ("conv2d", (m(6, 5, 6), m(4, 6, 2, 2)), dict(padding="same")),
        ("max_pool2d_with_indices", (m(2, 3, 5, 5), 2), dict(ceil_mode=True)),
        ("avg_pool2d", (m(2, 3, 5, 5), 3, 2, 1), {}),
        ("avg_pool2d_backward", (m(1, 2, 3, 3), m(1, 2, 5, 5), 3, 2, 1, False, True, None), {}),
        ("embedding", (m(10, 4), ix(2, 3)), dict(padding_idx=0)),
        (
            "convolution_backward",
            (m(2, 4, 3, 3), m(2, 6, 5, 5), m(4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 2),
            {},
        ),
    ],
)
def test_derivative_shapes(name, args, kwargs):
    grads = _grads_of(name, *args, **kwargs)
    for a, g in zip(args, grads):
        if g is None:
            continue
        if isinstance(a, list):
            assert [x.shape for x in g] == [x.shape for x in a]
            continue
        assert isinstance(a, ct.Tensor), name
        # a gradient may keep a broadcast shape (autograd sums it down to the input's)
        assert broadcast_shapes(name, tuple(a.shape), tuple(g.shape)) == tuple(g.shape), name
        assert g.dtype == a.dtype, name


def test_derivative_of_cat_and_index_put():
    a, b, e = m(2, 3), m(4, 3, dtype=F64), m(0)
    ctx = Ctx("cat", ([a, e, b],), {})
    (grads,) = REGISTRY["cat"].derivative(ctx, m(6, 3, dtype=F64))
    assert [(tuple(g.shape), g.dtype) for g in grads] == [((2, 3), F32), ((0,), F32), ((4, 3), F64)]
    x = m(3, 4)
    ctx = Ctx("_index_put_", (x, [ix(2)], m(4)), dict(accumulate=False))
    g_self, _, g_values = REGISTRY["_index_put_"].derivative(ctx, m(3, 4))
    assert g_self.shape == (3, 4) and g_values.shape == (2, 4)


# ---- swept against torch ------------------------------------------------------------------------


def _torch_spec(fn):
    try:
        r = fn()
    except Exception:  # noqa: BLE001 - the sweep compares successes only
        return None
    if isinstance(r, tuple):
        return [(tuple(x.shape), str(x.dtype).replace("torch.", "")) for x in r]
    return [(tuple(r.shape), str(r.dtype).replace("torch.", ""))]


def _ct_spec(fn):
    r = fn()
    if isinstance(r, tuple):
        return [(tuple(x.shape), x.dtype.name) for x in r]
    return [(tuple(r.shape), r.dtype.name)]


def _sweep(cases):
    torch = pytest.importorskip("torch")
    checked = 0
    for make in cases:
        ct_fn, torch_fn = make(torch)
        expected = _torch_spec(torch_fn)
        if expected is None:
            continue
        assert _ct_spec(ct_fn) == expected, make
        checked += 1
    assert checked > len(cases) // 2


def _pair(ct_shape_dtypes, torch_mod):
    """(coretorch meta tensors, torch meta tensors) for (shape, dtype-name) pairs."""
    ours = [ct.empty(s, dtype=getattr(ct, d), device="meta") for s, d in ct_shape_dtypes]
    theirs = [
        torch_mod.empty(s, dtype=getattr(torch_mod, d), device="meta") for s, d in ct_shape_dtypes
    ]
    return ours, theirs


def test_reductions_match_torch():
    cases = []
    for shape in [(3,), (2, 3), (2, 3, 4)]:
        for dtype in ("float32", "int32", "bool", "uint8"):
            for dim in [None, 0, -1, (0, -1)]:
                for keepdim in (False, True):

                    def make(torch, shape=shape, dtype=dtype, dim=dim, keepdim=keepdim):
                        (a,), (t,) = _pair([(shape, dtype)], torch)
                        return (
                            lambda: (
                                a.sum(dim, keepdim),
                                a.any(dim, keepdim),
                                a.amax(dim or (), keepdim),
                            ),
                            lambda: (
                                t.sum(dim, keepdim),
                                t.any(dim, keepdim),
                                t.amax(dim or (), keepdim),
                            ),
                        )

                    cases.append(make)
                    # torch's meta argmax accepts bool, its cpu kernel refuses it (as ours do)
                    if not isinstance(dim, tuple) and dtype != "bool":

                        def make_arg(torch, shape=shape, dtype=dtype, dim=dim, keepdim=keepdim):
                            (a,), (t,) = _pair([(shape, dtype)], torch)
                            return (
                                lambda: (
                                    a.argmax(dim, keepdim),
                                    a.prod(dim, keepdim) if dim is not None else a.prod(),
                                ),
                                lambda: (
                                    t.argmax(dim, keepdim),
                                    t.prod(dim, keepdim) if dim is not None else t.prod(),
                                ),
                            )

                        cases.append(make_arg)
    _sweep(cases)


def test_matmul_matches_torch():
    shapes = [(3,), (2, 3), (3, 4), (5, 2, 3), (5, 3, 4), (2, 1, 2, 3), (1, 3, 4), (4, 3)]
    cases = []
    for a in shapes:
        for b in shapes:

            def make(torch, a=a, b=b):
                (x, y), (tx, ty) = _pair([(a, "float32"), (b, "float32")], torch)
                return lambda: ct.matmul(x, y), lambda: torch.matmul(tx, ty)

            cases.append(make)
    torch = pytest.importorskip("torch")
    for make in cases:
        ours, theirs = make(torch)
        expected = _torch_spec(theirs)
        try:
            got = _ct_spec(ours)
        except RuntimeError:
            got = None
        assert got == expected, make


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_conv_and_pool_match_torch():
    cases = []
    for x in [(1, 3, 7, 8), (2, 6, 9, 5)]:
        for w in [(4, 3, 3, 3), (6, 3, 2, 4), (6, 1, 3, 1)]:
            for kw in [
                {},
                dict(stride=2),
                dict(padding=(1, 2)),
                dict(padding="same"),
                dict(dilation=2, padding=1),
                dict(groups=2),
                dict(groups=3, stride=(1, 2)),
            ]:

                def make(torch, x=x, w=w, kw=kw):
                    (a, b), (ta, tb) = _pair([(x, "float32"), (w, "float32")], torch)
                    return (
                        lambda: ct.conv2d(a, b, **kw),
                        lambda: torch.nn.functional.conv2d(ta, tb, **kw),
                    )

                cases.append(make)
        for k in (2, 3, (3, 2)):
            for kw in [
                {},
                dict(stride=1),
                dict(stride=2, padding=1),
                dict(ceil_mode=True),
                dict(stride=2, padding=1, ceil_mode=True),
            ]:

                def make_pool(torch, x=x, k=k, kw=kw):
                    (a,), (ta,) = _pair([(x, "float32")], torch)
                    f = torch.nn.functional
                    return (
                        lambda: (
                            ct.max_pool2d(a, k, return_indices=True, **kw)
                            + (ct.avg_pool2d(a, k, **kw),)
                        ),
                        lambda: (
                            f.max_pool2d(ta, k, return_indices=True, **kw)
                            + (f.avg_pool2d(ta, k, **kw),)
                        ),
                    )

                cases.append(make_pool)
    _sweep(cases)


def test_indexing_matches_torch():
    cases = []
    for shape in [(3, 4), (2, 3, 4, 5)]:
        for idx in [
            [(2,)],
            [None, (2,)],
            [(2, 1), (3,)],
            [None, (2,), None, (3, 1)],
            [(2,), None, (2,)],
            [None, None, (0,)],
            [(4, 1, 2)],
        ]:
            if len(idx) > len(shape):
                continue

            def make(torch, shape=shape, idx=idx):
                (x,), (tx,) = _pair([(shape, "float32")], torch)
                ours = [None if s is None else ct.zeros(s, dtype=I64, device="meta") for s in idx]
                theirs = [
                    None if s is None else torch.zeros(s, dtype=torch.int64, device="meta")
                    for s in idx
                ]
                return (lambda: ct.index(x, ours), lambda: torch.ops.aten.index(tx, theirs))

            cases.append(make)
    _sweep(cases)


def test_cat_matches_torch():
    cases = []
    for group in [
        [((2, 3), "float32"), ((2, 3), "float64")],
        [((0,), "float64"), ((2, 3), "float32")],
        [((2, 3), "int32"), ((0,), "bool"), ((5, 3), "uint8")],
        [((0,), "int64"), ((0,), "float32")],
    ]:
        for dim in (0, 1, -1):

            def make(torch, group=group, dim=dim):
                ours, theirs = _pair(group, torch)
                return lambda: ct.cat(ours, dim), lambda: torch.cat(theirs, dim)

            cases.append(make)
    _sweep(cases)


# ---- the trickier derivative formulas, against torch on a data device ----------------------------


def _grads_vs_torch(torch, device, fct, ft, arrays, double=False):
    import numpy as np

    rng = np.random.default_rng(0)
    ours = [ct.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out, tout = fct(*ours), ft(*theirs)
    w = rng.standard_normal(tuple(tout.shape))
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    g = ct.autograd.grad(
        (out * ct.tensor(w, device=device)).sum(), [ours[i] for i in diff], create_graph=double
    )
    tg = torch.autograd.grad(
        (tout * torch.tensor(w)).sum(), [theirs[i] for i in diff], create_graph=double
    )
    for a, b in zip(g, tg):
        np.testing.assert_allclose(
            a.detach().numpy(force=True), b.detach().numpy(), rtol=1e-6, atol=1e-8
        )
    if double:
        vs = [rng.standard_normal(tuple(b.shape)) for b in tg]
        s = sum((a * ct.tensor(v, device=device)).sum() for a, v in zip(g, vs))
        ts = sum((b * torch.tensor(v)).sum() for b, v in zip(tg, vs))
        gg = ct.autograd.grad(s, [ours[i] for i in diff], allow_unused=True)
        tgg = torch.autograd.grad(ts, [theirs[i] for i in diff], allow_unused=True)
        for a, b, i in zip(gg, tgg, diff):
            shape = arrays[i].shape
            np.testing.assert_allclose(
                np.zeros(shape) if a is None else a.detach().numpy(force=True),
                np.zeros(shape) if b is None else b.numpy(),
                rtol=1e-6,
                atol=1e-8,
            )


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_tricky_derivatives_match_torch(data_device):
    import numpy as np

    torch = pytest.importorskip("torch")
    f = torch.nn.functional
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5))
    x[0, 1] = x[0, 3] = x[2, 4] = 0.0  # zeros: products need the zero-safe formulas
    check = lambda *a, **k: _grads_vs_torch(torch, data_device, *a, **k)  # noqa: E731
    check(lambda t: t.prod(1), lambda t: t.prod(1), [x])
    check(lambda t: t.prod(), lambda t: t.prod(), [x[1:2]])
    check(lambda t: t.cumprod(1), lambda t: t.cumprod(1), [x], double=True)
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    check(lambda t: t.amax(1), lambda t: t.amax(1), [ties])
    check(lambda t: ct.max(t), lambda t: torch.max(t), [ties])
    # padding="same" with an even kernel pads one more at the bottom/right
    check(
        lambda a, w, b: ct.conv2d(a, w, b, padding="same"),
        lambda a, w, b: f.conv2d(a, w, b, padding="same"),
        [
            rng.standard_normal((1, 2, 5, 6)),
            rng.standard_normal((3, 2, 2, 3)),
            rng.standard_normal(3),
        ],
        double=True,
    )
    check(
        lambda a, w: ct.conv2d(a, w, stride=2, groups=2, dilation=(1, 2)),
        lambda a, w: f.conv2d(a, w, stride=2, groups=2, dilation=(1, 2)),
        [rng.standard_normal((2, 4, 7, 8)), rng.standard_normal((4, 2, 3, 2))],
        double=True,
    )
    check(
        lambda a: ct.avg_pool2d(a, 3, 2, 1, True, False).pow(2),
        lambda a: f.avg_pool2d(a, 3, 2, 1, True, False).pow(2),
        [rng.standard_normal((2, 3, 6, 6))],
        double=True,
    )
    check(
        lambda a: ct.max_pool2d(a, 3, 2, 1, ceil_mode=True),
        lambda a: f.max_pool2d(a, 3, 2, 1, ceil_mode=True),
        [rng.standard_normal((2, 3, 6, 6))],
    )
    idx = np.array([[0, 1, 4], [1, 1, 2]])
    check(
        lambda w, i: ct.embedding(w, i, padding_idx=1),
        lambda w, i: f.embedding(i, w, 1),
        [rng.standard_normal((5, 3)), idx],
    )
    # index smaller than src (torch's own formula fails here): src's gradient is the output
    # gradient gathered at the index, and zero outside the scattered block
    src = ct.tensor(rng.standard_normal((3, 3)), device=data_device, requires_grad=True)
    index = np.array([[0, 1], [2, 0]])
    w = rng.standard_normal((3, 4))
    out = ct.zeros(3, 4, dtype=F64, device=data_device).scatter(
        0, ct.tensor(index, device=data_device), src
    )
    out.backward(ct.tensor(w, device=data_device))
    expected = np.zeros((3, 3))
    expected[:2, :2] = np.take_along_axis(w[:, :2], index, 0)
    np.testing.assert_array_equal(src.grad.cpu().numpy(), expected)
    check(
        lambda a, i, j: a[i, :, j],
        lambda a, i, j: a[i, :, j],
        [rng.standard_normal((2, 3, 4)), np.array([0, 1, 1]), np.array([1, 3, 1])],
    )
    check(
        lambda a, i, v: a.index_put((i,), v, accumulate=True),
        lambda a, i, v: a.index_put((i,), v, accumulate=True),
        [rng.standard_normal((3, 4)), np.array([0, 2, 0]), rng.standard_normal((3, 4))],
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: t.normal_(0.0, -1.0), "expected std >= 0.0"),
        (lambda t: t.to(ct.uint8).random_(0, 300), "to be in the range of uint8"),
        (lambda t: t.bernoulli_(1.5), "expects p to be in"),
        (lambda t: t.to(ct.int64) ** -1, "Integers to negative integer powers"),
    ],
)
def test_argument_checks_hold_on_every_device(device, call, message):
    # the meta rule owns these checks, so shape-only devices refuse the same arguments
    with pytest.raises(RuntimeError, match=message):
        call(ct.zeros(3, device=device))
