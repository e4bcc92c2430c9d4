"""Factories (empty, zeros, full, arange, rand, ...) and the in-place fill/random primitives.

Factories have no tensor argument, so the dispatcher sends them to BackendSelect, whose fallback
(`backend_select`) adds the backend key of the ``device`` argument (or of the default device)
and finishes the new tensor (version 0, ``requires_grad``). The primitives are `arange`,
`fill_`, `uniform_`, `normal_` and `random_`; everything else here is written with them and the
device's allocator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..device import get_default_device, get_device_type
from ..dispatch.keys import DispatchKey
from ..dispatch.operator import register_fallback
from ..layout import layout as _layout, strided as _strided
from ..memory_formats import check_memory_format, memory_format_arg, restride
from ..random import generator_for
from ..tensor.impl import device_key_bits, new_impl
from ..tensor.tensor import Tensor
from .declare import EXPLICIT, alloc, declare, op_named
from .meta_rules import broadcasts_to, resolve_device

_T = Tensor
# the largest finite value of each float dtype narrower than a Python float
_FLOAT_MAX = {d: dt.finfo(d).max for d in dt.all_dtypes if d.is_floating_point and d.itemsize < 8}

# ---- BackendSelect ------------------------------------------------------------------------------

_positions: dict = {}


def _factory_positions(op) -> tuple:
    """(index of `device`, index of `requires_grad`) in `op`'s argument record (None: absent)."""
    pos = _positions.get(op)
    if pos is None:
        names = op.schema.names
        pos = _positions[op] = tuple(
            names.index(n) if n in names else None for n in ("device", "requires_grad")
        )
    return pos


def backend_select(op, keyset, args, kwargs):
    """BackendSelect fallback: route a tensor-less call to the backend of its `device` argument
    (or the default device), then finish a factory's result: version 0 (however many fills
    made it) and ``requires_grad`` as asked."""
    at_device, at_grad = _factory_positions(op)
    dev = args[at_device] if at_device is not None else kwargs.get("device")
    dev = get_default_device() if dev is None else resolve_device(dev)
    bit = device_key_bits.get(dev.type)
    if bit is None:
        get_device_type(dev)  # raises: no backend loaded for this device type
    res = op.redispatch(keyset.bits | bit, *args, **kwargs)
    if at_grad is not None and not kwargs:  # a new tensor (not an out= argument's)
        finish(res, args[at_grad])
    return res


register_fallback(DispatchKey.BackendSelect, backend_select)


def finish(t, requires_grad: bool):
    """A new tensor starts at version 0, whatever filling it took, and requires grad if asked."""
    t._vc[0] = 0
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- meta rules ---------------------------------------------------------------------------------


def _check_size(op: str, shape: tuple) -> tuple:
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"{op}(): Trying to create tensor with negative dimension {s}: {list(shape)}"
            )
    return shape


def check_layout(op: str, layout) -> None:
    """Factories make strided tensors: any other layout is refused (never silently dense)."""
    if layout is None or layout is _strided:
        return
    if not isinstance(layout, _layout):
        raise TypeError(
            f"{op}(): argument 'layout' must be coretorch.layout, not {type(layout).__name__}"
        )
    raise RuntimeError(
        f"{op}(): layout={layout} is not supported (factories make strided "
        f"tensors); make a sparse tensor with coretorch.sparse_coo_tensor or "
        f"Tensor.to_sparse()"
    )


def _spec(op: str, size, dtype, device, layout) -> tuple:
    check_layout(op, layout)
    return (
        _check_size(op, size),
        dt.get_default_dtype() if dtype is None else dtype,
        resolve_device(device),
    )


def _meta_empty(size, dtype, layout, device, requires_grad, pin_memory, memory_format):
    check_memory_format("empty", len(size), memory_format)
    return _spec("empty", size, dtype, device, layout)


def _meta_sized(name: str):
    def meta(size, dtype, layout, device, requires_grad, pin_memory):
        return _spec(name, size, dtype, device, layout)

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_random_sized(name: str):
    def meta(size, generator, dtype, layout, device, requires_grad, pin_memory):
        return _spec(name, size, dtype, device, layout)

    meta.__name__ = f"meta_{name}"
    return meta


