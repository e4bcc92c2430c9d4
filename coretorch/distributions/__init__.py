"""``coretorch.distributions``: probability distributions with sampling, log densities,
entropies and KL divergences (mirrors ``torch.distributions``).

Reparameterized sampling (`rsample`) exists for Normal, Uniform, MultivariateNormal, Gamma and
Beta (the last two through implicit gradients, see `_special`), OneHotCategoricalStraightThrough,
the location-scale families, StudentT, Dirichlet, the transformed and relaxed distributions.
"""

from . import (  # noqa: F401
    constraints,
    kl,
    kl_more,  # noqa: F401,E402  (registers the KL pairs of the distributions above)
)
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .constraint_registry import biject_to, transform_to
from .discrete import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Gamma
from .gamma_family import Chi2, Dirichlet, FisherSnedecor, StudentT
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .location_scale import Cauchy, Exponential, GeneralizedPareto, Gumbel, Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .normal import Normal, Uniform
from .relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .transformed import Independent, LogNormal, TransformedDistribution
from .transformed_families import HalfCauchy, HalfNormal, InverseGamma, Kumaraswamy, Pareto, Weibull
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .transforms_more import (
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
)
from .unit_interval import ContinuousBernoulli, LogisticNormal
from .von_mises import VonMises
from .wishart import Wishart

__all__ = [
    "Bernoulli",
    "Beta",
    "Categorical",
    "Distribution",
    "ExponentialFamily",
    "Gamma",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
    "Binomial",
    "Geometric",
    "Poisson",
    "Chi2",
    "Dirichlet",
    "StudentT",
    "Cauchy",
    "Exponential",
    "Gumbel",
    "Laplace",
    "MixtureSameFamily",
    "ExpRelaxedCategorical",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "Independent",
    "LogNormal",
    "TransformedDistribution",
    "AbsTransform",
    "AffineTransform",
    "ComposeTransform",
    "ExpTransform",
    "PowerTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
    "Multinomial",
    "NegativeBinomial",
    "FisherSnedecor",
    "HalfCauchy",
    "HalfNormal",
    "InverseGamma",
    "Kumaraswamy",
    "Pareto",
    "Weibull",
    "CatTransform",
    "CumulativeDistributionTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "ReshapeTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "biject_to",
    "transform_to",
    "ContinuousBernoulli",
    "LogisticNormal",
    "VonMises",
    "GeneralizedPareto",
    "LowRankMultivariateNormal",
    "LKJCholesky",
    "CorrCholeskyTransform",
    "Wishart",
]
