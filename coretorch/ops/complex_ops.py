"""Complex numbers: the two dtype-changing views `view_as_real` / `view_as_complex` and the
composites built on them (`real`, `imag`, `conj`, `angle`, `polar`, `complex`).

A complex tensor's storage holds (real, imaginary) pairs, so its real view is the same storage
read as the real dtype with every stride doubled and one more dim of size 2 and stride 1 (as
PyTorch). `real` and `imag` select from that view, so they are views too and writes through them
reach the complex tensor. `conj` materializes its result (PyTorch returns a lazy conjugate view
with a conj bit; coretorch has no conj bit, so `is_conj()` is always False and `resolve_conj`
returns its input).

Autograd follows PyTorch's convention: the gradient of a real loss with respect to a complex
tensor is the conjugate Wirtinger derivative (``grad.real + 1j * grad.imag`` of the loss seen as
a function of the real and imaginary parts), so the two views' derivatives are each other.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl, new_impl
from ..tensor.tensor import Tensor
from .declare import EXPLICIT, REGISTRY, declare
from .meta_rules import broadcast_shapes, common_device
from .pointwise import flops_pointwise

__all__ = ["dtype_view"]

_T = TensorImpl
_GEOMETRY = ("view_shape", "view_stride", "view_offset")


def _op(name: str):
    return REGISTRY[name].op.entry


def dtype_view(self, shape: tuple, stride: tuple, offset: int, dtype) -> Tensor:
    """A tensor over `self`'s storage read as `dtype` (a view: same version counter and base)."""
    base = self._base if self._base is not None else self
    return new_impl(
        Tensor,
        self._storage,
        shape,
        stride,
        offset,
        dtype,
        self._device,
        self._keys,
        self._vc,
        base,
    )


# ---- view_as_real / view_as_complex ------------------------------------------------------------


def _meta_view_as_real(self):
    if not self._dtype.is_complex:
        raise RuntimeError(
            f"view_as_real(): is only supported for complex tensors, got {self._dtype.name}"
        )
    shape = self._shape + (2,)
    return (
        (shape, self._dtype.to_real(), self._device),
        (shape, tuple(2 * s for s in self._stride) + (1,), 2 * self._offset),
    )


def _view_as_real(self, view_shape, view_stride, view_offset):
    """The real view of a complex tensor: a last dim of size 2 holds (real, imaginary)."""
    return dtype_view(self, view_shape, view_stride, view_offset, self._dtype.to_real())