def _meta_empty_strided(size, stride, dtype, layout, device, requires_grad, pin_memory):
    if len(size) != len(stride):
        raise RuntimeError(
            f"empty_strided(): mismatch in length of strides and shape "
            f"({len(size)} sizes, {len(stride)} strides)"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided(): strides must be non-negative, got {list(stride)}")
    return _spec("empty_strided", size, dtype, device, layout)


def _meta_full(size, fill_value, dtype, layout, device, requires_grad, pin_memory):
    return _spec(
        "full", size, dt.scalar_dtype(fill_value) if dtype is None else dtype, device, layout
    )


def _meta_eye(n, m, dtype, layout, device, requires_grad, pin_memory):
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"eye(): n and m must be non-negative, got n={n}, m={m}")
    return _spec("eye", (n, m), dtype, device, layout)


def randint_bounds(low, high, size) -> tuple:
    """(low, high, size) of ``randint(high, size)`` or ``randint(low, high, size)`` (PyTorch's
    two overloads share one schema, whose `high` may hold the size)."""
    from ..dispatch.arguments import to_int, to_int_list

    if size is None:
        if not isinstance(high, (tuple, list)):
            raise TypeError(
                "randint(): missing required argument 'size' (call randint(high, "
                "size) or randint(low, high, size))"
            )
        low, high, size = 0, low, to_int_list("randint", "size", 2, high)
    elif high is None:
        low, high = 0, low
    else:
        high = to_int("randint", "high", 2, high)
    if low >= high:
        raise RuntimeError(
            f"randint(): random_ expects 'from' to be less than 'to', but got "
            f"from={low} >= to={high}"
        )
    return low, high, size


def _meta_randint(low, high, size, generator, dtype, layout, device, requires_grad, pin_memory):
    low, high, size = randint_bounds(low, high, size)
    return _spec("randint", size, dt.int64 if dtype is None else dtype, device, layout)


def _meta_randperm(n, generator, dtype, layout, device, requires_grad, pin_memory):
    return _spec("randperm", (n,), dt.int64 if dtype is None else dtype, device, layout)


def _like_spec(self, dtype, device, layout=None, memory_format=None) -> tuple:
    check_layout("*_like", layout)
    check_memory_format("empty_like", len(self._shape), memory_format)
    return (
        self._shape,
        self._dtype if dtype is None else dtype,
        self._device if device is None else resolve_device(device),
    )


def _meta_like(self, dtype, layout, device, requires_grad, pin_memory, memory_format):
    return _like_spec(self, dtype, device, layout, memory_format)


def _meta_random_like(
    self, generator, dtype, layout, device, requires_grad, pin_memory, memory_format
):
    return _like_spec(self, dtype, device, layout, memory_format)


def _meta_full_like(
    self, fill_value, dtype, layout, device, requires_grad, pin_memory, memory_format
):
    return _like_spec(self, dtype, device, layout, memory_format)


def _meta_randint_like(
    self, low, high, generator, dtype, layout, device, requires_grad, pin_memory, memory_format
):
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(
            f"randint_like(): random_ expects 'from' to be less than 'to', but "
            f"got from={low} >= to={high}"
        )
    return _like_spec(self, dtype, device, layout, memory_format)


def _arange_count(start, end, step) -> int:
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    return max(0, math.ceil((end - start) / step))


def _meta_arange(start, end, step, dtype, layout, device, requires_grad, pin_memory):
    check_layout("arange", layout)
    if end is None:
        start, end = 0, start
    n = _arange_count(start, end, step)
    if dtype is None:
        dtype = (
            dt.get_default_dtype()
            if any(isinstance(v, float) for v in (start, end, step))
            else dt.int64
        )
    if not dtype.is_floating_point:
        for v in (start, end, step):
            if isinstance(v, int) and not dt.INT64_MIN <= v <= dt.INT64_MAX:
                raise dt.overflow_error(dt.int64, v, "arange")
    return ((n,), dtype, resolve_device(device))


def _spaced_spec(op: str, steps: int, dtype, device, layout) -> tuple:
    if steps < 0:
        raise RuntimeError(f"{op}(): number of steps must be non-negative, got {steps}")
    return _spec(op, (steps,), dtype, device, layout)


def _meta_linspace(start, end, steps, dtype, layout, device, requires_grad, pin_memory):
    return _spaced_spec("linspace", steps, dtype, device, layout)


def _meta_logspace(start, end, steps, base, dtype, layout, device, requires_grad, pin_memory):
    return _spaced_spec("logspace", steps, dtype, device, layout)


