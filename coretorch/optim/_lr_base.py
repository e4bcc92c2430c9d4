"""`LRScheduler`, the base of every learning-rate scheduler, and the helpers the schedulers
share (mirrors the base of ``torch.optim.lr_scheduler``)."""

from __future__ import annotations

import warnings
from typing import Any

from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "EPOCH_DEPRECATION_WARNING",
    "group_values",
    "format_param",
    "check_optimizer",
    "set_momentum",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available."
)


def group_values(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` for each param group of `optimizer`."""
    return [group[key] for group in optimizer.param_groups]


def format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group from a scalar or a per-group list."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def check_optimizer(optimizer) -> Optimizer:
    """`optimizer`, or TypeError("<type> is not an Optimizer")."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    return optimizer


def set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    """Set a group's momentum, or the first of its betas."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class LRScheduler:
    """Base class: sets each group's lr to `get_lr()` on every `step()` (called once at
    construction). Subclasses implement `get_lr` (the chainable form) and may add
    `_get_closed_form_lr` (used when `step` is given an epoch)."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = check_optimizer(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] "
                        f"when resuming scheduler with last_epoch >= 0"
                    )
        self.base_lrs: list[float] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _setup(self, optimizer: Optimizer, last_epoch: int, **attributes: Any) -> None:
        """Store a subclass's arguments as attributes, then initialize the base."""
        self.__dict__.update(attributes)
        LRScheduler.__init__(self, optimizer, last_epoch)

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by `state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The learning rates of the last step, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        """The learning rates of the current epoch (the chainable form)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def _current_lrs(self) -> list[float]:
        return group_values(self.optimizer, "lr")

    def _scaled_lrs(self, factor: float) -> list[float]:
        """Each group's current lr times `factor`."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to `epoch`, using the closed form where there is one)."""
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._apply_lrs(values)

    def _apply_lrs(self, values: list[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")
