"""Adam and AdamW (PyTorch's single-tensor update rules, step for step)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..ops import aten
from .optimizer import (Optimizer, check_non_negative, closure_loss, params_with_grad,
                        reject_differentiable, step_with_hooks)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally AMSGrad; weight decay is L2 (added to the gradient) unless
    `decoupled_weight_decay` (AdamW: p *= 1 - lr * weight_decay).

    Per parameter at step t: m = lerp(m, g, 1 - β1); v = β2 v + (1 - β2) g²;
    p -= lr / (1 - β1^t) * m / (sqrt(v) / sqrt(1 - β2^t) + eps).
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_non_negative(lr=lr, eps=eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        check_non_negative(weight_decay=weight_decay)
        reject_differentiable(type(self).__name__, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", False)

    @step_with_hooks
    def step(self, closure=None):
        """One Adam step over every parameter with a gradient."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            amsgrad = group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = aten.zeros((), dtype=_dt.float32)
                    state["exp_avg"] = aten.zeros_like(p)
                    state["exp_avg_sq"] = aten.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = aten.zeros_like(p)
                step_t = state["step"]
                step_t.add_(1)
                if wd != 0:
                    if decoupled:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = step_t.item()
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                second_moment = exp_avg_sq
                if amsgrad:
                    second_moment = state["max_exp_avg_sq"]
                    aten.maximum(second_moment, exp_avg_sq, out=second_moment)
                denom = (second_moment.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); weight_decay defaults to 1e-2."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
