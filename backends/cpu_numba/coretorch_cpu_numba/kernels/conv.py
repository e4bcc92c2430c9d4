"""Convolution kernels of the cpu backend: im2col and col2im as numba loops into reused column
buffers, one BLAS GEMM per group (the whole batch at once), the bias added in the pass that
lays the GEMM result out as (N, C_out, ...), float32 kept float32.

The loops are written for 3-D convolutions (N, C, D, H, W); a 2-D convolution is one with depth
1. The column buffer has the layout (rows, N, L) with rows = groups x C/groups x kD x kH x kW and
L = OD x OH x OW, so that each GEMM (forward, grad_weight, grad_input) runs over all N x L output
positions in one call: on the LeNet and 64x32x14x14 shapes one large GEMM is about 3x faster
than a batched matmul of N per-sample GEMMs.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import uint64 as U

from coretorch.backend_kit.array_kit import acc_float

from ..registry import kernel
from ..scratch import scratch as _buffer
from ._common import arr, write, writable_target

__all__ = ["im2col", "col2im", "columns", "add_columns", "conv_forward", "conv_input_grad"]

# The loops run over a zero-padded copy of the input (no bounds tests in the inner loops) and
# index flat arrays with unsigned offsets: a signed index makes numba test it for wrap-around on
# every access and the copy loops stop vectorizing (measured 1.5-15x slower). They run serially:
# BLAS runs its own threads right after, and numba's OpenMP workers spinning on the cores the
# GEMM needs made forward and LeNet steps 1.3-1.6x slower than the serial loops (2 cores).

@numba.njit(cache=True)
def im2col(xp, cols, kd, kh, kw, sd, sh, sw, dd, dh, dw, od, oh, ow):
    """cols[row, n, l] = the padded input xp (N, C, Dp, Hp, Wp) under kernel tap `row` at output
    position l of sample n; cols is (C*kd*kh*kw, N, od*oh*ow): channel c's taps are rows
    c*kd*kh*kw onwards, so each group's rows are contiguous. Written in order."""
    n_, c_, dp, hp, wp = xp.shape
    kk = kd * kh * kw
    L = od * oh * ow
    xf, cf = xp.ravel(), cols.ravel()
    uow, usw = U(ow), U(sw)
    for rc in range(c_ * kk):
        c, t = rc // kk, rc % kk
        a, b, e = t // (kh * kw), (t // kw) % kh, t % kw
        dst = U(rc * n_ * L)
        for n in range(n_):
            plane = (n * c_ + c) * dp * hp * wp + (a * dd * hp + b * dh) * wp + e * dw
            for z in range(od):
                for y in range(oh):
                    src = U(plane + (z * sd * hp + y * sh) * wp)
                    for q in range(uow):
                        cf[dst + q] = xf[src + q * usw]
                    dst += uow


@numba.njit(cache=True)
def col2im(cols, gp, kd, kh, kw, sd, sh, sw, dd, dh, dw, od, oh, ow):
    """The adjoint of `im2col`: the padded gradient gp (N, C, Dp, Hp, Wp), zeroed here, receives
    every column entry at the position it was read from, one (sample, channel) plane at a
    time."""
    n_, c_, dp, hp, wp = gp.shape
    kk = kd * kh * kw
    L = od * oh * ow
    gf, cf = gp.ravel(), cols.ravel()
    uow, usw = U(ow), U(sw)
    size = dp * hp * wp
    for nc in range(n_ * c_):
        n, c = nc // c_, nc % c_
        gf[nc * size:(nc + 1) * size] = 0
        for t in range(kk):
            a, b, e = t // (kh * kw), (t // kw) % kh, t % kw
            plane = nc * size + (a * dd * hp + b * dh) * wp + e * dw
            src = U(((c * kk + t) * n_ + n) * L)
            for z in range(od):
                for y in range(oh):
                    dst = U(plane + (z * sd * hp + y * sh) * wp)
                    for q in range(uow):
                        gf[dst + q * usw] += cf[src + q]
                    src += uow


