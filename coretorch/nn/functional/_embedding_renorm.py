"""The in-place max_norm renormalization of embedding rows (PyTorch's embedding_renorm_)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...tensor.tensor import Tensor

__all__ = ["embedding_renorm_"]


def embedding_renorm_(
    weight: Tensor, indices: Tensor, max_norm: float, norm_type: float = 2.0
) -> Tensor:
    """Scale, in place, every row of `weight` that `indices` refers to and whose `norm_type`
    norm exceeds `max_norm` by max_norm / (norm + 1e-7)."""
    rows = np.unique(np.asarray(indices.reshape(-1).tolist(), dtype=np.int64))
    if rows.size == 0:
        return weight
    with no_grad():
        idx = _tensor(rows, dtype=_dt.int64, device=weight.device)
        picked = weight.index_select(0, idx)
        norms = picked.norm(norm_type, 1, keepdim=True)
        scale = aten.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight.index_put_((idx,), picked * scale)
    return weight
