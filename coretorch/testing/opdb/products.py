"""OpInfos of einsum (coretorch/ops/einsum.py) and the products of coretorch/ops/products.py;
numpy references."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case

_TOL = {_dt.float32: (1e-5, 1e-4)}
DTYPES = FLOATS + (_dt.int64,)
_EINSUM_CASES = (
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))),
    ("ijk,kl,l->ij", ((2, 3, 4), (4, 5), (5,))),
    ("ii->i", ((3, 3),)),
    ("ii", ((4, 4),)),
    ("ij->", ((3, 4),)),
    ("ijk->kji", ((2, 3, 4),)),
    ("i,j", ((3,), (4,))),
    ("i,i->", ((5,), (5,))),
    ("...ij,...jk->...ik", ((2, 1, 3, 4), (5, 4, 2))),
    ("...k,kl", ((2, 3, 4), (4, 5))),
    ("bii,bj->bij", ((2, 3, 3), (2, 4))),
    ("ab,bc,cd,de->ae", ((8, 2), (2, 9), (9, 3), (3, 7))),
    ("ij,kj->", ((0, 3), (2, 3))),
)


def _einsum_samples(op, m, dtype):
    for eq, shapes in _EINSUM_CASES:
        yield SampleInput(eq, ([m.make(s) for s in shapes],), name=eq)
    yield SampleInput(
        "ij,jk",
        ([m.make((4, 3), layout="transposed"), m.make((3, 2))],),
        name="transposed-implicit",
    )


def _einsum_ref(eq, tensors, *, path=None):
    out = np.einsum(eq, *tensors)
    return np.asarray(out).astype(tensors[0].dtype)


def _einsum_torch(eq, tensors, *, path=None):
    import torch

    return torch.einsum(eq, tensors)


def _tensordot_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), (m.make((3, 4, 5)),), name="dims=2")
    yield SampleInput(m.make((2, 3, 4)), (m.make((4, 5)),), dict(dims=1), name="dims=1")
    yield SampleInput(
        m.make((2, 3, 4)), (m.make((4, 3, 2)),), dict(dims=([1, 2], [1, 0])), name="lists"
    )
    yield SampleInput(
        m.make((3, 4), layout="transposed"), (m.make((2, 5)),), dict(dims=0), name="outer"
    )


def _tensordot_ref(a, b, dims=2):
    return np.tensordot(a, b, dims)


def _scalars_for(dtype, beta, alpha):
    """PyTorch casts beta and alpha to an integer product's dtype (0.5 becomes 0)."""
    return (int(beta), int(alpha)) if np.issubdtype(dtype, np.integer) else (beta, alpha)


def _scaled(prod):
    def ref(s, a, b, *, beta=1, alpha=1):
        beta, alpha = _scalars_for(a.dtype, beta, alpha)
        p = prod(a, b)
        r = p * alpha if beta == 0 else beta * s + alpha * p
        return np.asarray(r).astype(a.dtype)

    return ref


def _scaled_samples(shapes, self_shapes, float_scalars_on_ints: bool = True):
    a_shape, b_shape = shapes

    def samples(op, m, dtype):
        full, bcast = self_shapes
        yield SampleInput(m.make(full), (m.make(a_shape), m.make(b_shape)), name="plain")
        yield SampleInput(
            m.make(bcast),
            (m.make(a_shape), m.make(b_shape)),
            dict(beta=2, alpha=3),
            name="broadcast-beta-alpha",
        )
        nan = (
            m.make(full, values=np.full(full, np.nan)) if dtype.is_floating_point else m.make(full)
        )
        yield SampleInput(
            nan,
            (m.make(a_shape, layout="transposed"), m.make(b_shape)),
            dict(beta=0),
            name="beta0-ignores-self-nan",
        )
        if dtype.is_floating_point or float_scalars_on_ints:
            yield SampleInput(
                m.make(full),
                (m.make(a_shape), m.make(b_shape)),
                dict(beta=1.5, alpha=2.5),
                name="float-beta-alpha",
            )

    return samples


