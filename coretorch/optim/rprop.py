"""Rprop, resilient backpropagation (PyTorch's single-tensor update rule)."""

from __future__ import annotations

from ..ops import aten
from ._per_param import PerParameterOptimizer, lazy_state
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["Rprop"]


class Rprop(PerParameterOptimizer):
    """Rprop (Riedmiller & Braun, 1993): each element's step size grows by η+ while its
    gradient keeps its sign and shrinks by η- when the sign flips (then that element does not
    move and its gradient is forgotten), within `step_sizes`; p -= sign(g) * step_size."""

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        reject_differentiable("Rprop", differentiable)
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state = lazy_state(self, p, ("prev",))
        if "step_size" not in state:
            state["step_size"] = aten.full_like(grad, group["lr"])
        prev, step_size = state["prev"], state["step_size"]
        state["step"].add_(1)
        sign = grad.mul(prev).sign()
        factor = aten.where(
            sign.gt(0), etaplus, aten.where(sign.lt(0), etaminus, aten.ones_like(sign))
        )
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # where the sign flipped the element stays put and forgets its gradient
        grad = aten.where(sign.lt(0), 0.0, grad)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
