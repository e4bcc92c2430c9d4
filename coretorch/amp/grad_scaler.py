"""`GradScaler`: loss scaling for mixed-precision training, as ``torch.amp.GradScaler``.

The loss is multiplied by a scale before backward so small float16 gradients do not flush to
zero; `unscale_` divides the gradients back and notes whether any is inf or NaN; `step` skips the
optimizer step when one was; `update` halves the scale after such a step (``backoff_factor``) and
doubles it after ``growth_interval`` clean steps in a row (``growth_factor``).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from .. import dtypes as dt
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Per-optimizer progress within one iteration: gradients not yet unscaled, unscaled, or
    stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf": False}


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/NaN gradients, adapt the scale.

    ``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`` is the loop.
    ``enabled=False`` makes every method a pass-through (``scale`` returns its input, ``step``
    just steps), so one script runs with and without mixed precision.
    """

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda

            if not cuda.is_available():
                warnings.warn(
                    "coretorch.cuda.amp.GradScaler is enabled, but CUDA is not "
                    "available.  Disabling."
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale: float | None = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    # ---- scaling ---------------------------------------------------------------------------
    def _lazy_init(self) -> None:
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or tensors nested in lists and tuples) times the scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        if hasattr(outputs, "_dtype"):
            return outputs * self._scale_of(outputs)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_of(self, t):
        # a float32 scalar on the output's device, as PyTorch's scale tensor
        from ..ops.factories_public import tensor

        return tensor(self._scale, dtype=dt.float32, device=t.device)

    def _params_with_grad(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield p

    def unscale_(self, optimizer) -> None:
        """Divide `optimizer`'s gradients by the scale (in place) and record whether any is
        inf or NaN. At most once per optimizer between `update` calls; `step` calls it if the
        user did not (to clip gradients, call it first)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in double, then float32, as PyTorch computes inv_scale
        assert self._scale is not None  # scale() ran first (the stage checks above)
        inv_scale = float(dt.float32.numpy.type(1.0 / self._scale))
        found = False
        with no_grad():
            for p in self._params_with_grad(optimizer):
                g = p.grad
                if g._dtype is dt.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inv_scale)
                if not found and not bool(g.isfinite().all()):
                    found = True
        state["found_inf"] = found
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` unless the unscaled gradients hold inf or NaN
        (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: "float | Any | None" = None) -> None:
        """Adapt the scale after this iteration's steps: times `backoff_factor` if any step
        was skipped (and the growth count reset), times `growth_factor` after
        `growth_interval` clean iterations. `new_scale` sets it instead."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            value = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
            self._scale = value
        else:
            states = [
                s for s in self._per_optimizer_states.values() if s["stage"] is not OptState.READY
            ]
            if not states:
                raise AssertionError("No inf checks were recorded prior to update.")
            assert self._scale is not None and self._growth_tracker is not None  # scale() ran
            if any(s["found_inf"] for s in states):
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = _f32(self._scale * self._growth_factor)
                    if math.isfinite(grown):  # a scale that would overflow stays put
                        self._scale = grown
                    successful = 0
                self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate "
                f"your script did not use scaler.scale(loss or outputs) "
                f"earlier in the iteration."
            )

    # ---- accessors and state ---------------------------------------------------------------
    def _value(self, current, initial, disabled):
        # before the first scale() the initial values stand in; a disabled scaler has none
        if not self._enabled:
            return disabled
        return initial if current is None else current

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled; the initial scale before the first `scale`)."""
        return self._value(self._scale, self._init_scale, 1.0)

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after `growth_interval` clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale is multiplied by after `growth_interval` steps without
        inf/NaN."""
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a skipped step."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale is multiplied by when a step finds inf/NaN gradients."""
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """How many clean steps in a row make the scale grow."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many consecutive finite steps pass before the scale grows."""
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        return self._value(self._growth_tracker, self._init_growth_tracker, 0)

    def is_enabled(self) -> bool:
        """False for a pass-through scaler (``enabled=False``, or cuda without CUDA)."""
        return self._enabled

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker (empty when
        disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what `state_dict` returned (nothing for a disabled scaler)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_per_optimizer_states"] = dict(self._per_optimizer_states)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(
            _refresh_per_optimizer_state, state["_per_optimizer_states"]
        )


def _f32(x: float) -> float:
    """`x` rounded to float32: PyTorch keeps the scale in a float32 tensor."""
    return float(dt.float32.numpy.type(x))
