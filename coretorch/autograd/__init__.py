"""Reverse-mode automatic differentiation (mirrors ``torch.autograd``).

Autograd is the `Autograd` dispatch key with one generic kernel (`kernel.py`) that records a
backward `Node` per op from the op's declared derivative; `engine.py` runs the graph.
"""

from __future__ import annotations

from . import functional as functional, grad_mode as grad_mode
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .kernel import install as _install_kernel
from .node import AccumulateGrad, Node, RemovableHandle

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "Node",
    "AccumulateGrad",
    "RemovableHandle",
    "functional",
    "Variable",
]


def Variable(data, requires_grad: bool = False, volatile: bool = False):  # noqa: N802
    """PyTorch's deprecated ``Variable(t, requires_grad=...)``: variables and tensors are one
    class now, so this is a new leaf tensor sharing `data`'s storage, with `requires_grad` as
    given (as PyTorch's). `volatile` is ignored, as PyTorch ignores it (use `no_grad`)."""
    return data.detach().requires_grad_(requires_grad)


_ANOMALY = (
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
)


def __getattr__(name: str):
    # PyTorch's anomaly mode is served by the coretorch-profiler distribution's detector,
    # imported on first use (the core does not depend on it)
    if name in _ANOMALY:
        from ..profiler._lazy import load

        return getattr(load("coretorch.autograd", "coretorch_profiler.anomaly_api"), name)
    raise AttributeError(f"module 'coretorch.autograd' has no attribute {name!r}")


_install_kernel()
