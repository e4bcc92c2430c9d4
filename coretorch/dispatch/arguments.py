"""Argument conversion for op entry points: the slow path of binding a call to its schema.

A generated entry point (`coretorch.dispatch.entry`) checks each argument's class inline and
calls one of these only when the value is not already in normal form (a numpy integer for an
``int``, a 0-d tensor for a ``Scalar``, a negative ``Dim``, a single int for an ``int[2]``...).
Each returns the normalized value or raises PyTorch's TypeError naming the op, the argument, its
position and what was given.
"""

from __future__ import annotations

import operator as _operator

import numpy as np

from .. import dtypes as _dt
from ..device import device as _device_cls
from ..tensor.impl import TensorImpl, wrap_dim
from ..tensor.tensor import Tensor

__all__ = [
    "type_error",
    "to_tensor",
    "to_tensor_or_number",
    "to_number",
    "to_int",
    "to_float",
    "to_bool",
    "to_str",
    "to_int_list",
    "to_float_list",
    "to_dim",
    "to_dims",
    "to_dtype",
    "to_device",
    "to_tensor_list",
    "varargs_list",
    "NUMBER_CLASSES",
    "dims_of",
]

NUMBER_CLASSES = frozenset({int, float, bool})
_PY_DTYPES = {float: "float64", int: "int64", bool: "bool"}


def _where(pos: int | None) -> str:
    return "" if pos is None else f" (position {pos})"


def type_error(op: str, name: str, pos: int | None, expected: str, value) -> TypeError:
    """PyTorch's message: ``add(): argument 'other' (position 2) must be Tensor, not str``."""
    return TypeError(
        f"{op}(): argument '{name}'{_where(pos)} must be {expected}, not {type(value).__name__}"
    )


def _item(t: Tensor, op: str, name: str, pos, expected: str):
    if len(t._shape) != 0 and t.numel() != 1:
        raise type_error(op, name, pos, expected, t)
    return t.item()


def to_tensor(op: str, name: str, pos, value):
    """A required Tensor argument (anything else is a TypeError)."""
    if isinstance(value, TensorImpl):
        return value
    raise type_error(op, name, pos, "Tensor", value)


def to_number(op: str, name: str, pos, value):
    """A ``Scalar``: a Python bool/int/float/complex (numpy scalars and 0-d tensors are read)."""
    if value.__class__ in NUMBER_CLASSES:
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    if isinstance(value, Tensor):
        return _item(value, op, name, pos, "Number")
    raise type_error(op, name, pos, "Number", value)


def to_tensor_or_number(op: str, name: str, pos, value):
    """A ``Tensor|Scalar`` argument that is not a tensor: a Python number."""
    if isinstance(value, TensorImpl):
        return value
    try:
        return to_number(op, name, pos, value)
    except TypeError:
        raise type_error(op, name, pos, "Tensor or Number", value) from None


def to_int(op: str, name: str, pos, value) -> int:
    """An ``int``: Python ints, numpy integers and one-element integer tensors; no bools or
    floats (PyTorch refuses them)."""
    if value.__class__ is int:
        return value
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (float, np.floating)):
        raise type_error(op, name, pos, "int", value)
    if isinstance(value, Tensor):
        if value._dtype.is_floating_point or value._dtype is _dt.bool:
            raise type_error(op, name, pos, "int", value)
        return int(_item(value, op, name, pos, "int"))
    try:
        return _operator.index(value)
    except TypeError:
        raise type_error(op, name, pos, "int", value) from None


def to_float(op: str, name: str, pos, value) -> float:
    """A ``float``: any real number (not a bool), 0-d tensors read."""
    if value.__class__ is float:
        return value
    if isinstance(value, (bool, np.bool_)):
        raise type_error(op, name, pos, "float", value)
    if isinstance(value, Tensor):
        return float(_item(value, op, name, pos, "float"))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise type_error(op, name, pos, "float", value)


def to_bool(op: str, name: str, pos, value) -> bool:
    """`value` as a bool (Python or numpy bool) for argument `name` at position `pos` of `op`.

    Raises:
        TypeError: for any other type, naming the op and argument.
    """
    if value.__class__ is bool:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise type_error(op, name, pos, "bool", value)


def to_str(op: str, name: str, pos, value) -> str:
    """`value` for the str argument `name` at position `pos` of `op`.

    Raises:
        TypeError: when it is not a str, naming the op and argument.
    """
    if isinstance(value, str):
        return value
    raise type_error(op, name, pos, "str", value)


def _sequence(op: str, name: str, pos, value, expected: str) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if isinstance(value, Tensor) and len(value._shape) == 1:
        return tuple(value.tolist())
    if isinstance(value, (range, np.ndarray)) or (
        hasattr(value, "__iter__") and not isinstance(value, (str, bytes))
    ):
        return tuple(value)
    raise type_error(op, name, pos, expected, value)


