"""Learning-rate schedulers (mirror ``torch.optim.lr_scheduler``; the same chainable recurrences,
so lr sequences match PyTorch's float for float).

This module holds the epoch-wise schedules; the cyclic ones, ReduceLROnPlateau and the
combinators live beside it and are re-exported here under PyTorch's names."""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from typing import Any, Callable, Iterable

from ._lr_base import EPOCH_DEPRECATION_WARNING, LRScheduler  # noqa: F401
from ._lr_composite import ChainedScheduler, SequentialLR
from ._lr_cyclic import CyclicLR, OneCycleLR
from ._lr_plateau import ReduceLROnPlateau
from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
]


class _LRScheduler(LRScheduler):
    """The old name of `LRScheduler`, kept as PyTorch keeps it."""


class _LambdaScheduler(LRScheduler):
    """A scheduler driven by one function of the epoch per param group; callable objects'
    ``__dict__`` is saved in the state dict, plain functions and lambdas are not."""

    def __init__(
        self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list, last_epoch: int = -1
    ) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        sd["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch) (one function, or one per param group)."""

    def get_lr(self) -> list[float]:
        return [
            base_lr * lmbda(self.last_epoch)
            for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]


class MultiplicativeLR(_LambdaScheduler):
    """lr *= lr_lambda(epoch) at every step after the first."""

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [
            group["lr"] * lmbda(self.last_epoch)
            for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` epochs.

    Examples:
        >>> import coretorch
        >>> w = coretorch.zeros(1, requires_grad=True)
        >>> opt = coretorch.optim.SGD([w], lr=1.0)
        >>> sched = coretorch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> lrs = []
        >>> for epoch in range(5):
        ...     lrs.append(sched.get_last_lr()[0])
        ...     opt.step()
        ...     sched.step()
        >>> lrs
        [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    # hyperparameters, set by _setup
    step_size: int
    gamma: float

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self._setup(optimizer, last_epoch, step_size=step_size, gamma=gamma)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return self._scaled_lrs(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each epoch listed in `milestones`."""

    # hyperparameters, set by _setup
    milestones: Counter[int]
    gamma: float

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self._setup(optimizer, last_epoch, milestones=Counter(milestones), gamma=gamma)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return self._scaled_lrs(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Multiply the lr by `factor` until epoch `total_iters`, then restore it."""

    # hyperparameters, set by _setup
    factor: float
    total_iters: int

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self._setup(optimizer, last_epoch, factor=factor, total_iters=total_iters)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled_lrs(self.factor)
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return self._scaled_lrs(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scale the lr by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs."""

    # hyperparameters, set by _setup
    start_factor: float
    end_factor: float
    total_iters: int

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and "
                "less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self._setup(
            optimizer,
            last_epoch,
            start_factor=start_factor,
            end_factor=end_factor,
            total_iters=total_iters,
        )

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled_lrs(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        delta = self.end_factor - self.start_factor
        return self._scaled_lrs(
            1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        )

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every epoch."""

    # hyperparameters, set by _setup
    gamma: float

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self._setup(optimizer, last_epoch, gamma=gamma)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return self._scaled_lrs(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as (1 - epoch / total_iters) ** power, reaching 0 at `total_iters`."""

    # hyperparameters, set by _setup
    total_iters: int
    power: float

    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1
    ) -> None:
        self._setup(optimizer, last_epoch, total_iters=total_iters, power=power)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay = (
            (1.0 - self.last_epoch / self.total_iters)
            / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return self._scaled_lrs(decay)

    def _get_closed_form_lr(self) -> list[float]:
        return [
            base_lr
            * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]


def _cosine(eta_min: float, base_lr: float, t_cur: float, t_max: float) -> float:
    return eta_min + (base_lr - eta_min) * (1 + math.cos(math.pi * t_cur / t_max)) / 2


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to `eta_min` over `T_max` epochs (SGDR without
    restarts), in PyTorch's recursive form."""

    # hyperparameters, set by _setup
    T_max: int
    eta_min: float

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self._setup(optimizer, last_epoch, T_max=T_max, eta_min=eta_min)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and self.last_epoch > 0:
            return self._get_closed_form_lr()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (group["lr"] - self.eta_min)
            + self.eta_min
            for group in groups
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            _cosine(self.eta_min, base_lr, self.last_epoch, self.T_max) for base_lr in self.base_lrs
        ]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from the initial lr to `eta_min` over T_i epochs, then a restart;
    T_0 = `T_0` and T_{i+1} = T_i * `T_mult`. `step(epoch)` accepts fractional epochs."""

    # hyperparameters, set by _setup
    T_0: int
    T_i: int
    T_mult: int
    eta_min: float
    T_cur: float

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self._setup(
            optimizer,
            last_epoch,
            T_0=T_0,
            T_i=T_0,
            T_mult=T_mult,
            eta_min=eta_min,
            T_cur=last_epoch,
        )

    def get_lr(self) -> list[float]:
        return [_cosine(self.eta_min, base_lr, self.T_cur, self.T_i) for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or set the (possibly fractional) `epoch`, e.g.
        ``scheduler.step(epoch + i / iters)`` after each batch."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._apply_lrs(self.get_lr())