def _meta_view_as_complex(self):
    d, shape, stride = self._dtype, self._shape, self._stride
    if d not in (dt.float32, dt.float64):
        raise RuntimeError(
            f"view_as_complex(): is only supported for float32 and float64 "
            f"tensors, but got a tensor of scalar type: {d.name}"
        )
    if not shape or shape[-1] != 2:
        raise RuntimeError(
            f"view_as_complex(): Tensor must have a last dimension of size 2, got "
            f"shape {list(shape)}"
        )
    if stride[-1] != 1:
        raise RuntimeError(
            f"view_as_complex(): Tensor must have a last dimension with stride 1, "
            f"got stride {stride[-1]}"
        )
    if any(s % 2 for s, n in zip(stride[:-1], shape[:-1]) if n != 1) or self._offset % 2:
        raise RuntimeError(
            "view_as_complex(): Tensor must have a stride divisible by 2 for all "
            "but last dimension and a storage offset divisible by 2"
        )
    out = shape[:-1]
    return (
        (out, d.to_complex(), self._device),
        (out, tuple(s // 2 for s in stride[:-1]), self._offset // 2),
    )


def _view_as_complex(self, view_shape, view_stride, view_offset):
    """The complex view of a real tensor whose last dim (size 2, stride 1) holds (real, imag)."""
    return dtype_view(self, view_shape, view_stride, view_offset, self._dtype.to_complex())


def _d_view_as_real(ctx, g):
    return (_op("view_as_complex")(g.contiguous()),)


def _d_view_as_complex(ctx, g):
    return (_op("view_as_real")(g),)


# ---- real, imag, conj -------------------------------------------------------------------------


def _meta_same(self):
    return (self._shape, self._dtype, self._device)


def _meta_real(self):
    return (self._shape, self._dtype.to_real(), self._device)


def _real(self):
    """The real part of `input` as a view (`input` itself for a real tensor)."""
    return _op("view_as_real")(self).select(-1, 0) if self._dtype.is_complex else self


def _meta_imag(self):
    if not self._dtype.is_complex:
        raise RuntimeError("imag(): is not implemented for tensors with non-complex dtypes.")
    return _meta_real(self)


def _imag(self):
    """The imaginary part of a complex `input`, as a view."""
    return _op("view_as_real")(self).select(-1, 1)


def _conj(self):
    """The complex conjugate of `input` (a new tensor; `input` itself for a real tensor)."""
    if not self._dtype.is_complex:
        return self
    parts = _op("view_as_real")(self)
    return _op("view_as_complex")(
        _op("stack")([parts.select(-1, 0), parts.select(-1, 1).neg()], -1)
    )


def _conj_physical(self):
    """The complex conjugate of `input`, always a new tensor (a copy for a real tensor)."""
    return _conj(self) if self._dtype.is_complex else self.clone()


def _meta_bool(self):
    return (self._shape, dt.bool, self._device)


def _isreal(self):
    """True where an element is real: its imaginary part is 0 (every element of a real
    tensor)."""
    if self._dtype.is_complex:
        return _imag(self).eq(0)
    return _op("ones")(self._shape, dtype=dt.bool, device=self._device)


def _resolve_conj(self):
    """`input` itself: coretorch materializes conjugates, so there is no conj bit to resolve."""
    return self


def _is_conj(self):
    """False: coretorch's `conj` materializes its result (no lazy conj bit)."""
    return False


# ---- angle, polar, complex -----------------------------------------------------------------------


def _meta_angle(self):
    d = self._dtype
    return (
        self._shape,
        d.to_real() if d.is_complex or d.is_floating_point else dt.get_default_dtype(),
        self._device,
    )


def _angle(self):
    """The argument of each element, in (-pi, pi]; for real input 0 (x >= 0) or pi (x < 0),
    NaN propagating."""
    if self._dtype.is_complex:
        return _op("atan2")(_imag(self), _real(self))
    x = self if self._dtype.is_floating_point else self.to(dt.get_default_dtype())
    return _op("where")(x.lt(0), math.pi, x * 0)  # x * 0: NaN stays NaN, else 0


def _parts_spec(op: str, a, b, names: tuple) -> tuple:
    """The Spec of a complex tensor made from two real tensors of one float dtype."""
    for name, x in zip(names, (a, b)):
        if x._dtype not in (dt.float32, dt.float64):
            raise RuntimeError(
                f"{op}(): Expected both inputs to be Float or Double tensors but "
                f"got {x._dtype.name} for {name}"
            )
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"{op}(): Expected object of scalar type {a._dtype.name} but got "
            f"scalar type {b._dtype.name} for second argument"
        )
    shape = broadcast_shapes(op, a._shape, b._shape)
    return (shape, a._dtype.to_complex(), common_device(op, a, b))


def _meta_complex(real, imag):
    return _parts_spec("complex", real, imag, ("real", "imag"))


def _complex(real, imag):
    """The complex tensor ``real + 1j * imag`` (broadcast; float32 or float64 parts)."""
    real, imag = _op("broadcast_tensors")([real, imag])
    return _op("view_as_complex")(_op("stack")([real, imag], -1))


def _meta_polar(abs, angle):  # noqa: A002 - PyTorch's argument name
    return _parts_spec("polar", abs, angle, ("abs", "angle"))


def _polar(abs, angle):  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))``."""
    return _complex(abs * angle.cos(), abs * angle.sin())


def _declare_all() -> None:
    view: dict[str, Any] = dict(
        kind=EXPLICIT, family="view", out=False, precomputed=_GEOMETRY, saves=()
    )
    declare(
        "view_as_real(Tensor(a) self) -> Tensor(a)",
        _meta_view_as_real,
        impl=_view_as_real,
        derivative=_d_view_as_real,
        method=False,
        doc="A real view of a complex tensor: a new last dim of size 2 holds the real and "
        "imaginary parts.",
        **view,
    )
    declare(
        "view_as_complex(Tensor(a) self) -> Tensor(a)",
        _meta_view_as_complex,
        impl=_view_as_complex,
        derivative=_d_view_as_complex,
        method=False,
        doc="A complex view of a float32/float64 tensor whose last dim (size 2, stride 1) "
        "holds real and imaginary parts.",
        **view,
    )
    comp: dict[str, Any] = dict(family="complex", out=False)
    declare("real(Tensor(a) self) -> Tensor(a)", _meta_real, impl=_real, method=False, **comp)
    declare("imag(Tensor(a) self) -> Tensor(a)", _meta_imag, impl=_imag, method=False, **comp)
    declare("conj(Tensor(a) self) -> Tensor(a)", _meta_same, impl=_conj, **comp)
    declare(
        "conj_physical(Tensor self) -> Tensor", _meta_same, impl=_conj_physical, family="complex"
    )
    declare("resolve_conj(Tensor(a) self) -> Tensor(a)", _meta_same, impl=_resolve_conj, **comp)
    declare("is_conj(Tensor self) -> bool", impl=_is_conj, family="complex", differentiable=False)
    declare(
        "resolve_neg(Tensor(a) self) -> Tensor(a)",
        _meta_same,
        impl=_resolve_conj,
        doc="`input` itself: coretorch has no lazy negation bit to resolve.",
        **comp,
    )
    declare(
        "is_neg(Tensor self) -> bool",
        impl=_is_conj,
        family="complex",
        differentiable=False,
        doc="False: coretorch has no lazy negation bit.",
    )
    declare(
        "isreal(Tensor self) -> Tensor",
        _meta_bool,
        impl=_isreal,
        family="complex",
        out=False,
        differentiable=False,
    )
    declare(
        "angle(Tensor self) -> Tensor",
        _meta_angle,
        impl=_angle,
        family="complex",
        flops=flops_pointwise,
    )
    declare(
        "complex(Tensor real, Tensor imag) -> Tensor",
        _meta_complex,
        impl=_complex,
        method=False,
        family="complex",
        flops=flops_pointwise,
    )
    declare(
        "polar(Tensor abs, Tensor angle) -> Tensor",
        _meta_polar,
        impl=_polar,
        method=False,
        family="complex",
        flops=flops_pointwise,
    )


_declare_all()