def to_int_list(op: str, name: str, pos, value, size: int | None = None) -> tuple:
    """An ``int[]`` as a tuple of ints; ``int[N]`` also takes one int (or a 1-element list)
    and repeats it N times. A sequence of another length is returned as given: the op's meta
    rule refuses it in the op's own words (as PyTorch's kernels do: convolution and pooling
    word it differently), or reads an empty one as "omitted" (pooling's ``stride=[]``)."""
    cls = value.__class__
    if (
        cls is tuple
        and (size is None or len(value) == size)
        and all(v.__class__ is int for v in value)
    ):
        return value  # already normal (an op calling another passes its record on)
    if cls is int and size is not None:
        return (value,) * size
    expected = "tuple of ints" if size is None else f"tuple of {size} ints"
    if size is not None and not isinstance(value, (tuple, list, TensorImpl, range)):
        try:
            return (to_int(op, name, pos, value),) * size
        except TypeError:
            raise type_error(op, name, pos, expected, value) from None
    items = _sequence(op, name, pos, value, expected)
    try:
        out = tuple(v if v.__class__ is int else to_int(op, name, pos, v) for v in items)
    except TypeError:
        bad = next(v for v in items if not _int_like(v))
        raise TypeError(
            f"{op}(): argument '{name}'{_where(pos)} must be {expected}, but found "
            f"element of type {type(bad).__name__}"
        ) from None
    if size is not None and len(out) == 1:
        return out * size
    return out


def _int_like(v) -> bool:
    try:
        to_int("", "", None, v)
        return True
    except TypeError:
        return False


def varargs_list(op: str, name: str, varargs: tuple, keyword, default):
    """The int list of ``f(2, 3)``, ``f((2, 3))`` or ``f(name=(2, 3))`` (unnormalized)."""
    if keyword is not None:
        if varargs:
            raise TypeError(f"{op}(): got '{name}' both as positional and keyword arguments")
        return keyword
    if not varargs:
        return default
    if (
        len(varargs) == 1
        and not isinstance(varargs[0], (int, np.integer))
        and not (isinstance(varargs[0], TensorImpl) and len(varargs[0]._shape) == 0)
    ):
        return varargs[0]
    return varargs


def to_float_list(op: str, name: str, pos, value) -> tuple:
    """A ``float[]``/``Scalar[]`` as a tuple of Python numbers."""
    items = _sequence(op, name, pos, value, "tuple of floats")
    return tuple(to_number(op, name, pos, v) for v in items)


def to_dim(op: str, name: str, pos, value, ndim: int) -> int:
    """A ``Dim``: an int dimension of a tensor with `ndim` dims, wrapped into [0, ndim)."""
    return wrap_dim(op, to_int(op, name, pos, value), ndim)


def dims_of(op: str, value, ndim: int) -> tuple:
    """Wrapped dims of ``int`` or a sequence of ints, no repeats (in the order given)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (wrap_dim(op, value, ndim),)
    dims = tuple(wrap_dim(op, d, ndim) for d in value)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}(): dim {list(value)} appears multiple times in the list of dims")
    return dims


def to_dims(op: str, name: str, pos, value, ndim: int) -> tuple:
    """A ``Dim[]``: one dim or a sequence of dims, as a tuple of wrapped dims (no repeats)."""
    if isinstance(value, (bool, np.bool_)):
        raise type_error(op, name, pos, "tuple of ints", value)
    if not isinstance(value, (tuple, list)):
        try:
            return (to_dim(op, name, pos, value, ndim),)
        except TypeError:
            raise type_error(op, name, pos, "tuple of ints", value) from None
    return dims_of(op, to_int_list(op, name, pos, value), ndim)


def to_dtype(op: str, name: str, pos, value):
    """A ``ScalarType``: a coretorch dtype (Python's float/int/bool types name the defaults)."""
    if isinstance(value, _dt.dtype):
        return value
    if value in _PY_DTYPES:
        return _dt.get_default_dtype() if value is float else getattr(_dt, _PY_DTYPES[value])
    if value is complex:
        return _dt.get_default_complex_dtype()
    raise type_error(op, name, pos, "coretorch.dtype", value)


def to_device(op: str, name: str, pos, value):
    """A ``Device``: a device object, a string such as ``"cpu"``/``"cuda:0"``, or an index."""
    if isinstance(value, _device_cls):
        return value
    if isinstance(value, str):
        return _device_cls(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _device_cls("cuda", value)  # as PyTorch: an index names a cuda device
    raise type_error(op, name, pos, "coretorch.device", value)


def to_tensor_list(op: str, name: str, pos, value, allow_none: bool) -> tuple[tuple, int]:
    """A ``Tensor[]`` (``Tensor?[]`` with `allow_none`) as a tuple, and its OR-ed key bits."""
    if isinstance(value, TensorImpl) or not isinstance(value, (tuple, list)):
        raise type_error(op, name, pos, "tuple of Tensors", value)
    bits = 0
    for t in value:
        if isinstance(t, TensorImpl):
            bits |= t._keys
        elif not (allow_none and t is None):
            raise TypeError(
                f"{op}(): argument '{name}'{_where(pos)} must be tuple of Tensors, "
                f"but found element of type {type(t).__name__}"
            )
    return tuple(value), bits
