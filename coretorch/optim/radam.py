"""RAdam (PyTorch's single-tensor update rule, step for step)."""

from __future__ import annotations

from ._per_param import (
    PerParameterOptimizer,
    check_adam_args,
    lazy_state,
    update_adam_moments,
    weight_decayed,
)
from .optimizer import reject_differentiable

__all__ = ["RAdam"]


class RAdam(PerParameterOptimizer):
    """Rectified Adam (Liu et al., 2019): while the approximated SMA length ρ_t is at most 5 the
    step is plain bias-corrected momentum; after that Adam's adaptive step times the variance
    rectification term. `decoupled_weight_decay` gives RAdamW."""

    _added_group_keys = {"decoupled_weight_decay": False}

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        reject_differentiable("RAdam", differentiable)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        state = lazy_state(self, p, ("exp_avg", "exp_avg_sq"))
        step_t = state["step"]
        step_t.add_(1)
        step = step_t.item()
        grad = weight_decayed(p, grad, group)
        update_adam_moments(state, grad, group["betas"])
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = state["exp_avg"] / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / state["exp_avg_sq"].sqrt().add_(group["eps"])
            p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
