"""RMSprop (PyTorch's update rule, step for step)."""

from __future__ import annotations

from ._multi_tensor import MultiTensorOptimizer, check_fused_args
from ._per_param import lazy_state, weight_decayed
from .optimizer import check_non_negative, reject_differentiable

__all__ = ["RMSprop"]


class RMSprop(MultiTensorOptimizer):
    """RMSprop: v = α v + (1 - α) g²; avg = sqrt(v - ḡ²) (centered, ḡ = lerp(ḡ, g, 1 - α)) or
    sqrt(v); then avg += eps and p -= lr * g / avg, or with momentum
    buf = momentum * buf + g / avg; p -= lr * buf.

    `foreach` as PyTorch's; `fused` is coretorch's addition (PyTorch has no fused RMSprop),
    picking the implementation as for Adam: by default one ``_fused_rmsprop_`` kernel per group
    where the backend has one."""

    _fused_op = "_fused_rmsprop_"
    _added_group_keys = {"fused": None}

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_non_negative(
            lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha
        )
        reject_differentiable("RMSprop", differentiable)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        check_fused_args(self, defaults)

    def _state(self, p, group):
        return lazy_state(
            self,
            p,
            (
                "square_avg",
                "momentum_buffer" if group["momentum"] > 0 else None,
                "grad_avg" if group["centered"] else None,
            ),
        )

    def _multi_update(self, group, params, grads, fused) -> None:
        states = [self._state(p, group) for p in params]
        centered, momentum = group["centered"], group["momentum"]
        self.run_update(
            group,
            fused,
            params,
            grads,
            [s["square_avg"] for s in states],
            [s["grad_avg"] for s in states] if centered else [],
            [s["momentum_buffer"] for s in states] if momentum > 0 else [],
            lr=group["lr"],
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=momentum,
            centered=centered,
            maximize=group["maximize"],
            counters=[s["step"] for s in states],
        )

    def _update(self, p, grad, group) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum = group["momentum"]
        centered = group["centered"]
        state = self._state(p, group)
        state["step"].add_(1)
        grad = weight_decayed(p, grad, group)
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
