"""Pooling kernels on the array API: max and average pooling over a strided view of every window
(no copy), the backward of average pooling as one strided add per window offset, and the
backward of max pooling as one scatter-add at the saved indices.

The arguments arrive checked by the ops' meta rules: kernel_size, padding and dilation as pairs,
``window_stride`` (the stride, or kernel_size where it was omitted) precomputed by the meta rule;
`out` has the output size (``ceil_mode`` included).
"""

from __future__ import annotations

import numpy as np

from .array_kit import acc_float, is_float, kit_of

__all__ = ["KERNELS"]

_F32, _F64, _I64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)


def _planes(xp, a, dtype):
    """(P, H, W) contiguous planes of `a` (..., H, W) in `dtype`."""
    h, w = a.shape[-2:]
    return xp.ascontiguousarray(a.astype(dtype)).reshape(-1, h, w)


def _pad_planes(xp, x, ph: int, pw: int, need_h: int, need_w: int, value):
    """x (P, H, W) padded by ph/pw on top/left and on the bottom/right up to need_h/need_w."""
    p, h, w = x.shape
    hp, wp = max(h + ph, need_h), max(w + pw, need_w)
    if ph == 0 and pw == 0 and hp == h and wp == w:
        return x
    res = xp.full((p, hp, wp), value, x.dtype)
    res[:, ph : ph + h, pw : pw + w] = x
    return res


def _pool_windows(xp, xpad, oh, ow, kh, kw, sh, sw, dh=1, dw=1):
    """(P, OH, OW, kh, kw) strided view of the pooling windows of padded planes."""
    s0, s1, s2 = xpad.strides
    return xp.lib.stride_tricks.as_strided(
        xpad,
        shape=(xpad.shape[0], oh, ow, kh, kw),
        strides=(s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw),
    )


