"""``coretorch.distributions``: probability distributions with sampling, log densities,
entropies and KL divergences (mirrors ``torch.distributions``).

Reparameterized sampling (`rsample`) exists for Normal, Uniform, MultivariateNormal, Gamma and
Beta (the last two through implicit gradients, see `_special`) and OneHotCategoricalStraightThrough.
"""
from . import constraints, kl  # noqa: F401
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Gamma
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal, Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Distribution", "ExponentialFamily", "Gamma",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