def _geometry(k: tuple, stride: tuple, dilation: tuple, out: tuple) -> tuple:
    """The 12 geometry ints of im2col/col2im, 2-D geometry as depth 1."""
    lead = (1,) * (3 - len(k))
    return lead + tuple(k) + lead + tuple(stride) + lead + tuple(dilation) + lead + tuple(out)


def _padded_shape(x_shape: tuple, k, stride, pads, dilation, out) -> tuple:
    """(N, C, *padded): the low padding plus what the last window reaches (at least the input)."""
    return tuple(x_shape[:2]) + tuple(
        max(size + p, (o - 1) * s + (kk - 1) * d + 1)
        for size, kk, s, p, d, o in zip(x_shape[2:], k, stride, pads, dilation, out))


def _interior(a: np.ndarray, pads: tuple, sizes: tuple) -> np.ndarray:
    """The view of the unpadded region of a padded (N, C, *padded) array."""
    return a[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pads, sizes))]


def _as5d(a: np.ndarray) -> np.ndarray:
    """(N, C, *spatial) as (N, C, D, H, W)."""
    return a.reshape(a.shape[:2] + (1,) * (5 - a.ndim) + a.shape[2:])


def columns(x: np.ndarray, k: tuple, stride: tuple, pads: tuple, dilation: tuple,
            out: tuple) -> np.ndarray:
    """The (C*prod(k), N, prod(out)) im2col buffer of C-contiguous x (N, C, *in) (a reused
    buffer: valid until the next call), padded by `pads` below (the output sizes `out` fix the
    padding above)."""
    shape = _padded_shape(x.shape, k, stride, pads, dilation, out)
    if shape != x.shape:
        xp = _buffer("xpad", shape, x.dtype)
        xp.fill(0)
        _interior(xp, pads, x.shape[2:])[...] = x
        x = xp
    cols = _buffer("cols", (x.shape[1] * int(np.prod(k)), x.shape[0], int(np.prod(out))),
                   x.dtype)
    im2col(_as5d(x), cols, *_geometry(k, stride, dilation, out))
    return cols


def add_columns(cols: np.ndarray, k: tuple, stride: tuple, pads: tuple, dilation: tuple,
                out: tuple, gx: np.ndarray) -> None:
    """gx (N, C, *in) = the adjoint of `columns` applied to `cols` (col2im)."""
    shape = _padded_shape(gx.shape, k, stride, pads, dilation, out)
    gp = gx if shape == gx.shape else _buffer("gpad", shape, gx.dtype)
    col2im(cols, _as5d(gp), *_geometry(k, stride, dilation, out))
    if gp is not gx:
        gx[...] = _interior(gp, pads, gx.shape[2:])


@numba.njit(cache=True)
def _to_batch_major(r, b, y):
    """y[n, c, l] = r[c, n, l] (+ b[c] when b has C entries): the GEMM's (C_out, N, L) result
    in the output's layout, with the bias added on the way."""
    c_, n_, l_ = r.shape
    has_bias = b.shape[0] == c_
    for nc in range(n_ * c_):
        n, c = nc // c_, nc % c_
        src, dst = r[c, n], y[n, c]
        if has_bias:
            bc = b[c]
            for q in range(l_):
                dst[q] = src[q] + bc
        else:
            for q in range(l_):
                dst[q] = src[q]


def conv_forward(x: np.ndarray, w: np.ndarray, b, groups: int, stride: tuple, pads: tuple,
                 dilation: tuple, y: np.ndarray) -> None:
    """y (N, C_out, *out) = the convolution of x (N, C_in, *in) with w (C_out, C_in/g, *k)
    plus b (or None); pads are the low-side paddings (the output shape fixes the high side).
    All arrays of one float dtype, x and y C-contiguous."""
    n, cout = y.shape[:2]
    cg, k = w.shape[1], w.shape[2:]
    kg = cg * int(np.prod(k))
    og = cout // groups
    L = int(np.prod(y.shape[2:]))
    cols = columns(x, k, stride, pads, dilation, y.shape[2:])
    r = _buffer("gemm", (groups, og, n * L), x.dtype)
    # one GEMM per group over the whole batch (a batched matmul of N small GEMMs is 3x slower)
    np.matmul(w.reshape(groups, og, kg), cols.reshape(groups, kg, n * L), out=r)
    _to_batch_major(r.reshape(cout, n, L), b if b is not None else np.empty(0, y.dtype),
                    y.reshape(n, cout, L))


