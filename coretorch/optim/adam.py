"""Adam and AdamW (PyTorch's single-tensor update rules, step for step)."""

from __future__ import annotations

from ..ops import aten
from ._multi_tensor import MultiTensorOptimizer, check_fused_args
from ._per_param import check_adam_args, lazy_state, update_adam_moments, weight_decayed
from .optimizer import reject_differentiable

__all__ = ["Adam", "AdamW"]


class Adam(MultiTensorOptimizer):
    """Adam (Kingma & Ba), optionally AMSGrad; weight decay is L2 (added to the gradient) unless
    `decoupled_weight_decay` (AdamW: p *= 1 - lr * weight_decay).

    Per parameter at step t: m = lerp(m, g, 1 - β1); v = β2 v + (1 - β2) g²;
    p -= lr / (1 - β1^t) * m / (sqrt(v) / sqrt(1 - β2^t) + eps).

    `fused` / `foreach` pick the implementation (`coretorch.optim._multi_tensor`): by default
    one ``_fused_adam_`` (``_fused_adamw_``) kernel per group where the backend has one.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups with their own options).
        lr: learning rate.
        betas: decay rates (β1, β2) of the gradient's first and second moment estimates.
        eps: added to the denominator for numerical stability.
        weight_decay: L2 penalty (decoupled with `decoupled_weight_decay`, as AdamW).
        amsgrad: use the maximum of past second moments (AMSGrad).
        maximize: maximize the objective instead of minimizing it.

    Raises:
        ValueError: for a negative lr, eps or weight_decay, or a beta outside [0, 1).

    Examples:
        >>> import coretorch
        >>> w = coretorch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = coretorch.optim.Adam([w], lr=0.1)
        >>> for _ in range(2):
        ...     opt.zero_grad()
        ...     (w ** 2).sum().backward()
        ...     opt.step()
        >>> w  # each step moves about lr against the gradient's sign
        tensor([ 0.8004, -1.8002], requires_grad=True)
        >>> coretorch.optim.Adam([w], betas=(1.0, 0.9))
        Traceback (most recent call last):
            ...
        ValueError: Invalid beta parameter at index 0: 1.0
    """

    _added_group_keys = {"decoupled_weight_decay": False}

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        reject_differentiable(type(self).__name__, differentiable)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)
        check_fused_args(self, defaults)

    def _fused_op_of(self, group) -> str:
        return "_fused_adamw_" if group["decoupled_weight_decay"] else "_fused_adam_"

    def _state(self, p, group):
        return lazy_state(
            self,
            p,
            ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if group["amsgrad"] else None),
            fused=bool(group["fused"]),
        )

    def _multi_update(self, group, params, grads, fused) -> None:
        states = [self._state(p, group) for p in params]
        steps = [s["step"] for s in states]
        beta1, beta2 = group["betas"]
        amsgrad = group["amsgrad"]
        self.run_update(
            group,
            fused,
            params,
            grads,
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [s["max_exp_avg_sq"] for s in states] if amsgrad else [],
            steps,
            counters=steps,
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            amsgrad=amsgrad,
            maximize=group["maximize"],
        )

    def _update(self, p, grad, group) -> None:
        beta1, beta2 = group["betas"]
        lr, amsgrad = group["lr"], group["amsgrad"]
        state = self._state(p, group)
        step_t = state["step"]
        step_t.add_(1)
        grad = weight_decayed(p, grad, group)
        update_adam_moments(state, grad, group["betas"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        step = step_t.item()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        second_moment = exp_avg_sq
        if amsgrad:
            second_moment = state["max_exp_avg_sq"]
            aten.maximum(second_moment, exp_avg_sq, out=second_moment)
        denom = (second_moment.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); weight_decay defaults to 1e-2."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
