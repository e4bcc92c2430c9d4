"""Transposed convolutions of ``nn.functional`` (conv_transpose1d/2d/3d): the adjoint of a
strided convolution, written with ordinary convolutions.

Output position q (before cropping the padding) receives x[i] w[k] whenever q = i*s + k*d.
Split q by its phase r = q mod s: the taps k with k*d ≡ r (mod s) form an arithmetic
progression, and along them the input offset advances by d/gcd(d, s). So each phase is a plain
(dilated) convolution of x with the flipped sub-kernel of those taps, and interleaving the s^n
phase outputs gives the result — the exact number of multiply-adds, no zero-stuffed input.
Gradients come from the convolutions, slicing and padding it is made of.

A composite stand-in until a backend provides the transposed convolution natively.
"""

from __future__ import annotations

import math

from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...ops.nn_ops import check_conv_dtypes, check_conv_ranks
from ...tensor.tensor import Tensor
from ._conv_args import check_groups, ntuple, stride_dilation
from .conv3d import conv3d
from .linear import conv1d, conv2d
from .padding import pad

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]

_CONV = {1: conv1d, 2: conv2d, 3: conv3d}


def _check(op: str, n: int, input: Tensor, weight: Tensor, groups: int) -> None:
    check_conv_ranks(op, n, input, weight, "in_channels, out_channels/groups, *kernel")
    check_groups(op, weight, groups)
    c_in = input.shape[-n - 1]
    if c_in != weight.shape[0]:
        raise RuntimeError(
            f"{op}(): Given transposed=1, weight of size {list(weight.shape)}, "
            f"expected input{list(input.shape)} to have {weight.shape[0]} "
            f"channels, but got {c_in} channels instead"
        )
    check_conv_dtypes(op, input, weight)


def _phases(k: int, s: int, d: int) -> list:
    """Per phase r in [0, s): (first tap, tap step, number of taps, input offset c0, input
    dilation) — or None when no tap lands on that phase."""
    g = math.gcd(d, s)
    out: list[tuple | None] = []
    for r in range(s):
        taps = [t for t in range(k) if (t * d - r) % s == 0]
        if not taps:
            out.append(None)
            continue
        out.append((taps[0], s // g, len(taps), (taps[0] * d - r) // s, d // g))
    return out


def _conv_transpose(
    op: str,
    n: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride,
    padding,
    output_padding,
    groups: int,
    dilation,
) -> Tensor:
    _check(op, n, input, weight, groups)
    s, d = stride_dilation(op, stride, dilation, n)
    p = ntuple(op, "padding", padding, n)
    op_ = ntuple(op, "output_padding", output_padding, n)
    if any(v < 0 for v in p):
        raise RuntimeError(f"{op}(): negative padding is not supported, got {padding!r}")
    if any(o >= max(si, di) or o < 0 for o, si, di in zip(op_, s, d)):
        raise RuntimeError(
            f"{op}(): output padding must be smaller than either stride or "
            f"dilation, but got output_padding={list(op_)}, stride={list(s)}, "
            f"dilation={list(d)}"
        )
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    k = tuple(weight.shape[2:])
    sizes = tuple(x.shape[2:])
    out_sizes = tuple(
        (L - 1) * si - 2 * pi + di * (ki - 1) + oi + 1
        for L, si, pi, di, ki, oi in zip(sizes, s, p, d, k, op_)
    )
    if any(o <= 0 for o in out_sizes):
        raise RuntimeError(
            f"{op}(): the output size {list(out_sizes)} computed from input "
            f"{list(input.shape)} is not positive"
        )
    c_in, c_out_g = weight.shape[0], weight.shape[1]
    c_out = c_out_g * groups
    # (C_in, C_out/g, *k) -> the (C_out, C_in/g, *k) layout of a convolution weight
    w = (
        weight.reshape((groups, c_in // groups, c_out_g) + k)
        .transpose(1, 2)
        .reshape((c_out, c_in // groups) + k)
    )
    grid = tuple(-(-(o + pi) // si) for o, pi, si in zip(out_sizes, p, s))  # M per dim
    per_dim = [_phases(ki, si, di) for ki, si, di in zip(k, s, d)]
    batch = x.shape[0]
    phase_outputs = []
    for r in _product([range(si) for si in s]):
        info = [per_dim[i][ri] for i, ri in enumerate(r)]
        if any(v is None or v[3] >= grid[i] for i, v in enumerate(info)):
            phase_outputs.append(aten.zeros((batch, c_out) + grid, dtype=x.dtype, device=x.device))
            continue
        index = (slice(None), slice(None)) + tuple(
            slice(t0, t0 + step * (cnt - 1) + 1, step) for t0, step, cnt, _, _ in info
        )
        sub = w[index].flip(tuple(range(2, n + 2)))
        conv_pad = tuple((cnt - 1) * dd for _, _, cnt, _, dd in info)
        conv_dil = tuple(dd for *_, dd in info)
        z = _CONV[n](
            x,
            sub,
            None,
            1,
            conv_pad if n > 1 else conv_pad[0],
            conv_dil if n > 1 else conv_dil[0],
            groups,
        )
        placement = []
        for i in range(n - 1, -1, -1):
            c0, length = info[i][3], z.shape[2 + i]
            placement += [c0, grid[i] - c0 - length]
        phase_outputs.append(pad(z, placement))
    if len(phase_outputs) == 1:
        full = phase_outputs[0]
    else:
        # (s1..sn, N, C, M1..Mn) -> (N, C, M1, s1, ..., Mn, sn) -> (N, C, M1*s1, ..., Mn*sn)
        stacked = aten.stack(phase_outputs, 0).reshape(s + (batch, c_out) + grid)
        order = [n, n + 1] + [v for i in range(n) for v in (n + 2 + i, i)]
        full = stacked.permute(order).reshape(
            (batch, c_out) + tuple(m * si for m, si in zip(grid, s))
        )
    for i in range(n):
        full = full.narrow(2 + i, p[i], out_sizes[i])
    if bias is not None:
        full = full + bias.reshape((1, c_out) + (1,) * n)
    return full if batched else full.squeeze(0)


def _product(ranges: list) -> list:
    out: list[tuple] = [()]
    for rng in ranges:
        out = [prev + (v,) for prev in out for v in rng]
    return out


@autocast_function("conv_transpose1d")
def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 1-D convolution of (N, C_in, L) or (C_in, L) inputs with a
    (C_in, C_out/groups, k) weight."""
    return _conv_transpose(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


@autocast_function("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 2-D convolution ("deconvolution") of (N, C_in, H, W) or (C_in, H, W) inputs
    with a (C_in, C_out/groups, kH, kW) weight; output size (H-1)s - 2p + d(k-1) +
    output_padding + 1."""
    return _conv_transpose(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


@autocast_function("conv_transpose3d")
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 3-D convolution of (N, C_in, D, H, W) or (C_in, D, H, W) inputs with a
    (C_in, C_out/groups, kD, kH, kW) weight."""
    return _conv_transpose(
        "conv_transpose3d",
        3,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
