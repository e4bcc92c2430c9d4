"""OpInfos of the data-moving shape ops (coretorch/ops/shape_ops.py)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case

BOOL = (_dt.bool,)
F16 = (_dt.float16,)


def _cat_samples(op, m, dtype):
    yield SampleInput([m.make((2, 3)), m.make((4, 3))], name="dim0")
    yield SampleInput([m.make((2, 3)), m.make((2, 1)), m.make((2, 2))], (1,), name="dim1-three")
    yield SampleInput(
        [m.make((2, 3), layout="transposed"), m.make((2, 3), layout="sliced")],
        (-1,),
        name="noncontiguous-negative-dim",
    )
    yield SampleInput([m.make((2, 3)), m.make((0,)), m.make((1, 3))], name="skips-1d-empty")
    yield SampleInput([m.make((0, 3)), m.make((2, 3))], name="zero-size")
    yield SampleInput([m.make((3,))], name="single")
    other = _dt.float64 if dtype is not _dt.float64 else _dt.int32
    yield SampleInput([m.make((2, 3)), m.make((1, 3), dtype=other)], name="promotes")


def _cat_ref(tensors, dim=0):
    keep = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    res = np.result_type(*tensors)
    return np.concatenate([t.astype(res) for t in keep], axis=dim)


def _stack_samples(op, m, dtype):
    yield SampleInput([m.make((2, 3)), m.make((2, 3))], name="dim0")
    yield SampleInput(
        [m.make((2, 3)), m.make((2, 3), layout="transposed"), m.make((2, 3), layout="sliced")],
        (2,),
        name="last-dim",
    )
    yield SampleInput([m.make((2, 3)), m.make((2, 3))], (-2,), name="negative-dim")
    yield SampleInput([m.make(()), m.make(())], name="0-d")
    yield SampleInput([m.make((0, 2))], (1,), name="zero-size")


def _flip_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), ((0,),), name="dim0")
    yield SampleInput(m.make((2, 3, 4)), ((0, 2),), name="dims")
    yield SampleInput(m.make((2, 3, 4)), ([-1],), name="negative-list")
    yield SampleInput(m.make((3, 4), layout="transposed"), ((0, 1),), name="transposed")
    yield SampleInput(m.make((3, 4), layout="sliced"), ((1,),), name="sliced")
    yield SampleInput(m.make(()), ((),), name="0-d")
    yield SampleInput(m.make((0, 3)), ((1,),), name="zero-size")


def _repeat_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), (2, 1), name="varargs")
    yield SampleInput(m.make((2, 3)), ((2, 2, 3),), name="tuple-extra-dim")
    yield SampleInput(m.make((3,), layout="sliced"), (3,), name="sliced")
    yield SampleInput(m.make(()), (2, 3), name="0-d")
    yield SampleInput(m.make((2, 3)), (0, 2), name="zero-repeat")


def _tile_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), ((2, 1),), name="same-rank")
    yield SampleInput(m.make((2, 3)), ((2,),), name="fewer-dims")
    yield SampleInput(m.make((2, 3), layout="transposed"), ((2, 1, 2),), name="more-dims")
    yield SampleInput(m.make(()), ((3,),), name="0-d")


def _roll_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (1,), name="flat")
    yield SampleInput(m.make((3, 4)), (-2, 1), name="dim1-negative-shift")
    yield SampleInput(m.make((3, 4)), ((1, 5), (0, 1)), name="two-dims")
    yield SampleInput(m.make((4, 3), layout="transposed"), (2, 0), name="transposed")
    yield SampleInput(m.make((0, 3)), (1, 1), name="zero-size")


def _roll(x, shifts, dims=None):
    if dims is None:
        return np.roll(x.reshape(-1), shifts).reshape(x.shape)
    return np.roll(x, shifts, axis=dims)


def _tri_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), name="2d")
    yield SampleInput(m.make((4, 5)), (1,), name="diag1")
    yield SampleInput(m.make((4, 5)), (-2,), name="diag-2")
    yield SampleInput(m.make((2, 3, 3)), name="batched")
    yield SampleInput(m.make((5, 4), layout="transposed"), (0,), name="transposed")
    yield SampleInput(m.make((0, 3)), name="zero-size")


OPS: list[OpInfo] = [
    OpInfo("cat", dtypes=ALL + BOOL + F16, ref=_cat_ref, sample_inputs_func=_cat_samples),
    OpInfo(
        "stack",
        dtypes=ALL + BOOL,
        ref=lambda ts, dim=0: np.stack(ts, axis=dim),
        sample_inputs_func=_stack_samples,
    ),
    OpInfo(
        "flip",
        dtypes=ALL + BOOL,
        ref=lambda x, dims: np.flip(x, axis=tuple(dims)).copy(),
        sample_inputs_func=_flip_samples,
    ),
    OpInfo(
        "repeat",
        dtypes=ALL + BOOL,
        ref=lambda x, *sizes: np.tile(x, sizes[0] if isinstance(sizes[0], tuple) else sizes),
        sample_inputs_func=_repeat_samples,
    ),
    OpInfo(
        "tile",
        dtypes=ALL + BOOL,
        ref=lambda x, dims: np.tile(x, dims),
        sample_inputs_func=_tile_samples,
    ),
    OpInfo("roll", dtypes=ALL + BOOL, ref=_roll, sample_inputs_func=_roll_samples),
    OpInfo(
        "triu",
        dtypes=ALL + BOOL,
        ref=lambda x, diagonal=0: np.triu(x, diagonal),
        sample_inputs_func=_tri_samples,
    ),
    OpInfo(
        "tril",
        dtypes=ALL + BOOL,
        ref=lambda x, diagonal=0: np.tril(x, diagonal),
        sample_inputs_func=_tri_samples,
    ),
]


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


def _ts(*shapes):
    return lambda m: [m.make(s) for s in shapes]


_ERRORS = {
    "cat": [
        error_case(
            "size-mismatch",
            _ts((2, 3), (2, 4)),
            match=r"cat\(\): Sizes of tensors must match except in dimension 0",
        ),
        error_case("0-d", _ts((), (2,)), match="zero-dimensional tensor"),
        error_case(
            "dim-out-of-range",
            _ts((2, 3), (2, 3)),
            (2,),
            error=IndexError,
            match=r"cat\(\): Dimension out of range",
        ),
        error_case(
            "not-a-list",
            _t(2, 3),
            error=TypeError,
            match=r"cat\(\): argument 'tensors' \(position 1\) must be tuple of "
            r"Tensors",
        ),
    ],
    "stack": [
        error_case(
            "unequal",
            _ts((2, 3), (2, 4)),
            match=r"stack\(\): stack expects each tensor to be equal size",
        )
    ],
    "flip": [
        error_case("repeated-dim", _t(2, 3), ((0, -2),), match="dims has duplicates"),
        error_case(
            "dim-out-of-range",
            _t(2, 3),
            ((2,),),
            error=IndexError,
            match=r"flip\(\): Dimension out of range",
        ),
    ],
    "repeat": [error_case("too-few", _t(2, 3), (2,), match="can not be smaller")],
    "tile": [
        error_case(
            "negative",
            _t(2, 3),
            ((-1, 2),),
            match="Trying to create tensor with negative dimension",
        )
    ],
    "roll": [
        error_case(
            "misaligned", _t(3, 4), ((1, 2), 0), match=r"roll\(\): shifts and dimensions must align"
        )
    ],
    "triu": [error_case("1-d", _t(3), match=r"triu\(\): input tensor must have at least 2 dim")],
    "tril": [
        error_case("1-d", _t(3), match=r"tril\(\): input tensor must have at least 2 dim"),
        error_case(
            "float-diagonal",
            _t(3, 3),
            (0.5,),
            error=TypeError,
            match=r"tril\(\): argument 'diagonal' \(position 2\) must be int",
        ),
    ],
}
attach_error_cases(OPS, _ERRORS)