def _addbmm_prod(a, b):
    return (a @ b).sum(0)


def _trace_samples(op, m, dtype):
    yield SampleInput(m.make((3, 3)), name="square")
    yield SampleInput(m.make((2, 4), layout="sliced"), name="wide")
    yield SampleInput(m.make((0, 3)), name="empty")


def _trace_ref(a):
    return np.asarray(np.trace(a)).astype(a.dtype if a.dtype.kind == "f" else np.int64)


def _kron_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), (m.make((3, 2)),), name="matrices")
    yield SampleInput(m.make((3,)), (m.make((2, 2)),), name="ranks-differ")
    yield SampleInput(m.make((2, 2, 2)), (m.make((1, 3, 2), layout="sliced"),), name="3-d")


def _inner_samples(op, m, dtype):
    yield SampleInput(m.make((4,)), (m.make((4,)),), name="vectors")
    yield SampleInput(m.make((2, 3, 4)), (m.make((5, 4)),), name="tensors")
    yield SampleInput(m.make(()), (m.make((2, 3)),), name="0-d")


def _vdot_samples(op, m, dtype):
    yield SampleInput(m.make((5,)), (m.make((5,)),), name="plain")
    yield SampleInput(m.make((5,), layout="sliced"), (m.make((5,)),), name="sliced")


def _cdist_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (m.make((5, 3)),), name="p=2")
    for p in (0.0, 1.0, 3.0, float("inf")):
        yield SampleInput(m.make((3, 2)), (m.make((4, 2)),), dict(p=p), name=f"p={p}")
    yield SampleInput(m.make((2, 3, 4)), (m.make((1, 5, 4)),), name="batched")
    yield SampleInput(m.make((3, 2), layout="transposed"), (m.make((2, 2)),), name="transposed")


def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        r = (d != 0).sum(-1)
    elif p == float("inf"):
        r = d.max(-1)
    else:
        r = (d**p).sum(-1) ** (1.0 / p)
    return r.astype(x1.dtype)


def _torch(name: str):
    def ref(*a, **k):
        import torch

        return getattr(torch, name)(*a, **k)

    return ref


OPS: list[OpInfo] = [
    OpInfo(
        "einsum",
        dtypes=DTYPES,
        ref=_einsum_ref,
        torch_ref=_einsum_torch,
        sample_inputs_func=_einsum_samples,
        tol=_TOL,
    ),
    OpInfo(
        "tensordot",
        dtypes=DTYPES,
        ref=_tensordot_ref,
        torch_ref=_torch("tensordot"),
        sample_inputs_func=_tensordot_samples,
        tol=_TOL,
    ),
    OpInfo(
        "baddbmm",
        dtypes=DTYPES,
        ref=_scaled(np.matmul),
        tol=_TOL,
        sample_inputs_func=_scaled_samples(((2, 3, 4), (2, 4, 5)), ((2, 3, 5), (5,))),
    ),
    OpInfo(
        "addbmm",
        dtypes=DTYPES,
        ref=_scaled(_addbmm_prod),
        tol=_TOL,
        sample_inputs_func=_scaled_samples(((2, 3, 4), (2, 4, 5)), ((3, 5), (1, 5))),
    ),
    OpInfo(
        "addmv",
        dtypes=DTYPES,
        ref=_scaled(np.matmul),
        tol=_TOL,
        sample_inputs_func=_scaled_samples(((3, 4), (4,)), ((3,), (1,))),
    ),
    OpInfo(
        "addr",
        dtypes=DTYPES,
        ref=_scaled(np.outer),
        tol=_TOL,
        sample_inputs_func=_scaled_samples(((3,), (4,)), ((3, 4), (4,)), False),
    ),
    OpInfo("trace", dtypes=DTYPES, ref=_trace_ref, sample_inputs_func=_trace_samples, tol=_TOL),
    OpInfo("kron", dtypes=DTYPES, ref=np.kron, sample_inputs_func=_kron_samples, tol=_TOL),
    OpInfo("inner", dtypes=DTYPES, ref=np.inner, sample_inputs_func=_inner_samples, tol=_TOL),
    OpInfo(
        "vdot",
        dtypes=DTYPES,
        ref=lambda a, b: np.asarray(np.vdot(a, b)),
        sample_inputs_func=_vdot_samples,
        tol=_TOL,
    ),
    OpInfo("cdist", dtypes=FLOATS, ref=_cdist_ref, sample_inputs_func=_cdist_samples, tol=_TOL),
]


