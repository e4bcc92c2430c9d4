"""Discrete Fourier transforms: ``coretorch.fft`` (PyTorch's ``torch.fft``).

Three primitives, PyTorch's own (``aten::_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``), carry the
transforms over a list of dims; `normalization` is the scale applied: 0 none, 1 by 1/sqrt(n),
2 by 1/n (n the number of transformed points). Every public transform is a composite: it pads or
trims the input to the requested sizes (`n` / `s`), turns `norm` ("backward", "forward",
"ortho") into that scale for its direction, and calls one primitive. hfft and ihfft are the
Hermitian transforms c2r(conj(x)) and conj(r2c(x)).

Derivatives are PyTorch's: c2c's adjoint is c2c in the other direction with the same scale;
r2c's is the real part of the inverse c2c of the gradient zero-padded to the full length; c2r's
is r2c of the gradient with the bins that stand for two conjugate bins doubled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl, shape_numel, wrap_dim
from .declare import REGISTRY, declare
from .meta_rules import resolve_device

__all__ = ["norm_mode"]

_T = TensorImpl
_NORMS = ("backward", "forward", "ortho")
_F: dict[str, Any] = dict(family="fft", method=False, function=False)


def _op(name: str):
    return REGISTRY[name].op.entry


def norm_mode(op: str, norm, forward: bool) -> int:
    """The scale (0 none, 1 1/sqrt(n), 2 1/n) of `norm` for a transform in this direction."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise ValueError(
            f'{op}(): Invalid normalization mode: "{norm}"; expected one of '
            f"{', '.join(_NORMS)} or None"
        )
    if norm == "ortho":
        return 1
    return 0 if (norm == "backward") == forward else 2


# ---- the primitives ---------------------------------------------------------------------------


def _check_dims(op: str, self, dim) -> None:
    nd = len(self._shape)
    if len(set(dim)) != len(dim) or any(not 0 <= d < nd for d in dim):
        raise RuntimeError(
            f"{op}(): dims {list(dim)} must be distinct and within the {nd} dims of the input"
        )


def _meta_c2c(self, dim, normalization, forward):
    _check_dims("_fft_c2c", self, dim)
    if not self._dtype.is_complex:
        raise RuntimeError(f"_fft_c2c(): expected a complex input, got {self._dtype.name}")
    return (self._shape, self._dtype, self._device)


def _meta_r2c(self, dim, normalization, onesided):
    _check_dims("_fft_r2c", self, dim)
    if self._dtype not in (dt.float32, dt.float64):
        raise RuntimeError(
            f"_fft_r2c(): expected a float32 or float64 input, got {self._dtype.name}"
        )
    shape = list(self._shape)
    if onesided and dim:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    return (tuple(shape), self._dtype.to_complex(), self._device)


def _meta_c2r(self, dim, normalization, last_dim_size):
    _check_dims("_fft_c2r", self, dim)
    if not self._dtype.is_complex:
        raise RuntimeError(f"_fft_c2r(): expected a complex input, got {self._dtype.name}")
    if last_dim_size < 1:
        raise RuntimeError(f"_fft_c2r(): Invalid number of data points ({last_dim_size}) specified")
    shape = list(self._shape)
    if dim:
        shape[dim[-1]] = last_dim_size
    return (tuple(shape), self._dtype.to_real(), self._device)


def _d_c2c(ctx, g):
    return (_op("_fft_c2c")(g, ctx.dim, ctx.normalization, not ctx.forward),)


def _resized(x, d: int, n: int):
    """`x` trimmed or zero-padded (at the end) to `n` elements along dim `d`."""
    size = x._shape[d]
    if n == size:
        return x
    if n < size:
        return x.narrow(d, 0, n)
    pad = list(x._shape)
    pad[d] = n - size
    return _op("cat")([x, x.new_zeros(tuple(pad))], d)


