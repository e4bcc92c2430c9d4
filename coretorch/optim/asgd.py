"""ASGD, averaged stochastic gradient descent (PyTorch's single-tensor update rule)."""

from __future__ import annotations

from ._per_param import PerParameterOptimizer, lazy_state, scalar_state, weight_decayed
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["ASGD"]


class ASGD(PerParameterOptimizer):
    """Averaged SGD (Polyak & Juditsky, 1992): p *= 1 - λ η; p -= η g; the running average
    "ax" follows p (ax += μ (p - ax), or ax = p while μ = 1); then
    η = lr / (1 + λ lr t)^α and μ = 1 / max(1, t - t0). η and μ are float32 scalars in state,
    as in PyTorch."""

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_non_negative(lr=lr, weight_decay=weight_decay)
        reject_differentiable("ASGD", differentiable)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        lr, lambd = group["lr"], group["lambd"]
        state = lazy_state(self, p, ("ax",), eta=lr, mu=1.0)
        step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
        step_t.add_(1)
        grad = weight_decayed(p, grad, group)
        eta_value = eta.item()
        p.mul_(1 - lambd * eta_value)
        p.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        step = step_t.item()
        # the new values pass through a default-dtype scalar as in PyTorch (which rounds them
        # to float32 even where a loaded state holds eta and mu in float64)
        eta.copy_(scalar_state(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu.copy_(scalar_state(1 / max(1, step - group["t0"])))
