"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (PyTorch's update
rule, step for step)."""
from __future__ import annotations

from ..ops import aten
from .optimizer import (Optimizer, closure_loss, params_with_grad, reject_differentiable,
                        step_with_hooks)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent.

    Per parameter, with g the gradient (negated if `maximize`):
    g += weight_decay * p; buf = g on the first step, else buf = momentum * buf +
    (1 - dampening) * g; g = g + momentum * buf (Nesterov) or buf; p -= lr * g.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        reject_differentiable("SGD", differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    @step_with_hooks
    def step(self, closure=None):
        """One SGD step over every parameter with a gradient."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            dampening, wd = group["dampening"], group["weight_decay"]
            nesterov = group["nesterov"]
            for p, grad in params_with_grad(group):
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.clone().detach()
                    elif dampening == 0:
                        # buf = momentum * buf + grad in one pass
                        aten.add(grad, buf, alpha=momentum, out=buf)
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if nesterov else buf
                p.add_(grad, alpha=-lr)
        return loss
