"""Factories (empty, zeros, full, arange, rand, ...) and the in-place fill/random primitives.

Factories have no tensor argument, so the dispatcher sends them to BackendSelect, whose fallback
(`backend_select`) adds the backend key of ``device=`` (or the default device).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as dt
from ..device import device as _device, get_device_type, get_default_device
from ..dispatch.keys import DispatchKey
from ..dispatch.operator import register_fallback
from ..random import generator_for
from ..tensor.impl import TensorImpl, device_key_bits
from .declare import EXPLICIT, alloc, declare
from .meta_rules import resolve_device, size_arg

_T = TensorImpl


def backend_select(op, keyset, args, kwargs):
    """BackendSelect fallback: route a tensor-less call to the backend of its `device=`."""
    dev = kwargs.get("device")
    dev = get_default_device() if dev is None else _device(dev)
    bit = device_key_bits.get(dev.type)
    if bit is None:
        get_device_type(dev)  # raises: no backend loaded for this device type
    return op.redispatch(keyset.bits | bit, *args, **kwargs)


register_fallback(DispatchKey.BackendSelect, backend_select)


def _check_size(op: str, shape: tuple) -> tuple:
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{op}(): Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def _finish(t, requires_grad: bool):
    t._vc[0] = 0  # a new tensor starts at version 0, whatever filling it took
    if requires_grad:
        t.requires_grad_(True)
    return t


def _empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
           memory_format=None):
    """A tensor of `size` with uninitialized data."""
    shape = _check_size("empty", size_arg("empty", size))
    return _finish(alloc(shape, dtype or dt.get_default_dtype(), resolve_device(device)),
                   requires_grad)


def _empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """A tensor with the given sizes and strides over a buffer just large enough."""
    from ..tensor.impl import new_impl
    from ..tensor.tensor import Tensor
    shape, stride = tuple(size), tuple(stride)
    _check_size("empty_strided", shape)
    dtype = dtype or dt.get_default_dtype()
    dev = resolve_device(device)
    n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    storage = get_device_type(dev).allocator.allocate(n * dtype.itemsize, dev)
    t = new_impl(Tensor, storage, shape, stride, 0, dtype, dev, device_key_bits[dev.type])
    return _finish(t, requires_grad)


def _fill_dtype(value):
    return dt.scalar_dtype(value.item() if isinstance(value, _T) else value)


def _full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """A tensor of `size` filled with `fill_value` (dtype inferred from the value)."""
    t = _empty(size, dtype=dtype or _fill_dtype(fill_value), device=device)
    t.fill_(fill_value)
    return _finish(t, requires_grad)


def _zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _finish(_empty(*size, dtype=dtype, device=device).fill_(0), requires_grad)


def _ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return _finish(_empty(*size, dtype=dtype, device=device).fill_(1), requires_grad)


def _like(fill):
    def like(self, *args, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, pin_memory=False, generator=None):
        if not isinstance(self, _T):
            raise TypeError(f"expected a Tensor as first argument, got {type(self).__name__}")
        t = _empty(self._shape, dtype=dtype or self._dtype,
                   device=self._device if device is None else device)
        fill(t, *args, generator=generator) if fill is not _no_fill else None
        return _finish(t, requires_grad)
    return like


def _no_fill(t, *a, generator=None):
    return t


def _fill_value(t, value, generator=None):
    t.fill_(value)


def _fill_uniform(t, generator=None):
    t.uniform_(0.0, 1.0, generator=generator)


def _fill_normal(t, generator=None):
    t.normal_(0.0, 1.0, generator=generator)


def _fill_randint(t, low, high=None, generator=None):
    if high is None:
        low, high = 0, low
    t.random_(low, high, generator=generator)


def _meta_arange(start, end=None, step=1, *, dtype=None, layout=None, device=None,
                 requires_grad=False, pin_memory=False):
    if end is None:
        start, end = 0, start
    vals = [float(v) if isinstance(v, _T) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (vals[2] > 0 and vals[1] < vals[0]) or (vals[2] < 0 and vals[1] > vals[0]):
        raise RuntimeError(f"arange(): upper bound and larger bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    n = max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    if dtype is None:
        dtype = (dt.get_default_dtype() if any(isinstance(v, float) for v in vals) else dt.int64)
    return ((n,), dtype, resolve_device(device))


def _meta_linspace(start, end, steps, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    if not isinstance(steps, int) or steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
    return ((steps,), dtype or dt.get_default_dtype(), resolve_device(device))


def _eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A 2-D tensor with ones on the diagonal."""
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye(): n and m must be non-negative, got n={n}, m={m}")
    t = _zeros(n, m, dtype=dtype, device=device)
    if n and m:
        t.as_strided((min(n, m),), (m + 1,), 0).fill_(1)
    return _finish(t, requires_grad)


def _rand(*size, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Uniform samples in [0, 1)."""
    return _finish(_empty(*size, dtype=dtype, device=device).uniform_(0.0, 1.0,
                                                                      generator=generator),
                   requires_grad)


def _randn(*size, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """Standard normal samples."""
    return _finish(_empty(*size, dtype=dtype, device=device).normal_(0.0, 1.0,
                                                                     generator=generator),
                   requires_grad)


def _randint(low, high=None, size=None, *, generator=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """Integers uniformly from [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint(): missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"randint(): random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    t = _empty(size, dtype=dtype or dt.int64, device=device)
    return _finish(t.random_(low, high, generator=generator), requires_grad)


def _randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False):
    """A random permutation of 0..n-1."""
    dev = resolve_device(device)
    gen = generator or generator_for(dev)
    t = _empty(n, dtype=dtype or dt.int64, device=dev)
    get_device_type(dev).write_numpy(t, gen.numpy.permutation(n))
    return _finish(t, requires_grad)


def _meta_self(name):
    def meta(self, *args, **kwargs):
        if not isinstance(self, _T):
            raise TypeError(f"{name}(): expected a Tensor, got {type(self).__name__}")
        return (self._shape, self._dtype, self._device)
    meta.__name__ = f"meta_{name}"
    return meta


def _meta_fill_(self, value):
    if isinstance(value, _T) and value._shape:
        raise RuntimeError(f"fill_(): only supports 0-dimension value tensor but got tensor with "
                           f"{len(value._shape)} dimensions.")
    if not isinstance(value, (_T, bool, int, float, np.generic)):
        raise TypeError(f"fill_(): expected a number or 0-dim tensor as value, got "
                        f"{type(value).__name__}")
    return (self._shape, self._dtype, self._device)


def _meta_random_(self, from_=0, to=None, *, generator=None):
    if to is None:
        raise NotImplementedError("random_(): the one-bound form random_(to) is not supported; "
                                  "call random_(0, to)")
    if from_ >= to:
        raise RuntimeError(f"random_(): expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    if self._dtype.category == dt.int64.category:
        info = np.iinfo(self._dtype.numpy)
        if from_ < info.min or to - 1 > info.max:
            raise RuntimeError(f"random_(): expects 'from' and 'to' - 1 to be in the range of "
                               f"{self._dtype.name} [{info.min}, {info.max}], got from={from_}, "
                               f"to={to}")
    return (self._shape, self._dtype, self._device)


def _meta_normal_(self, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal_(): expected std >= 0.0, but found std {std}")
    return (self._shape, self._dtype, self._device)


def _check_probability(name: str, p) -> None:
    # a tensor of probabilities is data: its backend checks the values
    if p is not None and not isinstance(p, _T) and not 0.0 <= float(p) <= 1.0:
        raise RuntimeError(f"{name}(): expects p to be in [0, 1], but got p={p}")


def _meta_bernoulli_(self, p=0.5, *, generator=None):
    _check_probability("bernoulli_", p)
    return (self._shape, self._dtype, self._device)


def _meta_bernoulli(self, p=None, *, generator=None):
    _check_probability("bernoulli", p)
    return (self._shape, self._dtype, self._device)


def _zero_(self):
    """Fill with zeros in place."""
    return self.fill_(0)


def _declare_all() -> None:
    kw = dict(kind=EXPLICIT, method=False, out=False, family="factory", differentiable=False)
    declare("empty", impl=_empty, **kw)
    declare("empty_strided", impl=_empty_strided, **kw)
    declare("full", impl=_full, **kw)
    declare("zeros", impl=_zeros, **kw)
    declare("ones", impl=_ones, **kw)
    declare("eye", impl=_eye, **kw)
    declare("rand", impl=_rand, **kw)
    declare("randn", impl=_randn, **kw)
    declare("randint", impl=_randint, **kw)
    declare("randperm", impl=_randperm, **kw)
    declare("empty_like", impl=_like(_no_fill), **kw)
    declare("zeros_like", impl=_like(lambda t, generator=None: t.fill_(0)), **kw)
    declare("ones_like", impl=_like(lambda t, generator=None: t.fill_(1)), **kw)
    declare("full_like", impl=_like(_fill_value), **kw)
    declare("rand_like", impl=_like(_fill_uniform), **kw)
    declare("randn_like", impl=_like(_fill_normal), **kw)
    declare("randint_like", impl=_like(_fill_randint), **kw)
    declare("arange", _meta_arange, method=False, family="factory", differentiable=False)
    declare("linspace", _meta_linspace, method=False, family="factory", differentiable=False)
    # in-place fills: the primitives every backend implements (fill_ is in the minimum set)
    ip = dict(inplace_only=True, family="fill", differentiable=False)
    declare("fill_", _meta_fill_, **ip)
    declare("zero_", kind=EXPLICIT, impl=_zero_, inplace_only=True, family="fill",
            differentiable=False)
    declare("uniform_", _meta_self("uniform_"), **ip)
    declare("normal_", _meta_normal_, **ip)
    declare("random_", _meta_random_, **ip)
    declare("bernoulli_", _meta_bernoulli_, **ip)
    declare("bernoulli", _meta_bernoulli, family="random", differentiable=False)


_declare_all()