def _t(*shape):
    return lambda m: m.make(shape)


def _ints(*shape):
    return lambda m: m.make(shape, dtype=_dt.int64)


_ERRORS = {
    "einsum": [
        error_case(
            "operands",
            lambda m: "ij,jk->ik",
            ([_t(2, 3)],),
            match=r"einsum\(\): fewer operands were provided",
        ),
        error_case(
            "ndim",
            lambda m: "ij->i",
            ([_t(2, 3, 4)],),
            match=r"the number of subscripts in the equation \(2\) does not match the "
            r"number of dimensions \(3\) for operand 0",
        ),
        error_case(
            "sizes",
            lambda m: "ij,jk->ik",
            ([_t(2, 3), _t(4, 5)],),
            match=r"einsum\(\): operands do not broadcast",
        ),
        error_case(
            "output", lambda m: "ij->k", ([_t(2, 3)],), match=r"output subscript k does not appear"
        ),
        error_case("char", lambda m: "i1->i", ([_t(2, 3)],), match=r"invalid subscript"),
    ],
    "tensordot": [
        error_case(
            "sizes",
            _t(2, 3),
            (_t(4, 5),),
            dict(dims=1),
            match=r"contracted dimensions need to match",
        )
    ],
    "baddbmm": [
        error_case(
            "batch",
            _t(2, 3, 5),
            (_t(2, 3, 4), _t(3, 4, 5)),
            match=r"Expected size for first two dimensions of batch2",
        )
    ],
    "addmv": [
        error_case("sizes", _t(3), (_t(3, 4), _t(5)), match=r"size mismatch"),
        error_case("self", _t(4), (_t(3, 4), _t(4)), match=r"can't be broadcast"),
    ],
    "addr": [
        error_case("2-d", _t(3, 4), (_t(3, 1), _t(4)), match=r"expected 1-D and 1-D"),
        error_case(
            "float-beta-on-ints",
            _ints(3, 4),
            (_ints(3), _ints(4)),
            dict(beta=0.5),
            match=r"addr\(\): for integral input tensors, argument beta must not be "
            r"a floating point number",
        ),
    ],
    "trace": [error_case("3-d", _t(2, 2, 2), match=r"trace: expected a matrix")],
    "inner": [error_case("last", _t(2, 3), (_t(4),), match=r"the last dimension must match")],
    "vdot": [error_case("2-d", _t(2, 3), (_t(3),), match=r"vdot\(\): 1D tensors expected")],
    "cdist": [
        error_case(
            "columns",
            _t(3, 2),
            (_t(4, 3),),
            match=r"X1 and X2 must have the same number of columns",
        ),
        error_case(
            "dtype",
            _t(3, 2),
            (
                lambda m: m.make(
                    (4, 2), dtype=_dt.float64 if m.dtype is not _dt.float64 else _dt.float32
                ),
            ),
            match=r"expected X1 and X2 to have the same dtype",
        ),
        error_case(
            "p", _t(3, 2), (_t(4, 2),), dict(p=-1.0), match=r"only supports non-negative p values"
        ),
    ],
}
attach_error_cases(OPS, _ERRORS)
