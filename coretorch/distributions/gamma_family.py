"""Chi2, StudentT, Dirichlet and FisherSnedecor (mirror ``torch.distributions``), sampled through
`standard_gamma` so they are reparameterizable."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._special import digamma, lgamma, standard_gamma
from .distribution import Distribution, ExponentialFamily, expand_params
from .gamma import Gamma
from .utils import broadcast_all, standard_normal

__all__ = ["Chi2", "StudentT", "Dirichlet", "FisherSnedecor"]


class Chi2(Gamma):
    """The chi-squared distribution with `df` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}
    _params = ("concentration", "rate")  # what expand() carries over (df is derived)

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, aten.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        """Degrees of freedom (twice the Gamma concentration)."""
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        df: Tensor | float,
        loc: Tensor | float = 0.0,
        scale: Tensor | float = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        scalar = not any(isinstance(v, Tensor) for v in (df, loc, scale))
        super().__init__(Size() if scalar else self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, StudentT, ("df", "loc", "scale"), batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return aten.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return aten.where(df > 2, finite, aten.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + lgamma(0.5 * self.df)
            - lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex with `concentration` α (last dim the
    categories): density Π x_i^(α_i - 1) / B(α)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        gammas = standard_gamma(self.concentration.expand(shape))
        out = gammas / gammas.sum(-1, keepdim=True)
        return out.clamp(min=_dt.finfo(out.dtype).tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return aten.xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        a = (self.concentration - 1).clamp(min=0.0)
        mode = a / a.sum(-1, keepdim=True)
        below = (self.concentration < 1).all(-1)
        one_hot = aten.zeros_like(mode).scatter(
            -1, self.concentration.argmax(-1, keepdim=True), 1.0
        )
        return aten.where(below.unsqueeze(-1), one_hot, mode)

    @property
    def variance(self) -> Tensor:
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (
            lgamma(self.concentration).sum(-1)
            - lgamma(a0)
            - (k - a0) * digamma(a0)
            - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))


class FisherSnedecor(Distribution):
    """The F distribution with `df1` and `df2` degrees of freedom: (χ²₁/df1) / (χ²₂/df2)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(
        self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = not isinstance(df1, Tensor) and not isinstance(df2, Tensor)
        super().__init__(Size() if scalar else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, FisherSnedecor, ("df1", "df2"), batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        df2 = self.df2
        return aten.where(df2 > 2, df2 / (df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return aten.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return aten.where(df2 > 4, var, math.nan)

    def rsample(self, sample_shape=Size()) -> Tensor:
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        tiny = _dt.finfo(x2.dtype).tiny
        return x1 / x2.clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