def check_fill_value(dtype, value) -> None:
    """PyTorch refuses a fill value out of an integer dtype's range (a value held in a tensor
    is data: the kernel that reads it checks it)."""
    if isinstance(value, (bool, np.bool_)):
        return
    if dtype.category == dt.int64.category:
        info = np.iinfo(dtype.numpy)
        if (
            isinstance(value, (float, np.floating)) and not math.isfinite(value)
        ) or not info.min <= int(value) <= info.max:
            raise RuntimeError(
                f"fill_(): value cannot be converted to type {dtype.name} "
                f"without overflow (got {value}; the range is [{info.min}, "
                f"{info.max}])"
            )
    elif dtype in _FLOAT_MAX and math.isfinite(value) and abs(value) > _FLOAT_MAX[dtype]:
        # PyTorch refuses a finite value that would become inf (inf and nan themselves fit)
        raise dt.overflow_error(dtype, value, "fill_")


def _meta_fill_(self, value):
    if isinstance(value, _T):
        if value._shape:
            raise RuntimeError(
                f"fill_(): only supports 0-dimension value tensor but got tensor "
                f"with {len(value._shape)} dimensions."
            )
    else:
        check_fill_value(self._dtype, value)
    return (self._shape, self._dtype, self._device)


def _float_only(op: str, self) -> None:
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise NotImplementedError(
            f"{op}(): not implemented for '{self._dtype.name}'; expected a floating point tensor"
        )


def _meta_uniform_(self, from_, to, generator):
    _float_only("uniform_", self)
    if from_ > to:
        raise RuntimeError(
            f"uniform_(): expects to return a [from, to) range, but found from={from_} > to={to}"
        )
    return (self._shape, self._dtype, self._device)


def _meta_normal_(self, mean, std, generator):
    _float_only("normal_", self)
    if std < 0:
        raise RuntimeError(f"normal_(): expected std >= 0.0, but found std {std}")
    return (self._shape, self._dtype, self._device)


def _meta_random_(self, from_, to, generator):
    if to is None:
        raise NotImplementedError(
            "random_(): the one-bound form random_(to) is not supported; call random_(0, to)"
        )
    if from_ >= to:
        raise RuntimeError(
            f"random_(): expects 'from' to be less than 'to', but got from={from_} >= to={to}"
        )
    if self._dtype.category == dt.int64.category:
        info = np.iinfo(self._dtype.numpy)
        if from_ < info.min or to - 1 > info.max:
            raise RuntimeError(
                f"random_(): expects 'from' and 'to' - 1 to be in the range of "
                f"{self._dtype.name} [{info.min}, {info.max}], got from={from_}, "
                f"to={to}"
            )
    return (self._shape, self._dtype, self._device)


def _check_probability(name: str, p) -> None:
    # a tensor of probabilities is data: the composite checks its values on data devices
    if p is not None and not isinstance(p, _T) and not 0.0 <= p <= 1.0:
        raise RuntimeError(f"{name}(): expects p to be in [0, 1], but got p={p}")


def _meta_bernoulli_(self, p, generator):
    _check_probability("bernoulli_", p)
    if isinstance(p, _T) and not broadcasts_to(p._shape, self._shape):
        raise RuntimeError(
            f"bernoulli_(): p of shape {list(p._shape)} can't be broadcast to "
            f"self of shape {list(self._shape)}"
        )
    return (self._shape, self._dtype, self._device)


def _meta_bernoulli(self, p, generator):
    _check_probability("bernoulli", p)
    return (self._shape, self._dtype, self._device)


# ---- composites ---------------------------------------------------------------------------------


def _empty(size, dtype, layout, device, requires_grad, pin_memory, memory_format):
    """A tensor of `size` with uninitialized data."""
    return restride(
        alloc(*_meta_empty(size, dtype, layout, device, requires_grad, pin_memory, memory_format)),
        "empty",
        memory_format_arg("empty", memory_format),
    )


def _empty_strided(size, stride, dtype, layout, device, requires_grad, pin_memory):
    """A tensor with the given sizes and strides over a buffer just large enough."""
    shape, dtype, dev = _meta_empty_strided(
        size, stride, dtype, layout, device, requires_grad, pin_memory
    )
    n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    storage = get_device_type(dev).allocator.allocate(n * dtype.itemsize, dev)
    return new_impl(Tensor, storage, shape, stride, 0, dtype, dev, device_key_bits[dev.type])


