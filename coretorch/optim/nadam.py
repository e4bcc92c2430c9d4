"""NAdam (PyTorch's single-tensor update rule, step for step)."""

from __future__ import annotations

from ._per_param import (
    PerParameterOptimizer,
    check_adam_args,
    lazy_state,
    update_adam_moments,
    weight_decayed,
)
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["NAdam"]


class NAdam(PerParameterOptimizer):
    """Adam with Nesterov momentum (Dozat, 2016) and the momentum schedule
    μ_t = β1 (1 - 0.5 · 0.96^(t · momentum_decay)); the product of the μ's is kept in state
    "mu_product" (a float32 scalar, as in PyTorch). `decoupled_weight_decay` gives NAdamW."""

    _added_group_keys = {"decoupled_weight_decay": False}

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        check_non_negative(momentum_decay=momentum_decay)
        reject_differentiable("NAdam", differentiable)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        beta1, beta2 = group["betas"]
        lr, psi = group["lr"], group["momentum_decay"]
        state = lazy_state(self, p, ("exp_avg", "exp_avg_sq"), mu_product=1.0)
        step_t, mu_product = state["step"], state["mu_product"]
        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2**step
        grad = weight_decayed(p, grad, group)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        mu_product.mul_(mu)
        update_adam_moments(state, grad, group["betas"])
        denom = state["exp_avg_sq"].div(bias_correction2).sqrt().add_(group["eps"])
        mu_product_value = mu_product.item()
        mu_product_next = mu_product_value * mu_next
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product_value))
        p.addcdiv_(state["exp_avg"], denom, value=-lr * mu_next / (1.0 - mu_product_next))
