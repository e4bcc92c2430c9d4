"""The three ways an elementwise optimizer updates a parameter group, chosen per group as
PyTorch's ``foreach=`` / ``fused=`` arguments choose them:

- **fused**: one call of the optimizer's fused op (``_fused_adam_``...), which a backend may run
  as one kernel over every buffer of the group (the cpu backend: one numba loop);
- **foreach**: the same op's per-op implementation, math over lists (``_foreach_*`` ops);
- **single-tensor**: the optimizer's ``_update`` per parameter (PyTorch's for-loop path).

The default (both None) is fused where every parameter is a float tensor on a backend that
registers its own kernel for the fused op (coretorch's choice: PyTorch defaults to the for-loop
on cpu; the results agree to the last ulps), else single-tensor.
"""

from __future__ import annotations

from typing import Any

from ..ops import aten
from ..ops.declare import REGISTRY
from ..ops.fused_optim import fused_devices, has_fused_kernel, skip_update
from ..tensor.tensor import Tensor
from ._per_param import PerParameterOptimizer

__all__ = ["MultiTensorOptimizer", "FUSED", "FOREACH", "SINGLE", "check_fused_args"]

FUSED, FOREACH, SINGLE = "fused", "foreach", "single"


def check_fused_args(optimizer, defaults: dict[str, Any]) -> None:
    """PyTorch's constructor checks for ``fused=True``."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        optimizer._step_supports_amp_scaling = True


def _fused_available(op: str, params: list[Tensor], explicit: bool) -> bool:
    """Whether every parameter is a float tensor whose backend has a kernel for `op`; with
    `explicit` (``fused=True``) a parameter that is not raises PyTorch's error."""
    checked: set[int] = set()
    for p in params:
        key = p._keys
        ok = p._dtype.is_floating_point and (key in checked or has_fused_kernel(op, p))
        if not ok:
            if explicit:
                raise RuntimeError(
                    f"`fused=True` requires all the params to be floating point "
                    f"Tensors of supported devices: {fused_devices(op)} but "
                    f"{p._dtype} and {p._device.type}"
                )
            return False
        checked.add(key)
    return True


class MultiTensorOptimizer(PerParameterOptimizer):
    """A `PerParameterOptimizer` that also has PyTorch's fused and foreach implementations:
    subclasses name their fused op (`_fused_op`) and implement ``_multi_update(group, params,
    grads, fused)``, which gathers the state lists and calls `run_update`."""

    _fused_op = ""

    def _fused_op_of(self, group: dict[str, Any]) -> str:
        return self._fused_op

    def _implementation(self, group: dict[str, Any], params: list[Tensor]) -> str:
        fused, foreach = group.get("fused"), group.get("foreach")
        op = self._fused_op_of(group)
        if fused:
            _fused_available(op, params, explicit=True)
            return FUSED
        if foreach:
            return FOREACH
        if fused is None and foreach is None and _fused_available(op, params, explicit=False):
            return FUSED
        return SINGLE

    def _step_group(self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor]) -> None:
        impl = self._implementation(group, params)
        if impl == SINGLE:
            super()._step_group(group, params, grads)
        else:
            self._multi_update(group, params, grads, impl == FUSED)

    def _multi_update(
        self, group: dict[str, Any], params: list[Tensor], grads: list[Tensor], fused: bool
    ) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement _multi_update()")

    def run_update(
        self, group: dict[str, Any], fused: bool, *lists, counters=None, **scalars
    ) -> None:
        """Call the group's fused op on `lists` and `scalars` (fused: through the dispatcher,
        so the backend's kernel runs; foreach: the op's per-op implementation), after adding
        one to the step `counters`. The GradScaler attributes ``grad_scale`` / ``found_inf``
        reach the fused op only, as in PyTorch, where a skipped update (``found_inf`` 1) takes
        its step back."""
        if counters:
            aten._foreach_add_(counters, 1)
        decl = REGISTRY[self._fused_op_of(group)]
        if not fused:
            impl = decl.impl
            assert impl is not None, "the fused optimizer ops are composites"
            impl(*decl.op.bind(*lists, **scalars))
            return
        found_inf = getattr(self, "found_inf", None)
        decl.op(
            *lists, **scalars, grad_scale=getattr(self, "grad_scale", None), found_inf=found_inf
        )
        if counters and skip_update(found_inf):
            aten._foreach_add_(counters, -1)
