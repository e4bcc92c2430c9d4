"""OpInfos of the diagonal and indexing composites (coretorch/ops/diagonals.py,
coretorch/ops/index_composites.py), with numpy references. Writes use distinct indices where
repeated ones would make the result order-dependent."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case

BOOL = (_dt.bool,)


# ---- diagonals -----------------------------------------------------------------------------


def _diag_embed_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="default")
    yield SampleInput(m.make((2, 3), layout="transposed"), (1, 0, 2), name="offset-dims")
    yield SampleInput(m.make((3,)), (-2,), name="negative-offset")


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    k = np.arange(x.shape[-1])
    out[..., k + max(-offset, 0), k + max(offset, 0)] = x
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _diagflat_samples(op, m, dtype):
    yield SampleInput(m.make((2, 2)), name="2-d")
    yield SampleInput(m.make((3,)), (1,), name="offset")
    yield SampleInput(m.make(()), (-1,), name="0-d")


def _diag_samples(op, m, dtype):
    yield SampleInput(m.make((3,)), name="vector")
    yield SampleInput(m.make((3,)), (-1,), name="vector-offset")
    yield SampleInput(m.make((3, 4)), name="matrix")
    yield SampleInput(m.make((3, 4), layout="transposed"), (2,), name="matrix-offset")
    yield SampleInput(m.make((3, 4)), (-5,), name="empty-diagonal")


def _diagonal_scatter_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((3,)),), name="main")
    yield SampleInput(m.make((3, 2, 4)), (m.make((2, 3)), 1, 0, 2), name="offset-dims")
    yield SampleInput(m.make((4, 3), layout="transposed"), (m.make((2,)), -2), name="below")


def _diagonal_scatter_ref(x, src, offset=0, dim1=0, dim2=1):
    out = np.moveaxis(x.copy(), (dim1, dim2), (-2, -1))
    k = np.arange(src.shape[-1])
    out[..., k + max(-offset, 0), k + max(offset, 0)] = src
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _tri_indices_samples(op, m, dtype):
    for args in ((3, 4), (4, 3, 1), (4, 4, -2), (0, 3)):
        yield SampleInput(args[0], args[1:], dict(device=m.device), name="x".join(map(str, args)))


def _tri_indices_ref(lower: bool):
    def ref(row, col, offset=0, device=None):
        rows, cols = np.indices((row, col)).reshape(2, -1)
        keep = cols - rows <= offset if lower else cols - rows >= offset
        return np.stack([rows[keep], cols[keep]]).astype(np.int64)

    return ref


# ---- indexing ------------------------------------------------------------------------------


def _ix(m, values):
    return m.make((len(values),), dtype=_dt.int64, values=np.asarray(values, np.int64))


def _take_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.index((2, 3), 12),), name="2-d-index")
    yield SampleInput(m.make((3, 4), layout="transposed"), (_ix(m, [-1, 0, 11]),), name="negative")
    yield SampleInput(m.make(()), (m.index((2,), 1),), name="0-d")


def _take_along_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.index((3, 2), 4), 1), name="dim1")
    yield SampleInput(m.make((3, 4)), (m.index((1, 4), 3), 0), name="broadcast-index")
    yield SampleInput(m.make((3, 4)), (m.index((5,), 12),), name="flat")


def _take_along_ref(x, indices, dim=None):
    if dim is None:
        return np.take(x.reshape(-1), indices.reshape(-1))
    return np.take_along_axis(x, indices, axis=dim)


def _put_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (_ix(m, [0, 5, -1]), m.make((3,))), name="set")
    yield SampleInput(
        m.make((3, 4)), (_ix(m, [1, 1, 7]), m.make((3,)), True), name="accumulate-repeats"
    )


def _put_ref(x, index, source, accumulate=False):
    out = x.copy().reshape(-1)
    idx = index.reshape(-1) % out.size
    if accumulate:
        np.add.at(out, idx, source.reshape(-1))
    else:
        out[idx] = source.reshape(-1)
    return out.reshape(x.shape)


def _index_copy_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (0, _ix(m, [3, 0]), m.make((2, 3))), name="dim0")
    yield SampleInput(
        m.make((3, 4), layout="transposed"), (-1, _ix(m, [2]), m.make((3, 1))), name="last-dim"
    )


def _assigned(x, dim: int, key, value):
    """A copy of `x` with ``x[..., key, ...] = value`` (`key` along `dim`)."""
    out = x.copy()
    sl = [slice(None)] * x.ndim
    sl[dim] = key
    out[tuple(sl)] = value
    return out


def _index_fill_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (0, _ix(m, [3, 0]), 2), name="number")
    yield SampleInput(
        m.make((3, 4), layout="transposed"),
        (1, _ix(m, [1, 1]), m.make(())),
        name="0-d-tensor-repeats",
    )


def _slice_scatter_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (m.make((2, 3)), 0, 1, 3), name="dim0")
    yield SampleInput(m.make((3, 5)), (m.make((3, 3)), 1, None, None, 2), name="step")
    yield SampleInput(
        m.make((3, 5), layout="transposed"), (m.make((3, 2)), -1, -2), name="negative-start"
    )


def _select_scatter_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (m.make((3,)), 0, 2), name="dim0")
    yield SampleInput(
        m.make((3, 4), layout="transposed"), (m.make((3,)), 1, -1), name="negative-index"
    )


def _masked_scatter_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.mask((3, 4)), m.make((12,))), name="same-shape")
    yield SampleInput(m.make((3, 4)), (m.mask((4,)), m.make((3, 5))), name="broadcast-mask")
    yield SampleInput(m.make((4,)), (m.mask((3, 4)), m.make((12,))), name="broadcast-self")


def _masked_scatter_ref(x, mask, source):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    mask = np.broadcast_to(mask, shape)
    out[mask] = source.reshape(-1)[: int(mask.sum())]
    return out


def _argwhere_samples(op, m, dtype):
    yield SampleInput(
        m.make((3, 4), values=np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]])), name="2-d"
    )
    yield SampleInput(m.make(()), name="0-d")


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


def _i(*values):
    return lambda m: _ix(m, values)


OPS: list[OpInfo] = [
    OpInfo(
        "diag_embed", dtypes=ALL + BOOL, ref=_diag_embed_ref, sample_inputs_func=_diag_embed_samples
    ),
    OpInfo(
        "diagflat",
        dtypes=ALL + BOOL,
        ref=lambda x, offset=0: np.diagflat(x, offset),
        sample_inputs_func=_diagflat_samples,
    ),
    OpInfo(
        "diag",
        dtypes=ALL + BOOL,
        ref=lambda x, diagonal=0: np.diag(x, diagonal).copy(),
        sample_inputs_func=_diag_samples,
    ),
    OpInfo(
        "diagonal_scatter",
        dtypes=ALL + BOOL,
        ref=_diagonal_scatter_ref,
        sample_inputs_func=_diagonal_scatter_samples,
    ),
    OpInfo(
        "tril_indices",
        dtypes=(_dt.int64,),
        ref=_tri_indices_ref(True),
        sample_inputs_func=_tri_indices_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "triu_indices",
        dtypes=(_dt.int64,),
        ref=_tri_indices_ref(False),
        sample_inputs_func=_tri_indices_samples,
        supports_autograd=False,
    ),
    OpInfo(
        "take",
        dtypes=ALL + BOOL,
        ref=lambda x, index: np.take(x.reshape(-1), index),
        sample_inputs_func=_take_samples,
    ),
    OpInfo(
        "take_along_dim",
        dtypes=ALL + BOOL,
        ref=_take_along_ref,
        sample_inputs_func=_take_along_samples,
    ),
    OpInfo(
        "put",
        dtypes=ALL,
        ref=_put_ref,
        sample_inputs_func=_put_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo("index_copy", dtypes=ALL + BOOL, ref=_assigned, sample_inputs_func=_index_copy_samples),
    OpInfo("index_fill", dtypes=ALL, ref=_assigned, sample_inputs_func=_index_fill_samples),
    OpInfo(
        "slice_scatter",
        dtypes=ALL + BOOL,
        ref=lambda x, src, dim=0, start=None, end=None, step=1: _assigned(
            x, dim, slice(start, end, step), src
        ),
        sample_inputs_func=_slice_scatter_samples,
    ),
    OpInfo(
        "select_scatter",
        dtypes=ALL + BOOL,
        ref=lambda x, src, dim, index: _assigned(x, dim, index, src),
        sample_inputs_func=_select_scatter_samples,
    ),
    OpInfo(
        "masked_scatter",
        dtypes=ALL + BOOL,
        ref=_masked_scatter_ref,
        sample_inputs_func=_masked_scatter_samples,
        data_dependent=True,
    ),
    OpInfo(
        "argwhere",
        dtypes=ALL + BOOL,
        ref=np.argwhere,
        sample_inputs_func=_argwhere_samples,
        data_dependent=True,
    ),
]

_ERRORS = {
    "diag_embed": [
        error_case(
            "same-dims",
            _t(2, 3),
            (0, 1, 1),
            match=r"diag_embed\(\): diagonal dimensions cannot be identical",
        )
    ],
    "diagflat": [
        error_case(
            "float-offset",
            _t(3),
            (0.5,),
            error=TypeError,
            match=r"diagflat\(\): argument 'offset' \(position 2\) must be int",
        )
    ],
    "diag": [error_case("3-d", _t(2, 2, 2), match=r"diag\(\): Supports 1D or 2D tensors. Got 3D")],
    "diagonal_scatter": [
        error_case(
            "src-shape",
            _t(3, 4),
            (_t(4),),
            match=r"diagonal_scatter\(\): expected src to have a size "
            r"equal to the diagonal",
        )
    ],
    "tril_indices": [
        error_case(
            "negative",
            lambda m: -1,
            (3,),
            match=r"tril_indices\(\): row and col must be non-negative",
        )
    ],
    "triu_indices": [
        error_case(
            "negative",
            lambda m: 3,
            (-2,),
            match=r"triu_indices\(\): row and col must be non-negative",
        )
    ],
    "take": [
        error_case(
            "float-index",
            _t(3),
            (_t(2, dtype=_dt.float32),),
            match=r"take\(\): Expected a long tensor for index",
        )
    ],
    "take_along_dim": [
        error_case(
            "rank",
            _t(3, 4),
            (_i(0, 1), 1),
            match=r"take_along_dim\(\): input and indices should have the "
            r"same number of dimensions",
        )
    ],
    "put": [
        error_case(
            "count",
            _t(3, 4),
            (_i(0, 1), _t(3)),
            match=r"put\(\): Expected source and index to have the same number",
        )
    ],
    "index_copy": [
        error_case(
            "slice-shape",
            _t(4, 3),
            (0, _i(0, 1), _t(2, 2)),
            match=r"index_copy\(\): Source/destination tensor must have same "
            r"slice shapes",
        )
    ],
    "index_fill": [
        error_case(
            "1-d-value",
            _t(4, 3),
            (0, _i(0), _t(2)),
            match=r"index_fill_?\(\): Expected a 0-dimensional value tensor",
        )
    ],
    "slice_scatter": [
        error_case(
            "src-shape",
            _t(4, 3),
            (_t(3, 3), 0, 0, 2),
            match=r"slice_scatter\(\): expected src to have a size equal",
        )
    ],
    "select_scatter": [
        error_case(
            "index",
            _t(4, 3),
            (_t(3), 0, 4),
            error=IndexError,
            match=r"select_scatter\(\): index 4 out of range",
        )
    ],
    "masked_scatter": [
        error_case(
            "float-mask",
            _t(3),
            (_t(3, dtype=_dt.float32), _t(3)),
            match=r"masked_scatter\(\): expected BoolTensor for mask",
        )
    ],
    "argwhere": [
        error_case(
            "list", lambda m: [1, 2], error=TypeError, match=r"argwhere\(\): argument 'input'"
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