def conv_input_grad(go_t: np.ndarray, w: np.ndarray, groups: int, stride: tuple, pads: tuple,
                    dilation: tuple, out_sizes: tuple, gx: np.ndarray) -> None:
    """gx (N, C_in, *in) = the adjoint of the convolution applied to the output gradient given
    as go_t (C_out, N, L) over the output sizes `out_sizes`: one GEMM per group into the
    column buffer, then col2im."""
    cout, n, L = go_t.shape
    cg, k = w.shape[1], w.shape[2:]
    kg = cg * int(np.prod(k))
    og = cout // groups
    dcols = _buffer("dcols", (groups, kg, n * L), go_t.dtype)
    np.matmul(w.reshape(groups, og, kg).transpose(0, 2, 1), go_t.reshape(groups, og, n * L),
              out=dcols)
    add_columns(dcols.reshape(groups * kg, n, L), k, stride, pads, dilation, out_sizes, gx)


def _batched(a: np.ndarray, spatial: int) -> np.ndarray:
    return a if a.ndim == spatial + 2 else a[None]


@kernel("conv2d")
def conv2d(out, input, weight, bias, stride, padding, dilation, groups, pads):
    """2-D convolution (cross-correlation): numba im2col + one GEMM per group, bias folded"""
    o = arr(out)
    if o.size == 0:
        return
    cdt = acc_float(o.dtype)
    x = np.ascontiguousarray(_batched(arr(input), 2), dtype=cdt)
    w = np.ascontiguousarray(arr(weight), dtype=cdt)
    b = None if bias is None else np.ascontiguousarray(arr(bias), dtype=cdt)
    shape = (x.shape[0], w.shape[0]) + o.shape[-2:]
    y, copy = writable_target(out, cdt, shape)
    if x.shape[1] == 0 or w.shape[1] == 0:
        y[...] = 0 if b is None else b[:, None, None]
    else:
        # the high-side padding is implied by the output size (padding='same' may be uneven)
        conv_forward(x, w, b, groups, stride, (pads[0][0], pads[1][0]), dilation, y)
    if copy:
        write(out, y.reshape(o.shape))


@kernel("convolution_backward")
def convolution_backward(out, grad_output, input, weight, stride, padding, dilation, groups):
    """(grad_input, grad_weight, grad_bias) of conv2d: the output gradient transposed once to
    (C_out, N*L), then one GEMM per group for each of grad_weight and grad_input"""
    gi_t, gw_t, gb_t = out
    x0 = arr(input)
    cdt = acc_float(x0.dtype)
    go = _batched(arr(grad_output), 2)
    x = np.ascontiguousarray(_batched(x0, 2), dtype=cdt)
    w = np.ascontiguousarray(arr(weight), dtype=cdt)
    n, cout = go.shape[:2]
    cg, k = w.shape[1], w.shape[2:]
    kg = cg * int(np.prod(k))
    og = cout // groups
    L = int(np.prod(go.shape[2:]))
    go_t = _buffer("go_t", (cout, n, L), cdt)
    np.copyto(go_t, go.reshape(n, cout, L).transpose(1, 0, 2), casting="unsafe")
    gw, gw_copy = writable_target(gw_t, cdt, (groups, og, kg))
    gx, gx_copy = writable_target(gi_t, cdt, x.shape)
    if go.size and x.size:
        cols = columns(x, k, stride, padding, dilation, go.shape[2:])
        np.matmul(go_t.reshape(groups, og, n * L),
                  cols.reshape(groups, kg, n * L).transpose(0, 2, 1), out=gw)
        conv_input_grad(go_t, w, groups, stride, padding, dilation, go.shape[2:], gx)
    else:
        gw[...] = 0
        gx[...] = 0
    if gx_copy:
        write(gi_t, gx.reshape(arr(gi_t).shape))
    if gw_copy:
        write(gw_t, gw.reshape(arr(gw_t).shape))
    write(gb_t, go_t.reshape(cout, n * L).sum(axis=1))
