"""OpInfos of the indexing ops (coretorch/ops/indexing.py). Scatter-like samples use indices
that are distinct where a race would make the result order-dependent."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case, torch_aten

BOOL = (_dt.bool,)


def _index_select_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (0, m.index((5,), 4)), name="dim0-repeats")
    yield SampleInput(m.make((4, 3)), (-1, m.index((2,), 3)), name="dim-1")
    yield SampleInput(m.make((3, 4), layout="transposed"), (1, m.index((3,), 4)), name="transposed")
    yield SampleInput(m.make((4, 3)), (0, m.index((0,), 4)), name="empty-index")
    yield SampleInput(m.make(()), (0, m.index((1,), 1)), name="0-d")
    yield SampleInput(m.make((4, 3)), (1, m.index((4,), 3).to(_dt.int32)), name="int32-index")
    yield SampleInput(m.make((4, 3)), (0, m.index((), 4)), name="0-d-index")


def _index_select(x, dim, index):
    if x.ndim == 0:
        return x.reshape(1)[index].reshape(())
    return np.take(x, index.reshape(-1), axis=dim)


def _gather_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (1, m.index((3, 2), 4)), name="dim1")
    yield SampleInput(m.make((3, 4)), (0, m.index((2, 4), 3)), name="dim0")
    yield SampleInput(
        m.make((4, 3), layout="transposed"),
        (-1, m.index((2, 2), 3)),
        name="transposed-smaller-index",
    )
    yield SampleInput(m.make((3, 4)), (1, m.index((3, 0), 4)), name="empty-index")
    yield SampleInput(m.make((3, 4)), (1, m.index((3, 2), 4).to(_dt.int32)), name="int32-index")


def _take_along(x, dim, index):
    if x.ndim == 0:
        return x.reshape(()).copy() if index.ndim == 0 else np.full(index.shape, x)
    sl = tuple(slice(0, n) for n in index.shape)
    return np.take_along_axis(
        x[tuple(slice(None) if i == dim % x.ndim else s for i, s in enumerate(sl))], index, axis=dim
    )


def _scatter_samples(op, m, dtype):
    yield SampleInput(
        m.make((3, 5)), (1, m.index((3, 2), 5, unique_along=1), m.make((3, 2))), name="dim1"
    )
    yield SampleInput(
        m.make((4, 3)),
        (0, m.index((2, 3), 4, unique_along=0), m.make((2, 4))),
        name="dim0-larger-src",
    )
    yield SampleInput(
        m.make((5, 3), layout="transposed"),
        (-1, m.index((3, 2), 3, unique_along=1), m.make((3, 2))),
        name="transposed",
    )
    yield SampleInput(
        m.make((3, 5)),
        (1, m.index((3, 2), 5, unique_along=1).to(_dt.int32), m.make((3, 2))),
        name="int32-index",
    )
    if op.name == "scatter":
        yield SampleInput(
            m.make((3, 5)), (1, m.index((3, 2), 5, unique_along=1), 2), name="scalar-src"
        )
        # reduce= accumulates, so repeated indices are fine; PyTorch defines no gradient
        yield SampleInput(
            m.make((3, 5)),
            (1, m.index((3, 4), 5), m.make((3, 4))),
            dict(reduce="add"),
            name="reduce-add",
            gradcheck=False,
        )
        yield SampleInput(
            m.make((4, 3)),
            (0, m.index((3, 3), 4), 2),
            dict(reduce="multiply"),
            name="reduce-multiply-scalar",
            gradcheck=False,
        )


def _scatter_reduce_samples(op, m, dtype):
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        yield SampleInput(
            m.make((3, 5)),
            (1, m.index((3, 4), 5), m.make((3, 4)), reduce),
            name=f"{reduce}-repeats",
        )
        yield SampleInput(
            m.make((4, 3)),
            (0, m.index((3, 3), 4), m.make((4, 3)), reduce),
            dict(include_self=False),
            name=f"{reduce}-exclude-self-larger-src",
        )
    yield SampleInput(
        m.make((4, 3), layout="transposed"),
        (-1, m.index((2, 3), 3).to(_dt.int32), m.make((2, 3)), "amax"),
        name="transposed-int32-index",
    )
    yield SampleInput(m.make((5,)), (0, m.index((0,), 5), m.make((0,)), "prod"), name="empty-index")


def _index_reduce_samples(op, m, dtype):
    for reduce in ("prod", "mean", "amax", "amin"):
        yield SampleInput(
            m.make((4, 3)), (0, m.index((5,), 4), m.make((5, 3)), reduce), name=f"{reduce}-repeats"
        )
        yield SampleInput(
            m.make((3, 4), layout="transposed"),
            (1, m.index((2,), 4, unique_along=0), m.make((3, 2)), reduce),
            dict(include_self=False),
            name=f"{reduce}-exclude-self",
        )


def _index_reduce_ref(x, dim, index, source, reduce, include_self=True):
    spread = np.expand_dims(index, tuple(d for d in range(x.ndim) if d != dim % x.ndim))
    spread = np.broadcast_to(spread, source.shape)
    return _scatter_reduce_ref(x, dim, spread, source, reduce, include_self)


def _scatter_reduce_ref(x, dim, index, src, reduce, include_self=True):
    combine: dict[str, Any] = {
        "sum": np.sum,
        "prod": np.prod,
        "mean": np.sum,
        "amax": np.max,
        "amin": np.min,
    }
    out = x.copy()
    dim = dim % max(x.ndim, 1)
    groups: dict = {}
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        groups.setdefault(tuple(tgt), []).append(src[pos])
    for tgt, vals in groups.items():
        vals = ([x[tgt]] if include_self else []) + vals
        v = combine[reduce](np.array(vals, dtype=x.dtype))
        if reduce == "mean":
            v = v / len(vals) if x.dtype.kind == "f" else v // len(vals)
        out[tgt] = v
    return out


def _scatter_ref(accumulate: bool):
    def ref(x, dim, index, src, *, alpha=1, reduce=None):
        if reduce is not None:
            src = np.broadcast_to(np.asarray(src, dtype=x.dtype), index.shape)
            return _scatter_reduce_ref(x, dim, index, src, "sum" if reduce == "add" else "prod")
        out = x.copy()
        dim = dim % max(x.ndim, 1)
        src_arr = (
            np.broadcast_to(np.asarray(src, dtype=x.dtype), index.shape)
            if np.ndim(src) == 0
            else src
        )
        for pos in np.ndindex(*index.shape):
            tgt = list(pos)
            tgt[dim] = index[pos]
            if accumulate:
                out[tuple(tgt)] += src_arr[pos]
            else:
                out[tuple(tgt)] = src_arr[pos]
        return out

    return ref


def _index_add_samples(op, m, dtype):
    yield SampleInput(m.make((5, 3)), (0, m.index((4,), 5), m.make((4, 3))), name="dim0-dups")
    yield SampleInput(
        m.make((3, 5)), (1, m.index((2,), 5), m.make((3, 2))), dict(alpha=2), name="dim1-alpha"
    )
    yield SampleInput(
        m.make((3, 5), layout="transposed"),
        (-1, m.index((3,), 5), m.make((3, 3), layout="sliced")),
        name="noncontiguous",
    )
    yield SampleInput(m.make((5, 3)), (0, m.index((0,), 5), m.make((0, 3))), name="empty-index")


def _index_add(x, dim, index, source, *, alpha=1):
    out = x.copy()
    moved = np.moveaxis(out, dim, 0)
    src = np.moveaxis(source, dim, 0)
    np.add.at(moved, index, (src * alpha).astype(x.dtype))
    return out


def _masked_fill_samples(op, m, dtype):
    val = True if dtype is _dt.bool else (2.5 if dtype.is_floating_point else 7)
    yield SampleInput(m.make((3, 4)), (m.mask((3, 4)), val), name="same-shape")
    yield SampleInput(m.make((3, 4)), (m.mask((4,)), val), name="broadcast-mask")
    yield SampleInput(m.make((4, 3), layout="transposed"), (m.mask((4, 1)), val), name="transposed")
    yield SampleInput(
        m.make((3, 4)), (m.mask((3, 4)), m.make((), values=val)), name="0-d-tensor-value"
    )
    yield SampleInput(m.make((0, 4)), (m.mask((0, 4)), val), name="zero-size")


def _masked_fill(x, mask, value):
    return np.where(mask, np.asarray(value).astype(x.dtype), x)


def _nonzero_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4), low=-1, high=2), name="2d")
    yield SampleInput(m.make((5,), low=-1, high=2), name="1d")
    yield SampleInput(m.make((3, 4), layout="transposed", low=-1, high=2), name="transposed")
    yield SampleInput(m.make((0, 3)), name="zero-size")
    yield SampleInput(m.make((), values=1), name="0-d")


def _nonzero(x, *, as_tuple=False):
    if as_tuple:
        if x.ndim == 0:
            return (np.nonzero(x.reshape(1))[0],)
        return tuple(i.astype(np.int64) for i in np.nonzero(x))
    return np.argwhere(x).astype(np.int64)


def _nonzero_public_samples(op, m, dtype):
    yield from _nonzero_samples(op, m, dtype)
    yield SampleInput(m.make((3, 4), low=-1, high=2), kwargs=dict(as_tuple=True), name="as_tuple")


def _int_index_samples(op, m, dtype):
    """`_index` / `index` with integer index tensors (and None for skipped dims)."""
    yield SampleInput(m.make((4, 3)), ([m.index((2,), 4)],), name="first-dim")
    yield SampleInput(m.make((4, 3)), ([None, m.index((2, 2), 3)],), name="second-dim-2d-index")
    yield SampleInput(
        m.make((4, 3, 5)), ([m.index((2,), 4), m.index((2,), 3)],), name="adjacent-pair"
    )
    yield SampleInput(
        m.make((4, 3, 5)),
        ([m.index((2, 1), 4), None, m.index((3,), 5)],),
        name="separated-broadcast",
    )
    yield SampleInput(
        m.make((4, 3, 5)), ([None, m.index((2,), 3), m.index((1,), 5)],), name="adjacent-middle"
    )
    yield SampleInput(m.make((3, 4), layout="transposed"), ([m.index((5,), 3)],), name="transposed")
    yield SampleInput(m.make((4, 3)), ([m.index((0,), 4)],), name="empty-index")


def _np_index(x, indices):
    key = tuple(slice(None) if i is None else i for i in indices)
    return np.array(x[key])


def _index_samples(op, m, dtype):
    yield from _int_index_samples(op, m, dtype)
    yield SampleInput(m.make((3, 4)), ([m.mask((3, 4))],), name="data-dependent-bool-mask")
    yield SampleInput(m.make((3, 4)), ([m.mask((3,))],), name="data-dependent-bool-rows")


def _index_put_samples(op, m, dtype):
    yield SampleInput(
        m.make((4, 3)), ([m.index((2,), 4, unique_along=0)], m.make((2, 3))), name="rows"
    )
    yield SampleInput(
        m.make((4, 3)),
        ([m.index((2,), 4, unique_along=0), m.index((2,), 3, unique_along=0)], m.make(())),
        name="points-scalar-value",
    )
    yield SampleInput(
        m.make((4, 3)),
        ([None, m.index((2,), 3, unique_along=0)], m.make((2,))),
        name="columns-broadcast-value",
    )
    yield SampleInput(
        m.make((3, 4), layout="transposed"),
        ([m.index((2,), 3, unique_along=0)], m.make((2, 4))),
        name="transposed",
    )
    yield SampleInput(
        m.make((4, 3)), ([m.index((5,), 4)], m.make((5, 3)), True), name="accumulate-dups"
    )


def _index_put_public_samples(op, m, dtype):
    yield from _index_put_samples(op, m, dtype)
    yield SampleInput(
        m.make((3, 4)), ([m.mask((3, 4))], m.make(())), name="data-dependent-bool-mask"
    )


def _index_put(x, indices, values, accumulate=False):
    out = x.copy()
    key = tuple(slice(None) if i is None else i for i in indices)
    if accumulate:
        np.add.at(out, key, values)  # type: ignore[arg-type]  # numpy's stub omits slices
    else:
        out[key] = values
    return out


def _masked_select_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.mask((3, 4)),), name="same-shape")
    yield SampleInput(m.make((3, 4)), (m.mask((4,)),), name="broadcast-mask")
    yield SampleInput(m.make((4,)), (m.mask((3, 1)),), name="broadcast-input")
    yield SampleInput(m.make((4, 3), layout="transposed"), (m.mask((4, 3)),), name="transposed")
    yield SampleInput(m.make((0, 4)), (m.mask((0, 4)),), name="zero-size")


def _masked_select(x, mask):
    xb, mb = np.broadcast_arrays(x, mask)
    return xb[mb]


def _torch_index_put_(x, indices, values, accumulate=False):
    import torch

    return torch.ops.aten.index_put_(x.clone(), indices, values, accumulate)


OPS: list[OpInfo] = [
    OpInfo(
        "index_select",
        dtypes=ALL + BOOL,
        ref=_index_select,
        sample_inputs_func=_index_select_samples,
    ),
    OpInfo("gather", dtypes=ALL + BOOL, ref=_take_along, sample_inputs_func=_gather_samples),
    OpInfo(
        "scatter", dtypes=ALL + BOOL, ref=_scatter_ref(False), sample_inputs_func=_scatter_samples
    ),
    OpInfo(
        "scatter_reduce",
        dtypes=ALL,
        ref=_scatter_reduce_ref,
        sample_inputs_func=_scatter_reduce_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "index_reduce",
        dtypes=ALL,
        ref=_index_reduce_ref,
        sample_inputs_func=_index_reduce_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "scatter_add",
        dtypes=ALL,
        ref=_scatter_ref(True),
        sample_inputs_func=_scatter_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "index_add",
        dtypes=ALL,
        ref=_index_add,
        sample_inputs_func=_index_add_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "masked_fill", dtypes=ALL + BOOL, ref=_masked_fill, sample_inputs_func=_masked_fill_samples
    ),
    OpInfo(
        "_nonzero",
        dtypes=ALL + BOOL,
        ref=_nonzero,
        torch_ref=torch_aten("nonzero"),
        sample_inputs_func=_nonzero_samples,
        data_dependent=True,
    ),
    OpInfo(
        "nonzero",
        dtypes=ALL + BOOL,
        ref=_nonzero,
        sample_inputs_func=_nonzero_public_samples,
        data_dependent=True,
    ),
    OpInfo(
        "_index",
        dtypes=ALL + BOOL,
        ref=_np_index,
        torch_ref=torch_aten("index"),
        sample_inputs_func=_int_index_samples,
    ),
    OpInfo(
        "index",
        dtypes=ALL + BOOL,
        ref=_np_index,
        torch_ref=torch_aten("index"),
        sample_inputs_func=_index_samples,
    ),
    OpInfo(
        "_index_put_",
        dtypes=ALL,
        ref=_index_put,
        torch_ref=_torch_index_put_,
        sample_inputs_func=_index_put_samples,
        supports_out=False,
        supports_inplace=False,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "index_put",
        dtypes=ALL,
        ref=_index_put,
        torch_ref=torch_aten("index_put"),
        sample_inputs_func=_index_put_public_samples,
        tol={_dt.float32: (1e-5, 1e-5)},
    ),
    OpInfo(
        "masked_select",
        dtypes=ALL + BOOL,
        ref=_masked_select,
        sample_inputs_func=_masked_select_samples,
        data_dependent=True,
    ),
]


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


def _ix(*shape, high=2):
    return lambda m: m.index(shape, high)


def _mask(*shape):
    return lambda m: m.mask(shape)


_ERRORS = {
    "index_select": [
        error_case(
            "2-d-index",
            _t(3, 4),
            (0, _ix(1, 1)),
            error=IndexError,
            match=r"index_select\(\): Index is supposed to be a vector",
        ),
        error_case(
            "float-index",
            _t(3, 4),
            (0, _t(2, dtype=_dt.float32)),
            match=r"index_select\(\): Expected dtype int32 or int64",
        ),
    ],
    "gather": [
        error_case(
            "index-too-large",
            _t(3, 4),
            (0, _ix(2, 5)),
            match=r"gather\(\): Expected index \[2, 5\] to be no larger",
        ),
        error_case(
            "uint8-index",
            _t(3, 4),
            (0, _t(2, 2, dtype=_dt.uint8)),
            match=r"gather\(\): Expected dtype int32/int64 for index",
        ),
    ],
    "scatter": [
        error_case(
            "src-larger-index",
            _t(3, 4),
            (0, _ix(2, 2), _t(1, 2)),
            match=r"scatter\(\): Expected index \[2, 2\] .* src \[1, 2\]",
        ),
        error_case(
            "bad-reduce",
            _t(3, 4),
            (0, _ix(2, 2), _t(2, 2)),
            dict(reduce="max"),
            match=r"scatter\(\): reduce argument must be "
            r"either add or multiply",
        ),
    ],
    "index_reduce": [
        error_case(
            "sum",
            _t(3, 4),
            (0, _ix(2), _t(2, 4), "sum"),
            match=r"index_reduce\(\): reduce argument must be one of prod",
        ),
        error_case(
            "2-d-index",
            _t(3, 4),
            (0, _ix(2, 2), _t(2, 4), "amax"),
            error=IndexError,
            match=r"index_reduce\(\): Index is supposed to be a vector",
        ),
    ],
    "scatter_reduce": [
        error_case(
            "bad-reduce",
            _t(3, 4),
            (0, _ix(2, 2), _t(2, 2), "max"),
            match=r"scatter_reduce\(\): reduce argument must be one of "
            r"sum, prod, mean, amax, amin, got 'max'",
        ),
        error_case(
            "uint8-index",
            _t(3, 4),
            (0, _t(2, 2, dtype=_dt.uint8), _t(2, 2), "sum"),
            match=r"scatter_reduce\(\): Expected dtype int32/int64",
        ),
        error_case(
            "dtype",
            _t(3, 4, dtype=_dt.float32),
            (0, _ix(2, 2), _t(2, 2, dtype=_dt.int64), "sum"),
            match=r"scatter_reduce\(\): Expected self.dtype to be equal",
        ),
    ],
    "scatter_add": [
        error_case(
            "number-src",
            _t(3, 4),
            (0, _ix(2, 2), 1.0),
            error=TypeError,
            match=r"scatter_add\(\): argument 'src' \(position 4\) must be "
            r"Tensor",
        )
    ],
    "index_add": [
        error_case(
            "count",
            _t(3, 4),
            (0, _ix(2), _t(3, 4)),
            match=r"index_add\(\): Number of indices \(2\) should be equal",
        )
    ],
    "masked_fill": [
        error_case(
            "float-mask",
            _t(3, 4),
            (_t(3, 4, dtype=_dt.float32), 1),
            match=r"masked_fill\(\): only supports boolean masks",
        ),
        error_case(
            "1-d-value",
            _t(3, 4),
            (_mask(4), _t(1)),
            match="only supports a 0-dimensional value tensor",
        ),
    ],
    "_index": [
        error_case(
            "too-many",
            _t(3, 4),
            ([_ix(2), _ix(2), _ix(2)],),
            error=IndexError,
            match=r"index\(\): too many indices for tensor of dimension 2",
        ),
        error_case(
            "no-broadcast",
            _t(3, 4),
            ([_ix(2), _ix(3)],),
            error=IndexError,
            match=r"index\(\): shape mismatch",
        ),
    ],
    "index": [
        error_case(
            "float-index",
            _t(3, 4),
            ([_t(2, dtype=_dt.float32)],),
            error=IndexError,
            match="tensors used as indices must be long, int, byte or bool tensors",
        )
    ],
    "_index_put_": [
        error_case(
            "values-shape",
            _t(3, 4),
            ([_ix(2)], _t(3)),
            match=r"index_put_\(\): shape mismatch: value tensor of shape "
            r"\[3\] cannot be broadcast",
        )
    ],
    "index_put": [
        error_case(
            "mask-shape",
            _t(3, 4),
            ([_mask(4)], _t()),
            error=IndexError,
            match=r"index_put\(\): The shape of the mask \[4\]",
        )
    ],
    "masked_select": [
        error_case(
            "float-mask",
            _t(3),
            (_t(3, dtype=_dt.float32),),
            match=r"masked_select\(\): expected BoolTensor for mask",
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
