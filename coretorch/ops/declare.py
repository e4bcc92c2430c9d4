"""Operator declarations: one `OpDecl` per op, holding everything the core knows about it.

A declaration names the op, its meta rule (output shape, dtype, device from the inputs; written
once here and used by every backend), its kind, its variants (method, in-place `name_`, `out=`),
and (filled by later layers) its derivative and FLOP formulas.

Kinds:
- ``primitive``: each backend implements it. Structured primitives (those with a meta rule) get
  their output allocated by the core: the backend kernel is ``kernel(out, *args, **kwargs)`` and
  only fills `out`; one kernel serves the functional, in-place and ``out=`` forms.
- ``composite_implicit``: a decomposition into other ops, for every backend, differentiated
  through the ops it calls.
- ``composite_explicit``: one kernel for every backend (views, factories) with its own derivative.

Derivative convention (``declare(..., derivative=fn, save_result=...)``), consumed by autograd:
    fn(ctx, *grads) -> tuple
- ``ctx.args`` / ``ctx.kwargs``: the forward call's arguments as given (the original tensors, so
  formulas are differentiable again for create_graph); ``ctx.result``: the output(s), only kept
  when ``save_result=True`` (keeping outputs costs memory, so only formulas that need them ask);
  ``ctx.needs_input_grad``: one bool per positional argument.
- ``grads``: one gradient per output; None for outputs that got no gradient (integer outputs).
- returns one entry per positional argument (None where there is no gradient; a list for a
  list-of-tensors argument such as cat's). Fewer entries mean None for the rest.
- a gradient may keep the broadcast shape of the output: autograd reduces it to the input's shape
  centrally (sum over broadcast dims), so formulas never do.
- formulas are written with coretorch ops only, so they run on every backend.

FLOP convention (``declare(..., flops=fn)``): ``fn(result, *args, **kwargs) -> int``.
"""
from __future__ import annotations

import collections
from typing import Any, Callable

from ..device import _registry as _device_registry
from ..dispatch.keys import DispatchKey
from ..dispatch.operator import Operator
from ..tensor.impl import contiguous_strides, device_key_bits, new_impl, shape_numel
from ..tensor.tensor import Tensor

__all__ = ["OpDecl", "declare", "REGISTRY", "op_named", "primitives", "alloc", "Spec"]

PRIMITIVE, IMPLICIT, EXPLICIT = "primitive", "composite_implicit", "composite_explicit"
_KINDS = (PRIMITIVE, IMPLICIT, EXPLICIT)

# a meta rule returns Spec = (shape, dtype, device), or a list of them for several outputs
Spec = tuple

REGISTRY: dict[str, "OpDecl"] = {}


class OpDecl:
    """Everything declared about one operator (see the module docstring)."""

    __slots__ = ("name", "meta", "kind", "family", "op", "inplace_op", "method", "out",
                 "returns", "derivative", "save_result", "flops", "differentiable",
                 "inplace_only", "doc", "extra")

    def __init__(self, name, meta, kind, family, method, inplace, out, returns, differentiable,
                 inplace_only, doc):
        self.name, self.meta, self.kind, self.family = name, meta, kind, family
        self.method, self.out, self.returns = method, out, returns
        self.differentiable, self.inplace_only, self.doc = differentiable, inplace_only, doc
        self.derivative: Callable | None = None
        self.save_result = False
        self.flops: Callable | None = None
        self.extra: dict[str, Any] = {}
        self.op: Operator | None = None
        self.inplace_op: Operator | None = None

    @property
    def structured(self) -> bool:
        return self.kind == PRIMITIVE and self.meta is not None

    def operators(self) -> list[Operator]:
        return [o for o in (self.op, self.inplace_op) if o is not None]

    def __repr__(self) -> str:
        return f"<OpDecl {self.name} ({self.kind})>"


def declare(name: str, meta: Callable | None = None, *, kind: str = PRIMITIVE,
            family: str = "", impl: Callable | None = None, method: bool = True,
            inplace: bool = False, out: bool = True, returns: type | None = None,
            differentiable: bool = True, inplace_only: bool = False, flops: Callable | None = None,
            derivative: Callable | None = None, save_result: bool = False,
            doc: str = "") -> OpDecl:
    """Declare op `name` (and `name_` if `inplace`). `impl` is the kernel of a composite op.

    With `inplace_only` the op exists only as `name` itself (which must end in ``_``, like
    ``fill_``), its meta rule describes `self`, and the backend kernel is ``kernel(self, self, ...)``.
    """
    if kind not in _KINDS:
        raise ValueError(f"declare({name}): kind must be one of {_KINDS}")
    if name in REGISTRY:
        raise RuntimeError(f"op {name} is declared twice")
    d = OpDecl(name, meta, kind, family, method, inplace, out and not inplace_only, returns,
               differentiable, inplace_only, doc or (impl.__doc__ if impl else "") or "")
    d.flops, d.derivative, d.save_result = flops, derivative, save_result
    d.op = Operator(f"aten::{name}", doc=d.doc)
    d.op.decl = d
    if inplace and not inplace_only:
        d.inplace_op = Operator(f"aten::{name}_", doc=d.doc)
        d.inplace_op.decl = d
    if d.structured:
        d.op.adapt_backend_kernel = (_inplace_adapter(d) if inplace_only else _functional_adapter(d))
        if d.inplace_op is not None:
            d.inplace_op.adapt_backend_kernel = _inplace_adapter(d)
    if impl is not None:
        key = (DispatchKey.CompositeImplicitAutograd if kind == IMPLICIT
               else DispatchKey.CompositeExplicitAutograd)
        d.op.register(key, impl)
    REGISTRY[name] = d
    return d


