"""Adadelta (PyTorch's single-tensor update rule, step for step)."""

from __future__ import annotations

from ._per_param import PerParameterOptimizer, lazy_state, weight_decayed
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["Adadelta"]


class Adadelta(PerParameterOptimizer):
    """Adadelta (Zeiler, 2012): v = ρ v + (1 - ρ) g²; Δ = sqrt(u + eps) / sqrt(v + eps) * g;
    u = ρ u + (1 - ρ) Δ²; p -= lr * Δ (g includes the L2 `weight_decay` term)."""

    def __init__(
        self,
        params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(eps=eps, weight_decay=weight_decay)
        reject_differentiable("Adadelta", differentiable)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        rho, eps = group["rho"], group["eps"]
        state = lazy_state(self, p, ("square_avg", "acc_delta"))
        state["step"].add_(1)
        grad = weight_decayed(p, grad, group)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-group["lr"])
