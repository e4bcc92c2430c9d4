"""More transforms (mirror ``torch.distributions.transforms``): Softplus, Reshape,
Independent, StickBreaking, LowerCholesky, PositiveDefinite, CumulativeDistribution, Cat and
Stack."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..nn import functional as F
from ..ops import aten
from ..ops.factories_public import tensor as _tensor
from ..tensor.tensor import Tensor
from . import constraints
from .transforms import Transform, _Increasing, _Stateless
from .utils import forwarded_property, sum_rightmost

__all__ = [
    "SoftplusTransform",
    "ReshapeTransform",
    "IndependentTransform",
    "StickBreakingTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "CumulativeDistributionTransform",
    "CatTransform",
    "StackTransform",
    "CorrCholeskyTransform",
    "vec_to_tril_matrix",
    "tril_matrix_to_vec",
]


class SoftplusTransform(_Increasing):
    """y = log(1 + exp(x))."""

    codomain = constraints.positive

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


def _replace_suffix(shape, old: tuple, new: tuple) -> tuple:
    """`shape` with its trailing `old` dims replaced by `new`; ValueError when it does not end
    in `old`."""
    cut = len(shape) - len(old)
    if cut < 0 or tuple(shape[cut:]) != old:
        raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {old}")
    return tuple(shape[:cut]) + new


class ReshapeTransform(Transform):
    """Reshape the rightmost dims from `in_shape` to `out_shape` (same number of elements)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        """Real events of shape `in_shape`."""
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        """Real events of shape `out_shape`."""
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1):
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape)[: x.dim() - len(self.in_shape)]
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = tuple(y.shape)[: y.dim() - len(self.out_shape)]
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape)[: x.dim() - len(self.in_shape)]
        return x.new_zeros(batch)

    def forward_shape(self, shape):
        """`shape` with its trailing `in_shape` replaced by `out_shape`; raises ValueError when it
        does not end in `in_shape`."""
        return _replace_suffix(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        """`shape` with its trailing `out_shape` replaced by `in_shape`; raises ValueError when it
        does not end in `out_shape`."""
        return _replace_suffix(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """`base_transform` with its rightmost `reinterpreted_batch_ndims` dims treated as one
    event (their log-det-Jacobians summed)."""

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1):
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The base transform's domain with `reinterpreted_batch_ndims` more event dims."""
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The base transform's codomain with `reinterpreted_batch_ndims` more event dims."""
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    bijective = forwarded_property("base_transform", "bijective")
    sign = forwarded_property("base_transform", "sign")

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(
            self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape):
        """The base transform's output shape for `shape`."""
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        """The base transform's input shape for `shape`."""
        return self.base_transform.inverse_shape(shape)


class StickBreakingTransform(_Stateless):
    """Unconstrained K-1 vectors -> the K-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        offset = x.shape[-1] + 1 - aten.ones_like(x).cumsum(-1)
        z = (x - offset.log()).sigmoid()
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - aten.ones_like(y_crop).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        sf = sf.clamp(min=_dt.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - aten.ones_like(x).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        """`shape` with its last size K - 1 grown to K (the simplex has one more coordinate)."""
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        """`shape` with its last size K shrunk to K - 1."""
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _with_diagonal(x, diag):
    """The strictly lower part of `x` plus `diag` on the diagonal."""
    n = x.shape[-1]
    eye = aten.eye(n, dtype=x.dtype, device=x.device)
    return x.tril(-1) + diag.unsqueeze(-1) * eye


class LowerCholeskyTransform(_Stateless):
    """Square matrices -> lower-triangular ones with a positive diagonal (not bijective)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return _with_diagonal(x, x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return _with_diagonal(y, y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(_Stateless):
    """Square matrices -> positive-definite ones, L Lᵀ with L = LowerCholeskyTransform(x)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower.matmul(lower.transpose(-2, -1))

    def _inverse(self, y):
        from ._linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CumulativeDistributionTransform(Transform):
    """y = cdf(x) of `distribution` (a univariate one)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):  # type: ignore[override]  # base: a class constant
        """The support of the distribution."""
        return self.distribution.support

    def with_cache(self, cache_size: int = 1):
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class _Joined(Transform):
    """Apply `tseq[i]` to the i-th slice along `dim` (CatTransform: pieces of `lengths`;
    StackTransform: single entries)."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self):  # type: ignore[override]  # base: a class constant
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x) -> list:
        raise NotImplementedError

    def _join(self, parts) -> Tensor:
        raise NotImplementedError

    def _map(self, x, fn) -> Tensor:
        return self._join([fn(t, p) for t, p in zip(self.transforms, self._pieces(x))])

    def _call(self, x):
        return self._map(x, lambda t, p: t(p))

    def _inverse(self, y):
        return self._map(y, lambda t, p: t.inv(p))

    def log_abs_det_jacobian(self, x, y):
        parts = [
            t.log_abs_det_jacobian(a, b)
            for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y))
        ]
        return self._join(parts)


class CatTransform(_Joined):
    """Apply transform i to the i-th piece (of `lengths[i]` entries) along `dim`."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: lengths and transforms differ in length")

    @constraints.dependent_property
    def domain(self):
        """The parts' domains, concatenated along `dim` with their `lengths`."""
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains, concatenated along `dim` with their `lengths`."""
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _pieces(self, x):
        out, start = [], 0
        for n in self.lengths:
            out.append(x.narrow(self.dim, start, n))
            start += n
        return out

    def _join(self, parts):
        return aten.cat(parts, self.dim)


class StackTransform(_Joined):
    """Apply transform i to the i-th entry along `dim`."""

    @constraints.dependent_property
    def domain(self):
        """The parts' domains, stacked along `dim`."""
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        """The parts' codomains, stacked along `dim`."""
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _pieces(self, x):
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _join(self, parts):
        return aten.stack(parts, self.dim)


def _tril_index(n: int, diag: int, device):
    """Flat (row-major) indices of the entries of an n x n matrix on or below diagonal
    `diag`."""
    rows, cols = np.indices((n, n))
    flat = (rows * n + cols)[cols < rows + (diag + 1)]
    return _tensor(flat.astype(np.int64), dtype=_dt.int64, device=device)


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """Fill the entries on or below diagonal `diag` of a square matrix with the last dim of
    `vec` (row by row); zeros elsewhere."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > _dt.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the "
            f"lower triangular part of a square D x D matrix."
        )
    n = round(n)
    batch = tuple(vec.shape[:-1])
    index = _tril_index(n, diag, vec.device).expand(batch + (m,))
    flat = aten.zeros(batch + (n * n,), dtype=vec.dtype, device=vec.device)
    return flat.scatter(-1, index, vec).reshape(batch + (n, n))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries on or below diagonal `diag` of the last two dims, row by row."""
    n = mat.shape[-1]
    batch = tuple(mat.shape[:-2])
    return mat.reshape(batch + (n * n,)).index_select(-1, _tril_index(n, diag, mat.device))


class CorrCholeskyTransform(_Stateless):
    """Unconstrained vectors of D(D-1)/2 entries -> Cholesky factors of D x D correlation
    matrices (tanh, then stick breaking on the squared entries of each row)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = _dt.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r.pow(2)).sqrt().cumprod(-1)
        r = r + aten.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y):
        # of x and the flattened strictly-lower part of y (the dimensions differ)
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        """(..., n) to (..., d, d) with n = d (d - 1) / 2; raises ValueError for a 0-dim shape or
        an n that is not such a number."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        """(..., d, d) to (..., d (d - 1) / 2); raises ValueError for under 2 dims or a non-square
        shape."""
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
