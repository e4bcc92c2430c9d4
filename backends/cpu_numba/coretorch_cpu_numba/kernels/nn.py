"""Neural-network kernels the cpu backend runs faster than the backend kit's array-API ones: max and
average pooling and their backwards as numba loops. conv2d and its backward (numba im2col/col2im
+ BLAS GEMM) are in `conv.py`; softmax is in `softmax.py`."""

from __future__ import annotations

import numba
import numpy as np
from numba import uint64 as U

from coretorch.backend_kit.array_kit import acc_float, is_float

from ..registry import kernel
from ._common import arr, writable_target, write

_PARALLEL_MIN = 1 << 16  # elements; smaller problems run the serial kernels


# ---- pooling ---------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _window_max(xf, src, hs, he, ws, we, uw, dh, dw, init):
    """(max, its flat index, whether a NaN was seen) over one window of the plane at flat
    offset `src` (NaN ignored here: see `_max_plane`)."""
    best = init
    bi = hs * uw + ws
    nan = False
    for h in range(hs, he, dh):
        for w in range(ws, we, dw):
            k = h * uw + w
            v = xf[src + k]
            nan |= v != v
            if v > best:
                best = v
                bi = k
    return best, bi, nan


@numba.njit(cache=True, inline="always")
def _max_plane(x, y, ind, p, kh, kw, sh, sw, ph, pw, dh, dw, init):
    """Plane p of the max pool; x, y and ind C-contiguous. Flat arrays and unsigned offsets in
    the window loop (signed ones are tested for wrap-around on every access), and the NaN rule
    in a second pass over the rare windows holding one: 1.6x faster on LeNet's 2x2 pools."""
    H, W = x.shape[1], x.shape[2]
    OH, OW = y.shape[1], y.shape[2]
    xf, yf, jf = x.ravel(), y.ravel(), ind.ravel()
    src, dst = U(p * H * W), U(p * OH * OW)
    uw, udh, udw = U(W), U(dh), U(dw)
    for i in range(OH):
        hs = i * sh - ph
        he = min(hs + (kh - 1) * dh + 1, H)
        while hs < 0:
            hs += dh
        for j in range(OW):
            ws = j * sw - pw
            we = min(ws + (kw - 1) * dw + 1, W)
            while ws < 0:
                ws += dw
            if udh == 1 and udw == 1:  # constant steps: the loop runs 1.5x faster
                best, bi, nan = _window_max(
                    xf, src, U(hs), U(he), U(ws), U(we), uw, U(1), U(1), init
                )
            else:
                best, bi, nan = _window_max(xf, src, U(hs), U(he), U(ws), U(we), uw, udh, udw, init)
            if nan:  # as PyTorch: NaN wins (the last NaN of the window)
                for h in range(U(hs), U(he), udh):
                    for w in range(U(ws), U(we), udw):
                        k = h * uw + w
                        if xf[src + k] != xf[src + k]:
                            best = xf[src + k]
                            bi = k
            yf[dst] = best
            jf[dst] = bi
            dst += U(1)


@numba.njit(cache=True)
def _max_pool_serial(x, y, ind, kh, kw, sh, sw, ph, pw, dh, dw, init):
    for p in range(x.shape[0]):
        _max_plane(x, y, ind, p, kh, kw, sh, sw, ph, pw, dh, dw, init)


@numba.njit(cache=True, parallel=True)
def _max_pool_parallel(x, y, ind, kh, kw, sh, sw, ph, pw, dh, dw, init):
    for p in numba.prange(x.shape[0]):
        _max_plane(x, y, ind, p, kh, kw, sh, sw, ph, pw, dh, dw, init)


