"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (PyTorch's update
rule, step for step)."""

from __future__ import annotations

from ..ops import aten
from ._multi_tensor import MultiTensorOptimizer, check_fused_args
from ._per_param import weight_decayed
from .optimizer import reject_differentiable

__all__ = ["SGD"]


class SGD(MultiTensorOptimizer):
    """Stochastic gradient descent.

    Per parameter, with g the gradient (negated if `maximize`):
    g += weight_decay * p; buf = g on the first step, else buf = momentum * buf +
    (1 - dampening) * g; g = g + momentum * buf (Nesterov) or buf; p -= lr * g.

    `fused` / `foreach` pick the implementation (`coretorch.optim._multi_tensor`): by default
    one ``_fused_sgd_`` kernel per group where the backend has one.

    Args:
        params: an iterable of parameters, or of dicts (parameter groups with their own options).
        lr: learning rate.
        momentum: momentum factor (0 disables the momentum buffer).
        dampening: dampening of the momentum's gradient term.
        weight_decay: L2 penalty added to the gradient.
        nesterov: use Nesterov momentum (needs momentum > 0 and zero dampening).
        maximize: maximize the objective instead of minimizing it.

    Raises:
        ValueError: for a negative lr, momentum or weight_decay, or Nesterov momentum without
            momentum or with dampening.

    Examples:
        >>> import coretorch
        >>> w = coretorch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = coretorch.optim.SGD([w], lr=0.1)
        >>> loss = (w ** 2).sum()  # gradient 2 * w
        >>> opt.zero_grad()
        >>> loss.backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    _fused_op = "_fused_sgd_"

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        reject_differentiable("SGD", differentiable)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused_args(self, defaults)

    def _multi_update(self, group, params, grads, fused) -> None:
        momentum = group["momentum"]
        if momentum == 0:
            self._sgd_lists(group, fused, params, grads, [], False)
            return
        states = [self.state[p] for p in params]
        bufs = [s.get("momentum_buffer") for s in states]
        # parameters without a buffer yet start theirs from the gradient (a separate call
        # where only some of the group's parameters are new)
        new = [i for i, b in enumerate(bufs) if b is None]
        old = [i for i, b in enumerate(bufs) if b is not None]
        for i in new:
            bufs[i] = states[i]["momentum_buffer"] = aten.empty_like(grads[i])
        for idx, first in ((new, True), (old, False)):
            if idx:
                self._sgd_lists(
                    group,
                    fused,
                    [params[i] for i in idx],
                    [grads[i] for i in idx],
                    [bufs[i] for i in idx],
                    first,
                )

    def _sgd_lists(self, group, fused, params, grads, bufs, first) -> None:
        self.run_update(
            group,
            fused,
            params,
            grads,
            bufs,
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            lr=group["lr"],
            dampening=group["dampening"],
            nesterov=group["nesterov"],
            maximize=group["maximize"],
            is_first_step=first,
        )

    def _update(self, p, grad, group) -> None:
        momentum = group["momentum"]
        grad = weight_decayed(p, grad, group)
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone().detach()
            elif group["dampening"] == 0:
                # buf = momentum * buf + grad in one pass
                aten.add(grad, buf, alpha=momentum, out=buf)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])
