"""Attach operators to `Tensor` as methods, plus Python operators, indexing and conversions."""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..device import device as _device, get_device_type
from ..tensor.impl import TensorImpl
from ..tensor.legacy import tensor_new, tensor_type
from ..tensor.tensor import Tensor
from .declare import REGISTRY

_T = TensorImpl


def _op(name: str):
    return REGISTRY[name].op.entry


def _inplace(name: str):
    return REGISTRY[name].inplace_op.entry


def bind_methods() -> None:
    """Make every declared op with a method variant a Tensor method (``t.add(b)``, ``t.add_(b)``)."""
    for name, d in REGISTRY.items():
        if d.method and not name.startswith("_") and name not in Tensor.__dict__:
            setattr(Tensor, name, d.op.entry)
        if d.inplace_op is not None and d.method and name + "_" not in Tensor.__dict__:
            setattr(Tensor, name + "_", d.inplace_op.entry)
    for dunder, fn in _dunders().items():
        setattr(Tensor, dunder, fn)
    for name, fn in _extra_methods().items():
        setattr(Tensor, name, fn)


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

    def f(fn):
        # a plain function: an Operator as class attribute would build a bound method per call
        return lambda self, other: fn(self, other)

    d = {
        "__add__": f(add), "__radd__": f(add), "__iadd__": _inplace("add"),
        "__sub__": f(sub), "__rsub__": f(_op("rsub")), "__isub__": _inplace("sub"),
        "__mul__": f(mul), "__rmul__": f(mul), "__imul__": _inplace("mul"),
        "__truediv__": f(div), "__rtruediv__": rtruediv, "__itruediv__": _inplace("div"),
        "__floordiv__": fdiv, "__rfloordiv__": r(fdiv), "__ifloordiv__": _inplace("floor_divide"),
        "__mod__": rem, "__rmod__": r(rem), "__imod__": _inplace("remainder"),
        "__pow__": pow_, "__rpow__": r(pow_), "__ipow__": _inplace("pow"),
        "__matmul__": matmul, "__rmatmul__": r(matmul),
        "__eq__": f(eq), "__ne__": f(ne), "__lt__": f(lt), "__le__": f(le), "__gt__": f(gt),
        "__ge__": f(ge),
        "__and__": band, "__rand__": band, "__iand__": _inplace("bitwise_and"),
        "__or__": bor, "__ror__": bor, "__ior__": _inplace("bitwise_or"),
        "__xor__": bxor, "__rxor__": bxor, "__ixor__": _inplace("bitwise_xor"),
        "__lshift__": lsh, "__rshift__": rsh,
        "__neg__": neg, "__pos__": pos, "__abs__": abs_, "__invert__": invert,
        "__getitem__": getitem, "__setitem__": setitem,
    }
    return d


# ---- indexing ---------------------------------------------------------------------------------

def _is_sequence(i) -> bool:
    return (isinstance(i, (list, tuple, range)) or hasattr(i, "__len__") and
            hasattr(i, "__getitem__") and not isinstance(i, (str, bytes, _T)))


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
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                          "use x[tuple(seq)] instead of x[seq] (PyTorch will read it as "
                          "x[tensor(seq)])", UserWarning, stacklevel=3)
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
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                                 f"byte Variables are valid indices (got {type(i).__name__})") \
                    from None
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
    caller in errors); `non_blocking` and `memory_format` are accepted and ignored."""
    kwargs = dict(kwargs)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"{who}() got unexpected keyword arguments {sorted(kwargs)}")
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
            raise TypeError(f"to() received an invalid combination of arguments: got "
                            f"{type(a).__name__}; expected a dtype, device, string or tensor")
    return dev, dtype, copy


def to(self, *args, **kwargs):
    """Convert dtype and/or device: ``t.to("meta")``, ``t.to(coretorch.float64)``, ``t.to(other)``.
    Returns self when nothing changes (unless ``copy=True``)."""
    dev, dtype, copy = _parse_to("to", args, kwargs)
    dev = None if dev is None else _device(dev)
    if dev is not None and dev.index is None and self._device.type == dev.type:
        dev = self._device
    same = (dev is None or dev == self._device) and (dtype is None or dtype is self._dtype)
    if same and not copy:
        return self
    return _op("_to_copy")(self, dtype=dtype, device=dev)


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
        raise TypeError(f"can't convert {self._device.type} device type tensor to numpy. Use "
                        f"Tensor.cpu() to copy the tensor to host memory first.")
    if self.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    return _read(self)


def __array__(self, dtype=None, copy=None):
    arr = numpy(self.detach(), force=self._device.type != "cpu")
    return arr if dtype is None else arr.astype(dtype, copy=False)


def _extra_methods() -> dict:
    def cast(d):
        def f(self, memory_format=None):
            return to(self, d)
        f.__name__ = d.name
        return f

    def cpu(self, memory_format=None):
        return to(self, "cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return to(self, _device("cuda" if device is None else
                                (f"cuda:{device}" if isinstance(device, int) else device)))

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _op("empty")(*size, dtype=dtype or self._dtype,
                                    device=device or self._device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _op("zeros")(*size, dtype=dtype or self._dtype,
                                    device=device or self._device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _op("ones")(*size, dtype=dtype or self._dtype,
                                   device=device or self._device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return _op("full")(size, fill_value, dtype=dtype or self._dtype,
                                   device=device or self._device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        from .factories_public import tensor
        return tensor(data, dtype=dtype or self._dtype, device=device or self._device,
                      requires_grad=requires_grad)

    def T(self):
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    def mT(self):
        return self.transpose(-2, -1)

    m = {"to": to, "item": item, "tolist": tolist, "numpy": numpy, "__array__": __array__,
         "cpu": cpu, "cuda": cuda, "type": tensor_type, "new": tensor_new,
         "new_empty": new_empty, "new_zeros": new_zeros, "new_ones": new_ones,
         "new_full": new_full, "new_tensor": new_tensor,
         "T": property(T), "mT": property(mT)}
    for name, d in (("float", dt.float32), ("double", dt.float64), ("half", dt.float16),
                    ("int", dt.int32), ("long", dt.int64), ("short", dt.int16),
                    ("bool", dt.bool), ("byte", dt.uint8), ("char", dt.int8)):
        m[name] = cast(d)
    return m