def op_named(name: str) -> Operator:
    """The Operator of declared op `name` (look it up when called: it may be declared later)."""
    return REGISTRY[name].op


def primitives() -> list[str]:
    """Names of the ops a backend implements natively (everything else is composite)."""
    return sorted(n for n, d in REGISTRY.items() if d.kind == PRIMITIVE)


# ---- output allocation ------------------------------------------------------------------------

def alloc(shape: tuple, dtype, device) -> Tensor:
    """A new contiguous tensor on `device`, allocated through its backend's allocator."""
    entry = _device_registry.get(device.type)
    if entry is None:
        from ..device import get_device_type
        entry = get_device_type(device)  # raises the "no backend loaded" error
    storage = entry.allocator.allocate(shape_numel(shape) * dtype.itemsize, device)
    return new_impl(Tensor, storage, shape, contiguous_strides(shape), 0, dtype, device,
                    device_key_bits[device.type])


def can_cast(from_dtype, to_dtype) -> bool:
    """PyTorch's same-kind rule for writing results: no float->int, no non-bool->bool."""
    return from_dtype.category <= to_dtype.category


def _check_out(name: str, out, spec):
    if spec.__class__ is list:
        if not isinstance(out, (tuple, list)) or len(out) != len(spec):
            raise TypeError(f"{name}(): expected out= to be a tuple of {len(spec)} tensors")
        return tuple(_check_out(name, o, s) for o, s in zip(out, spec))
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    shape, dtype, device = spec
    if out._device != device:
        raise RuntimeError(f"{name}(): Expected out tensor to be on device {device}, but got "
                           f"out on {out._device}")
    if not can_cast(dtype, out._dtype):
        raise RuntimeError(f"{name}(): result type {dtype.name} can't be cast to the desired "
                           f"output type {out._dtype.name}")
    if out._shape != shape:
        _resize_out(out, shape)
    out._vc[0] += 1
    return out


def _resize_out(t: Tensor, shape: tuple) -> None:
    """Give `t` a fresh contiguous buffer of `shape` (what PyTorch does to a wrong-sized out=)."""
    fresh = alloc(shape, t._dtype, t._device)
    t._storage, t._shape, t._stride, t._offset = fresh._storage, shape, fresh._stride, 0
    t._cache = None


def _functional_adapter(d: OpDecl):
    meta, name, returns = d.meta, d.name, d.returns

    def adapt(kernel: Callable, key: DispatchKey) -> Callable:
        def structured(*args, out=None, **kwargs):
            spec = meta(*args, **kwargs)
            if out is not None:
                res = _check_out(name, out, spec)
            elif spec.__class__ is tuple:  # one output: alloc() inlined, this is the hot path
                shape, dtype, device = spec
                n = 1
                for s in shape:
                    n *= s
                entry = _device_registry.get(device.type)
                if entry is None:
                    res = alloc(shape, dtype, device)
                else:
                    res = new_impl(Tensor, entry.allocator.allocate(n * dtype.itemsize, device),
                                   shape, contiguous_strides(shape), 0, dtype, device,
                                   device_key_bits[device.type])
            else:
                res = tuple(alloc(*s) for s in spec)
            kernel(res, *args, **kwargs)
            if returns is not None:
                return returns(*res)
            return res
        structured.__name__ = f"{name}_{key.name}"
        structured.out_kernel = kernel
        return structured
    return adapt


def _inplace_adapter(d: OpDecl):
    meta, name = d.meta, d.name if d.inplace_only else d.name + "_"

    def adapt(kernel: Callable, key: DispatchKey) -> Callable:
        def structured_(self, *args, **kwargs):
            shape, dtype, _ = meta(self, *args, **kwargs)
            if shape != self._shape:
                raise RuntimeError(f"{name}(): output with shape {list(self._shape)} doesn't "
                                   f"match the broadcast shape {list(shape)}")
            if not can_cast(dtype, self._dtype):
                raise RuntimeError(f"{name}(): result type {dtype.name} can't be cast to the "
                                   f"desired output type {self._dtype.name}")
            kernel(self, self, *args, **kwargs)
            self._vc[0] += 1
            return self
        structured_.__name__ = f"{name}_{key.name}"
        structured_.out_kernel = kernel
        return structured_
    return adapt


def namedtuple_return(typename: str, fields: str) -> type:
    """Return type of multi-output ops (``max(dim)`` gives ``values, indices``)."""
    return collections.namedtuple(typename, fields)
