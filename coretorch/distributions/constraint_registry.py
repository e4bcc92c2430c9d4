"""`biject_to` and `transform_to` (mirror ``torch.distributions.constraint_registry``): for a
constraint, a transform from unconstrained reals onto it (bijective for `biject_to`), so an
optimizer can work in unconstrained space: ``x = transform_to(c)(free)``."""

from __future__ import annotations

import numbers
from typing import Callable

from . import constraints
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    SoftmaxTransform,
    Transform,
    identity_transform,
)
from .transforms_more import (
    CatTransform,
    CorrCholeskyTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    StackTransform,
    StickBreakingTransform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Maps constraint classes (or instances) to factories ``factory(constraint) ->
    Transform``."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable] = {}

    def register(self, constraint, factory: Callable | None = None):
        """Register `factory` for `constraint` (a Constraint subclass or a singleton
        instance); usable as a decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or "
                f"instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint) -> Transform:
        """The transform from unconstrained space onto `constraint`."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint_type):
    def register(factory):
        biject_to.register(constraint_type, factory)
        transform_to.register(constraint_type, factory)
        return factory

    return register


@_both(constraints.real)
def _to_real(constraint):
    return identity_transform


@_both(constraints.independent)
def _to_independent(constraint):
    registry = biject_to if constraint.is_discrete is False else transform_to
    base = registry(constraint.base_constraint)
    return IndependentTransform(base, constraint.reinterpreted_batch_ndims)


@_both(constraints.positive)
@_both(constraints.nonnegative)
def _to_positive(constraint):
    return ExpTransform()


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _to_interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return SigmoidTransform()
    return ComposeTransform(
        [
            SigmoidTransform(),
            AffineTransform(
                constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
            ),
        ]
    )


biject_to.register(constraints.simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: LowerCholeskyTransform())
biject_to.register(constraints.corr_cholesky, lambda c: CorrCholeskyTransform())
transform_to.register(constraints.corr_cholesky, lambda c: CorrCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda c: PositiveDefiniteTransform())


@_both(constraints.cat)
def _to_cat(constraint):
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@_both(constraints.stack)
def _to_stack(constraint):
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)