def _first_valid(xp, i, s, p, d):
    """Start of window i clipped into the input by whole dilation steps (the CPU loop's rule)."""
    start = i * s - p
    return xp.where(start < 0, start + (-start + d - 1) // d * d, start)


def max_pool2d_with_indices(
    out, self, kernel_size, stride, padding, dilation, ceil_mode, window_stride
):
    """(max over each window, flat H*W index of the max); NaN wins (the last NaN)"""
    values, indices = out
    k = kit_of(values)
    xp = k.xp
    a = k.arr(self)
    o = k.arr(values)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, window_stride, padding, dilation
    cdt = acc_float(a.dtype)  # bool input was refused by the meta rule
    init = cdt.type(-np.inf) if cdt.kind == "f" else np.iinfo(cdt).min
    x = _planes(xp, a, cdt)
    _, h, w = x.shape
    oh, ow = o.shape[-2:]
    xpad = _pad_planes(
        xp, x, ph, pw, (oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1, init
    )
    win = _pool_windows(xp, xpad, oh, ow, kh, kw, sh, sw, dh, dw).reshape(-1, oh, ow, kh * kw)
    best = xp.argmax(win, axis=-1)
    if cdt.kind == "f":
        isn = xp.isnan(win)
        last_nan = kh * kw - 1 - xp.argmax(isn[..., ::-1], axis=-1)
        best = xp.where(isn.any(axis=-1), last_nan, best)
    vals = xp.take_along_axis(win, best[..., None], axis=-1)[..., 0]
    i = xp.arange(oh).reshape(oh, 1)
    j = xp.arange(ow).reshape(1, ow)
    hh = i * sh - ph + (best // kw) * dh
    ww = j * sw - pw + (best % kw) * dw
    outside = (hh < 0) | (hh >= h) | (ww < 0) | (ww >= w)
    first = _first_valid(xp, i, sh, ph, dh) * w + _first_valid(xp, j, sw, pw, dw)
    idx = xp.where(outside, first, hh * w + ww)
    k.write(values, vals.reshape(o.shape))
    k.write(indices, idx.reshape(o.shape))


def _avg_divisors(xp, oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor):
    """(divisor per output (OH, OW), empty-window mask), PyTorch's avg_pool2d rule."""

    def along(n, size, k, s, p):
        start = xp.arange(n) * s - p
        end = xp.minimum(start + k, size + p)
        pool = end - start
        valid = xp.minimum(end, size) - xp.maximum(start, 0)
        return pool, valid

    pool_h, valid_h = along(oh, h, kh, sh, ph)
    pool_w, valid_w = along(ow, w, kw, sw, pw)
    empty = (valid_h <= 0)[:, None] | (valid_w <= 0)[None, :]
    if divisor:
        f = xp.full((oh, ow), int(divisor), _I64)
    elif count_include_pad:
        f = pool_h[:, None] * pool_w[None, :]
    else:
        f = valid_h[:, None] * valid_w[None, :]
    return xp.where(empty, 1, f), empty


def avg_pool2d(
    out,
    self,
    kernel_size,
    stride,
    padding,
    ceil_mode,
    count_include_pad,
    divisor_override,
    window_stride,
):
    """Mean over each window (integers: the sum divided with truncation toward zero)"""
    k = kit_of(out)
    xp = k.xp
    a, o = k.arr(self), k.arr(out)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, window_stride, padding
    cdt = acc_float(a.dtype) if is_float(a.dtype) else _I64
    x = _planes(xp, a, cdt)
    _, h, w = x.shape
    oh, ow = o.shape[-2:]
    xpad = _pad_planes(xp, x, ph, pw, (oh - 1) * sh + kh, (ow - 1) * sw + kw, 0)
    acc = _pool_windows(xp, xpad, oh, ow, kh, kw, sh, sw).sum(axis=(3, 4))
    f, empty = _avg_divisors(
        xp, oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override
    )
    if cdt.kind == "f":
        y = acc / f.astype(cdt)
    else:
        q = xp.abs(acc) // xp.abs(f)  # C++ integer division truncates toward zero
        y = xp.where((acc >= 0) == (f > 0), q, -q)
    k.write(out, xp.where(empty, 0, y).reshape(o.shape))


def avg_pool2d_backward(
    out,
    grad_output,
    self,
    kernel_size,
    stride,
    padding,
    ceil_mode,
    count_include_pad,
    divisor_override,
    window_stride,
):
    """Each output's gradient, divided by its window's divisor, added over its window"""
    k = kit_of(out)
    xp = k.xp
    gi = k.arr(out)
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, window_stride, padding
    cdt = _F64 if gi.dtype == _F64 else _F32
    g = _planes(xp, k.arr(grad_output), cdt)
    h, w = gi.shape[-2:]
    oh, ow = g.shape[-2:]
    hp, wp = max(h + ph, (oh - 1) * sh + kh), max(w + pw, (ow - 1) * sw + kw)
    gxp = xp.zeros((g.shape[0], hp, wp), cdt)
    if g.size:
        f, empty = _avg_divisors(
            xp, oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override
        )
        v = xp.where(empty, 0, g / f.astype(cdt))
        for i in range(kh):
            for j in range(kw):
                gxp[:, i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw] += v
    k.write(out, gxp[:, ph : ph + h, pw : pw + w].reshape(gi.shape))


def max_pool2d_with_indices_backward(
    out,
    grad_output,
    self,
    kernel_size,
    stride,
    padding,
    dilation,
    ceil_mode,
    indices,
    window_stride,
):
    """Each output's gradient added at the flat H*W input index of its maximum"""
    k = kit_of(out)
    xp = k.xp
    gi = k.arr(out)
    cdt = _F64 if gi.dtype == _F64 else _F32
    g = k.arr(grad_output).astype(cdt).reshape(-1, grad_output._shape[-2] * grad_output._shape[-1])
    idx = k.arr(indices).reshape(g.shape)
    h, w = gi.shape[-2:]
    gx = xp.zeros((g.shape[0], h * w), cdt)
    if g.size:
        xp.add.at(gx, (xp.arange(g.shape[0])[:, None], idx), g)
    k.write(out, gx.reshape(gi.shape))


KERNELS = {
    "max_pool2d_with_indices": max_pool2d_with_indices,
    "avg_pool2d": avg_pool2d,
    "avg_pool2d_backward": avg_pool2d_backward,
    "max_pool2d_with_indices_backward": max_pool2d_with_indices_backward,
}
