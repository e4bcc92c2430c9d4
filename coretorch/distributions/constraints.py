"""Constraints: the region a distribution's parameter or sample must lie in, each with a
`check(value)` that returns a boolean tensor (mirrors ``torch.distributions.constraints``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from ..ops import aten
from ..ops.factories_public import tensor

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
    "corr_cholesky",
    "multinomial",
    "MixtureSameFamilyConstraint",
]


class Constraint:
    """Base class: `is_discrete` and `event_dim` (how many rightmost dimensions one event
    spans) describe the region; `check` tests values against it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean tensor of shape ``value.shape[:value.dim() - event_dim]``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a region that depends on other arguments (it cannot be checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # base: a class constant
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # base: a class constant
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether `constraint` is a dependent (uncheckable) constraint."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint, for a `support` that depends on the
    parameters (``@constraints.dependent_property(is_discrete=..., event_dim=...)``)."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        is_discrete=NotImplemented,
        event_dim=NotImplemented,
    ) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    # a decorator factory here (as PyTorch's): it takes the function, not the flags
    def __call__(self, fn: Callable[..., Any]) -> "_DependentProperty":  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with its `reinterpreted_batch_ndims` rightmost batch dimensions
    treated as part of the event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(
                f"base_constraint must be a Constraint, got {type(base_constraint).__name__}"
            )
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(
                f"reinterpreted_batch_ndims must be an int >= 0, got {reinterpreted_batch_ndims!r}"
            )
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # base: a class constant
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # base: a class constant
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        result = result.reshape(
            tuple(result.shape[: result.dim() - self.reinterpreted_batch_ndims]) + (-1,)
        )
        return result.all(-1)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & value.sum(-1).eq(1)


class _Bounded(Constraint):
    """A region given by bounds; the repr names them as PyTorch's does."""

    _bound_names: tuple[str, ...] = ()

    def __repr__(self) -> str:
        bounds = ", ".join(f"{name}={getattr(self, name)}" for name in self._bound_names)
        return f"{self.__class__.__name__[1:]}({bounds})"


class _IntegerInterval(_Bounded):
    """Integers in the closed interval [lower_bound, upper_bound]."""

    is_discrete = True
    _bound_names = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounded):
    is_discrete = True
    _bound_names = ("lower_bound",)

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _GreaterThan(_Bounded):
    """Reals strictly greater than `lower_bound`."""

    _bound_names = ("lower_bound",)

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_GreaterThan):
    """Reals greater than or equal to `lower_bound`."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bounded):
    """Reals strictly less than `upper_bound`."""

    _bound_names = ("upper_bound",)

    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    """Reals in the closed interval [lower_bound, upper_bound]."""

    _bound_names = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    """Reals in the half-open interval [lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        flat = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,))
        return flat.all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _LowerTriangular().check(value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: unit-norm rows."""

    event_dim = 2

    def check(self, value):
        tol = _dt.finfo(value.dtype).eps * value.shape[-1] * 10  # PyTorch's fudge factor
        row_norm = value.detach().pow(2).sum(-1).sqrt()
        unit_row_norm = ((row_norm - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Multinomial(Constraint):
    """Nonnegative count vectors summing to at most `upper_bound`."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: `base_constraint` (the components') checked with
    the component dim added and reduced away."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # base: a class constant
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # base: a class constant
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < result.dim():
            keep = value.dim() - self.event_dim
            result = result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)
        return result

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return aten.full(
            tuple(value.shape[:-2]),
            value.shape[-2] == value.shape[-1],
            dtype=_dt.bool,
            device=value.device,
        )


class _Symmetric(_Square):
    def check(self, value):
        square_check = super().check(value)
        if not square_check.all():
            return square_check
        return aten.isclose(value, value.transpose(-2, -1), atol=1e-6).all(-1).all(-1)


def _per_matrix(value, test: Callable[[np.ndarray], bool]):
    """Apply a host-side `test` to each matrix of `value`; a boolean tensor of the batch
    shape."""
    mats = np.asarray(value.detach().cpu().numpy(), dtype=np.float64)
    flat = mats.reshape((-1,) + mats.shape[-2:])
    ok = np.array([test(m) for m in flat], dtype=bool).reshape(mats.shape[:-2])
    return tensor(ok, dtype=_dt.bool, device=value.device)


def _is_positive_definite(m: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return False
    return True


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return _per_matrix(value, lambda m: bool(np.all(np.linalg.eigvalsh(m) >= 0)))


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return _per_matrix(value, _is_positive_definite)


class _Sequence(Constraint):
    """A constraint made of the constraints `cseq`, one per part of the value along `dim`."""

    def __init__(self, cseq, dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]  # base: a class constant
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Sequence):
    """`cseq[i]` applied to consecutive slices of `lengths[i]` along `dim`."""

    def __init__(self, cseq, dim: int = 0, lengths=None) -> None:
        super().__init__(cseq, dim)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # base: a class constant
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return aten.cat(checks, self.dim)


class _Stack(_Sequence):
    """`cseq[i]` applied to index i along `dim`."""

    @property
    def event_dim(self) -> int:  # type: ignore[override]  # base: a class constant
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        vs = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return aten.stack([c.check(v) for v, c in zip(vs, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
multinomial = _Multinomial
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
