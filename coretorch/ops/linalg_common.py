"""What the linear-algebra declarations share: the argument checks of their meta rules (with
PyTorch's messages), `LinAlgError`, and small matrix helpers written with ops."""

from __future__ import annotations

from .. import dtypes as dt
from ..device import get_device_type
from .declare import REGISTRY, return_types

__all__ = [
    "LinAlgError",
    "op",
    "check_float",
    "check_matrix",
    "check_square",
    "check_same_dtype",
    "named",
    "mT",
    "eye_like",
    "diag_embed",
    "holds_data",
    "batch_error",
    "LINALG_DTYPES",
    "check_uplo",
    "meta_square",
]

LINALG_DTYPES = (dt.float32, dt.float64)


class LinAlgError(RuntimeError):
    """A linear-algebra function met values it cannot handle (a singular matrix, one that is
    not positive-definite): ``coretorch.linalg.LinAlgError``, as ``torch.linalg.LinAlgError``."""


def op(name: str):
    """The entry point of declared op `name` (looked up when called)."""
    return REGISTRY[name].op.entry


def named(name: str, *values):
    """``coretorch.return_types.<name>(*values)``: the namedtuple op `name` returns."""
    return getattr(return_types, name)(*values)


def check_float(name: str, *tensors) -> None:
    """float32 or float64 only (PyTorch's linalg also takes complex, which coretorch lacks)."""
    for t in tensors:
        d = t._dtype
        if not d.is_floating_point:
            raise RuntimeError(
                f"{name}: Expected a floating point or complex tensor as input. Got {d.name}"
            )
        if d not in LINALG_DTYPES:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {d.name}")


def check_matrix(name: str, t, arg: str = "A") -> None:
    """Check that tensor argument `arg` of op `name` has at least 2 dimensions.

    Raises:
        RuntimeError: when it has fewer.
    """
    if len(t._shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def check_square(name: str, t, arg: str = "A") -> None:
    """Check that `t` is a (batch of) square matrices.

    Raises:
        RuntimeError: when it has fewer than 2 dimensions or is not square.
    """
    check_matrix(name, t, arg)
    m, n = t._shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{name}: {arg} must be batches of square matrices, but they are {m} by {n} matrices"
        )


def check_uplo(name: str, UPLO: str) -> None:
    """Check that `UPLO` is 'L' or 'U'.

    Raises:
        RuntimeError: otherwise.
    """
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def meta_square(name: str):
    """The meta rule of a function of one square float matrix with a result of its shape."""

    def meta(A):
        check_float(name, A)
        check_square(name, A)
        return (A._shape, A._dtype, A._device)

    meta.__name__ = "meta_" + name.replace(".", "_")
    return meta


def check_same_dtype(name: str, a, b, names: str = "A and B") -> None:
    """Check that `a` and `b` have the same dtype (`names` names them in the error).

    Raises:
        RuntimeError: when they differ.
    """
    if a._dtype is not b._dtype:
        first, second = names.split(" and ")
        raise RuntimeError(
            f"{name}: Expected {names} to have the same dtype, but found "
            f"{first} of type {a._dtype.name} and {second} of type "
            f"{b._dtype.name} instead."
        )


def mT(t):
    """The matrix transpose of a (batch of) matrices."""
    return t.transpose(-2, -1)


def eye_like(t, n: int | None = None):
    """The n x n identity (n: t's last dim) with t's dtype and device."""
    n = t._shape[-1] if n is None else n
    return op("eye")(n, dtype=t._dtype, device=t._device)


def diag_embed(v):
    """Square matrices with `v`'s last dim on their diagonal."""
    return v.unsqueeze(-1) * eye_like(v)


def holds_data(t) -> bool:
    """Whether `t`'s device holds values: checks that read them (a singular matrix) happen only
    there; a shape-only device such as meta cannot make them."""
    return get_device_type(t._device).has_data


def batch_error(name: str, info, message) -> None:
    """Raise LinAlgError for the first matrix whose LAPACK `info` (an int tensor, one per matrix)
    is positive; `message(info_value)` says what went wrong. Shape-only devices skip it."""
    if not holds_data(info) or info.numel() == 0:
        return
    flat = info.reshape(-1)
    bad = flat.gt(0)
    if not bool(bad.any().item()):
        return
    i = int(bad.to(dt.int64).argmax().item())
    where = f"(Batch element {i}): " if len(info._shape) else ""
    raise LinAlgError(f"{name}: {where}{message(int(flat[i].item()))}")
