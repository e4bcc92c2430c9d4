"""TransformedDistribution, LogNormal and Independent (mirror ``torch.distributions``)."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .normal import Normal
from .transforms import ComposeTransform, ExpTransform, Transform
from .utils import forwarded_property, sum_rightmost

__all__ = ["Independent", "TransformedDistribution", "LogNormal"]


class Independent(Distribution):
    """Treat the rightmost `reinterpreted_batch_ndims` batch dims of `base_distribution` as
    event dims: log_prob and entropy sum over them."""

    arg_constraints: dict = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                f"Expected reinterpreted_batch_ndims <= "
                f"len(base_distribution.batch_shape), actual {n} vs "
                f"{len(base_distribution.batch_shape)}"
            )
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        cut = len(shape) - event_dim
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.base_dist = self.base_dist.expand(
            tuple(batch_shape) + tuple(self.event_shape[: self.reinterpreted_batch_ndims])
        )
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return self._expanded(new, batch_shape)

    has_rsample = forwarded_property("base_dist", "has_rsample")

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]  # base: a class constant
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    mean = forwarded_property("base_dist", "mean")
    mode = forwarded_property("base_dist", "mode")
    variance = forwarded_property("base_dist", "variance")

    def sample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """The distribution of ``transforms[-1](...transforms[0](x))`` for x drawn from
    `base_distribution`; densities by the change-of-variables formula."""

    arg_constraints: dict = {}

    def __init__(
        self, base_distribution: Distribution, transforms, validate_args: bool | None = None
    ) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(
                f"base_distribution needs to have shape with size at least "
                f"{transform.domain.event_dim}, but got {base_shape}."
            )
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_distribution = base_distribution.expand(
                expanded_base_shape[: len(expanded_base_shape) - base_event_dim]
            )
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    # Per-batch tensor attributes a subclass sets in __init__ besides base_dist; a subclass
    # that lists them here (even none) gets this expand, like `Distribution._params`.
    _expanded_attrs: tuple[str, ...] = ()

    def expand(self, batch_shape, _instance=None):
        owner = next(c for c in type(self).__mro__ if "_expanded_attrs" in c.__dict__)
        new = self._get_checked_instance(owner, _instance)
        batch_shape = Size(tuple(batch_shape))
        for name in self._expanded_attrs:
            setattr(new, name, getattr(self, name).expand(tuple(batch_shape)))
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[: len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    has_rsample = forwarded_property("base_dist", "has_rsample")

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=Size()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob: Tensor | float = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(
                t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim
            )
            y = x
        return log_prob + sum_rightmost(
            self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape)
        )

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(`loc`, `scale`)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    _expanded_attrs = ()

    loc = forwarded_property("base_dist", "loc", "Mean of the underlying Normal (of log X).")
    scale = forwarded_property(
        "base_dist", "scale", "Standard deviation of the underlying Normal (of log X)."
    )

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
