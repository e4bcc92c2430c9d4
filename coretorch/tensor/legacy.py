"""PyTorch's legacy tensor constructors and type names: ``Tensor(2, 3)``, ``Tensor([1, 2])``,
``FloatTensor``/``LongTensor``/..., ``x.new(...)`` and ``x.type(...)``.

A legacy constructor takes sizes (``FloatTensor(2, 3)``, ``FloatTensor(Size([2, 3]))``: an
uninitialized tensor), data (``LongTensor([1, 2])``, a numpy array), a tensor (an alias of it) or
nothing (an empty tensor of size 0). ``Tensor`` itself makes tensors of the default dtype.
Type names are PyTorch's (``x.type()`` is ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``), so
programs that compare them keep working; ``'coretorch.FloatTensor'`` is accepted as well.
"""

from __future__ import annotations

from .. import dtypes as dt

__all__ = ["LEGACY_TYPE_NAMES", "legacy_types", "legacy_new", "tensor_type", "LegacyTensorType"]

# dtype name -> the legacy class name
LEGACY_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def _is_size(args: tuple) -> bool:
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def legacy_new(who: str, dtype, device, args: tuple, kwargs: dict, *, alias_any_dtype=False):
    """A tensor from legacy-constructor arguments (see the module doc). `who` names the caller
    in errors; `device` is the device type the constructor is for."""
    import coretorch

    from .size import Size
    from .tensor import Tensor

    kwargs = dict(kwargs)
    dev = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(
            f"{who}() got unexpected keyword arguments {sorted(kwargs)} (a legacy "
            f"constructor takes sizes or data, and device=)"
        )
    if dev is not None:
        given = coretorch.device(dev)
        if given.type != coretorch.device(device).type:
            raise RuntimeError(
                f"legacy constructor expects device type: "
                f"{coretorch.device(device).type} but device type: {given.type} "
                f"was passed"
            )
        device = given
    if len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        if src._dtype is not dtype and not alias_any_dtype:
            raise TypeError(f"{who}(): expected {dtype} (got {src._dtype})")
        return src.detach()
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if _is_size(args):
        return coretorch.empty(tuple(args) if args else (0,), dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (str, bytes)):
            raise TypeError(f"{who}(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (float, bool, complex)) or not hasattr(data, "__len__"):
            raise TypeError(f"{who}(): data must be a sequence (got {type(data).__name__})")
        return coretorch.tensor(data, dtype=dtype, device=device)
    bad = next(a for a in args if not (isinstance(a, int) and not isinstance(a, bool)))
    raise TypeError(
        f"{who}(): expected sizes (ints) or one sequence of data, got "
        f"{type(bad).__name__} among {len(args)} arguments"
    )


class LegacyTensorType(type):
    """The type of ``coretorch.FloatTensor`` and its siblings: calling one constructs a tensor of
    its dtype on its device type; ``isinstance(t, FloatTensor)`` checks both."""

    dtype: dt.dtype
    device_type: str

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.__name__, cls.dtype, cls.device_type, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        from .tensor import Tensor

        return (
            isinstance(obj, Tensor)
            and obj._dtype is cls.dtype
            and obj._device.type == cls.device_type
        )

    @property
    def is_cuda(cls) -> bool:
        """True for the cuda tensor types (coretorch.cuda.FloatTensor, ...)."""
        return cls.device_type == "cuda"

    @property
    def is_sparse(cls) -> bool:
        """Always False: the legacy types are dense."""
        return False

    def __repr__(cls) -> str:
        return f"<class '{_type_name(cls.dtype, cls.device_type)}'>"


def legacy_types(device_type: str = "cpu") -> dict:
    """``{"FloatTensor": <type>, ...}`` for the dtypes coretorch has, on `device_type`."""
    module = "coretorch" if device_type == "cpu" else f"coretorch.{device_type}"
    out = {}
    for dname, cname in LEGACY_TYPE_NAMES.items():
        d = getattr(dt, dname, None)
        if isinstance(d, dt.dtype):
            out[cname] = LegacyTensorType(
                cname,
                (),
                {
                    "dtype": d,
                    "device_type": device_type,
                    "__module__": module,
                    "__doc__": f"Legacy constructor of {d} tensors on {device_type}: "
                    f"``{cname}(2, 3)`` (uninitialized), ``{cname}([1, 2])`` (data).",
                },
            )
    return out


def _type_name(dtype, device_type: str) -> str:
    cname = LEGACY_TYPE_NAMES.get(dtype.name)
    if cname is None:
        raise RuntimeError(f"type(): {dtype} has no legacy tensor type name")
    return f"torch.{cname}" if device_type == "cpu" else f"torch.{device_type}.{cname}"


def _parse_type_name(name: str) -> tuple:
    """(dtype, device type) of ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'`` (or the same
    with ``coretorch.``)."""
    parts = name.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "coretorch"):
        by_class = {c: d for d, c in LEGACY_TYPE_NAMES.items()}
        dname = by_class.get(parts[-1])
        d = getattr(dt, dname, None) if dname else None
        if isinstance(d, dt.dtype):
            return d, "cpu" if len(parts) == 2 else parts[1]
    raise ValueError(f"invalid type: '{name}'")


def tensor_type(self, dtype=None, non_blocking: bool = False, **kwargs):
    """``x.type()``: the type name (``'torch.FloatTensor'``); ``x.type(t)``: `x` converted to `t`,
    a dtype, a legacy type or its name (`x` itself when it already has that type)."""
    if dtype is None:
        return _type_name(self._dtype, self._device.type)
    if isinstance(dtype, dt.dtype):
        target, dev = dtype, self._device.type
    elif isinstance(dtype, LegacyTensorType):
        target, dev = dtype.dtype, dtype.device_type
    elif isinstance(dtype, str):
        target, dev = _parse_type_name(dtype)
    else:
        raise TypeError(
            f"type(): expected a dtype, a tensor type or its name, got {type(dtype).__name__}"
        )
    if target is self._dtype and dev == self._device.type:
        return self
    return self.to(device=None if dev == self._device.type else dev, dtype=target)


def tensor_new(self, *args, **kwargs):
    """``x.new(...)``: a legacy constructor with `x`'s dtype and device (``x.new(2, 3)``
    uninitialized, ``x.new([1, 2])`` from data, ``x.new()`` empty)."""
    kwargs = dict(kwargs)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None) or self._dtype
    device = self._device if dev is None else dev
    return legacy_new("new", dtype, device, args, kwargs, alias_any_dtype=True)