@numba.njit(cache=True, inline="always")
def _max_plane_2x2(x, y, ind, p):
    """Plane p of a 2x2 max pool of stride 2, no padding or dilation (LeNet's and most CNNs'):
    the four values of a window compared in order, a NaN taking over as PyTorch's rule says
    (the last NaN wins), without branches (on real data the comparisons are coin flips): 1.5x
    faster than the general window loop on LeNet's first pool (1.9 ms against 2.8, one thread)."""
    H, W = x.shape[1], x.shape[2]
    OH, OW = y.shape[1], y.shape[2]
    xf, yf, jf = x.ravel(), y.ravel(), ind.ravel()
    src, dst = U(p * H * W), U(p * OH * OW)
    uw = U(W)
    for i in range(U(OH)):
        k = U(2) * i * uw
        for j in range(U(OW)):
            a, b = xf[src + k], xf[src + k + U(1)]
            c, d = xf[src + k + uw], xf[src + k + uw + U(1)]
            best, bi = a, k
            t = (b > best) | (b != b)
            best = b if t else best
            bi = k + U(1) if t else bi
            t = (c > best) | (c != c)
            best = c if t else best
            bi = k + uw if t else bi
            t = (d > best) | (d != d)
            best = d if t else best
            bi = k + uw + U(1) if t else bi
            yf[dst] = best
            jf[dst] = bi
            dst += U(1)
            k += U(2)


@numba.njit(cache=True)
def _max_pool_2x2_serial(x, y, ind):
    for p in range(x.shape[0]):
        _max_plane_2x2(x, y, ind, p)


@numba.njit(cache=True, parallel=True)
def _max_pool_2x2_parallel(x, y, ind):
    for p in numba.prange(x.shape[0]):
        _max_plane_2x2(x, y, ind, p)


def _planes(a: np.ndarray, dtype) -> np.ndarray:
    h, w = a.shape[-2:]
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1, h, w)


@kernel("max_pool2d_with_indices")
def max_pool2d_with_indices(
    out, self, kernel_size, stride, padding, dilation, ceil_mode, window_stride
):
    """(max over each window, flat H*W index of the max); NaN wins (the last NaN)"""
    values, indices = out
    a = arr(self)
    o = arr(values)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, window_stride, padding, dilation
    cdt = acc_float(a.dtype)  # bool input was refused by the meta rule
    init = cdt.type(-np.inf if cdt.kind == "f" else np.iinfo(cdt).min)
    x = _planes(a, cdt)
    shape = (x.shape[0],) + o.shape[-2:]
    y, ycopy = writable_target(values, cdt, shape)
    ind, icopy = writable_target(indices, np.dtype(np.int64), shape)
    parallel = x.shape[0] > 1 and a.size >= _PARALLEL_MIN
    # 2x2 windows of stride 2 that all lie inside the plane (ceil_mode may add a partial one)
    if (kh, kw, sh, sw, ph, pw, dh, dw) == (2, 2, 2, 2, 0, 0, 1, 1) and (
        2 * shape[1] <= x.shape[1] and 2 * shape[2] <= x.shape[2]
    ):
        (_max_pool_2x2_parallel if parallel else _max_pool_2x2_serial)(x, y, ind)
    else:
        fn = _max_pool_parallel if parallel else _max_pool_serial
        fn(x, y, ind, kh, kw, sh, sw, ph, pw, dh, dw, init)
    if ycopy:
        write(values, y.reshape(o.shape))
    if icopy:
        write(indices, ind.reshape(o.shape))


@numba.njit(cache=True, inline="always")
def _avg_window(i, j, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor):
    """(hs, he, ws, we, divide_factor) of output (i, j), PyTorch's avg_pool2d rule."""
    hs = i * sh - ph
    ws = j * sw - pw
    he = min(hs + kh, H + ph)
    we = min(ws + kw, W + pw)
    pool = (he - hs) * (we - ws)
    hs, ws = max(hs, 0), max(ws, 0)
    he, we = min(he, H), min(we, W)
    if divisor != 0:
        f = divisor
    elif count_include_pad:
        f = pool
    else:
        f = (he - hs) * (we - ws)
    return hs, he, ws, we, f


