"""Convolution kernels on the array API: conv2d and its backward as im2col (a strided view of
every kernel window, no copy) + one GEMM per group through `xp.matmul` (BLAS / cuBLAS).

The arguments arrive checked and normalized by the ops' schemas and meta rules: stride, dilation
and convolution_backward's padding as pairs, conv2d's explicit ``pads`` precomputed from its
`padding` (an int, a pair, 'valid' or 'same').
"""

from __future__ import annotations

from .array_kit import acc_float, kit_of

__all__ = ["KERNELS"]


def _batched(a):
    return a[None] if a.ndim == 3 else a


def _padded(xp, x, pads):
    """`x` (N, C, H, W) zero-padded by ((top, bottom), (left, right))."""
    (t, b), (lft, r) = pads
    if not (t or b or lft or r):
        return x
    n, c, h, w = x.shape
    res = xp.zeros((n, c, h + t + b, w + lft + r), x.dtype)
    res[:, :, t : t + h, lft : lft + w] = x
    return res


def _windows(xp, xpad, kh: int, kw: int, stride: tuple, dilation: tuple, oh: int, ow: int):
    """The (N, C, kh, kw, OH, OW) strided view of every kernel window (no copy)."""
    n, c = xpad.shape[:2]
    s0, s1, s2, s3 = xpad.strides
    return xp.lib.stride_tricks.as_strided(
        xpad,
        shape=(n, c, kh, kw, oh, ow),
        strides=(s0, s1, s2 * dilation[0], s3 * dilation[1], s2 * stride[0], s3 * stride[1]),
    )


def conv2d(out, input, weight, bias, stride, padding, dilation, groups, pads):
    """2-D convolution (cross-correlation), im2col + one GEMM per group; `pads` is the explicit
    ((top, bottom), (left, right)) padding the meta rule computed from `padding`."""
    k = kit_of(out)
    xp, arr = k.xp, k.arr
    o = arr(out)
    if o.size == 0:
        return
    cdt = acc_float(o.dtype)
    x = _batched(arr(input)).astype(cdt, copy=False)
    w = arr(weight).astype(cdt, copy=False)
    cout, cg, kh, kw = w.shape
    n = x.shape[0]
    oh, ow = o.shape[-2:]
    res = xp.zeros((n, cout, oh, ow), cdt)
    if x.shape[1] and cg:
        win = _windows(
            xp, xp.ascontiguousarray(_padded(xp, x, pads)), kh, kw, stride, dilation, oh, ow
        )
        og = cout // groups
        for g in range(groups):
            cols = (
                win[:, g * cg : (g + 1) * cg]
                .transpose(1, 2, 3, 0, 4, 5)
                .reshape(cg * kh * kw, n * oh * ow)
            )
            r = xp.matmul(w[g * og : (g + 1) * og].reshape(og, cg * kh * kw), cols)
            res[:, g * og : (g + 1) * og] = r.reshape(og, n, oh, ow).transpose(1, 0, 2, 3)
    if bias is not None:
        res += arr(bias).astype(cdt, copy=False)[:, None, None]
    k.write(out, res.reshape(o.shape))


def convolution_backward(
    out, grad_output, input, weight, stride, padding, dilation, groups, output_mask
):
    """(grad_input, grad_weight, grad_bias) of conv2d, by GEMMs over the im2col columns; those
    output_mask leaves out are empty outputs, not written (grad_input not computed)"""
    gi_t, gw_t, gb_t = out
    k = kit_of(gi_t)
    xp, arr = k.xp, k.arr
    x0 = arr(input)
    cdt = acc_float(x0.dtype)
    go = _batched(arr(grad_output)).astype(cdt, copy=False)
    x = _batched(x0).astype(cdt, copy=False)
    w = arr(weight).astype(cdt, copy=False)
    ph, pw = padding
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    oh, ow = go.shape[-2:]
    og = cout // groups
    xpad = xp.ascontiguousarray(_padded(xp, x, ((ph, ph), (pw, pw))))
    gxp = xp.zeros(xpad.shape, cdt)
    gw = xp.zeros(w.shape, cdt)
    if go.size and x.size:
        win = _windows(xp, xpad, kh, kw, stride, dilation, oh, ow)
        for g in range(groups):
            ci, co = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
            cols = win[:, ci].transpose(1, 2, 3, 0, 4, 5).reshape(cg * kh * kw, n * oh * ow)
            gog = go[:, co].transpose(1, 0, 2, 3).reshape(og, n * oh * ow)
            gw[co] = xp.matmul(gog, cols.T).reshape(og, cg, kh, kw)
            if not output_mask[0]:
                continue
            dcols = xp.matmul(w[co].reshape(og, cg * kh * kw).T, gog).reshape(cg, kh, kw, n, oh, ow)
            for i in range(kh):
                for j in range(kw):
                    hs, ws = i * dilation[0], j * dilation[1]
                    gxp[
                        :,
                        ci,
                        hs : hs + stride[0] * (oh - 1) + 1 : stride[0],
                        ws : ws + stride[1] * (ow - 1) + 1 : stride[1],
                    ] += dcols[:, i, j].transpose(1, 0, 2, 3)
    gx = gxp[:, :, ph : ph + h, pw : pw + wd]
    for t, v, m in (
        (gi_t, gx, output_mask[0]),
        (gw_t, gw, output_mask[1]),
        (gb_t, go.sum(axis=(0, 2, 3)), output_mask[2]),
    ):
        if m:
            k.write(t, v.reshape(arr(t).shape))


KERNELS = {"conv2d": conv2d, "convolution_backward": convolution_backward}
