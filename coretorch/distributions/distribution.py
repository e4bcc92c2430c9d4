"""`Distribution`, the base class of every probability distribution (mirrors
``torch.distributions.Distribution``), and `ExponentialFamily`."""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any, TypeVar

from ..autograd.grad_mode import no_grad
from ..tensor.size import Size
from ..tensor.tensor import Tensor
from . import constraints
from .utils import broadcast_all, extended_shape, lazy_property

__all__ = [
    "Distribution",
    "ExponentialFamily",
    "LocationMoments",
    "TwoParams",
    "init_params",
    "expand_params",
]


def _undefined_moment(name: str, doc: str) -> property:
    """The base-class `name` property: raises NotImplementedError until a subclass defines
    it."""

    def get(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement {name}")

    return property(
        get,
        doc=doc
        + """

        Raises:
            NotImplementedError: when the distribution does not define it.
        """,
    )


_D = TypeVar("_D", bound="Distribution")


class Distribution:
    """Base class of probability distributions over events of `event_shape`, batched over
    `batch_shape`.

    With `validate_args` (default: on, as Python's ``assert``; see
    `set_default_validate_args`) the constructor checks each parameter against
    `arg_constraints` and `log_prob` checks its value against `support`, raising ValueError.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions built without an explicit
        `validate_args`."""
        if value not in [True, False]:
            raise ValueError(f"set_default_validate_args(): expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(
        self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None
    ) -> None:
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    f"`arg_constraints = {{}}` or initialize the distribution with "
                    f"`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # not built yet (e.g. probs of a logits-parameterized one)
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of "
                        f"shape {tuple(value.shape)}) of distribution {self!r} to "
                        f"satisfy the constraint {constraint!r}, but found invalid "
                        f"values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the parameters expanded (not copied) to `batch_shape`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand()")

    @property
    def batch_shape(self) -> Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        """The constraint the samples satisfy."""
        raise NotImplementedError

    mean = _undefined_moment(
        "mean", "The mean of the distribution, of shape batch_shape + event_shape."
    )
    mode = _undefined_moment("mode", "The mode (most likely value) of the distribution.")
    variance = _undefined_moment(
        "variance", "The variance of the distribution, of shape batch_shape + event_shape."
    )

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: the square root of `variance`."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, not differentiable."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterized sample: differentiable in the parameters (where `has_rsample`)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterized sampler "
            f"(has_rsample is False); use sample()"
        )

    def sample_n(self, n: int) -> Tensor:
        """`n` samples (deprecated in PyTorch: use ``sample((n,))``)."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at `value`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob()")

    def cdf(self, value: Tensor) -> Tensor:
        """Cumulative distribution function evaluated at `value`.

        Raises:
            NotImplementedError: when the distribution does not define it.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf()")

    def icdf(self, value: Tensor) -> Tensor:
        """Inverse cumulative distribution function (quantile) evaluated at probabilities `value`.

        Raises:
            NotImplementedError: when the distribution does not define it.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf()")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution's support, along a new leading dimension.

        Args:
            expand: expand the result over the batch shape (otherwise batch dims have size 1).

        Raises:
            NotImplementedError: for distributions whose support cannot be enumerated.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support()")

    def entropy(self) -> Tensor:
        """The entropy, of shape `batch_shape`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy()")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return extended_shape(sample_shape, self._batch_shape, self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """Check that `value` is a tensor broadcastable to batch_shape + event_shape whose
        values lie in the support (ValueError otherwise)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: "
                f"{value.shape} vs {self._event_shape}."
            )
        actual_shape = tuple(value.shape)
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: "
                    f"{Size(actual_shape)} vs {Size(expected_shape)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample "
                f"validation. Please initialize the distribution with "
                f"`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of "
                f"the distribution {self!r}, but found invalid values:\n{value}"
            )

    def _expanded(self, new: _D, batch_shape) -> _D:
        """Finish `expand`: initialize `new`'s base with `batch_shape` (and this event shape)
        without re-validating, and carry over the validation setting."""
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} "
                f"that defines a custom __init__ method must also define "
                f"a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        values = {p: self.__dict__[p] for p in param_names}
        args = ", ".join(f"{p}: {v if v.numel() == 1 else v.shape}" for p, v in values.items())
        return self.__class__.__name__ + "(" + args + ")"


# the base of mixins for Distribution subclasses, for the type checker (object at run time)
if TYPE_CHECKING:
    _DistributionMixin = Distribution
else:
    _DistributionMixin = object


class TwoParams(_DistributionMixin):
    """For distributions of two tensor parameters, named in `_params` (by default the keys of
    a class-level `arg_constraints`, in order): broadcast together to the batch shape
    (`init_params`) and expanded together. A subclass without its own ``__init__`` gets
    ``__init__(self, a, b, validate_args=None)`` with those names."""

    _params: tuple[str, str]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("arg_constraints")
        if "_params" not in cls.__dict__ and isinstance(declared, dict):
            cls._params = tuple(declared)  # the parameters, in constructor order
        if "_params" in cls.__dict__ and "__init__" not in cls.__dict__:
            a, b = cls._params
            src = (
                f"def __init__(self, {a}, {b}, validate_args=None):\n"
                f"    init_params(self, ({a!r}, {b!r}), {a}, {b}, validate_args)\n"
            )
            g: dict[str, Any] = {"init_params": init_params, "__name__": cls.__module__}
            exec(compile(src, f"<coretorch distribution {cls.__name__}>", "exec"), g)  # noqa: S102
            g["__init__"].__qualname__ = f"{cls.__name__}.__init__"
            g["__init__"].__doc__ = f"{cls.__name__}({a}, {b}, validate_args=None)"
            g["__init__"].__annotations__ = {
                a: "Tensor | float",
                b: "Tensor | float",
                "validate_args": "bool | None",
                "return": "None",
            }
            cls.__init__ = g["__init__"]  # type: ignore[method-assign]  # made by exec above

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the parameters expanded (not copied) to `batch_shape`."""
        owner = next(c for c in type(self).__mro__ if "_params" in c.__dict__)
        return expand_params(self, owner, self._params, batch_shape, _instance)


class LocationMoments:
    """For distributions whose mean and mode are the `loc` parameter."""

    mean = mode = property(lambda self: self.loc, doc="The `loc` parameter.")


class ExponentialFamily(Distribution):
    """Distributions whose density is exp(<t(x), θ> - F(θ) + k(x)); subclasses give the
    natural parameters θ and the log normalizer F, which the Bregman-divergence KL between two
    members of one family uses."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not give its natural parameters")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not give its log normalizer")


def init_params(dist: Distribution, names: tuple[str, str], a, b, validate_args) -> None:
    """Broadcast the two parameters, set them as attributes and initialize the base (batch
    shape () when both are Python numbers)."""
    values = broadcast_all(a, b)
    for name, value in zip(names, values):
        setattr(dist, name, value)
    scalar = isinstance(a, numbers.Number) and isinstance(b, numbers.Number)
    Distribution.__init__(dist, Size() if scalar else values[0].shape, validate_args=validate_args)


def expand_params(dist: Distribution, cls, names: tuple[str, ...], batch_shape, _instance):
    """`dist.expand(batch_shape)` for a distribution whose parameters `names` all have the
    batch shape."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(tuple(batch_shape))
    for name in names:
        setattr(new, name, getattr(dist, name).expand(tuple(batch_shape)))
    return dist._expanded(new, batch_shape)
