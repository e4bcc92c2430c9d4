"""OpInfos of the spectral functions, norms and matrix functions (coretorch/ops/linalg_spectral.py,
linalg_norms.py, linalg_functions.py): numpy / scipy references."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import scipy.linalg as sl

from ... import dtypes as _dt
from ..opinfo import FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case
from .linalg_common import LINALG_DTYPES, TOL, matrix, matrix_values, per_matrix, t, torch_linalg

INF = math.inf
_O: dict[str, Any] = dict(dtypes=LINALG_DTYPES, tol=TOL)


def _general_samples(shapes=((3, 3), (4, 2), (2, 4), (2, 3, 3)), kind="general", **kw):
    def samples(op, m, dtype):
        for shape in shapes:
            yield SampleInput(matrix(m, shape, kind), kwargs=dict(kw), name=f"{shape}")
        yield SampleInput(
            matrix(m, shapes[0], kind, layout="transposed"), kwargs=dict(kw), name="transposed"
        )

    return samples


# ---- spectral -----------------------------------------------------------------------------------


def _svdvals_ref(a, *, driver=None):
    return np.linalg.svd(a, compute_uv=False)


def _eigvalsh_samples(op, m, dtype):
    for shape in ((3, 3), (2, 4, 4)):
        yield SampleInput(matrix(m, shape, "sym"), name=f"{shape}", gradcheck=False)
    yield SampleInput(matrix(m, (3, 3)), ("U",), name="upper", gradcheck=False)


def _pinv_samples(op, m, dtype):
    yield from _general_samples()(op, m, dtype)
    # hermitian reads one triangle (eigh): checked on symmetrized input in tests/test_linalg.py
    yield SampleInput(
        matrix(m, (3, 3), "sym"), kwargs=dict(hermitian=True), name="hermitian", gradcheck=False
    )
    yield SampleInput(matrix(m, (3, 4)), kwargs=dict(rtol=1e-3), name="rtol")
    yield SampleInput(matrix(m, (4, 3)), kwargs=dict(atol=0.2), name="atol")
    rank1 = np.outer([1.0, 2.0, -1.0], [0.5, 1.0, 2.0, -1.0])
    yield SampleInput(m.make((3, 4), values=rank1), name="rank-deficient", gradcheck=False)


def _eps(a):
    return np.finfo(a.dtype).eps


def _cutoff(a, s, atol, rtol):
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else _eps(a) * max(a.shape[-2:])
    largest = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    return np.maximum(rtol * largest, atol or 0.0)


def _pinv_ref(a, *, atol=None, rtol=None, hermitian=False):
    if hermitian:
        w, v = np.linalg.eigh(a)
        winv = np.where(np.abs(w) > _cutoff(a, np.abs(w), atol, rtol), 1 / w, 0)
        return (v * winv[..., None, :]) @ np.swapaxes(v, -1, -2)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    sinv = np.where(s > _cutoff(a, s, atol, rtol), 1 / s, 0)
    return (np.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(u, -1, -2)


def _matrix_rank_ref(a, *, atol=None, rtol=None, hermitian=False):
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    return (s > _cutoff(a, s, atol, rtol)).sum(-1).astype(np.int64)


def _rank_samples(op, m, dtype):
    yield from _pinv_samples(op, m, dtype)
    yield SampleInput(m.make((4, 4), values=np.diag([3.0, 1.0, 1e-9, 0.0])), name="tiny-sv")


def _cond_samples(op, m, dtype):
    yield from _general_samples(shapes=((3, 3), (4, 2), (2, 3, 3)), kind="invertible")(op, m, dtype)
    for p in (-2, 1, -1, INF, -INF, "fro", "nuc"):
        yield SampleInput(matrix(m, (3, 3), "invertible"), (p,), name=f"p={p}")


def _cond_ref(a, p=None):
    return np.linalg.cond(a, p)


def _lstsq_samples(op, m, dtype):
    yield SampleInput(matrix(m, (5, 3)), (matrix(m, (5, 2)),), name="tall")
    yield SampleInput(
        matrix(m, (5, 3)), (matrix(m, (5, 2)),), dict(driver="gelsd"), name="tall-gelsd"
    )
    yield SampleInput(
        matrix(m, (5, 3)), (m.make((5,)),), dict(driver="gels"), name="tall-gels-vector"
    )
    yield SampleInput(
        matrix(m, (2, 4, 3)), (matrix(m, (2, 4, 1)),), dict(driver="gelss"), name="batched-gelss"
    )
    yield SampleInput(matrix(m, (3, 3), "invertible"), (matrix(m, (3, 2)),), name="square")


def _lstsq_ref(a, b, rcond=None, *, driver=None):
    driver = driver or "gelsy"
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    x = per_matrix(lambda p, q: np.linalg.lstsq(p, q, rcond=None)[0], a, bm)
    mm, n = a.shape[-2:]
    empty = np.zeros((0,), a.dtype)
    res = ((a @ x - bm) ** 2).sum(-2) if mm > n and driver != "gelsy" else empty
    s = np.linalg.svd(a, compute_uv=False)
    rank = (s > _cutoff(a, s, None, None)).sum(-1) if driver != "gels" else np.zeros((0,), np.int64)
    if driver != "gels":
        rank = np.broadcast_to(rank, x.shape[:-2])
    sv = s if driver in ("gelsd", "gelss") else empty
    return (x[..., 0] if vector else x), res, rank, sv


def _svd_top_samples(op, m, dtype):
    yield SampleInput(matrix(m, (4, 3)), name="some")
    yield SampleInput(matrix(m, (2, 3, 4)), (True,), name="batched-wide")
    yield SampleInput(matrix(m, (3, 4)), (True, False), name="no-uv")


def _svd_top_ref(a, some=True, compute_uv=True):
    from .linalg_factorizations import _svd_ref

    if not compute_uv:
        mm, n = a.shape[-2:]
        return (
            np.zeros(a.shape[:-2] + (mm, mm)),
            np.linalg.svd(a, compute_uv=False),
            np.zeros(a.shape[:-2] + (n, n)),
        )
    u, s, vh = _svd_ref(a, not some)
    return u, s, np.swapaxes(vh, -1, -2)


def _svd_top_torch(a, some=True, compute_uv=True):
    import torch

    from .linalg_common import canonical_svd, torch_column_signs

    if not compute_uv:
        return torch.svd(a, some, compute_uv)
    u, s, vh = torch.linalg.svd(a, full_matrices=not some)
    u, s, vh = canonical_svd(u, s, vh, torch_column_signs, torch.cat)
    return u, s, vh.mT


def _qr_top_samples(op, m, dtype):
    yield SampleInput(matrix(m, (4, 3)), name="some")
    yield SampleInput(matrix(m, (3, 5)), (False,), name="complete-wide")


def _qr_top_ref(a, some=True):
    return np.linalg.qr(a, mode="reduced" if some else "complete")


# ---- norms --------------------------------------------------------------------------------------


def _vector_norm_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="full")
    for ord_ in (1, 3, INF, -INF, 0, 0.5, -1):
        yield SampleInput(
            m.make((2, 3, 4), exclude_zero=ord_ < 1), (ord_, (1,)), name=f"ord={ord_}"
        )
    yield SampleInput(m.make((2, 3, 4)), (2, (0, 2), True), name="dims-keepdim")
    yield SampleInput(m.make((4, 3), layout="transposed"), kwargs=dict(dim=0), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(
        m.make((2, 3), values=[0.0, 0.0, 0.0, 1.0, -2.0, 0.5]), (2, (1,)), name="zero-row"
    )
    yield SampleInput(m.make((0, 3)), (2, (0,)), name="zero-size")


def _vector_norm_ref(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    ax = tuple(range(x.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    a = np.abs(x.astype(np.float64))
    if ord == INF:
        r = a.max(axis=ax, keepdims=keepdim)
    elif ord == -INF:
        r = a.min(axis=ax, keepdims=keepdim)
    elif ord == 0:
        r = (a != 0).sum(axis=ax, keepdims=keepdim)
    else:
        with np.errstate(divide="ignore"):
            r = (a**ord).sum(axis=ax, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r).astype(dtype or x.dtype)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, INF, -INF)


def _matrix_norm_samples(op, m, dtype):
    for ord_ in _MATRIX_ORDS:
        yield SampleInput(matrix(m, (3, 4)), (ord_,), name=f"ord={ord_}")
    yield SampleInput(matrix(m, (2, 3, 3)), ("nuc",), dict(keepdim=True), name="batched-keepdim")
    yield SampleInput(m.make((3, 2, 4)), (1, (0, 2)), name="dims-0-2")
    yield SampleInput(m.make((3, 2, 4)), (2, (2, 0), True), name="dims-2-0-keepdim")
    yield SampleInput(matrix(m, (4, 3), layout="transposed"), (INF,), name="transposed")
    for ord_, shape in (
        ("nuc", (0, 3)),
        (2, (3, 0)),
        (1, (3, 0)),
        (-1, (0, 3)),
        (INF, (0, 2)),
        ("fro", (0, 0)),
    ):
        yield SampleInput(m.make(shape), (ord_,), name=f"empty-ord={ord_}")


def _matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if a.size == 0:  # PyTorch: 0 (numpy refuses some empty norms)
        shape = [1 if i in [d % a.ndim for d in dim] else s for i, s in enumerate(a.shape)]
        r = (
            np.zeros(shape)
            if keepdim
            else np.zeros([s for i, s in enumerate(a.shape) if i not in [d % a.ndim for d in dim]])
        )
        return r.astype(dtype or a.dtype)
    r = np.linalg.norm(a.astype(np.float64), ord, axis=tuple(dim), keepdims=keepdim)
    return np.asarray(r).astype(dtype or a.dtype)


def _norm_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 4)), name="all-elements")
    yield SampleInput(m.make((2, 3, 4)), (None, (1,)), name="dim1")
    yield SampleInput(m.make((4,)), (3,), name="vector-ord")
    yield SampleInput(matrix(m, (3, 4)), ("nuc",), name="matrix-nuc")
    yield SampleInput(matrix(m, (3, 4)), (-1,), name="2d-ord")
    yield SampleInput(m.make((2, 3, 4)), (INF, (0, 2)), dict(keepdim=True), name="dims-pair")


def _norm_ref(a, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is None and ord is None:
        return _vector_norm_ref(a, 2, None, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and a.ndim == 2):
        return _matrix_norm_ref(
            a, ord or "fro", (-2, -1) if dim is None else dim, keepdim, dtype=dtype
        )
    return _vector_norm_ref(a, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# ---- matrix functions ---------------------------------------------------------------------------


def _matrix_power_samples(op, m, dtype):
    for n in (0, 1, 2, 5, -1, -3):
        yield SampleInput(
            matrix(m, (3, 3), "invertible" if n < 0 else "general"), (n,), name=f"n={n}"
        )
    yield SampleInput(matrix(m, (2, 3, 3), layout="transposed"), (3,), name="batched")
    yield SampleInput(matrix(m, (0, 2, 2)), (2,), name="zero-batch")


def _matrix_power_ref(a, n):
    return np.linalg.matrix_power(a, n)


def _matrix_exp_samples(op, m, dtype):
    yield SampleInput(matrix(m, (3, 3)), name="small-norm")
    yield SampleInput(matrix(m, (2, 4, 4), layout="sliced"), name="batched")
    # a 1-norm above theta_13: scaled down, then squared back
    yield SampleInput(
        m.make((3, 3), values=np.array([[2.0, 3, -1], [4, 1, 2], [-3, 5, 6]])),
        name="needs-squaring",
    )
    yield SampleInput(matrix(m, (1, 1)), name="1x1")
    yield SampleInput(matrix(m, (0, 0)), name="0x0")


def _matrix_exp_ref(a):
    if a.size == 0:
        return a.copy()
    return per_matrix(sl.expm, a).astype(a.dtype)


def _cross_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (m.make((4, 3)),), name="rows")
    yield SampleInput(m.make((3, 2)), (m.make((3, 2)),), dict(dim=0), name="dim0")
    yield SampleInput(m.make((2, 1, 3)), (m.make((1, 4, 3)),), name="broadcast")
    yield SampleInput(m.make((5, 3), layout="transposed"), (m.make((5, 3)),), name="transposed")


def _linalg_cross_ref(a, b, *, dim=-1):
    return np.cross(a, b, axis=dim)


def _cross_top_samples(op, m, dtype):
    yield SampleInput(m.make((4, 3)), (m.make((4, 3)),), name="first-dim-of-3")
    yield SampleInput(m.make((3, 3)), (m.make((3, 3)),), dict(dim=1), name="dim1")


def _cross_top_ref(a, b, dim=None):
    if dim is None:
        dim = next(i for i, s in enumerate(np.broadcast_shapes(a.shape, b.shape)) if s == 3)
    return np.cross(a, b, axis=dim)


def _multi_dot_samples(op, m, dtype):
    yield SampleInput([m.make((3, 4)), m.make((4, 5))], name="two")
    yield SampleInput(
        [m.make((10, 2)), m.make((2, 8)), m.make((8, 1)), m.make((1, 6))], name="four-reordered"
    )
    yield SampleInput([m.make((4,)), m.make((4, 3)), m.make((3,))], name="vector-ends")
    yield SampleInput(
        [m.make((4, 3), layout="transposed"), m.make((3, 2)), m.make((2,))],
        name="transposed-vector-last",
    )


def _multi_dot_ref(tensors):
    return functools.reduce(np.matmul, tensors)


def _chain_matmul_samples(op, m, dtype):
    yield SampleInput([m.make((3, 4)), m.make((4, 5)), m.make((5, 2))], name="three")
    yield SampleInput([m.make((3, 4))], name="one")


def _torch_chain_matmul(matrices):
    import torch

    return torch.chain_matmul(*matrices)


def _vander_samples(op, m, dtype):
    yield SampleInput(m.make((4,)), name="square")
    yield SampleInput(m.make((2, 3)), kwargs=dict(N=5), name="batched-N")
    yield SampleInput(m.make((3,), layout="sliced"), kwargs=dict(N=2), name="N=2")
    yield SampleInput(m.make(()), kwargs=dict(N=3), name="0-d-is-one-point")


def _vander_ref(x, *, N=None):
    x = x.reshape(x.shape or (1,))
    n = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(n)


def _vecdot_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((3, 4)),), name="last-dim")
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), dict(dim=0), name="broadcast-dim0")
    yield SampleInput(m.make((2, 3), layout="transposed"), (m.make((2, 3)),), name="transposed")


def _vecdot_ref(x, y, *, dim=-1):
    return (x * y).sum(dim)


def _diagonal_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="2-d")
    yield SampleInput(m.make((2, 3, 4)), kwargs=dict(offset=1), name="offset")
    yield SampleInput(m.make((2, 3, 4)), kwargs=dict(dim1=0, dim2=2, offset=-1), name="dims")


def _diagonal_ref(a, *, offset=0, dim1=-2, dim2=-1):
    return np.diagonal(a, offset, dim1, dim2)


def _householder_samples(op, m, dtype):
    yield SampleInput(matrix(m, (4, 3)), (m.make((3,)),), name="tall")
    yield SampleInput(matrix(m, (3, 3)), (m.make((2,)),), name="fewer-reflectors")
    yield SampleInput(matrix(m, (2, 4, 2)), (m.make((2, 2)),), name="batched")


def _householder_ref(a, tau):
    def one(x, tv):
        mm, n = x.shape
        q = np.eye(mm)
        for i in range(tv.shape[-1]):
            v = np.zeros(mm)
            v[i] = 1.0
            v[i + 1 :] = x[i + 1 :, i]
            q = q @ (np.eye(mm) - tv[..., i] * np.outer(v, v))
        return q[:, :n]

    return per_matrix(lambda x, tv: one(x, tv[0]), a, tau[..., None, :]).astype(a.dtype)


def _geqrf_samples(op, m, dtype):
    for shape in ((4, 3), (3, 5), (2, 3, 3)):
        yield SampleInput(matrix(m, shape), name=f"{shape}")
    yield SampleInput(matrix(m, (4, 4), layout="transposed"), name="transposed")


def _geqrf_ref(a):
    fn = sl.lapack.get_lapack_funcs("geqrf", (a,))
    return per_matrix(lambda x: fn(x)[:2], a, n_out=2)


def _full_q(a, tau):
    """Q = H_1 ... H_k (m x m) of one compact Householder QR."""
    mm = a.shape[0]
    q = np.eye(mm)
    for i in range(tau.shape[-1]):
        v = np.zeros(mm)
        v[i] = 1.0
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(mm) - tau[i] * np.outer(v, v))
    return q


def _ormqr_samples(op, m, dtype):
    a, tau = _geqrf_ref(matrix_values(m, (4, 3)))
    qa, qt = m.make((4, 3), values=a), m.make((3,), values=tau)
    yield SampleInput(qa, (qt, m.make((4, 2))), name="left")
    yield SampleInput(qa, (qt, m.make((4, 2)), True, True), name="left-transpose")
    yield SampleInput(qa, (qt, m.make((2, 4))), dict(left=False), name="right")
    yield SampleInput(
        qa,
        (qt, m.make((2, 4), layout="sliced")),
        dict(left=False, transpose=True),
        name="right-transpose-sliced",
    )


def _ormqr_ref(a, tau, c, left=True, transpose=False):
    q = per_matrix(lambda x, t: _full_q(x, t[0]), a, tau[..., None, :])
    q = np.swapaxes(q, -1, -2) if transpose else q
    return (q @ c if left else c @ q).astype(c.dtype)


def _tensorinv_samples(op, m, dtype):
    yield SampleInput(_invertible_as(m, 4, (4, 2, 2)), kwargs=dict(ind=1), name="ind=1")
    yield SampleInput(_invertible_as(m, 6, (2, 3, 6)), name="ind=2")


def _invertible_as(m, n: int, shape: tuple):
    """A well-conditioned n x n matrix reshaped to `shape`."""
    a = m.rng.uniform(-1, 1, size=(n, n)) + n * np.eye(n)
    return m.make(shape, values=a.reshape(shape))


def _tensorinv_ref(a, ind=2):
    left, right = a.shape[:ind], a.shape[ind:]
    n = int(np.prod(left))
    return np.linalg.inv(a.reshape(n, n)).reshape(right + left)


def _tensorsolve_samples(op, m, dtype):
    yield SampleInput(_invertible_as(m, 6, (2, 3, 6)), (m.make((2, 3)),), name="plain")
    yield SampleInput(
        _invertible_as(m, 6, (6, 2, 3)), (m.make((2, 3)),), dict(dims=(0,)), name="dims"
    )
    yield SampleInput(
        _invertible_as(m, 6, (2, 3, 6)),
        (m.make((2, 3)),),
        dict(dims=(0, 2)),
        name="dims-reorder-rows",
    )


def _tensorsolve_ref(a, b, dims=None):
    return np.linalg.tensorsolve(a, b, axes=dims)


def _linalg(name: str, ref, samples, **kw) -> OpInfo:
    """The OpInfo of ``linalg_<name>`` (torch reference: ``torch.linalg.<name>``)."""
    return OpInfo(
        f"linalg_{name}",
        ref=ref,
        torch_ref=torch_linalg(name),
        sample_inputs_func=samples,
        **{**_O, **kw},
    )


_WITH_INT: dict[str, Any] = dict(dtypes=FLOATS + (_dt.int64,))
OPS: list[OpInfo] = [
    _linalg("svdvals", _svdvals_ref, _general_samples()),
    _linalg("eigvalsh", lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO), _eigvalsh_samples),
    _linalg("pinv", _pinv_ref, _pinv_samples),
    _linalg("matrix_rank", _matrix_rank_ref, _rank_samples),
    _linalg("cond", _cond_ref, _cond_samples),
    _linalg("lstsq", _lstsq_ref, _lstsq_samples),
    _linalg("vector_norm", _vector_norm_ref, _vector_norm_samples),
    _linalg("matrix_norm", _matrix_norm_ref, _matrix_norm_samples),
    _linalg("norm", _norm_ref, _norm_samples),
    _linalg("matrix_power", _matrix_power_ref, _matrix_power_samples),
    _linalg("matrix_exp", _matrix_exp_ref, _matrix_exp_samples),
    _linalg("cross", _linalg_cross_ref, _cross_samples, **_WITH_INT),
    _linalg("multi_dot", _multi_dot_ref, _multi_dot_samples),
    _linalg("vander", _vander_ref, _vander_samples, **_WITH_INT),
    _linalg("vecdot", _vecdot_ref, _vecdot_samples),
    _linalg("diagonal", _diagonal_ref, _diagonal_samples),
    _linalg("householder_product", _householder_ref, _householder_samples),
    _linalg("tensorinv", _tensorinv_ref, _tensorinv_samples),
    _linalg("tensorsolve", _tensorsolve_ref, _tensorsolve_samples),
    # top-level forms (torch.<name>, the default torch reference)
    OpInfo(
        "pinverse",
        ref=lambda a, rcond=1e-15: _pinv_ref(a, rtol=rcond),
        sample_inputs_func=_general_samples(),
        **_O,
    ),
    OpInfo(
        "svd", ref=_svd_top_ref, torch_ref=_svd_top_torch, sample_inputs_func=_svd_top_samples, **_O
    ),
    OpInfo("qr", ref=_qr_top_ref, sample_inputs_func=_qr_top_samples, **_O),
    OpInfo("matrix_power", ref=_matrix_power_ref, sample_inputs_func=_matrix_power_samples, **_O),
    OpInfo("matrix_exp", ref=_matrix_exp_ref, sample_inputs_func=_matrix_exp_samples, **_O),
    OpInfo(
        "cross", ref=_cross_top_ref, sample_inputs_func=_cross_top_samples, **{**_O, **_WITH_INT}
    ),
    OpInfo(
        "chain_matmul",
        ref=_multi_dot_ref,
        torch_ref=_torch_chain_matmul,
        sample_inputs_func=_chain_matmul_samples,
        **_O,
    ),
    OpInfo("orgqr", ref=_householder_ref, sample_inputs_func=_householder_samples, **_O),
    OpInfo("geqrf", ref=_geqrf_ref, sample_inputs_func=_geqrf_samples, **_O),
    OpInfo("ormqr", ref=_ormqr_ref, sample_inputs_func=_ormqr_samples, **_O),
]

_ERRORS = {
    "linalg_svdvals": [error_case("1-d", t(3), match=r"must have at least 2 dimensions")],
    "linalg_pinv": [
        error_case(
            "hermitian-non-square",
            t(2, 3),
            kwargs=dict(hermitian=True),
            match=r"A must be batches of square matrices",
        )
    ],
    "linalg_cond": [
        error_case("p", t(3, 3), ("x",), match=r"invalid norm type"),
        error_case("non-square-p1", t(2, 3), (1,), match=r"A must be batches of square matrices"),
    ],
    "linalg_lstsq": [
        error_case(
            "rows", t(4, 3), (t(3, 2),), match=r"input.size\(-2\) should match other.size\(-2\)"
        ),
        error_case(
            "driver",
            t(4, 3),
            (t(4, 2),),
            dict(driver="x"),
            match=r"parameter `driver` should be one of",
        ),
    ],
    "linalg_vector_norm": [
        error_case("int", t(3, dtype=_dt.int64), match=r"Expected a floating point"),
        error_case(
            "inf-empty",
            t(0, 3),
            (INF,),
            match=r"cannot compute the inf norm on an "
            r"empty tensor",
        ),
    ],
    "linalg_matrix_norm": [
        error_case("ord", t(3, 3), (3,), match=r"Order 3 not supported"),
        error_case("1-d", t(3), error=IndexError, match=r"Dimension out of range"),
        error_case("dims", t(3, 3), ("fro", (0, 0)), match=r"appears multiple times"),
        error_case(
            "empty-min",
            t(3, 0),
            (-1,),
            match=r"takes a minimum over dim 1, which is "
            r"empty",
        ),
    ],
    "linalg_norm": [
        error_case("3-d-ord", t(2, 2, 2), (2,), match=r"the input must be 1D or 2D. Got 3D")
    ],
    "linalg_matrix_power": [
        error_case("non-square", t(2, 3), (2,), match=r"A must be batches of square matrices")
    ],
    "linalg_matrix_exp": [
        error_case("non-square", t(2, 3), match=r"A must be batches of square matrices")
    ],
    "linalg_cross": [
        error_case(
            "size",
            t(4, 2),
            (t(4, 2),),
            match=r"inputs dimension -1 must have length 3. Got 2 and 2",
        )
    ],
    "linalg_multi_dot": [
        error_case(
            "one", lambda m: [m.make((2, 2))], match=r"expected at least 2 tensors but got 1"
        ),
        error_case(
            "shapes", lambda m: [m.make((2, 3)), m.make((2, 2))], match=r"cannot be multiplied"
        ),
    ],
    "linalg_vander": [error_case("N", t(3), kwargs=dict(N=1), match=r"N must be greater than 1")],
    "linalg_householder_product": [
        error_case(
            "wide",
            t(2, 3),
            (t(2),),
            match=r"input.shape\[-2\] must be greater than or "
            r"equal to input.shape\[-1\]",
        )
    ],
    "ormqr": [
        error_case(
            "rows",
            t(4, 3),
            (t(3), t(5, 2)),
            match=r"input.shape\[-2\] must be equal to other.shape\[-2\]",
        ),
        error_case(
            "ndim",
            t(4, 3),
            (t(3), t(2, 4, 2)),
            match=r"Expected other to have the same number of dimensions",
        ),
    ],
    "linalg_tensorinv": [
        error_case(
            "ind",
            t(4, 2, 2),
            kwargs=dict(ind=0),
            match=r"Expected a strictly positive integer for 'ind'",
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
