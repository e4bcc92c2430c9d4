"""LKJCholesky (mirrors ``torch.distributions.LKJCholesky``): the LKJ distribution over
Cholesky factors of correlation matrices (Lewandowski, Kurowicka & Joe, 2009), sampled by the
onion method."""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from ._special import lgamma
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of `dim` x `dim` correlation matrices with density
    proportional to det(L Lᵀ)^(`concentration` - 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Tensor | float = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = aten.arange(
            dim - 1, dtype=self.concentration.dtype, device=self.concentration.device
        )
        offset = aten.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape=Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = tuple(self._extended_shape(sample_shape))
        u_normal = aten.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
        tiny = _dt.finfo(y.dtype).tiny
        # the first row is all zeros: keep it zero rather than 0/0
        norm = u_normal.pow(2).sum(-1, keepdim=True).sqrt().clamp(min=tiny)
        w = y.sqrt() * (u_normal / norm)
        diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
        eye = aten.eye(self.dim, dtype=w.dtype, device=w.device)
        return w + diag.unsqueeze(-1) * eye

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = aten.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = (
            0.5 * dm1 * math.log(math.pi) + aten.mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        )
        return unnormalized - normalize
