"""Wishart (mirrors ``torch.distributions.Wishart``): distributions over positive-definite
matrices, parameterized like MultivariateNormal; samples by the Bartlett decomposition."""

from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._linalg import cholesky, cholesky_inverse, solve_triangular
from ._special import digamma
from .distribution import ExponentialFamily
from .gamma_family import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import broadcast_shapes, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    offsets = aten.arange(p, dtype=x.dtype, device=x.device) / 2
    return digamma(x.unsqueeze(-1) - offsets).sum(-1)


def _logdet_pd(value: Tensor) -> Tensor:
    """log det of positive-definite matrices, through their Cholesky factors."""
    return 2 * cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with `df` degrees of freedom and scale matrix Σ given by
    exactly one of `covariance_matrix`, `precision_matrix` or `scale_tril`."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Tensor | float,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        param = given[0]
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional "
                "leading batch dimensions"
            )
        if not isinstance(df, Tensor):
            batch_shape = tuple(param.shape[:-2])
            self.df = aten.full((), float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None  # one of the three was checked to be given
            self.precision_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        if bool((self.df < p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur "
                "for ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Tensor, batch_shape) -> Chi2:
        """Chi2(df - i) for i = 0..p-1: the squared diagonal of the Bartlett factor."""
        p = self._event_shape[-1]
        offsets = aten.arange(p, dtype=df.dtype, device=df.device)
        return Chi2(df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(tuple(batch_shape))
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new = self._expanded(new, batch_shape)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape)
        )

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape)
        )

    def _df_matrix(self, df: Tensor) -> Tensor:
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = aten.where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        diag_v = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def rsample(self, sample_shape=Size()) -> Tensor:
        """Bartlett sampling: L A (L A)ᵀ with A lower triangular, sqrt(χ²) on the diagonal
        and standard normals below it."""
        sample_shape = tuple(sample_shape)
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=_dt.finfo(self.df.dtype).eps)
        shape = sample_shape + tuple(self._batch_shape) + (p, p)
        normals = aten.randn(shape, dtype=diag.dtype, device=diag.device).tril(-1)
        eye = aten.eye(p, dtype=diag.dtype, device=diag.device)
        chol = self._unbroadcasted_scale_tril @ (normals + diag.unsqueeze(-1) * eye)
        return chol @ chol.transpose(-2, -1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_l = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # trace(Σ⁻¹ V) = |L⁻¹ chol(V)|² (Frobenius)
        solved = solve_triangular(L.expand(tuple(value.shape)), cholesky(value), upper=False)
        trace = solved.pow(2).sum((-2, -1))
        return (
            -nu * (p * _LOG_2 / 2 + log_det_l)
            - aten.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * _logdet_pd(value)
            - trace / 2
        )

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * _LOG_2 / 2 + log_det_l)
            + aten.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )
