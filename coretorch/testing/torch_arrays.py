"""numpy arrays <-> torch cpu tensors for the test oracles, bfloat16 included: numpy's bfloat16
comes from ml_dtypes and torch's numpy bridge does not know it, so it crosses as its 16 bits."""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt

__all__ = ["torch_from_numpy", "numpy_from_torch"]

_BF16 = _dt.bfloat16.numpy


def torch_from_numpy(a: np.ndarray):
    """A torch cpu tensor holding a copy of `a`'s values (any coretorch dtype)."""
    import torch

    a = np.array(a)
    if a.dtype == _BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def numpy_from_torch(t) -> np.ndarray:
    """The values of torch tensor `t` as a numpy array (bfloat16 as ml_dtypes' bfloat16)."""
    import torch

    t = t.detach().cpu().resolve_conj()  # torch's lazy conjugates have no numpy view
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(_BF16)
    return t.numpy()
