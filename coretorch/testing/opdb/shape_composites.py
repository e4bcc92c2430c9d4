"""OpInfos of the shape composites (coretorch/ops/shape_composites.py), with numpy references."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case

BOOL = (_dt.bool,)


def _broadcast_to_samples(op, m, dtype):
    yield SampleInput(m.make((3, 1)), ((2, 3, 4),), name="new-and-size-1-dims")
    yield SampleInput(m.make((3, 1), layout="transposed"), ((3, -1),), name="keep-with--1")
    yield SampleInput(m.make(()), ((2, 2),), name="0-d")


def _broadcast_to_ref(x, size):
    size = tuple(x.shape[i - (len(size) - x.ndim)] if s == -1 else s for i, s in enumerate(size))
    return np.broadcast_to(x, size).copy()


def _broadcast_tensors_samples(op, m, dtype):
    yield SampleInput([m.make((3, 1)), m.make((4,)), m.make(())], name="three")
    yield SampleInput([m.make((2, 3), layout="transposed")], name="single")


def _ravel_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="2-d")
    yield SampleInput(m.make((3, 4), layout="transposed"), name="transposed")
    yield SampleInput(m.make(()), name="0-d")


def _atleast_samples(op, m, dtype):
    for shape in ((), (3,), (2, 3), (2, 3, 4)):
        yield SampleInput(m.make(shape), name=f"{len(shape)}-d")


def _reshape_as_samples(op, m, dtype):
    yield SampleInput(m.make((2, 6)), (m.make((3, 4)),), name="2-d")
    yield SampleInput(m.make((3, 4), layout="transposed"), (m.make((12,)),), name="transposed")


def _stack_samples(op, m, dtype):
    yield SampleInput([m.make((3,)), m.make((3,))], name="1-d")
    yield SampleInput([m.make((2, 3)), m.make((2, 3), layout="transposed")], name="2-d")
    yield SampleInput([m.make((2, 2, 3)), m.make((2, 2, 3))], name="3-d")
    if op.name in ("hstack", "column_stack"):
        yield SampleInput(
            [m.make(()), m.make((2,))] if op.name == "hstack" else [m.make((2,)), m.make((2, 3))],
            name="mixed-ranks",
        )


def _split_samples(op, m, dtype):
    if op.name == "tensor_split":
        yield SampleInput(m.make((2, 7)), (3, 1), name="sections-uneven")
        yield SampleInput(m.make((7,)), ([1, 4],), name="indices")
        yield SampleInput(
            m.make((3, 6), layout="transposed"),
            ([5, 2, 8], -1),
            name="decreasing-and-past-end-indices",
        )
        yield SampleInput(m.make((4,)), (6,), name="more-sections-than-elements")
        return
    rank = {"hsplit": 2, "vsplit": 2, "dsplit": 3}[op.name]
    shape = (4, 6, 4)[:rank]
    yield SampleInput(m.make(shape), (2,), name="even-sections")
    yield SampleInput(m.make(shape), ([1, 3],), name="indices")
    if op.name == "hsplit":
        yield SampleInput(m.make((6,)), (3,), name="1-d")


def _tensor_split_ref(x, indices_or_sections, dim=0):
    return tuple(np.array_split(x, indices_or_sections, axis=dim))


def _flip_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="2-d")
    yield SampleInput(m.make((3, 4, 2), layout="transposed"), name="3-d-transposed")
    if op.name == "flipud":
        yield SampleInput(m.make((5,)), name="1-d")


def _rot90_samples(op, m, dtype):
    for k in (1, 2, 3, 4, -1):
        yield SampleInput(m.make((2, 3)), (k,), name=f"k{k}")
    yield SampleInput(m.make((2, 3, 4), layout="transposed"), (1, [2, 0]), name="dims-2-0")


def _repeat_interleave_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), (2,), name="flat")
    yield SampleInput(m.make((2, 3), layout="transposed"), (3, 1), name="dim1")
    yield SampleInput(
        m.make((2, 3)),
        (m.make((3,), dtype=_dt.int64, values=np.array([1, 0, 2])), -1),
        name="counts-tensor",
    )
    yield SampleInput(m.make(()), (4,), name="0-d")


def _repeat_interleave_ref(x, repeats=None, dim=None, output_size=None):
    return np.repeat(x, repeats, axis=dim)


def _split_alias_samples(op, m, dtype):
    if op.name == "split_with_sizes":
        yield SampleInput(m.make((5, 2)), ([2, 3],), name="dim0")
        yield SampleInput(m.make((2, 6), layout="transposed"), ([1, 0, 5], -1), name="empty")
    else:
        yield SampleInput(m.make((5, 2)), (2,), name="dim0")
        yield SampleInput(m.make((2, 6), layout="transposed"), (4, 1), name="dim1")


def _split_alias_ref(x, n, dim=0):
    size = x.shape[dim]
    if isinstance(n, list):
        return tuple(np.split(x, np.cumsum(n)[:-1], axis=dim))
    return tuple(np.split(x, list(range(n, size, n)), axis=dim))


def _chunk_alias_ref(x, chunks, dim=0):
    return _split_alias_ref(x, max(1, -(-x.shape[dim] // chunks)), dim)


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


def _ts(*shapes):
    return lambda m: [m.make(s) for s in shapes]


OPS: list[OpInfo] = [
    OpInfo(
        "broadcast_to",
        dtypes=ALL + BOOL,
        ref=_broadcast_to_ref,
        sample_inputs_func=_broadcast_to_samples,
    ),
    OpInfo(
        "broadcast_tensors",
        dtypes=ALL + BOOL,
        ref=lambda ts: tuple(a.copy() for a in np.broadcast_arrays(*ts)),
        torch_ref=lambda ts: __import__("torch").broadcast_tensors(*ts),
        sample_inputs_func=_broadcast_tensors_samples,
    ),
    OpInfo("ravel", dtypes=ALL + BOOL, ref=np.ravel, sample_inputs_func=_ravel_samples),
    OpInfo("atleast_1d", dtypes=ALL, ref=np.atleast_1d, sample_inputs_func=_atleast_samples),
    OpInfo("atleast_2d", dtypes=ALL, ref=np.atleast_2d, sample_inputs_func=_atleast_samples),
    OpInfo("atleast_3d", dtypes=ALL, ref=np.atleast_3d, sample_inputs_func=_atleast_samples),
    OpInfo(
        "reshape_as",
        dtypes=ALL + BOOL,
        ref=lambda x, o: x.reshape(o.shape),
        sample_inputs_func=_reshape_as_samples,
    ),
    OpInfo("hstack", dtypes=ALL + BOOL, ref=np.hstack, sample_inputs_func=_stack_samples),
    OpInfo("vstack", dtypes=ALL + BOOL, ref=np.vstack, sample_inputs_func=_stack_samples),
    OpInfo("dstack", dtypes=ALL + BOOL, ref=np.dstack, sample_inputs_func=_stack_samples),
    OpInfo(
        "column_stack", dtypes=ALL + BOOL, ref=np.column_stack, sample_inputs_func=_stack_samples
    ),
    OpInfo(
        "tensor_split", dtypes=ALL + BOOL, ref=_tensor_split_ref, sample_inputs_func=_split_samples
    ),
    OpInfo(
        "hsplit",
        dtypes=ALL,
        ref=lambda x, s: tuple(np.hsplit(x, s)),
        sample_inputs_func=_split_samples,
    ),
    OpInfo(
        "vsplit",
        dtypes=ALL,
        ref=lambda x, s: tuple(np.vsplit(x, s)),
        sample_inputs_func=_split_samples,
    ),
    OpInfo(
        "dsplit",
        dtypes=ALL,
        ref=lambda x, s: tuple(np.dsplit(x, s)),
        sample_inputs_func=_split_samples,
    ),
    OpInfo(
        "flipud",
        dtypes=ALL + BOOL,
        ref=lambda x: np.flipud(x).copy(),
        sample_inputs_func=_flip_samples,
    ),
    OpInfo(
        "fliplr",
        dtypes=ALL + BOOL,
        ref=lambda x: np.fliplr(x).copy(),
        sample_inputs_func=_flip_samples,
    ),
    OpInfo(
        "repeat_interleave",
        dtypes=ALL + BOOL,
        ref=_repeat_interleave_ref,
        sample_inputs_func=_repeat_interleave_samples,
        data_dependent=True,
    ),
    OpInfo(
        "split_with_sizes",
        dtypes=ALL + BOOL,
        ref=_split_alias_ref,
        sample_inputs_func=_split_alias_samples,
    ),
    OpInfo(
        "unsafe_split",
        dtypes=ALL + BOOL,
        ref=_split_alias_ref,
        sample_inputs_func=_split_alias_samples,
    ),
    OpInfo(
        "unsafe_chunk",
        dtypes=ALL + BOOL,
        ref=_chunk_alias_ref,
        sample_inputs_func=_split_alias_samples,
    ),
    OpInfo(
        "rot90",
        dtypes=ALL + BOOL,
        ref=lambda x, k=1, dims=(0, 1): np.rot90(x, k, axes=tuple(dims)).copy(),
        sample_inputs_func=_rot90_samples,
    ),
]

_ERRORS = {
    "broadcast_to": [
        error_case(
            "mismatch",
            _t(3, 2),
            ((3, 4),),
            match=r"broadcast_to\(\): The expanded size of the tensor \(4\) "
            r"must match the existing size \(2\)",
        ),
        error_case(
            "fewer-dims", _t(2, 3), ((3,),), match=r"broadcast_to\(\): the number of sizes provided"
        ),
    ],
    "broadcast_tensors": [error_case("mismatch", _ts((3,), (4,)), match=r"broadcast_tensors\(\)")],
    "reshape_as": [
        error_case(
            "numel",
            _t(2, 3),
            (_t(4),),
            match=r"reshape_as\(\): shape '\[4\]' is invalid for input of "
            r"size 6",
        )
    ],
    "atleast_1d": [
        error_case(
            "list",
            _ts((2,)),
            error=TypeError,
            match=r"atleast_1d\(\): argument 'input' \(position 1\) must be "
            r"Tensor",
        )
    ],
    "atleast_2d": [
        error_case(
            "number", lambda m: 2.0, error=TypeError, match=r"atleast_2d\(\): argument 'input'"
        )
    ],
    "atleast_3d": [
        error_case(
            "none", lambda m: None, error=TypeError, match=r"atleast_3d\(\): argument 'input'"
        )
    ],
    "hstack": [error_case("empty", lambda m: [], match=r"hstack\(\): expects a non-empty")],
    "vstack": [error_case("empty", lambda m: [], match=r"vstack\(\): expects a non-empty")],
    "dstack": [error_case("empty", lambda m: [], match=r"dstack\(\): expects a non-empty")],
    "column_stack": [
        error_case("empty", lambda m: [], match=r"column_stack\(\): expects a non-empty")
    ],
    "tensor_split": [
        error_case(
            "zero-sections",
            _t(4),
            (0,),
            match=r"tensor_split\(\): number of sections must be larger",
        ),
        error_case("0-d", _t(), (2,), match=r"tensor_split\(\): expected at least a 1-dimensional"),
        error_case(
            "float-tensor",
            _t(4),
            (_t(2, dtype=_dt.float32),),
            match=r"tensor_split\(\): Expected tensor_indices_or_sections "
            r"to have integral dtype",
        ),
    ],
    "hsplit": [
        error_case(
            "uneven",
            _t(2, 5),
            (2,),
            match=r"hsplit\(\): attempted to split along dimension 1, but the "
            r"size of the dimension 5 is not divisible by the split_size 2",
        )
    ],
    "vsplit": [
        error_case(
            "1-d", _t(4), (2,), match=r"vsplit\(\): requires a tensor with at least 2 dimensions"
        )
    ],
    "dsplit": [
        error_case(
            "2-d", _t(2, 4), (2,), match=r"dsplit\(\): requires a tensor with at least 3 dimensions"
        )
    ],
    "flipud": [error_case("0-d", _t(), match=r"flipud\(\): requires a tensor with at least 1")],
    "fliplr": [error_case("1-d", _t(3), match=r"fliplr\(\): requires a tensor with at least 2")],
    "repeat_interleave": [
        error_case(
            "negative",
            _t(3),
            (-1,),
            match=r"repeat_interleave\(\): repeats can not be "
            r"negative",
        )
    ],
    "split_with_sizes": [
        error_case(
            "sum",
            _t(5),
            ([2, 2],),
            match=r"split_with_sizes\(\): expects split_sizes to sum "
            r"exactly to 5",
        )
    ],
    "unsafe_split": [
        error_case("negative", _t(5), (-1,), match=r"split\(\): split_size can only be 0")
    ],
    "unsafe_chunk": [
        error_case("zero", _t(5), (0,), match=r"chunk\(\): chunk expects `chunks` to be greater")
    ],
    "rot90": [
        error_case(
            "same-dims",
            _t(2, 3),
            (1, [0, 0]),
            match=r"rot90\(\): expected rotation dims to be different",
        ),
        error_case(
            "three-dims",
            _t(2, 3, 4),
            (1, [0, 1, 2]),
            match=r"rot90\(\): expected total rotation dims == 2",
        ),
        error_case("1-d", _t(3), (1, [0, 0]), match=r"rot90\(\): expected total dims >= 2"),
    ],
}
attach_error_cases(OPS, _ERRORS)