def _d_r2c(ctx, g):
    x, dim = ctx.self, ctx.dim
    if ctx.onesided and dim:
        g = _resized(g, dim[-1], x._shape[dim[-1]])
    return (_op("real")(_op("_fft_c2c")(g, dim, ctx.normalization, False)),)


def _d_c2r(ctx, g):
    dim = ctx.dim
    gi = _op("_fft_r2c")(g, dim, ctx.normalization, True)
    if not dim:
        return (gi,)
    d = dim[-1]
    # bins 1 .. n - m stand for themselves and their conjugate mirror: counted twice
    double = g._shape[d] - gi._shape[d]
    if double > 0:
        m = gi._shape[d]
        gi = _op("cat")(
            [
                gi.narrow(d, 0, 1),
                gi.narrow(d, 1, double) * 2,
                gi.narrow(d, 1 + double, m - 1 - double),
            ],
            d,
        )
    return (gi,)


def _flops_fft(result, self, dim, *rest) -> int:
    """5 n log2(n) per transformed line (the radix-2 count)."""
    n = 1
    for d in dim:
        n *= max(self._shape[d], result._shape[d])
    if n <= 1:
        return 0
    return int(5 * n * math.log2(n) * shape_numel(result._shape) / max(n, 1))


# ---- argument handling shared by the public transforms -----------------------------------------


def _check_input(op: str, x, real_only: bool = False) -> None:
    d = x._dtype
    if real_only and d.is_complex:
        raise RuntimeError(f"{op}(): expects a real input tensor, but got {d.name}")
    if d in (dt.float16, dt.bfloat16):
        raise RuntimeError(
            f"{op}(): Unsupported dtype {d.name}: the transforms run in float32, "
            f"float64, complex64 and complex128"
        )


def _shape_and_dims(op: str, x, s, dim, default_all: bool = True) -> tuple[list, list]:
    """PyTorch's canonical (sizes, dims) of an n-dimensional transform: dims wrapped and
    distinct, a size per dim (-1 or absent: the input's)."""
    nd = len(x._shape)
    if dim is not None:
        if isinstance(dim, int):
            dim = [dim]
        dims = [wrap_dim(op, d, nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}(): FFT dims must be unique, got {list(dim)}")
        if s is not None and len(s) != len(dims):
            raise RuntimeError(
                f"{op}(): When given, dim and shape arguments must have the same "
                f"length (got s={list(s)} and dim={list(dim)})"
            )
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(
                f"{op}(): Got shape with {len(s)} values but input tensor only has {nd} dimensions."
            )
        dims = list(range(nd - len(s), nd))
    else:
        dims = list(range(nd)) if default_all else []
    sizes = [x._shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"{op}(): Invalid number of data points ({n}) specified")
    return sizes, dims


def _one_dim(op: str, x, n, dim) -> tuple[list, list]:
    if not x._shape:
        raise IndexError(f"{op}(): Dimension specified as {dim} but tensor has no dimensions")
    return _shape_and_dims(op, x, None if n is None else [n], [dim])


def _compute_dtype(x):
    """Integers and bool transform in the default float dtype."""
    d = x._dtype
    return d if d.is_complex or d.is_floating_point else dt.get_default_dtype()


def _fit(x, sizes: list, dims: list):
    """`x` in its transform dtype, trimmed or padded to `sizes` along `dims`."""
    d = _compute_dtype(x)
    if d is not x._dtype:
        x = x.to(d)
    for n, dd in zip(sizes, dims):
        x = _resized(x, dd, n)
    return x


def _out_shape(x, sizes: list, dims: list) -> list:
    shape = list(x._shape)
    for n, d in zip(sizes, dims):
        shape[d] = n
    return shape


# ---- the public transforms: sizes, spec and run per kind ----------------------------------------


def _c2c_spec(op: str, x, sizes, dims):
    _check_input(op, x)
    return (tuple(_out_shape(x, sizes, dims)), _compute_dtype(x).to_complex(), x._device)


def _c2c(op: str, x, sizes, dims, norm, forward: bool):
    mode = norm_mode(op, norm, forward)
    x = _fit(x, sizes, dims)
    if x._dtype.is_complex:
        return _op("_fft_c2c")(x, dims, mode, forward)
    # a real input: the full (two-sided) r2c; the inverse direction is its conjugate
    y = _op("_fft_r2c")(x, dims, mode, False)
    return y if forward else _op("conj")(y)


def _r2c_spec(op: str, x, sizes, dims):
    _check_input(op, x, real_only=True)
    shape = _out_shape(x, sizes, dims)
    shape[dims[-1]] = sizes[-1] // 2 + 1
    return (tuple(shape), _compute_dtype(x).to_complex(), x._device)


def _r2c(op: str, x, sizes, dims, norm, forward: bool):
    y = _op("_fft_r2c")(_fit(x, sizes, dims), dims, norm_mode(op, norm, forward), True)
    return y if forward else _op("conj")(y)  # ihfft: the conjugate of the inverse direction


def _c2r_spec(op: str, x, sizes, dims):
    _check_input(op, x)
    return (tuple(_out_shape(x, sizes, dims)), _compute_dtype(x).to_real(), x._device)


def _c2r(op: str, x, sizes, dims, norm, forward: bool):
    mode = norm_mode(op, norm, forward)
    n = sizes[-1]
    x = _fit(x, sizes[:-1] + [n // 2 + 1], dims)
    if not x._dtype.is_complex:
        x = x.to(x._dtype.to_complex())
    elif forward:  # hfft: the forward transform of a Hermitian signal
        x = _op("conj")(x)
    return _op("_fft_c2r")(x, dims, mode, n)


def _nonempty(op: str, x, s, dim, default_all: bool) -> tuple[list, list]:
    sizes, dims = _shape_and_dims(op, x, s, dim, default_all)
    if not dims:
        raise RuntimeError(f"{op}(): must transform at least one axis")
    return sizes, dims


def _c2r_last(op: str, x, sizes: list, dims: list, given: bool) -> tuple[list, list]:
    """The last output size of a c2r transform defaults to 2 * (m - 1)."""
    if not given:
        sizes[-1] = 2 * (x._shape[dims[-1]] - 1)
        if sizes[-1] < 1:
            raise RuntimeError(f"{op}(): Invalid number of data points ({sizes[-1]}) specified")
    return sizes, dims


def _sizes_1d(op: str, x, n, dim):
    return _one_dim(op, x, n, dim)


def _sizes_nd(default_all: bool, need_dims: bool):
    def sizes(op: str, x, s, dim):
        if need_dims:
            return _nonempty(op, x, s, dim, default_all)
        return _shape_and_dims(op, x, s, dim, default_all)

    return sizes


def _sizes_c2r_1d(op: str, x, n, dim):
    return _c2r_last(op, x, *_one_dim(op, x, n, dim), n is not None)


def _sizes_c2r_nd(default_all: bool):
    def sizes(op: str, x, s, dim):
        return _c2r_last(
            op, x, *_nonempty(op, x, s, dim, default_all), s is not None and s[-1] != -1
        )

    return sizes


_KINDS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "c2c": (_c2c_spec, _c2c),
    "r2c": (_r2c_spec, _r2c),
    "c2r": (_c2r_spec, _c2r),
}


def _transform(name: str, kind: str, forward: bool, sizes, doc: str) -> None:
    """Declare ``fft_<name>``: a one-dimensional transform (``n``) or, for names ending in 2 or
    n, an n-dimensional one (``s``); `sizes` gives its (sizes, dims), `kind` its primitive."""
    spec, run = _KINDS[kind]

    def meta(self, size, dim, norm):
        norm_mode(name, norm, forward)
        return spec(name, self, *sizes(name, self, size, dim))

    # the impl's parameters carry the schema's names (n or s): the kernel-signature check reads them
    if name[-1] in "2n":

        def impl(self, s, dim, norm):
            return run(name, self, *sizes(name, self, s, dim), norm, forward)

        dims = "int[1] dim=[-2, -1]" if name.endswith("2") else "int[1]? dim=None"
        schema = f"fft_{name}(Tensor self, int[1]? s=None, {dims}, str? norm=None) -> Tensor"
    else:

        def impl(self, n, dim, norm):
            return run(name, self, *sizes(name, self, n, dim), norm, forward)

        schema = f"fft_{name}(Tensor self, int? n=None, int dim=-1, str? norm=None) -> Tensor"
    impl.__doc__ = doc
    declare(schema, meta, impl=impl, **_F)


def _declare_transforms() -> None:
    one = "along `dim`, the input trimmed or zero-padded to `n` points"
    _transform("fft", "c2c", True, _sizes_1d, f"The discrete Fourier transform {one}.")
    _transform("ifft", "c2c", False, _sizes_1d, f"The inverse transform {one}.")
    _transform(
        "rfft",
        "r2c",
        True,
        _sizes_1d,
        f"The one-sided transform of real `input` {one}: n // 2 + 1 frequencies.",
    )
    _transform(
        "ihfft",
        "r2c",
        False,
        _sizes_1d,
        f"The inverse of `hfft`: the one-sided inverse transform of real `input` {one}.",
    )
    _transform(
        "irfft",
        "c2r",
        False,
        _sizes_c2r_1d,
        "The inverse of `rfft`: `n` real points (default 2 * (m - 1)) from a one-sided "
        "spectrum along `dim`.",
    )
    _transform(
        "hfft",
        "c2r",
        True,
        _sizes_c2r_1d,
        "The transform of a Hermitian signal given by its one-sided half along `dim`: "
        "`n` real points (default 2 * (m - 1)).",
    )
    for suffix, all_dims in (("2", False), ("n", True)):
        what = "2-dimensional" if suffix == "2" else "n-dimensional"
        _transform(
            "fft" + suffix,
            "c2c",
            True,
            _sizes_nd(all_dims, False),
            f"The {what} discrete Fourier transform over `dim` (sizes `s`).",
        )
        _transform(
            "ifft" + suffix,
            "c2c",
            False,
            _sizes_nd(all_dims, False),
            f"The {what} inverse discrete Fourier transform over `dim` (sizes `s`).",
        )
        _transform(
            "rfft" + suffix,
            "r2c",
            True,
            _sizes_nd(all_dims, True),
            f"The {what} transform of real `input` over `dim`, one-sided along the last of them.",
        )
        _transform(
            "irfft" + suffix,
            "c2r",
            False,
            _sizes_c2r_nd(all_dims),
            f"The inverse of `rfft{suffix}`: a real signal of sizes `s` over `dim` from "
            f"its spectrum, one-sided along the last dim.",
        )
        _transform(
            "hfft" + suffix,
            "c2r",
            True,
            _sizes_c2r_nd(all_dims),
            f"The {what} transform of a signal Hermitian along the last of `dim`, given "
            f"by its one-sided half: a real result of sizes `s`.",
        )
        _transform(
            "ihfft" + suffix,
            "r2c",
            False,
            _sizes_nd(all_dims, True),
            f"The inverse of `hfft{suffix}`: the {what} inverse transform of real "
            f"`input`, one-sided along the last of `dim`.",
        )


# ---- frequencies and shifts -------------------------------------------------------------------


def _meta_freq(op: str, n: int, dtype, device, count: int):
    if n < 0:
        raise RuntimeError(f"{op}(): n must be non-negative, got {n}")
    d = dtype or dt.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{op}(): expected a floating point or complex dtype, got {d.name}")
    return ((count,), d, resolve_device(device))


def _meta_fftfreq(n, d, dtype, layout, device, requires_grad, pin_memory):
    return _meta_freq("fftfreq", n, dtype, device, n)


def _fftfreq(n, d, dtype, layout, device, requires_grad, pin_memory):
    """The sample frequencies of an `n`-point transform with sample spacing `d`:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    spec = _meta_fftfreq(n, d, dtype, layout, device, requires_grad, pin_memory)
    i = _op("arange")(n, dtype=dt.int64, device=spec[2])
    k = _op("where")(i < (n + 1) // 2, i, i - n)
    return (k.to(spec[1]) / (d * n)).requires_grad_(requires_grad)


def _meta_rfftfreq(n, d, dtype, layout, device, requires_grad, pin_memory):
    return _meta_freq("rfftfreq", n, dtype, device, n // 2 + 1)


def _rfftfreq(n, d, dtype, layout, device, requires_grad, pin_memory):
    """The sample frequencies of `rfft` of `n` points: [0, 1, ..., n // 2] / (d * n)."""
    spec = _meta_rfftfreq(n, d, dtype, layout, device, requires_grad, pin_memory)
    k = _op("arange")(n // 2 + 1, dtype=spec[1], device=spec[2])
    return (k / (d * n)).requires_grad_(requires_grad)


def _shift_dims(op: str, x, dim) -> list:
    nd = len(x._shape)
    if dim is None:
        return list(range(nd))
    return [wrap_dim(op, d, nd) for d in ([dim] if isinstance(dim, int) else dim)]


def _meta_shift(name: str):
    def meta(self, dim):
        _shift_dims(name, self, dim)
        return (self._shape, self._dtype, self._device)

    meta.__name__ = f"meta_{name}"
    return meta


def _fftshift(self, dim):
    """`input` rolled so the zero frequency is at the centre of each dim in `dim` (all dims
    when None)."""
    dims = _shift_dims("fftshift", self, dim)
    if not dims:
        return self.clone()
    return _op("roll")(self, [self._shape[d] // 2 for d in dims], dims)


def _ifftshift(self, dim):
    """The inverse of `fftshift`."""
    dims = _shift_dims("ifftshift", self, dim)
    if not dims:
        return self.clone()
    return _op("roll")(self, [(self._shape[d] + 1) // 2 for d in dims], dims)


def _declare_all() -> None:
    prim: dict[str, Any] = dict(family="fft", method=False, function=False, flops=_flops_fft)
    declare(
        "_fft_c2c(Tensor self, int[] dim, int normalization, bool forward) -> Tensor",
        _meta_c2c,
        derivative=_d_c2c,
        saves=(),
        **prim,
        doc="The complex-to-complex transform of `self` over `dim` (forward: e^-2pi i; "
        "`normalization` 0 none, 1 1/sqrt(n), 2 1/n).",
    )
    declare(
        "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
        _meta_r2c,
        derivative=_d_r2c,
        saves=("self",),
        **prim,
        doc="The forward transform of real `self` over `dim` (one-sided along the last dim "
        "when `onesided`).",
    )
    declare(
        "_fft_c2r(Tensor self, int[] dim, int normalization, int last_dim_size) -> Tensor",
        _meta_c2r,
        derivative=_d_c2r,
        saves=(),
        **prim,
        doc="The inverse transform of the one-sided Hermitian spectrum `self` over `dim`: a "
        "real result with `last_dim_size` points along the last dim.",
    )
    _declare_transforms()
    factory = (
        "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool requires_grad=False, bool? pin_memory=False"
    )
    declare(
        f"fft_fftfreq(int n, float d=1.0, {factory}) -> Tensor", _meta_fftfreq, impl=_fftfreq, **_F
    )
    declare(
        f"fft_rfftfreq(int n, float d=1.0, {factory}) -> Tensor",
        _meta_rfftfreq,
        impl=_rfftfreq,
        **_F,
    )
    declare(
        "fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor",
        _meta_shift("fftshift"),
        impl=_fftshift,
        **_F,
    )
    declare(
        "fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor",
        _meta_shift("ifftshift"),
        impl=_ifftshift,
        **_F,
    )


_declare_all()
