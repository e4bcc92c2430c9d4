"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"): a
head over the frequent classes plus one cluster token per tail, each tail a low-rank
projection; the parameters, their names and the outputs are PyTorch's."""

from __future__ import annotations

from collections import namedtuple

from ...ops import aten
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over `n_classes` split at `cutoffs`; forward(input, target) gives
    (log-probability of each target, mean negative log-likelihood)."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs,
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted "
                "in an increasing order, where each value is between 1 and "
                "n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                    Linear(hsz, osz, bias=False, device=device, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        """Re-initialize the head and every tail projection."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()

    def _full_log_prob(self, input):
        """(N, n_classes) log-probabilities: the head's shortlist, then each cluster's
        log-softmax plus the head's log-probability of that cluster."""
        head_logprob = F.log_softmax(self.head(input), dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return aten.cat(parts, 1)

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim not in (0, 1):
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if targ_dim == 1 and input_.size(0) != target_.size(0):
            raise RuntimeError("Input and target should have the same size in the batch dimension.")
        # a batch of targets wants a batch of rows; one target, one row
        if input_.dim() != targ_dim + 1:
            raise RuntimeError(
                f"{targ_dim}D target tensor expects {targ_dim + 1}D input tensors, "
                f"but found inputs with size {input_.size()}"
            )
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() and (bool((target < 0).any()) or bool((target >= self.n_classes).any())):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but "
                f"values in range [{int(target.min())}, {int(target.max())}] "
                f"were found. "
            )
        output = self._full_log_prob(input).gather(1, target.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def log_prob(self, input):
        """Log-probabilities of every class, (N, n_classes) or (n_classes,)."""
        batched = input.dim() == 2
        out = self._full_log_prob(input if batched else input.unsqueeze(0))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row."""
        return self.log_prob(input).argmax(-1)
