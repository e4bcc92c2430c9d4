"""Reverse-mode automatic differentiation (mirrors ``torch.autograd``).

Autograd is the `Autograd` dispatch key with one generic kernel (`kernel.py`) that records a
backward `Node` per op from the op's declared derivative; `engine.py` runs the graph.
"""
from __future__ import annotations

from . import grad_mode as grad_mode
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .kernel import install as _install_kernel
from .node import AccumulateGrad, Node, RemovableHandle

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "Node",
           "AccumulateGrad", "RemovableHandle"]

_install_kernel()

