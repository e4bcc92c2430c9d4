"""RMSprop (PyTorch's update rule, step for step)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..ops import aten
from .optimizer import (Optimizer, check_non_negative, closure_loss, params_with_grad,
                        reject_differentiable, step_with_hooks)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: v = α v + (1 - α) g²; avg = sqrt(v - ḡ²) (centered, ḡ = lerp(ḡ, g, 1 - α)) or
    sqrt(v); then avg += eps and p -= lr * g / avg, or with momentum
    buf = momentum * buf + g / avg; p -= lr * buf."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                           alpha=alpha)
        reject_differentiable("RMSprop", differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @step_with_hooks
    def step(self, closure=None):
        """One RMSprop step over every parameter with a gradient."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum = group["weight_decay"], group["momentum"]
            centered = group["centered"]
            for p, grad in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = aten.zeros((), dtype=_dt.float32)
                    state["square_avg"] = aten.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = aten.zeros_like(p)
                    if centered:
                        state["grad_avg"] = aten.zeros_like(p)
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = state["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss
