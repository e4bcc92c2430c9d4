"""VonMises (mirrors ``torch.distributions.VonMises``): the circular normal distribution.
Bessel functions come from `coretorch.special` (exponentially scaled, so large concentrations
do not overflow); sampling is Best & Fisher's rejection sampler, as PyTorch's."""

from __future__ import annotations

import math

from .. import dtypes as _dt, special
from ..autograd.grad_mode import no_grad
from ..ops import aten
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .distribution import Distribution, LocationMoments, TwoParams

__all__ = ["VonMises"]


def _log_i0(x: Tensor) -> Tensor:
    return special.i0e(x).log() + x


class VonMises(LocationMoments, TwoParams, Distribution):
    """Angles (radians, any real read modulo 2π) with density exp(κ cos(x - loc)) / (2π
    I₀(κ)), κ = `concentration`."""

    # the parameters, set by init_params
    loc: Tensor
    concentration: Tensor

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    @property
    def variance(self) -> Tensor:
        """The circular variance 1 - I₁(κ)/I₀(κ)."""
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            self.concentration * (value - self.loc).cos()
            - math.log(2 * math.pi)
            - _log_i0(self.concentration)
        )

    def _proposal_r(self, kappa: Tensor) -> Tensor:
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho.pow(2)) / (2 * rho)
        # second-order Taylor expansion for tiny concentrations
        return aten.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            loc = self.loc.to(_dt.float64).expand(shape)
            kappa = self.concentration.to(_dt.float64).expand(shape)
            r = self._proposal_r(kappa)
            x = aten.zeros(shape, dtype=_dt.float64, device=self.loc.device)
            done = aten.zeros(shape, dtype=_dt.bool, device=self.loc.device)
            while not bool(done.all()):
                u1, u2, u3 = aten.rand(
                    (3,) + shape, dtype=_dt.float64, device=self.loc.device
                ).unbind(0)
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                take = accept & ~done
                x = aten.where(take, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            out = (x + math.pi + loc).remainder(2 * math.pi) - math.pi
            return out.to(self.loc.dtype)