@numba.njit(cache=True)
def _avg_pool_windows(
    pooled, full, backward, kh, kw, sh, sw, ph, pw, count_include_pad, divisor, zero
):
    """Walk the windows of average pooling over (planes, H, W) `full`, one per element of
    `pooled`. Forward: each window's mean into `pooled` (`zero`, 0.0 or 0, is the accumulator:
    floats divide, int64 truncates toward zero as C++ integer division does). Backward: each
    `pooled` gradient, divided by its window's divisor, added over its window of `full`."""
    H, W = full.shape[1], full.shape[2]
    for p in range(full.shape[0]):
        for i in range(pooled.shape[1]):
            for j in range(pooled.shape[2]):
                hs, he, ws, we, f = _avg_window(
                    i, j, H, W, kh, kw, sh, sw, ph, pw, count_include_pad, divisor
                )
                if hs >= he or ws >= we:
                    if not backward:
                        pooled[p, i, j] = 0
                    continue
                if backward:
                    v = pooled[p, i, j] / f
                    for h in range(hs, he):
                        for w in range(ws, we):
                            full[p, h, w] += v
                    continue
                acc = zero
                for h in range(hs, he):
                    for w in range(ws, we):
                        acc += full[p, h, w]
                if isinstance(zero, float):
                    pooled[p, i, j] = acc / f
                else:
                    q = abs(acc) // abs(f)  # a negative divisor_override flips the sign
                    pooled[p, i, j] = q if (acc >= 0) == (f > 0) else -q


def _avg_kind(dtype: np.dtype):
    if is_float(dtype):
        return acc_float(dtype), True
    return np.dtype(np.int64), False


@kernel("avg_pool2d")
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
    a, o = arr(self), arr(out)
    if o.size == 0:
        return
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, window_stride, padding
    cdt, is_float = _avg_kind(a.dtype)
    x = _planes(a, cdt)
    y, copy = writable_target(out, cdt, (x.shape[0],) + o.shape[-2:])
    _avg_pool_windows(
        y,
        x,
        False,
        kh,
        kw,
        sh,
        sw,
        ph,
        pw,
        count_include_pad,
        divisor_override or 0,
        0.0 if is_float else 0,
    )
    if copy:
        write(out, y.reshape(o.shape))


@kernel("avg_pool2d_backward")
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
    gi = arr(out)
    g0 = arr(grad_output)
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, window_stride, padding
    cdt = np.dtype(np.float64) if gi.dtype == np.float64 else np.dtype(np.float32)
    g = _planes(g0, cdt)
    h, w = gi.shape[-2:]
    gx = np.zeros((g.shape[0], h, w), cdt)
    if g.size:
        _avg_pool_windows(
            g, gx, True, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override or 0, 0.0
        )
    write(out, gx.reshape(gi.shape))


@numba.njit(cache=True)
def _max_pool_backward(g, ind, gx):
    # serial: a memory-bound scatter; a parallel launch on small planes cost more than the work
    for p in range(g.shape[0]):
        gx[p, :] = 0
        for j in range(g.shape[1]):
            gx[p, ind[p, j]] += g[p, j]


@kernel("max_pool2d_with_indices_backward")
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
    """Each output's gradient added at the flat H*W input index of its maximum (one pass)"""
    gi = arr(out)
    cdt = np.dtype(np.float64) if gi.dtype == np.float64 else np.dtype(np.float32)
    g0 = arr(grad_output)
    planes = gi.size // max(1, gi.shape[-2] * gi.shape[-1])
    g = np.ascontiguousarray(g0, dtype=cdt).reshape(planes, -1)
    ind = np.ascontiguousarray(arr(indices), dtype=np.int64).reshape(planes, -1)
    gx, copy = writable_target(out, cdt, (planes, gi.shape[-2] * gi.shape[-1]))
    _max_pool_backward(g, ind, gx)
    if copy:
        write(out, gx.reshape(gi.shape))
