"""Vector and matrix norms: linalg.vector_norm (the ``norm`` reduction, whose derivative is
PyTorch's norm_backward), linalg.matrix_norm ('fro', 'nuc', +-1, +-2, +-inf) and linalg.norm,
which picks one of them as PyTorch does."""

from __future__ import annotations

import math
from typing import Any

from .declare import declare
from .linalg_common import check_float, check_matrix, op
from .meta_rules import reduced_shape
from .reductions import flops_reduction

__all__ = ["matrix_norm_impl"]

_L: dict[str, Any] = dict(family="linalg", method=False, function=False, flops=flops_reduction)
_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _dims(name: str, x, dim) -> tuple:
    nd = max(len(x._shape), 1)
    if dim is None:
        return tuple(range(len(x._shape)))
    dims = tuple(d % nd for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{name}: dims must be different. Got {list(dim)}")
    return dims


def _check_dtype_arg(name: str, x, dtype) -> None:
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name}: dtype should be floating point or complex. Got {dtype.name}")


def _meta_vector_norm(self, ord, dim, keepdim, dtype):
    name = "linalg.vector_norm"
    check_float(name, self)
    _check_dtype_arg(name, self, dtype)
    if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float)):
        raise TypeError(f"{name}(): argument 'ord' must be Number, not {type(ord).__name__}")
    dims = _dims(name, self, dim)
    if ord < 0 or math.isinf(ord):
        empty = [d for d in dims if self._shape[d] == 0] if self._shape else []
        if empty or (dim is None and self.numel() == 0):
            raise RuntimeError(
                f"{name} cannot compute the {ord} norm on an empty tensor "
                f"because the operation does not have an identity"
            )
    return (reduced_shape(self._shape, dims, keepdim), dtype or self._dtype, self._device)


def _vector_norm(self, ord, dim, keepdim, dtype):
    """The ord-norm of `self` seen as a vector over `dim` (all dims when None)."""
    return op("norm")(self, float(ord), dim, keepdim, dtype=dtype)


def _meta_matrix_norm(A, ord, dim, keepdim, dtype):
    name = "linalg.matrix_norm"
    check_float(name, A)
    _check_dtype_arg(name, A, dtype)
    check_matrix(name, A)
    if ord not in _MATRIX_ORDS:
        if isinstance(ord, str):
            raise RuntimeError(f"{name}: Order {ord} not supported.")
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {list(dim)}")
    dims = _dims(name, A, dim)
    # an empty matrix has norm 0, except where the last step is a minimum over nothing
    if ord == -2 and min(A._shape[d] for d in dims) == 0:
        raise RuntimeError(
            f"{name}: the -2 norm of an empty matrix (dims {list(dim)}) is a "
            f"minimum over no singular values, which has no identity"
        )
    if ord in (-1, -math.inf) and A._shape[dims[1] if ord == -1 else dims[0]] == 0:
        raise RuntimeError(
            f"{name}: the {ord} norm takes a minimum over dim "
            f"{dims[1] if ord == -1 else dims[0]}, which is empty (no identity)"
        )
    return (reduced_shape(A._shape, dims, keepdim), dtype or A._dtype, A._device)


def matrix_norm_impl(A, ord, dim, keepdim, dtype):
    """The ord matrix norm over the two dims `dim`."""
    x = A if dtype is None or dtype is A._dtype else A.to(dtype)
    d0, d1 = (d % len(x._shape) for d in dim)
    if ord == "fro":
        return op("norm")(x, 2.0, (d0, d1), keepdim)
    empty = x.new_zeros(reduced_shape(x._shape, (d0, d1), keepdim))
    if ord in ("nuc", 2, -2):
        if x._shape[d0] == 0 or x._shape[d1] == 0:
            return empty
        S = op("linalg_svdvals")(x.movedim((d0, d1), (-2, -1)))
        r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if math.isinf(ord):  # the largest row sum: sum along the columns first
        d0, d1 = d1, d0
    r = x.abs().sum(d0, keepdim=True)
    if r._shape[d1] == 0:  # a maximum over nothing: 0 (minima were refused by the meta rule)
        return empty
    r = r.amax(d1, keepdim=True) if ord > 0 else r.amin(d1, keepdim=True)
    return r if keepdim else r.reshape(reduced_shape(x._shape, (d0, d1), False))


def _matrix_norm(A, ord, dim, keepdim, dtype):
    """The matrix norm of `A` over `dim`: 'fro', 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column sum of |A|), inf / -inf
    (max / min row sum)."""
    return matrix_norm_impl(A, ord, dim, keepdim, dtype)


def _meta_norm(A, ord, dim, keepdim, dtype):
    name = "linalg.norm"
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(
            f"{name}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
        )
    if dim is None and ord is not None and len(A._shape) not in (1, 2):
        raise RuntimeError(
            f"{name}: If dim is not specified but ord is, the input must be 1D or "
            f"2D. Got {len(A._shape)}D."
        )
    vector, ord, dim = _norm_kind(A, ord, dim)
    if vector:
        return _meta_vector_norm(A, ord, dim, keepdim, dtype)
    return _meta_matrix_norm(A, ord, dim, keepdim, dtype)


def _norm_kind(A, ord, dim):
    """(vector norm?, ord, dim) for linalg.norm's arguments, as PyTorch decides."""
    if (
        isinstance(ord, str)
        or (dim is not None and len(dim) == 2)
        or (dim is None and ord is not None and len(A._shape) == 2)
    ):
        return False, "fro" if ord is None else ord, (-2, -1) if dim is None else dim
    return True, 2 if ord is None else ord, dim


def _norm(A, ord, dim, keepdim, dtype):
    """A vector norm (dim of length 1, a 1-D input, or no ord and no dim: all elements) or a
    matrix norm (a str ord, dim of length 2, a 2-D input with an ord)."""
    vector, ord, dim = _norm_kind(A, ord, dim)
    if vector:
        return _vector_norm(A, ord, dim, keepdim, dtype)
    return matrix_norm_impl(A, ord, dim, keepdim, dtype)


def _declare_all() -> None:
    declare(
        "linalg_vector_norm(Tensor self, Scalar ord=2, Dim[]? dim=None, bool keepdim=False, "
        "*, ScalarType? dtype=None) -> Tensor",
        _meta_vector_norm,
        impl=_vector_norm,
        **_L,
    )
    declare(
        "linalg_matrix_norm(Tensor A, Any ord='fro', Dim[] dim=[-2, -1], "
        "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        _meta_matrix_norm,
        impl=_matrix_norm,
        **_L,
    )
    declare(
        "linalg_norm(Tensor A, Any ord=None, Dim[]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        _meta_norm,
        impl=_norm,
        **_L,
    )


_declare_all()
