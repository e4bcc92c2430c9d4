"""SparseAdam: Adam's masked variant for sparse gradients (``nn.Embedding(sparse=True)``)."""

from __future__ import annotations

from ._per_param import check_betas
from .optimizer import Optimizer, closure_loss, step_with_hooks

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam that updates only the entries present in a sparse gradient. As in PyTorch it
    refuses dense gradients; coretorch has no sparse gradients yet, so a step with any
    gradient raises, saying so."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [
            [i, j]
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
            if p.is_complex()
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not "
                f"support complex parameters"
            )

    @step_with_hooks
    def step(self, closure=None):
        """Refuse dense gradients (PyTorch's message); sparse ones do not exist in coretorch."""
        loss = closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not getattr(p.grad, "is_sparse", False):
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
                raise NotImplementedError(
                    "SparseAdam: the sparse-gradient update is not implemented in coretorch"
                )
        return loss
