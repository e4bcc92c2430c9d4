"""LowRankMultivariateNormal (mirrors ``torch.distributions.LowRankMultivariateNormal``): a
multivariate normal with covariance W Wᵀ + diag(D), evaluated through the Woodbury identity
and the m x m capacitance matrix I + Wᵀ D⁻¹ W, so it costs O(n m²) rather than O(n³)."""

from __future__ import annotations

import math

from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._linalg import cholesky
from .distribution import Distribution, LocationMoments
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import broadcast_shapes, lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k: Tensor) -> Tensor:
    return k + aten.eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """Cholesky factor of I + Wᵀ D⁻¹ W."""
    wt_dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    return cholesky(_plus_identity(wt_dinv @ W))


def _lowrank_logdet(D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log det(W Wᵀ + D) = log det(capacitance) + log det(D) (matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    """xᵀ (W Wᵀ + D)⁻¹ x by the Woodbury identity."""
    wt_dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(wt_dinv, x))


class LowRankMultivariateNormal(LocationMoments, Distribution):
    """N(`loc`, W Wᵀ + diag(D)) with W = `cov_factor` (n x m) and D = `cov_diag` (n)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional "
                "leading batch dimensions"
            )
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(n,)}")
        try:
            batch = broadcast_shapes(
                tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1])
            )
        except (RuntimeError, ValueError):
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                f"{cov_factor.shape}, cov_diag {cov_diag.shape}"
            ) from None
        m = cov_factor.shape[-1]
        self.loc = loc.expand(batch + (n,))
        self.cov_factor = cov_factor.expand(batch + (n, m))
        self.cov_diag = cov_diag.expand(batch + (n,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch, (n,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(tuple(batch_shape))
        n, m = self.cov_factor.shape[-2:]
        new.loc = self.loc.expand(tuple(batch_shape) + (n,))
        new.cov_factor = self.cov_factor.expand(tuple(batch_shape) + (n, m))
        new.cov_diag = self.cov_diag.expand(tuple(batch_shape) + (n,))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._expanded(new, batch_shape)

    @lazy_property
    def variance(self) -> Tensor:
        v = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return v.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / d_sqrt
        k = _plus_identity(dinvsqrt_w @ dinvsqrt_w.transpose(-2, -1))
        n = self._event_shape[0]
        return (d_sqrt * cholesky(k)).expand(tuple(self._batch_shape) + (n, n))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eye = aten.eye(D.shape[-1], dtype=D.dtype, device=D.device)
        cov = W @ W.transpose(-2, -1) + D.unsqueeze(-1) * eye
        n = self._event_shape[0]
        return cov.expand(tuple(self._batch_shape) + (n, n))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        W = self._unbroadcasted_cov_factor
        eps_w = standard_normal(shape[:-1] + (W.shape[-1],), self.loc.dtype, self.loc.device)
        eps_d = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self) -> Tensor:
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h.expand(tuple(self._batch_shape)) if len(self._batch_shape) else h
