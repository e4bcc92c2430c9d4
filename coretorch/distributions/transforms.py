"""Invertible transforms of random variables (mirror ``torch.distributions.transforms``):
`Transform` and its inverse and composition, with Exp, Affine, Sigmoid, Tanh, Power, Abs and
Softmax transforms. A transform maps x to y = f(x) and gives log |det df/dx| for
`TransformedDistribution`'s densities."""

from __future__ import annotations

import math
import numbers

from ..nn import functional as F
from ..tensor.tensor import Tensor
from . import constraints
from .utils import forwarded_property, sum_rightmost

__all__ = [
    "Transform",
    "ComposeTransform",
    "ExpTransform",
    "AffineTransform",
    "SigmoidTransform",
    "TanhTransform",
    "PowerTransform",
    "AbsTransform",
    "SoftmaxTransform",
    "identity_transform",
]


class Transform:
    """y = f(x), invertible (where `bijective`) with log |det J|; `cache_size` 1 remembers the
    last (x, y) pair so the inverse of a sample is exact."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    sign = 1

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple = (None, None)
        self._inv: Transform | None = None

    @property
    def event_dim(self) -> int:
        """Event dims of domain and codomain; raises ValueError when they differ."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform x = f⁻¹(y)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    def with_cache(self, cache_size: int = 1) -> "Transform":
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy; raises
        NotImplementedError for a subclass with its own ``__init__`` that does not override
        `with_cache`."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        return self._through_cache(x, self._call, forward=True)

    def _inv_call(self, y: Tensor) -> Tensor:
        return self._through_cache(y, self._inverse, forward=False)

    def _through_cache(self, value: Tensor, compute, forward: bool) -> Tensor:
        # With cache_size 1 the last (x, y) pair is kept, so that mapping either of them
        # again (in its direction) returns the other one without recomputing.
        if self._cache_size == 0:
            return compute(value)
        pair = self._cached_x_y
        side = 0 if forward else 1
        if value is pair[side]:
            return pair[1 - side]
        result = compute(value)
        self._cached_x_y = (value, result) if forward else (result, value)
        return result

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |det dy/dx| (elementwise for event_dim 0)."""
        raise NotImplementedError

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return shape

    def inverse_shape(self, shape):
        """The shape of the input for an output of shape `shape`."""
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _Stateless(Transform):
    """A transform without parameters: all instances are equal."""

    def __eq__(self, other) -> bool:
        return type(other) is type(self)

    __hash__ = object.__hash__


class _Increasing(_Stateless):
    """A parameter-free increasing bijection from the reals (subclasses give `codomain`)."""

    domain = constraints.real
    bijective = True
    sign = 1


class _InverseTransform(Transform):
    """The inverse of a transform (`Transform.inv`)."""

    _inv: Transform  # the transform this inverts

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = forwarded_property("_inv", "codomain")
    codomain = forwarded_property("_inv", "domain")
    bijective = forwarded_property("_inv", "bijective")
    sign = forwarded_property("_inv", "sign")
    inv = forwarded_property("_inv", doc="The transform this inverts.")

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Apply `parts` in order (the first one first)."""

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The domain of the first part (real when there are no parts)."""
        if not self.parts:
            return constraints.real
        return self.parts[0].domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The codomain of the last part (real when there are no parts)."""
        if not self.parts:
            return constraints.real
        return self.parts[-1].codomain

    @property
    def bijective(self):  # type: ignore[override]  # base: a class constant
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):  # type: ignore[override]  # base: a class constant
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size: int = 1):
        """This composition with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(()).expand(x.shape)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def forward_shape(self, shape):
        """The output shape for input `shape`, through every part in order."""
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        """The input shape for output `shape`, through every part in reverse."""
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(_Increasing):
    """y = exp(x)."""

    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x^exponent on positive x."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size: int = 1):
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return (
            bool((self.exponent == other.exponent).all())
            if isinstance(self.exponent, Tensor)
            else self.exponent == other.exponent
        )

    __hash__ = object.__hash__

    @property
    def sign(self):  # type: ignore[override]  # base: a class constant
        return (
            self.exponent.sign()
            if isinstance(self.exponent, Tensor)
            else (1 if self.exponent > 0 else -1)
        )

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(_Increasing):
    """y = 1 / (1 + exp(-x))."""

    codomain = constraints.unit_interval

    def _call(self, x):
        from .. import dtypes as _dt

        finfo = _dt.finfo(x.dtype)
        return x.sigmoid().clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        from .. import dtypes as _dt

        finfo = _dt.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(_Increasing):
    """y = tanh(x)."""

    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * ((1 + y).log() - (1 - y).log())

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), written stably
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_Stateless):
    """y = |x| (not bijective)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x (over the last `event_dim` dims as one event)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        """The number of rightmost dims that form one event (given at construction)."""
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """Real, as an event of `event_dim` dims."""
        return (
            constraints.real
            if self._event_dim == 0
            else constraints.independent(constraints.real, self._event_dim)
        )

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """Real, as an event of `event_dim` dims (the domain)."""
        return self.domain

    def with_cache(self, cache_size: int = 1):
        """This transform with `cache_size` (0 or 1): itself if unchanged, else a copy."""
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):  # type: ignore[override]  # base: a class constant
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = x.new_full(shape, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self._event_dim:
            result_size = tuple(result.shape[: -self._event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[: -self._event_dim]
        return result.expand(shape)


class SoftmaxTransform(_Stateless):
    """x -> softmax over the last dim (not bijective: a simplex loses one degree of
    freedom)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()
