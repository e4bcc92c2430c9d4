"""Neural-network kernels: max/avg pooling over strided window views; conv2d and its backward
(im2col + GEMM through `xp.matmul`, i.e. cuBLAS) come from the backend kit
(`coretorch.backend_kit.conv`)."""
from __future__ import annotations

import numpy as np

from coretorch.backend_kit.conv import conv_kernels
from coretorch.ops.nn_ops import pool2d_args

from ..registry import TABLE, kernel
from ._common import KIT, acc_float, arr, write, xp

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _as_strided(a, shape, strides):
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


# ---- conv2d and its backward: the backend kit's (`coretorch.backend_kit.conv`) -------------

TABLE.add_all(conv_kernels(KIT))


# ---- pooling ---------------------------------------------------------------------------------

def _planes(a, dtype):
    h, w = a.shape[-2:]
    return xp.ascontiguousarray(a.astype(dtype)).reshape(-1, h, w)


def _pad_planes(x, ph: int, pw: int, need_h: int, need_w: int, value):
    """x (P, H, W) padded by ph/pw on top/left and on the bottom/right up to need_h/need_w."""
    p, h, w = x.shape
    hp, wp = max(h + ph, need_h), max(w + pw, need_w)
    if ph == 0 and pw == 0 and hp == h and wp == w:
        return x
    res = xp.full((p, hp, wp), value, x.dtype)
    res[:, ph:ph + h, pw:pw + w] = x
    return res


def _pool_windows(xpad, oh, ow, kh, kw, sh, sw, dh=1, dw=1):
    """(P, OH, OW, kh, kw) strided view of the pooling windows of padded planes."""
    s0, s1, s2 = xpad.strides
    return _as_strided(xpad, (xpad.shape[0], oh, ow, kh, kw),
                       (s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw))


def _first_valid(i, s, p, d):
    """Start of window i clipped into the input by whole dilation steps (the CPU loop's rule)."""
    start = i * s - p
    return xp.where(start < 0, start + (-start + d - 1) // d * d, start)


@kernel("max_pool2d_with_indices")
def max_pool2d_with_indices(out, self, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False):
    """(max over each window, flat H*W index of the max); NaN wins (the last NaN)"""
    values, indices = out
    a = arr(self)
    o = arr(values)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = pool2d_args("max_pool2d", kernel_size, stride,
                                                         padding, dilation)
    cdt = acc_float(a.dtype)
    init = cdt.type(-np.inf) if cdt.kind == "f" else np.iinfo(cdt).min
    x = _planes(a, cdt)
    _, h, w = x.shape
    oh, ow = o.shape[-2:]
    xpad = _pad_planes(x, ph, pw, (oh - 1) * sh + (kh - 1) * dh + 1,
                       (ow - 1) * sw + (kw - 1) * dw + 1, init)
    win = _pool_windows(xpad, oh, ow, kh, kw, sh, sw, dh, dw).reshape(-1, oh, ow, kh * kw)
    k = xp.argmax(win, axis=-1)
    if cdt.kind == "f":
        isn = xp.isnan(win)
        last_nan = kh * kw - 1 - xp.argmax(isn[..., ::-1], axis=-1)
        k = xp.where(isn.any(axis=-1), last_nan, k)
    vals = xp.take_along_axis(win, k[..., None], axis=-1)[..., 0]
    i = xp.arange(oh).reshape(oh, 1)
    j = xp.arange(ow).reshape(1, ow)
    hh = i * sh - ph + (k // kw) * dh
    ww = j * sw - pw + (k % kw) * dw
    outside = (hh < 0) | (hh >= h) | (ww < 0) | (ww >= w)
    first = _first_valid(i, sh, ph, dh) * w + _first_valid(j, sw, pw, dw)
    idx = xp.where(outside, first, hh * w + ww)
    write(values, vals.reshape(o.shape))
    write(indices, idx.reshape(o.shape))


def _avg_divisors(oh, ow, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor):
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
        f = xp.full((oh, ow), int(divisor), np.int64)
    elif count_include_pad:
        f = pool_h[:, None] * pool_w[None, :]
    else:
        f = valid_h[:, None] * valid_w[None, :]
    return xp.where(empty, 1, f), empty


def _avg_kind(dtype: np.dtype) -> np.dtype:
    return acc_float(dtype) if dtype.kind == "f" else np.dtype(np.int64)


@kernel("avg_pool2d")
def avg_pool2d(out, self, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean over each window (integers: the sum divided with truncation toward zero)"""
    a, o = arr(self), arr(out)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), _ = pool2d_args("avg_pool2d", kernel_size, stride, padding)
    cdt = _avg_kind(a.dtype)
    x = _planes(a, cdt)
    _, h, w = x.shape
    oh, ow = o.shape[-2:]
    xpad = _pad_planes(x, ph, pw, (oh - 1) * sh + kh, (ow - 1) * sw + kw, 0)
    acc = _pool_windows(xpad, oh, ow, kh, kw, sh, sw).sum(axis=(3, 4))
    f, empty = _avg_divisors(oh, ow, h, w, kh, kw, sh, sw, ph, pw, bool(count_include_pad),
                             divisor_override)
    if cdt.kind == "f":
        y = acc / f.astype(cdt)
    else:
        q = xp.abs(acc) // f  # C++ integer division truncates toward zero
        y = xp.where(acc >= 0, q, -q)
    write(out, xp.where(empty, 0, y).reshape(o.shape))


@kernel("avg_pool2d_backward")
def avg_pool2d_backward(out, grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """Each output's gradient, divided by its window's divisor, added over its window"""
    gi = arr(out)
    (kh, kw), (sh, sw), (ph, pw), _ = pool2d_args("avg_pool2d_backward", kernel_size,
                                                  stride, padding)
    cdt = _F64 if gi.dtype == _F64 else _F32
    g = _planes(arr(grad_output), cdt)
    h, w = gi.shape[-2:]
    oh, ow = g.shape[-2:]
    hp, wp = max(h + ph, (oh - 1) * sh + kh), max(w + pw, (ow - 1) * sw + kw)
    gxp = xp.zeros((g.shape[0], hp, wp), cdt)
    if g.size:
        f, empty = _avg_divisors(oh, ow, h, w, kh, kw, sh, sw, ph, pw, bool(count_include_pad),
                                 divisor_override)
        v = xp.where(empty, 0, g / f.astype(cdt))
        for i in range(kh):
            for j in range(kw):
                gxp[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += v
    write(out, gxp[:, ph:ph + h, pw:pw + w].reshape(gi.shape))
