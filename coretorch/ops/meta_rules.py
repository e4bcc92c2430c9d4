"""Shared pieces of meta rules: broadcasting, type promotion, devices, dims, size arguments.

Every error names the op, what was expected and what was given, with PyTorch's exception types.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..device import device as _device_cls, get_default_device
from ..tensor.impl import TensorImpl, wrap_dim

__all__ = [
    "broadcast_shapes",
    "broadcasts_to",
    "common_device",
    "wrap_dim",
    "reduced_shape",
    "promote",
    "float_result",
    "is_tensor",
    "dims_arg",
    "resolve_device",
    "refuse_complex",
]


def is_tensor(x) -> bool:
    """True when `x` is a tensor."""
    return isinstance(x, TensorImpl)


def broadcast_shapes(op: str, *shapes: tuple) -> tuple:
    """NumPy/PyTorch broadcasting of shapes; RuntimeError naming the op on mismatch."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:
            return a
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            cur = out[off + i]
            if d != cur:
                if cur == 1:
                    out[off + i] = d
                elif d != 1:
                    raise RuntimeError(
                        f"{op}(): The size of tensor a ({cur}) must match the size of tensor b "
                        f"({d}) at non-singleton dimension {off + i} (shapes "
                        f"{' and '.join(str(list(x)) for x in shapes)})"
                    )
    return tuple(out)


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to exactly `target` (as copy_, addmm's bias, index_put_'s
    values must)."""
    try:
        return broadcast_shapes("", shape, target) == target
    except RuntimeError:
        return False


def _tensors(args):
    for a in args:
        if isinstance(a, TensorImpl):
            yield a
        elif isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, TensorImpl):
                    yield t


def common_device(op: str, *args):
    """The device shared by the tensor arguments (zero-dim cpu tensors may join any device, as
    in PyTorch); the default device when there are none."""
    dev: Any = None
    first: Any = None
    for t in _tensors(args):
        d = t._device
        if dev is None:
            dev, first = d, t
        elif d is not dev:
            if d.type == "cpu" and not t._shape:
                continue
            if dev.type == "cpu" and not first._shape:
                dev, first = d, t
                continue
            raise RuntimeError(
                f"{op}(): expected all tensors to be on the same device, got {dev} and {d}"
            )
    return dev if dev is not None else get_default_device()


def promote(*args):
    """Result dtype of tensors and Python scalars (PyTorch rules, see `dtypes.result_type`)."""
    return _dt.result_type(*[a for a in args if a is not None])


def refuse_complex(op: str, *args) -> None:
    """RuntimeError for a complex tensor among `args`: ops that need an ordering or a real line
    (comparisons, max/min, clamp, sort, relu, floor, remainder...) refuse them, as in PyTorch."""
    for a in args:
        if isinstance(a, TensorImpl) and a._dtype.is_complex:
            raise RuntimeError(f"{op}(): not supported for complex tensors (got {a._dtype.name})")


def float_result(dt):
    """The dtype of a float-valued op (exp, sqrt, div...) on input dtype `dt` (complex stays
    complex)."""
    return dt if dt.is_floating_point or dt.is_complex else _dt.get_default_dtype()


def dims_arg(op: str, dim, ndim: int) -> tuple:
    """Normalize a reduction's `dim` (None, int, or sequence) to sorted unique non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (wrap_dim(op, dim, ndim),)
    dims = tuple(wrap_dim(op, d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}(): dim {list(dim)} appears multiple times in the list of dims")
    if not dims:
        return tuple(range(ndim))
    return tuple(sorted(dims))


def reduced_shape(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    """`shape` after reducing dimensions `dims` (kept as size 1 when `keepdim`)."""
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def resolve_device(device):
    """`device` as a device object, the default device when None."""
    return get_default_device() if device is None else _device_cls(device)


def need_tensor(op: str, x) -> None:
    """TypeError unless `x` is a tensor (only ops declared without a schema need this: a schema's
    entry point checks its Tensor arguments)."""
    if not isinstance(x, TensorImpl):
        raise TypeError(
            f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )
