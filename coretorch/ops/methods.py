"""Op methods and Python operators of `Tensor` (the ops' entry points, set on the class when the
ops are declared), and what its hand-written indexing and conversion methods run (those are
defined, with their documentation, in `coretorch.tensor.tensor`)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as dt, memory_formats as _mf
from ..device import device as _device, get_device_type
from ..tensor.impl import TensorImpl
from ..tensor.tensor import Tensor
from .declare import REGISTRY

_T = TensorImpl


def _op(name: str):
    return REGISTRY[name].op.entry


def _inplace(name: str):
    op = REGISTRY[name].inplace_op
    assert op is not None, f"{name} is declared with an in-place form"
    return op.entry


def bind_methods() -> None:
    """Make each declared op with a method variant a Tensor method (``t.add(b)``, ``t.add_(b)``)."""
    for name, d in REGISTRY.items():
        if d.method and not name.startswith("_") and name not in Tensor.__dict__:
            setattr(Tensor, name, d.op.entry)
        if d.inplace_op is not None and d.method and name + "_" not in Tensor.__dict__:
            setattr(Tensor, name + "_", d.inplace_op.entry)
    for dunder, fn in _dunders().items():
        setattr(Tensor, dunder, fn)


def _dunders() -> dict:
    add, sub, mul, div = _op("add"), _op("sub"), _op("mul"), _op("div")
    pow_, rem, fdiv = _op("pow"), _op("remainder"), _op("floor_divide")
    eq, ne, lt, le, gt, ge = (_op(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
    band, bor, bxor = _op("bitwise_and"), _op("bitwise_or"), _op("bitwise_xor")
    lsh, rsh = _op("bitwise_left_shift"), _op("bitwise_right_shift")
    neg, pos, abs_ = _op("neg"), _op("positive"), _op("abs")
    bnot, lnot = _op("bitwise_not"), _op("logical_not")

    def matmul(a, b):
        return _op("matmul")(a, b)

    def invert(a):
        return lnot(a) if a._dtype is dt.bool else bnot(a)

    def r(fn):
        return lambda self, other: fn(other, self)

    def rtruediv(self, other):  # ``2 / t``, as PyTorch: reciprocal(t) * 2
        return self.reciprocal() * other

    # the entry points themselves (plain functions, so ``a + b`` calls add's entry directly)
    d = {
        "__add__": add,
        "__radd__": add,
        "__iadd__": _inplace("add"),
        "__sub__": sub,
        "__rsub__": _op("rsub"),
        "__isub__": _inplace("sub"),
        "__mul__": mul,
        "__rmul__": mul,
        "__imul__": _inplace("mul"),
        "__truediv__": div,
        "__rtruediv__": rtruediv,
        "__itruediv__": _inplace("div"),
        "__floordiv__": fdiv,
        "__rfloordiv__": r(fdiv),
        "__ifloordiv__": _inplace("floor_divide"),
        "__mod__": rem,
        "__rmod__": r(rem),
        "__imod__": _inplace("remainder"),
        "__pow__": pow_,
        "__rpow__": r(pow_),
        "__ipow__": _inplace("pow"),
        "__matmul__": matmul,
        "__rmatmul__": r(matmul),
        "__eq__": eq,
        "__ne__": ne,
        "__lt__": lt,
        "__le__": le,
        "__gt__": gt,
        "__ge__": ge,
        "__and__": band,
        "__rand__": band,
        "__iand__": _inplace("bitwise_and"),
        "__or__": bor,
        "__ror__": bor,
        "__ior__": _inplace("bitwise_or"),
        "__xor__": bxor,
        "__rxor__": bxor,
        "__ixor__": _inplace("bitwise_xor"),
        "__lshift__": lsh,
        "__rshift__": rsh,
        "__neg__": neg,
        "__pos__": pos,
        "__abs__": abs_,
        "__invert__": invert,
    }
    return d


# ---- indexing ---------------------------------------------------------------------------------


def _is_sequence(i) -> bool:
    return (
        isinstance(i, (list, tuple, range))
        or hasattr(i, "__len__")
        and hasattr(i, "__getitem__")
        and not isinstance(i, (str, bytes, _T))
    )


def _is_advanced(i) -> bool:
    # any sequence inside an index (list, range, deque, a nested tuple...) indexes, as in PyTorch
    return isinstance(i, (_T, bool)) or _is_sequence(i)


def _as_index_tensor(i, like: TensorImpl):
    from .factories_public import as_index_tensor

    return as_index_tensor(i, like._device)


def _consumed(i) -> int:
    if i is None or i is Ellipsis:
        return 0
    if isinstance(i, _T) and i._dtype is dt.bool:
        return max(len(i._shape), 0)
    return 1


def getitem(self, idx):
    """Basic indexing (ints, slices with steps, None, ...) gives views; tensors, lists and bool
    masks are advanced indexing (a copy), as in PyTorch."""
    if idx.__class__ is int:
        return self.select(0, idx)
    view, adv = _basic_index(self, idx)
    if adv is None:
        return view
    return _op("index")(view, adv)


def _sequence_as_tuple(idx) -> bool:
    """PyTorch's (and old NumPy's) rule for a non-tuple sequence index: shorter than 32 and
    holding a slice, None, ``...``, a sequence or a tensor of dim > 0, it means ``x[tuple(idx)]``
    (deprecated: a warning says so)."""
    if isinstance(idx, np.ndarray) or not _is_sequence(idx) or len(idx) >= 32:
        return False
    for i in idx:
        if isinstance(i, _T):
            if i._shape:
                return True
        elif i is None or i is Ellipsis or isinstance(i, slice) or _is_sequence(i):
            return True
    return False


def _basic_index(self, idx):
    """Apply the view part of an index; returns (view, advanced indices per dim or None)."""
    if not isinstance(idx, tuple):
        if _sequence_as_tuple(idx):
            import warnings

            warnings.warn(
                "Using a non-tuple sequence for multidimensional indexing is deprecated; "
                "use x[tuple(seq)] instead of x[seq] (PyTorch will read it as "
                "x[tensor(seq)])",
                UserWarning,
                stacklevel=3,
            )
            idx = tuple(idx)
        else:
            idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(i) for i in idx)
    ndim = len(self._shape)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim = self, 0
    adv: list = []
    has_adv = False
    for i in idx:
        if i is None:
            result = result.unsqueeze(dim)
            adv.append(None)
            dim += 1
        elif i is Ellipsis:
            fill = ndim - used
            adv.extend([None] * fill)
            dim += fill
        elif isinstance(i, slice):  # slice()'s schema converts and checks the bounds
            result = result.slice(dim, i.start, i.stop, 1 if i.step is None else i.step)
            adv.append(None)
            dim += 1
        elif _is_advanced(i):
            t = _as_index_tensor(i, result)
            adv.append(t)
            has_adv = True
            # a k-dim bool mask covers k dims (one entry, as aten::index takes it)
            dim += _consumed(t) if t._dtype is dt.bool else 1
        else:
            try:
                k = int(i.__index__()) if not isinstance(i, int) else i
            except (AttributeError, TypeError):
                raise IndexError(
                    f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                    f"byte Variables are valid indices (got {type(i).__name__})"
                ) from None
            result = result.select(dim, k)
    if not has_adv:
        return result, None
    while adv and adv[-1] is None:
        adv.pop()
    return result, adv


def setitem(self, idx, value):
    """``t[idx] = value``: a copy into the indexed view, or `index_put_` for advanced indices."""
    view, adv = _basic_index(self, idx)
    if adv is None:
        if isinstance(value, _T):
            view.copy_(value)
        else:
            view.fill_(value)
        return
    if not isinstance(value, _T):
        from .factories_public import tensor

        value = tensor(value, dtype=self._dtype, device=self._device)
    _inplace("index_put")(view, adv, value)


# ---- conversions and data access ---------------------------------------------------------------


def _parse_to(who: str, args, kwargs) -> tuple:
    """(device, dtype, copy) from the arguments of ``Tensor.to``/``Module.to`` (`who` names the
    caller in errors); `non_blocking` is accepted and ignored, `memory_format` is read by
    `to`."""
    kwargs = dict(kwargs)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"{who}() got unexpected keyword arguments {sorted(kwargs)}")
    flags = [a for a in args if isinstance(a, bool)]  # to(dtype, non_blocking, copy)
    args = [a for a in args if not isinstance(a, bool)]
    if len(flags) > 1:
        copy = flags[1]
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, _T):
            dev, dtype = a._device, a._dtype
        elif isinstance(a, (str, _device)):
            dev = _device(a)
        elif a is None:
            continue
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments: got "
                f"{type(a).__name__}; expected a dtype, device, string or tensor"
            )
    return dev, dtype, copy


def to(self, *args, **kwargs):
    """Convert dtype, device and/or memory format: ``t.to("meta")``, ``t.to(coretorch.float64)``,
    ``t.to(other)``, ``t.to(memory_format=coretorch.channels_last)``. Returns self when nothing
    changes (unless ``copy=True``)."""
    kwargs = dict(kwargs)
    fmt = kwargs.pop("memory_format", None)
    dev, dtype, copy = _parse_to("to", args, kwargs)
    dev = None if dev is None else _device(dev)
    if dev is not None and dev.index is None and self._device.type == dev.type:
        dev = self._device
    same = (dev is None or dev == self._device) and (dtype is None or dtype is self._dtype)
    if same and not copy and (fmt is None or _keeps_format(self, fmt)):
        return self
    return _op("_to_copy")(self, dtype=dtype, device=dev, memory_format=fmt)


def _keeps_format(self, fmt) -> bool:
    fmt = _mf.memory_format_arg("to", fmt)
    return fmt is _mf.preserve_format or self.is_contiguous(memory_format=fmt)


def _read(self):
    return get_device_type(self._device).read_numpy(self)


def item(self):
    """The value of a one-element tensor as a Python number."""
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    return _read(self).reshape(()).item()


def tolist(self):
    """The values as (nested) Python lists."""
    return _read(self).tolist()


def numpy(self, *, force: bool = False):
    """A numpy array sharing memory with this cpu tensor (``force=True`` copies from any device)."""
    if force:
        return np.array(_read(self.detach()))
    if self._device.type != "cpu":
        raise TypeError(
            f"can't convert {self._device.type} device type tensor to numpy. Use "
            f"Tensor.cpu() to copy the tensor to host memory first."
        )
    if self.requires_grad:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    return _read(self)


def array(self, dtype=None, copy=None):
    """``numpy.asarray(t)``: the values (a copy from a non-cpu device), cast to `dtype`."""
    arr = numpy(self.detach(), force=self._device.type != "cpu")
    return arr if dtype is None else arr.astype(dtype, copy=False)


def cuda_device(device) -> _device:
    """The device ``Tensor.cuda(device)`` means: the current cuda device, an index, a name."""
    return _device(
        "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
    )


def new_factory(self, factory: str, args: tuple, dtype, device, requires_grad: bool):
    """``t.new_zeros(...)`` and friends: factory `factory` with t's dtype and device by
    default."""
    return _op(factory)(
        *args,
        dtype=dtype or self._dtype,
        device=device or self._device,
        requires_grad=requires_grad,
    )