def _full(size, fill_value, dtype, layout, device, requires_grad, pin_memory):
    """A tensor of `size` filled with `fill_value` (dtype inferred from the value)."""
    return alloc(
        *_meta_full(size, fill_value, dtype, layout, device, requires_grad, pin_memory)
    ).fill_(fill_value)


def _filled(name: str, value):
    def impl(size, dtype, layout, device, requires_grad, pin_memory):
        return alloc(*_spec(name, size, dtype, device, layout)).fill_(value)

    impl.__name__ = name
    impl.__doc__ = f"A tensor of `size` filled with {value}."
    return impl


def _eye(n, m, dtype, layout, device, requires_grad, pin_memory):
    """A 2-D tensor with ones on the diagonal."""
    t = alloc(*_meta_eye(n, m, dtype, layout, device, requires_grad, pin_memory)).fill_(0)
    rows, cols = t._shape
    if rows and cols:
        t.as_strided((min(rows, cols),), (cols + 1,), 0).fill_(1)
    return t


def _rand(size, generator, dtype, layout, device, requires_grad, pin_memory):
    """Uniform samples in [0, 1)."""
    return alloc(*_spec("rand", size, dtype, device, layout)).uniform_(
        0.0, 1.0, generator=generator
    )


def _randn(size, generator, dtype, layout, device, requires_grad, pin_memory):
    """Standard normal samples."""
    return alloc(*_spec("randn", size, dtype, device, layout)).normal_(
        0.0, 1.0, generator=generator
    )


def _randint(low, high, size, generator, dtype, layout, device, requires_grad, pin_memory):
    """Integers uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``."""
    low, high, size = randint_bounds(low, high, size)
    t = alloc(*_spec("randint", size, dt.int64 if dtype is None else dtype, device, layout))
    return t.random_(low, high, generator=generator)


def _randperm(n, generator, dtype, layout, device, requires_grad, pin_memory):
    """A random permutation of 0..n-1."""
    t = alloc(*_meta_randperm(n, generator, dtype, layout, device, requires_grad, pin_memory))
    gen = generator or generator_for(t._device)
    get_device_type(t._device).write_numpy(t, gen.numpy.permutation(n).astype(t._dtype.numpy))
    return t


def _like_alloc(self, dtype, device, memory_format):
    """The uninitialized result of a ``*_like`` factory, in `memory_format` (default: the
    format `self` is in)."""
    return restride(
        alloc(*_like_spec(self, dtype, device)),
        "empty_like",
        memory_format_arg("empty_like", memory_format),
        self,
    )


def _like(fill):
    """The impl of ``<fill>_like``: a tensor shaped like `self`, filled by ``fill(t)``."""

    def like(self, dtype, layout, device, requires_grad, pin_memory, memory_format):
        return finish(fill(_like_alloc(self, dtype, device, memory_format)), requires_grad)

    return like


def _empty_like(self, dtype, layout, device, requires_grad, pin_memory, memory_format):
    """An uninitialized tensor shaped like `self`."""
    return finish(_like_alloc(self, dtype, device, memory_format), requires_grad)


def _full_like(self, fill_value, dtype, layout, device, requires_grad, pin_memory, memory_format):
    """A tensor shaped like `self` filled with `fill_value`."""
    t = _like_alloc(self, dtype, device, memory_format)
    return finish(t.fill_(fill_value), requires_grad)


def _random_like(draw):
    def like(self, generator, dtype, layout, device, requires_grad, pin_memory, memory_format):
        t = _like_alloc(self, dtype, device, memory_format)
        return finish(draw(t, generator), requires_grad)

    return like


def _randint_like(
    self, low, high, generator, dtype, layout, device, requires_grad, pin_memory, memory_format
):
    """Integers uniformly from [low, high) (``randint_like(t, high)``: from [0, high))."""
    if high is None:
        low, high = 0, low
    t = _like_alloc(self, dtype, device, memory_format).random_(low, high, generator=generator)
    return finish(t, requires_grad)


