"""Schedulers made of schedulers: SequentialLR (one after another, switching at milestones) and
ChainedScheduler (all of them every step) (mirror ``torch.optim.lr_scheduler``)."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, Sequence

from ._lr_base import LRScheduler, group_values
from ._lr_plateau import ReduceLROnPlateau
from .optimizer import Optimizer

__all__ = ["SequentialLR", "ChainedScheduler"]


class _SchedulerList(LRScheduler):
    """Shared by the combinators: argument checks, and a state dict that nests each
    scheduler's own state dict under "_schedulers"."""

    _schedulers: Sequence[LRScheduler]

    def _check_schedulers(
        self, optimizer: Optimizer | None, schedulers: Sequence[LRScheduler], what: str
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler{what}, but got no scheduler.")
        for idx, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {idx} should have `optimizer` as its attribute.")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                    f"requires additional kwargs to be specified when calling "
                    f"`step`, but got one at index {idx} in the given schedulers "
                    f"sequence."
                )
            if optimizer != scheduler.optimizer:
                raise ValueError(
                    f"{name} expects all schedulers to belong to the same "
                    f"optimizer, but got scheduler {type(scheduler).__name__} at "
                    f"index {idx} has {scheduler.optimizer}, which is different "
                    f"from {type(optimizer).__name__}."
                )

    def state_dict(self) -> dict[str, Any]:
        """The attributes, with each wrapped scheduler's state dict under "_schedulers"."""
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, sd in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(sd)


class SequentialLR(_SchedulerList):
    """Run `schedulers[i]` from epoch `milestones[i-1]` on; at each milestone the next scheduler
    starts from its epoch 0 (its initial learning rates)."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        self._check_schedulers(optimizer, schedulers, "")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"Sequential Schedulers expects number of schedulers provided to be "
                f"one more than the number of milestone points, but got number of "
                f"schedulers {len(schedulers)} and the number of milestones to be "
                f"equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the steps the schedulers took when they were built, then start the first one
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Step `sched` (default: every wrapped scheduler, recursively) back one epoch."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler whose span holds the new epoch (restarting it at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_SchedulerList):
    """Step every scheduler in `schedulers` on each `step()`, so their effects compose."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        optimizer = optimizer or (schedulers[0].optimizer if len(schedulers) else None)
        self._check_schedulers(optimizer, schedulers, " to be chained")
        assert optimizer is not None  # the check refuses an empty list
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")
