"""The ops' kernels at the ``SparseCOO`` dispatch key, and the fallback that refuses every
other op called with a sparse tensor (naming the op, never a wrong result)."""

from __future__ import annotations

from typing import Callable

from ..dispatch.keys import DispatchKey
from ..dispatch.operator import register_fallback
from ..ops.declare import REGISTRY
from . import functional as F
from .tensor import SparseTensor, make_sparse, unsupported

__all__ = ["register_sparse_kernels"]


def _no_out(name: str, kwargs: dict) -> None:
    if kwargs:
        raise unsupported(f"{name}(out=...)")


def _mm(self, mat2, **kw):
    _no_out("mm", kw)
    return F.mm(self, mat2)


def _matmul(self, other, **kw):
    _no_out("matmul", kw)
    return F.matmul(self, other)


def _sum(self, dim, keepdim, dtype, **kw):
    _no_out("sum", kw)
    if keepdim:
        raise RuntimeError("sum(): keepdim=True is not supported for sparse_coo tensors")
    return F.sum(self, dim, dtype)


def _t(self):
    return F.transpose2d(self)


def _clone(self, memory_format, **kw):
    _no_out("clone", kw)
    return self.clone()


def _detach(self):
    return self.detach()


def _add(self, other, alpha, **kw):
    """sparse + sparse -> sparse (indices concatenated, uncoalesced); dense + sparse -> dense,
    as in PyTorch."""
    _no_out("add", kw)
    if isinstance(self, SparseTensor) and isinstance(other, SparseTensor):
        if self._shape != other._shape or self.sparse_dim() != other.sparse_dim():
            raise RuntimeError(
                f"add(): sparse tensors must have the same size and sparse_dim, "
                f"got {list(self._shape)} and {list(other._shape)}"
            )
        cat = REGISTRY["cat"].op.entry
        values = other._values_t if alpha == 1 else other._values_t * alpha
        return make_sparse(
            cat([self._indices_t, other._indices_t], 1),
            cat([self._values_t, values.to(self._dtype)]),
            self._shape,
            False,
        )
    if isinstance(self, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return REGISTRY["add"].op.entry(self, other.to_dense(), alpha=alpha)


def _mul(self, other, **kw):
    """A sparse tensor times a number (or a 0-d dense tensor) scales its values."""
    _no_out("mul", kw)
    if isinstance(other, SparseTensor):
        self, other = other, self
    if isinstance(other, SparseTensor) or (hasattr(other, "ndim") and other.ndim != 0):
        raise RuntimeError(
            "mul(): a sparse_coo tensor can only be multiplied by a number or a "
            "0-d tensor here; call .to_dense() first"
        )
    return self._with_values(self._values_t * other)


def _neg(self):
    return self._with_values(-self._values_t)


def _copy_(self, src, non_blocking):
    """Sparse <- sparse of the same size (``load_state_dict`` of a sparse buffer): this tensor
    takes copies of the source's indices and values, in its own dtype and device."""
    from ..autograd.grad_mode import is_grad_enabled

    if not (isinstance(self, SparseTensor) and isinstance(src, SparseTensor)):
        raise unsupported("copy_")
    if self._shape != src._shape:
        raise RuntimeError(
            f"copy_(): expected a sparse source of size {list(self._shape)}, got {list(src._shape)}"
        )
    if is_grad_enabled() and (self.requires_grad or src.requires_grad):
        raise RuntimeError(
            "copy_(): copying into a sparse tensor that autograd tracks is only "
            "supported under no_grad()"
        )
    values = src._values_t.detach().to(device=self._device, dtype=self._dtype, copy=True)
    if self._values_t.requires_grad:
        values.requires_grad_(True)
    self._indices_t = src._indices_t.to(self._device, copy=True)
    self._values_t, self._coalesced = values, src._coalesced
    self._bump_version()
    return self


_KERNELS: dict[str, Callable] = {
    "mm": _mm,
    "matmul": _matmul,
    "sum": _sum,
    "t": _t,
    "clone": _clone,
    "detach": _detach,
    "add": _add,
    "mul": _mul,
    "neg": _neg,
    "copy_": _copy_,
}


def _refuse(op, keyset, args, kwargs):
    raise unsupported(op.name)


def register_sparse_kernels() -> None:
    """Register the sparse kernels and the refusing fallback at the ``SparseCOO`` key."""
    for name, fn in _KERNELS.items():
        REGISTRY[name].op.register(DispatchKey.SparseCOO, fn)
    register_fallback(DispatchKey.SparseCOO, _refuse)