def _linspace(start, end, steps, dtype, layout, device, requires_grad, pin_memory):
    """`steps` evenly spaced values from start to end, with PyTorch's symmetric formula (the
    first half counts up from start, the second half down from end), computed in float64
    (float32 for float32 and 16-bit float results) and cast."""
    shape, dtype, dev = _meta_linspace(
        start, end, steps, dtype, layout, device, requires_grad, pin_memory
    )
    if steps <= 1:
        return alloc(shape, dtype, dev).fill_(start)
    c = dt.opmath_dtype(dtype) if dtype.itemsize <= 4 else dt.float64
    cn = c.numpy.type
    s0, s1 = cn(start), cn(end)
    step = float((s1 - s0) / cn(steps - 1))
    i = op_named("arange")(steps, dtype=c, device=dev)
    up = i.mul(step).add(float(s0))
    down = i.neg().add(steps - 1).mul(step).neg().add(float(s1))
    return op_named("where")(i.lt(steps // 2), up, down).to(dtype)


def _logspace(start, end, steps, base, dtype, layout, device, requires_grad, pin_memory):
    """`steps` values from base ** start to base ** end, evenly spaced in the exponent
    (computed in float64 and cast, as PyTorch's kernel)."""
    shape, dtype, dev = _meta_logspace(
        start, end, steps, base, dtype, layout, device, requires_grad, pin_memory
    )
    exponents = _linspace(start, end, steps, dt.float64, layout, dev, False, pin_memory)
    return op_named("pow")(float(base), exponents).to(dtype)


def _zero_(self):
    """Fill with zeros in place."""
    return self.fill_(0)


def _bernoulli_(self, p, generator):
    """Fill with 1 with probability `p` (a number or a tensor of probabilities), else 0: a
    float64 uniform draw compared with `p`."""
    if isinstance(p, _T) and p.numel() and get_device_type(p._device).has_data:
        if not bool(p.ge(0).logical_and(p.le(1)).all()):
            raise RuntimeError("bernoulli_(): expected all probabilities in [0, 1]")
    u = alloc(self._shape, dt.float64, self._device).uniform_(0.0, 1.0, generator=generator)
    return self.copy_(u.lt(p))


def _bernoulli(self, p, generator):
    """Samples 0/1 with the probabilities in `self` (or the number `p`), in self's dtype."""
    out = alloc(self._shape, self._dtype, self._device)
    return out.bernoulli_(self if p is None else p, generator=generator)


_FACTORY_ARGS = (
    "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool requires_grad=False, bool pin_memory=False"
)
_LIKE_ARGS = _FACTORY_ARGS + ", MemoryFormat? memory_format=None"


def _declare_all() -> None:
    kw: dict[str, Any] = dict(
        kind=EXPLICIT, method=False, out=False, family="factory", differentiable=False
    )
    fa, la = _FACTORY_ARGS, _LIKE_ARGS
    declare(f"empty(int[] size, *, {la}) -> Tensor", _meta_empty, impl=_empty, **kw)
    declare(
        f"empty_strided(int[] size, int[] stride, *, {fa}) -> Tensor",
        _meta_empty_strided,
        impl=_empty_strided,
        **kw,
    )
    declare(f"full(int[] size, Scalar fill_value, *, {fa}) -> Tensor", _meta_full, impl=_full, **kw)
    declare(
        f"zeros(int[] size, *, {fa}) -> Tensor",
        _meta_sized("zeros"),
        impl=_filled("zeros", 0),
        **kw,
    )
    declare(
        f"ones(int[] size, *, {fa}) -> Tensor", _meta_sized("ones"), impl=_filled("ones", 1), **kw
    )
    declare(f"eye(int n, int? m=None, *, {fa}) -> Tensor", _meta_eye, impl=_eye, **kw)
    gen = "Generator? generator=None"
    declare(
        f"rand(int[] size, *, {gen}, {fa}) -> Tensor", _meta_random_sized("rand"), impl=_rand, **kw
    )
    declare(
        f"randn(int[] size, *, {gen}, {fa}) -> Tensor",
        _meta_random_sized("randn"),
        impl=_randn,
        **kw,
    )
    declare(
        f"randint(int low, Any high=None, int[]? size=None, *, {gen}, {fa}) -> Tensor",
        _meta_randint,
        impl=_randint,
        **kw,
    )
    declare(f"randperm(int n, *, {gen}, {fa}) -> Tensor", _meta_randperm, impl=_randperm, **kw)
    declare(f"empty_like(Tensor self, *, {la}) -> Tensor", _meta_like, impl=_empty_like, **kw)
    declare(
        f"zeros_like(Tensor self, *, {la}) -> Tensor",
        _meta_like,
        impl=_like(lambda t: t.fill_(0)),
        doc="A tensor of zeros with the shape (and by default dtype and device) of `input`.",
        **kw,
    )
    declare(
        f"ones_like(Tensor self, *, {la}) -> Tensor",
        _meta_like,
        impl=_like(lambda t: t.fill_(1)),
        doc="A tensor of ones with the shape (and by default dtype and device) of `input`.",
        **kw,
    )
    declare(
        f"full_like(Tensor self, Scalar fill_value, *, {la}) -> Tensor",
        _meta_full_like,
        impl=_full_like,
        **kw,
    )
    declare(
        f"rand_like(Tensor self, *, {gen}, {la}) -> Tensor",
        _meta_random_like,
        impl=_random_like(lambda t, g: t.uniform_(0.0, 1.0, generator=g)),
        doc="Samples of U[0, 1) with the shape (and by default dtype and device) of `input`.",
        **kw,
    )
    declare(
        f"randn_like(Tensor self, *, {gen}, {la}) -> Tensor",
        _meta_random_like,
        impl=_random_like(lambda t, g: t.normal_(0.0, 1.0, generator=g)),
        doc="Samples of N(0, 1) with the shape (and by default dtype and device) of `input`.",
        **kw,
    )
    declare(
        f"randint_like(Tensor self, int low, int? high=None, *, {gen}, {la}) -> Tensor",
        _meta_randint_like,
        impl=_randint_like,
        **kw,
    )
    declare(
        f"arange(Scalar start=0, Scalar? end=None, Scalar step=1, *, {fa}) -> Tensor",
        _meta_arange,
        method=False,
        family="factory",
        differentiable=False,
        doc="The 1-D tensor start, start + step, ... up to `end` (excluded); ``arange(n)`` "
        "is 0 .. n-1. Integer arguments give int64, a float one the default dtype.",
    )
    declare(
        f"linspace(Scalar start, Scalar end, int steps, *, {fa}) -> Tensor",
        _meta_linspace,
        impl=_linspace,
        **{**kw, "out": True},
    )
    declare(
        f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, {fa}) -> Tensor",
        _meta_logspace,
        impl=_logspace,
        **{**kw, "out": True},
    )
    # in-place fills: the primitives every backend implements (fill_ is in the minimum set)
    ip: dict[str, Any] = dict(family="fill", differentiable=False)
    # every element gets the same value: PyTorch fills expanded tensors too
    declare(
        "fill_(Tensor(a!) self, Tensor|Scalar value) -> Tensor(a!)",
        _meta_fill_,
        doc="Fill `self` with `value` (a number or a 0-d tensor), in place.",
        aliased_writes=True,
        **ip,
    )
    declare(
        "zero_(Tensor(a!) self) -> Tensor(a!)",
        _meta_fill_zero,
        impl=_zero_,
        aliased_writes=True,
        kind=EXPLICIT,
        **ip,
    )
    rnd: dict[str, Any] = dict(family="random", differentiable=False)
    declare(
        "uniform_(Tensor(a!) self, float from_=0.0, float to=1.0, *, Generator? "
        "generator=None) -> Tensor(a!)",
        _meta_uniform_,
        doc="Fill `self` with samples of the uniform distribution on [from_, to).",
        **rnd,
    )
    declare(
        "normal_(Tensor(a!) self, float mean=0.0, float std=1.0, *, Generator? "
        "generator=None) -> Tensor(a!)",
        _meta_normal_,
        doc="Fill `self` with samples of the normal distribution N(mean, std²).",
        **rnd,
    )
    declare(
        "random_(Tensor(a!) self, int from_=0, int? to=None, *, Generator? generator=None) "
        "-> Tensor(a!)",
        _meta_random_,
        doc="Fill `self` with integers drawn uniformly from [from_, to) (to=None: up to the "
        "dtype's range).",
        **rnd,
    )
    declare(
        "bernoulli_(Tensor(a!) self, Tensor|Scalar p=0.5, *, Generator? generator=None) -> "
        "Tensor(a!)",
        _meta_bernoulli_,
        impl=_bernoulli_,
        kind=EXPLICIT,
        **rnd,
    )
    declare(
        "bernoulli(Tensor self, float? p=None, *, Generator? generator=None) -> Tensor",
        _meta_bernoulli,
        impl=_bernoulli,
        kind=EXPLICIT,
        out=False,
        **rnd,
    )


def _meta_fill_zero(self):
    return (self._shape, self._dtype, self._device)


_declare_all()
