"""OpInfos of the view ops and their composites (coretorch/ops/views.py). On shape-only devices
the suite also checks the view's strides equal cpu's."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case, torch_aten

DTYPES = ALL + (_dt.bool, _dt.float16)


def _s(*args, name, **kwargs):
    return SampleInput(args[0], tuple(args[1:]), kwargs, name)


def _view_samples(op, m, dtype):
    yield _s(m.make((2, 3, 4)), 6, 4, name="varargs")
    yield _s(m.make((2, 3, 4)), _cpu_int(4), -1, name="varargs-0-d-tensor")
    yield _s(m.make((2, 3, 4)), (-1, 2), name="tuple-infer")
    yield _s(m.make((3, 4), layout="sliced"), 3, 2, 2, name="split-strided-dim")
    yield _s(m.make(()), 1, name="0-d")
    yield _s(m.make((0, 3)), 3, 0, name="zero-size")


def _reshape_samples(op, m, dtype):
    yield from _view_samples(op, m, dtype)
    yield _s(m.make((3, 4), layout="transposed"), 12, name="copy-needed")
    yield _s(m.make((3, 4), layout="expanded"), (2, 6), name="expanded-copy")


def _transpose_samples(op, m, dtype):
    yield _s(m.make((2, 3, 4)), 0, 2, name="dims0-2")
    yield _s(m.make((2, 3, 4)), -1, 1, name="negative")
    yield _s(m.make((3, 4), layout="sliced"), 0, 1, name="sliced")
    yield _s(m.make(()), 0, 0, name="0-d")


def _t_samples(op, m, dtype):
    yield _s(m.make((3, 4)), name="2d")
    yield _s(m.make((4,)), name="1d")
    yield _s(m.make((3, 4), layout="transposed"), name="transposed")
    yield _s(m.make(()), name="0-d")


def _permute_samples(op, m, dtype):
    yield _s(m.make((2, 3, 4)), 2, 0, 1, name="varargs")
    yield _s(m.make((2, 3, 4)), (1, -1, 0), name="tuple-negative")
    yield _s(m.make((2, 3, 4), layout="sliced"), (2, 1, 0), name="sliced")
    yield _s(m.make(()), (), name="0-d")


def _expand_samples(op, m, dtype):
    yield _s(m.make((3, 1)), 3, 4, name="varargs")
    yield _s(m.make((3, 1)), (2, -1, 5), name="new-leading-dim")
    yield _s(m.make(()), (2, 2), name="0-d")
    yield _s(m.make((1, 4), layout="sliced"), (0, 4), name="to-zero-size")


def _expand_ref(x, *given):
    sizes = given[0] if len(given) == 1 and isinstance(given[0], (tuple, list)) else given
    lead = len(sizes) - x.ndim
    return np.broadcast_to(
        x, tuple(x.shape[i - lead] if n == -1 else n for i, n in enumerate(sizes))
    )


def _squeeze_samples(op, m, dtype):
    yield _s(m.make((2, 1, 3, 1)), name="all")
    yield _s(m.make((2, 1, 3, 1)), 1, name="dim")
    yield _s(m.make((2, 1, 3, 1)), 0, name="non-size-1-dim")
    yield _s(m.make((2, 1, 3, 1)), (1, 3), name="dims")
    yield _s(m.make(()), name="0-d")


def _unsqueeze_samples(op, m, dtype):
    yield _s(m.make((2, 3)), 0, name="front")
    yield _s(m.make((2, 3)), -1, name="back")
    yield _s(m.make((2, 3), layout="transposed"), 1, name="transposed")
    yield _s(m.make(()), 0, name="0-d")


def _slice_samples(op, m, dtype):
    yield _s(m.make((5, 4)), 0, 1, 4, name="rows")
    yield _s(m.make((5, 4)), 1, None, None, 2, name="step")
    yield _s(m.make((5, 4)), -1, -3, None, name="negative")
    yield _s(m.make((5, 4)), 0, 3, 100, name="clamped")
    yield _s(m.make((5, 4), layout="transposed"), 1, 1, 4, 2, name="transposed")


def _slice_ref(x, dim=0, start=None, end=None, step=1):
    key = [slice(None)] * x.ndim
    key[dim] = slice(start, end, step)
    return x[tuple(key)]


def _cpu_int(value: int):
    """A 0-d int64 cpu tensor: ints may be given as such (its value is read when the call is
    bound, on every device)."""
    from ...ops.factories_public import tensor

    return tensor(value)


def _narrow_samples(op, m, dtype):
    yield _s(m.make((5, 4)), 0, 1, 3, name="rows")
    yield _s(m.make((5, 4)), -1, 2, 2, name="cols")
    yield _s(m.make((5, 4), layout="sliced"), 1, 0, 0, name="empty")
    yield _s(m.make((5, 4)), 0, _cpu_int(1), _cpu_int(2), name="0-d-tensor-start-length")


def _select_samples(op, m, dtype):
    yield _s(m.make((5, 4)), 0, 2, name="row")
    yield _s(m.make((5, 4)), 1, -1, name="last-col")
    yield _s(m.make((2, 3, 4), layout="transposed"), 1, 0, name="transposed")
    yield _s(m.make((5, 4)), _cpu_int(1), _cpu_int(-2), name="0-d-tensor-dim-index")


def _diagonal_samples(op, m, dtype):
    yield _s(m.make((4, 5)), name="main")
    yield _s(m.make((4, 5)), 1, name="offset1")
    yield _s(m.make((4, 5)), -2, name="offset-2")
    yield _s(m.make((2, 3, 4)), 0, 1, 2, name="batched")
    yield _s(m.make((4, 5), layout="transposed"), 0, 0, 1, name="transposed")
    yield _s(m.make((2, 3)), 5, name="empty")


def _unfold_samples(op, m, dtype):
    yield _s(m.make((7,)), 0, 3, 2, name="1d")
    yield _s(m.make((2, 6)), 1, 2, 2, name="2d")
    yield _s(m.make((6, 3), layout="transposed"), 0, 2, 1, name="transposed")


def _unfold_ref(x, dimension, size, step):
    n = x.shape[dimension]
    count = (n - size) // step + 1
    pieces = [
        np.take(x, np.arange(i * step, i * step + size), axis=dimension) for i in range(count)
    ]
    stacked = np.stack(pieces, axis=dimension)
    return np.moveaxis(stacked, dimension + 1, -1)


def _same_samples(op, m, dtype):
    yield _s(m.make((2, 3)), name="2d")
    yield _s(m.make((3, 4), layout="transposed"), name="transposed")
    yield _s(m.make((3, 4), layout="expanded"), name="expanded")
    yield _s(m.make(()), name="0-d")


def _flatten_samples(op, m, dtype):
    yield _s(m.make((2, 3, 4)), name="all")
    yield _s(m.make((2, 3, 4)), 1, name="from1")
    yield _s(m.make((2, 3, 4, 2)), 1, 2, name="middle")
    yield _s(m.make((3, 4), layout="transposed"), name="transposed-copy")
    yield _s(m.make(()), name="0-d")


def _flatten_ref(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1 :])


def _unflatten_samples(op, m, dtype):
    yield _s(m.make((2, 12)), 1, (3, 4), name="split")
    yield _s(m.make((2, 12)), -1, (-1, 2), name="infer")


def _unflatten_ref(x, dim, sizes):
    d = dim % x.ndim
    sizes = list(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = x.shape[d] // known
    return x.reshape(x.shape[:d] + tuple(sizes) + x.shape[d + 1 :])


def _movedim_samples(op, m, dtype):
    yield _s(m.make((2, 3, 4)), 0, 2, name="one")
    yield _s(m.make((2, 3, 4)), (0, 1), (2, 0), name="two")
    yield _s(m.make((2, 3, 4), layout="sliced"), -1, 0, name="negative")


def _unbind_samples(op, m, dtype):
    yield _s(m.make((3, 4)), name="dim0")
    yield _s(m.make((3, 4)), 1, name="dim1")
    yield _s(m.make((0, 4)), name="empty")


def _split_samples(op, m, dtype):
    yield _s(m.make((5, 4)), 2, name="size2")
    yield _s(m.make((5, 4)), [1, 3], 1, name="sections")
    yield _s(m.make((5, 4), layout="transposed"), 3, -1, name="transposed")


def _split_ref(x, split_size_or_sections, dim=0):
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        cuts = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        cuts = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(np.split(x, cuts, axis=dim))


def _chunk_samples(op, m, dtype):
    yield _s(m.make((5, 4)), 2, name="uneven")
    yield _s(m.make((6, 4)), 3, name="even")
    yield _s(m.make((5, 4)), 2, 1, name="dim1")
    yield _s(m.make((2, 4)), 5, name="more-chunks-than-rows")


def _chunk_ref(x, chunks, dim=0):
    n = x.shape[dim]
    step = max(1, -(-n // chunks))
    return _split_ref(x, step, dim)


def _like_samples(op, m, dtype):
    yield (
        _s(m.make((3, 1)), m.make((2, 3, 4)), name="expand")
        if op.name == "expand_as"
        else _s(m.make((3, 4)), m.make((2, 6)), name="view")
    )
    yield (
        _s(m.make(()), m.make((2,)), name="0-d")
        if op.name == "expand_as"
        else _s(m.make((3, 4), layout="sliced"), m.make((3, 2, 2)), name="split-strided")
    )


def _as_strided_samples(op, m, dtype):
    yield _s(m.make((3, 4)), (2, 2), (1, 2), name="overlap-free")
    yield _s(m.make((3, 4)), (3, 3), (1, 1), name="overlapping")
    yield _s(m.make((3, 4)), (2,), (3,), 1, name="offset")


def _as_strided_ref(x, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)
    isz = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[storage_offset:], size, tuple(s * isz for s in stride)
    ).copy()


OPS: list[OpInfo] = [
    OpInfo(
        "view", dtypes=DTYPES, ref=lambda x, *s: x.reshape(*s), sample_inputs_func=_view_samples
    ),
    OpInfo(
        "reshape",
        dtypes=DTYPES,
        ref=lambda x, *s: x.reshape(*s),
        sample_inputs_func=_reshape_samples,
    ),
    OpInfo(
        "as_strided",
        dtypes=DTYPES,
        ref=_as_strided_ref,
        sample_inputs_func=_as_strided_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "transpose",
        dtypes=DTYPES,
        ref=lambda x, a, b: np.swapaxes(x, a, b) if x.ndim else x,
        sample_inputs_func=_transpose_samples,
    ),
    OpInfo("t", dtypes=DTYPES, ref=lambda x: x.T, sample_inputs_func=_t_samples),
    OpInfo(
        "permute",
        dtypes=DTYPES,
        ref=lambda x, *d: np.transpose(x, d[0] if len(d) == 1 and isinstance(d[0], tuple) else d),
        sample_inputs_func=_permute_samples,
    ),
    OpInfo("expand", dtypes=DTYPES, ref=_expand_ref, sample_inputs_func=_expand_samples),
    OpInfo(
        "squeeze",
        dtypes=DTYPES,
        ref=lambda x, dim=None: np.squeeze(
            x,
            axis=None
            if dim is None
            else tuple(d for d in ((dim,) if isinstance(dim, int) else dim) if x.shape[d] == 1),
        ),
        sample_inputs_func=_squeeze_samples,
    ),
    OpInfo(
        "unsqueeze",
        dtypes=DTYPES,
        ref=lambda x, d: np.expand_dims(x, d),
        sample_inputs_func=_unsqueeze_samples,
    ),
    OpInfo(
        "slice",
        dtypes=DTYPES,
        ref=_slice_ref,
        torch_ref=torch_aten("slice"),
        sample_inputs_func=_slice_samples,
    ),
    OpInfo(
        "narrow",
        dtypes=DTYPES,
        ref=lambda x, d, s, n: np.take(x, np.arange(int(s), int(s) + int(n)), d),
        sample_inputs_func=_narrow_samples,
    ),
    OpInfo(
        "select",
        dtypes=DTYPES,
        ref=lambda x, d, i: np.take(x, int(i), int(d)),
        sample_inputs_func=_select_samples,
    ),
    OpInfo(
        "diagonal",
        dtypes=DTYPES,
        ref=lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2),
        sample_inputs_func=_diagonal_samples,
    ),
    OpInfo("unfold", dtypes=DTYPES, ref=_unfold_ref, sample_inputs_func=_unfold_samples),
    OpInfo(
        "alias", dtypes=DTYPES, ref=lambda x: x, torch_ref=None, sample_inputs_func=_same_samples
    ),
    OpInfo("detach", dtypes=DTYPES, ref=lambda x: x, sample_inputs_func=_same_samples),
    OpInfo("contiguous", dtypes=DTYPES, ref=lambda x: x, sample_inputs_func=_same_samples),
    OpInfo("flatten", dtypes=DTYPES, ref=_flatten_ref, sample_inputs_func=_flatten_samples),
    OpInfo("unflatten", dtypes=DTYPES, ref=_unflatten_ref, sample_inputs_func=_unflatten_samples),
    OpInfo(
        "movedim",
        dtypes=DTYPES,
        ref=lambda x, s, d: np.moveaxis(x, s, d),
        sample_inputs_func=_movedim_samples,
    ),
    OpInfo(
        "unbind",
        dtypes=DTYPES,
        ref=lambda x, dim=0: tuple(np.take(x, i, dim) for i in range(x.shape[dim])),
        sample_inputs_func=_unbind_samples,
    ),
    OpInfo("split", dtypes=DTYPES, ref=_split_ref, sample_inputs_func=_split_samples),
    OpInfo("chunk", dtypes=DTYPES, ref=_chunk_ref, sample_inputs_func=_chunk_samples),
    OpInfo(
        "expand_as",
        dtypes=DTYPES,
        ref=lambda x, o: np.broadcast_to(x, o.shape),
        sample_inputs_func=_like_samples,
    ),
    OpInfo(
        "view_as",
        dtypes=DTYPES,
        ref=lambda x, o: x.reshape(o.shape),
        sample_inputs_func=_like_samples,
    ),
]


def _t(*shape):
    return lambda m: m.make(shape)


_ERRORS = {
    "view": [
        error_case(
            "bad-size",
            _t(2, 3),
            (4, 2),
            match=r"view\(\): shape '\[4, 2\]' is "
            r"invalid for input of size 6",
        ),
        error_case("two-inferred", _t(2, 3), (-1, -1), match="only one dimension"),
        error_case(
            "float-size", _t(2, 3), (2.0, 3), error=TypeError, match=r"view\(\): argument 'size'"
        ),
    ],
    "reshape": [error_case("bad-size", _t(2, 3), (5,), match=r"reshape\(\): shape '\[5\]'")],
    "transpose": [
        error_case(
            "dim-out-of-range",
            _t(2, 3),
            (0, 2),
            error=IndexError,
            match=r"transpose\(\): Dimension out of range",
        )
    ],
    "t": [error_case("3-d", _t(2, 3, 4), match=r"t\(\) expects a tensor with <= 2 dimensions")],
    "permute": [
        error_case("too-few-dims", _t(2, 3, 4), (1, 0), match="number of dims don't match"),
        error_case("repeated-dim", _t(2, 3), (1, 1), match="appears multiple times"),
    ],
    "expand": [
        error_case(
            "non-singleton",
            _t(2, 3),
            (4, 3),
            match=r"expand\(\): The expanded "
            r"size of the tensor \(4\) must match the existing size \(2\)",
        ),
        error_case("too-few-sizes", _t(2, 3), (3,), match="number of sizes provided"),
    ],
    "squeeze": [
        error_case(
            "dim-out-of-range",
            _t(2, 1),
            (2,),
            error=IndexError,
            match=r"squeeze\(\): Dimension out of range",
        )
    ],
    "unsqueeze": [
        error_case(
            "dim-out-of-range",
            _t(2, 3),
            (4,),
            error=IndexError,
            match=r"unsqueeze\(\): Dimension out of range",
        )
    ],
    "slice": [
        error_case(
            "zero-step",
            _t(5, 4),
            (0, 0, 4, 0),
            error=ValueError,
            match="step must be greater than zero",
        ),
        error_case("0-d", _t(), (0,), error=IndexError, match="0-dim tensor"),
    ],
    "narrow": [
        error_case(
            "past-the-end",
            _t(5, 4),
            (0, 3, 3),
            match=r"narrow\(\): start \(3\) \+ length \(3\) exceeds dimension size "
            r"\(5\)",
        ),
        error_case(
            "float-start",
            _t(5, 4),
            (0, 1.5, 2),
            error=TypeError,
            match=r"narrow\(\): argument 'start' \(position 3\) must be int",
        ),
    ],
    "select": [
        error_case(
            "index-out-of-range",
            _t(5, 4),
            (1, 4),
            error=IndexError,
            match=r"select\(\): index 4 out of range",
        )
    ],
    "diagonal": [error_case("same-dims", _t(3, 3), (0, 1, 1), match="cannot be identical")],
    "unfold": [
        error_case(
            "size-too-large",
            _t(3, 4),
            (1, 5, 1),
            match=r"unfold\(\): maximum size for tensor at dimension 1 is 4",
        ),
        error_case("zero-step", _t(3, 4), (1, 2, 0), match=r"step is 0"),
    ],
    "as_strided": [
        error_case("out-of-bounds", _t(2, 3), ((4, 4), (4, 1)), match="out of bounds for storage"),
        error_case("length-mismatch", _t(2, 3), ((2, 3), (1,)), match="mismatch in length"),
    ],
    "flatten": [
        error_case(
            "start-after-end", _t(2, 3, 4), (2, 1), match="start_dim cannot come after end_dim"
        )
    ],
    "unflatten": [
        error_case(
            "bad-sizes", _t(2, 12), (1, (5, 2)), match=r"unflatten\(\): shape '\[5, 2\]' is invalid"
        )
    ],
    "movedim": [
        error_case(
            "length-mismatch",
            _t(2, 3, 4),
            ((0, 1), (2,)),
            match="should contain the same number of dims",
        )
    ],
    "split": [
        error_case(
            "bad-sections",
            _t(5, 4),
            ([2, 2],),
            match=r"split\(\): expects split_sizes to sum exactly to 5",
        )
    ],
    "chunk": [error_case("zero-chunks", _t(5, 4), (0,), match="greater than 0, got: 0")],
    "unbind": [error_case("0-d", _t(), match="at least a 1-dimensional tensor")],
    "expand_as": [
        error_case(
            "non-singleton", _t(2, 3), (_t(4, 3),), match=r"expand_as\(\): The expanded size"
        )
    ],
    "view_as": [error_case("bad-size", _t(2, 3), (_t(4, 2),), match="invalid for input of size")],
}
attach_error_cases(OPS, _ERRORS)
