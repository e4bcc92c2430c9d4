"""Neural-network ops: convolutions (conv2d and its backward, conv1d), max and average pooling (and
their backwards), embedding (softmax/log_softmax are in `softmax.py`).

Each op's arguments and defaults are written once, in its schema. Its meta rule is the only place
that refuses arguments; what the kernels need beyond the argument record, the meta rule computes
once and hands on (``precomputed``): conv2d's explicit ``pads`` (also for ``padding='same'`` and
``'valid'``) and the pools' ``window_stride`` (the stride, or the kernel size where the stride is
omitted). Output sizes (``ceil_mode`` included) arrive as the output's shape.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..dispatch.arguments import to_int_list
from ..tensor.impl import shape_numel
from .declare import declare, op_named as _op
from .meta_rules import common_device

__all__ = [
    "conv_output_size",
    "conv_pads",
    "named_pads",
    "symmetric_pads",
    "check_conv_ranks",
    "check_conv_dtypes",
    "pool_output_size",
    "window_stride",
    "flops_conv2d",
]


# ---- convolutions ------------------------------------------------------------------------------


def conv_output_size(
    size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int
) -> int:
    """Output length of a convolution along one dim."""
    return (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1


def _conv_list(op: str, name: str, value: tuple, n: int) -> tuple:
    """An ``int[n]`` of the record (the schema repeated a single int): any other length is
    refused in the words of PyTorch's convolutions."""
    if len(value) != n:
        raise RuntimeError(
            f"{op}(): expected {name} to be a single integer value or a list of "
            f"{n} values to match the convolution dimensions, but got "
            f"{name}={list(value)}"
        )
    return value


def conv_pads(op: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """Explicit ((before, after), ...) padding per spatial dim from conv's `padding` as the
    schema passes it (``Any``: an int, a sequence of ints, 'valid' or 'same'); 'same' with an
    even effective kernel pads one more after (as PyTorch). Refuses what PyTorch refuses."""
    n = len(kernel)
    if isinstance(padding, str):
        return named_pads(op, padding, kernel, dilation, stride)
    return symmetric_pads(
        op, padding, _conv_list(op, "padding", to_int_list(op, "padding", 5, padding, n), n)
    )


def named_pads(op: str, padding: str, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """((before, after), ...) for ``padding='valid'`` or ``'same'`` (any other string is
    refused)."""
    if padding == "valid":
        return ((0, 0),) * len(kernel)
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{op}(): padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    raise RuntimeError(f"{op}(): Invalid padding string: '{padding}' (expected 'valid' or 'same')")


def symmetric_pads(op: str, padding, per_dim: tuple) -> tuple:
    """((p, p), ...) from the per-dim paddings `per_dim` (`padding` as given, for the error);
    negative ones are refused."""
    if min(per_dim) < 0:
        raise RuntimeError(f"{op}(): negative padding is not supported, got {padding!r}")
    return tuple([(v, v) for v in per_dim])


_KERNEL_DIMS = {1: "kL", 2: "kH, kW"}


def check_conv_ranks(op: str, n: int, input, weight, weight_dims: str) -> None:
    """An n-d convolution's (unbatched or batched) input and its weight of n + 2 dims (named
    `weight_dims` in the message), in PyTorch's words; also the transposed ones'."""
    if len(input._shape) not in (n + 1, n + 2):
        raise RuntimeError(
            f"{op}(): Expected {n + 1}D (unbatched) or {n + 2}D (batched) input "
            f"to {op}, but got input of size: {list(input._shape)}"
        )
    if len(weight._shape) != n + 2:
        raise RuntimeError(
            f"{op}(): weight should have {n + 2} dimensions ({weight_dims}), got "
            f"size {list(weight._shape)}"
        )


def check_conv_dtypes(op: str, input, weight) -> None:
    """A convolution's input and weight share one non-bool dtype."""
    if input._dtype is not weight._dtype or input._dtype is dt.bool:
        raise RuntimeError(
            f"{op}(): expected input and weight of the same non-bool dtype, got "
            f"input {input._dtype.name} and weight {weight._dtype.name}"
        )


def _check_conv_operands(op: str, n: int, input, weight, bias, groups: int) -> None:
    """Shapes and dtypes of a conv{n}d's input, weight and bias (PyTorch's messages)."""
    check_conv_ranks(op, n, input, weight, f"out_channels, in_channels/groups, {_KERNEL_DIMS[n]}")
    check_conv_dtypes(op, input, weight)
    c_out, c_in_g = weight._shape[:2]
    if groups > 0:
        if c_out % groups:
            raise RuntimeError(
                f"{op}(): Given groups={groups}, expected weight to be divisible "
                f"by {groups} at dimension 0, but got weight of size "
                f"{list(weight._shape)} instead"
            )
        if input._shape[-n - 1] != c_in_g * groups:
            raise RuntimeError(
                f"{op}(): Given groups={groups}, weight of size "
                f"{list(weight._shape)}, expected input{list(input._shape)} to "
                f"have {c_in_g * groups} channels, but got "
                f"{input._shape[-n - 1]} channels instead"
            )
    if bias is not None:
        if bias._shape != (c_out,):
            raise RuntimeError(
                f"{op}(): Given weight of size {list(weight._shape)}, expected "
                f"bias to be 1-dimensional with {c_out} elements, but got bias of "
                f"size {list(bias._shape)} instead"
            )
        if bias._dtype is not input._dtype:
            raise RuntimeError(
                f"{op}(): Input type ({input._dtype.name}) and bias type "
                f"({bias._dtype.name}) should be the same"
            )


def _check_conv_params(op: str, n: int, stride: tuple, dilation: tuple, groups: int) -> None:
    if len(stride) != n or len(dilation) != n:
        _conv_list(op, "stride", stride, n)
        _conv_list(op, "dilation", dilation, n)
    if min(stride) <= 0:
        raise RuntimeError(f"{op}(): non-positive stride is not supported, got {list(stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{op}(): dilation should be greater than zero, got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported, got {groups}")


def _conv_output_shape(
    op: str, x_shape: tuple, w_shape: tuple, stride: tuple, pads: tuple, dilation: tuple
) -> tuple:
    """(N, C_out, *spatial) for a batched input of shape `x_shape`."""
    out = [x_shape[0], w_shape[0]]
    for i in range(len(stride)):
        lo, hi = pads[i]
        padded = x_shape[i + 2] + lo + hi
        span = dilation[i] * (w_shape[i + 2] - 1) + 1
        if padded < span:
            padded = [x_shape[j + 2] + sum(pads[j]) for j in range(len(stride))]
            spans = [dilation[j] * (w_shape[j + 2] - 1) + 1 for j in range(len(stride))]
            raise RuntimeError(
                f"{op}(): Calculated padded input size per channel: "
                f"({' x '.join(map(str, padded))}). Kernel size: "
                f"({' x '.join(map(str, spans))}). Kernel size can't be greater "
                f"than actual input size"
            )
        out.append(conv_output_size(x_shape[i + 2], w_shape[i + 2], stride[i], lo, hi, dilation[i]))
    return tuple(out)


def _conv_spec(op: str, n: int, input, weight, bias, stride, padding, dilation, groups) -> tuple:
    """(output shape, explicit pads) of conv{n}d over a batched or unbatched input."""
    _check_conv_operands(op, n, input, weight, bias, groups)
    _check_conv_params(op, n, stride, dilation, groups)
    pads = conv_pads(op, padding, weight._shape[2:], dilation, stride)
    batched = len(input._shape) == n + 2
    x_shape = input._shape if batched else (1,) + input._shape
    shape = _conv_output_shape(op, x_shape, weight._shape, stride, pads, dilation)
    return (shape if batched else shape[1:]), pads


def _device_of(op: str, input, weight, bias):
    dev = input._device
    if weight._device is dev and (bias is None or bias._device is dev):
        return dev
    return common_device(op, input, weight, bias)


def _meta_conv2d(input, weight, bias, stride, padding, dilation, groups):
    shape, pads = _conv_spec("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)
    return (shape, input._dtype, _device_of("conv2d", input, weight, bias)), (pads,)


def _pad_high(x, extra_h: int, extra_w: int):
    """Zero-pad a 4-D tensor at the bottom/right (for the extra row/col of padding='same')."""
    if extra_h:
        n, c, _, w = x._shape
        x = _op("cat")([x, _op("zeros")((n, c, extra_h, w), dtype=x._dtype, device=x._device)], 2)
    if extra_w:
        n, c, h, _ = x._shape
        x = _op("cat")([x, _op("zeros")((n, c, h, extra_w), dtype=x._dtype, device=x._device)], 3)
    return x


def _d_conv2d(ctx, grad):
    """convolution_backward with the symmetric part of the padding; an uneven 'same' padding
    pads the input's bottom/right first and drops that part of grad_input."""
    input, weight, stride, dilation = ctx.input, ctx.weight, ctx.stride, ctx.dilation
    (pt, pb), (pl, pr) = conv_pads("conv2d", ctx.padding, weight._shape[2:], dilation, stride)
    batched = len(input._shape) == 4
    x = input if batched else input.unsqueeze(0)
    g = grad if batched else grad.unsqueeze(0)
    h, w = x._shape[2:]
    x = _pad_high(x, pb - pt, pr - pl)
    need = ctx.needs_input_grad
    mask = (need[0], need[1], ctx.bias is not None and need[2])
    gi, gw, gb = _op("convolution_backward")(
        g, x, weight, stride, (pt, pl), dilation, ctx.groups, mask
    )
    if pb != pt or pr != pl:
        gi = gi.narrow(2, 0, h).narrow(3, 0, w)
    if not batched and mask[0]:
        gi = gi.squeeze(0)
    return tuple(v if m else None for v, m in zip((gi, gw, gb), mask))


def flops_conv2d(result, input, weight, bias=None, *args) -> int:
    """2 * out.numel() * C_in/groups * kH * kW, plus one per output element for the bias."""
    c_in_g, kh, kw = weight._shape[1:]
    n = result.numel()
    return 2 * n * c_in_g * kh * kw + (n if bias is not None else 0)


def _meta_convolution_backward(
    grad_output, input, weight, stride, padding, dilation, groups, output_mask
):
    op = "convolution_backward"
    if len(output_mask) != 3:
        raise RuntimeError(f"{op}(): expected output_mask of 3 bools, got {list(output_mask)}")
    if len(input._shape) != 4 or len(grad_output._shape) != 4:
        raise RuntimeError(
            f"{op}(): expected 4-D grad_output and input, got "
            f"{len(grad_output._shape)}-D and {len(input._shape)}-D"
        )
    _check_conv_operands(op, 2, input, weight, None, groups)
    _check_conv_params(op, 2, stride, dilation, groups)
    pads = conv_pads(op, padding, weight._shape[2:], dilation, stride)
    expected = _conv_output_shape(op, input._shape, weight._shape, stride, pads, dilation)
    if grad_output._shape != expected:
        raise RuntimeError(
            f"{op}(): expected grad_output of shape {list(expected)}, got "
            f"{list(grad_output._shape)}"
        )
    dev = common_device(op, grad_output, input, weight)
    shapes = (input._shape, weight._shape, (weight._shape[0],))
    # a gradient left out by output_mask is an empty tensor (PyTorch's is undefined)
    return [(shape if m else (0,), weight._dtype, dev) for shape, m in zip(shapes, output_mask)]


def _d_convolution_backward(ctx, g_input, g_weight, g_bias):
    """Double backward of a convolution: everything is bilinear, so each term is a convolution
    or a convolution gradient again."""
    go, x, w = ctx.grad_output, ctx.input, ctx.weight
    params = (ctx.stride, ctx.padding, ctx.dilation, ctx.groups)
    need = ctx.needs_input_grad
    # the gradients of outputs left out by output_mask (empty tensors) are not terms
    g_input, g_weight, g_bias = (
        g if m else None for g, m in zip((g_input, g_weight, g_bias), ctx.output_mask)
    )
    conv_bwd, conv = _op("convolution_backward"), _op("conv2d")
    g_go = None
    if need[0]:
        terms = []
        if g_input is not None:
            terms.append(conv(g_input, w, None, *params))
        if g_weight is not None:
            terms.append(conv(x, g_weight, None, *params))
        if g_bias is not None:
            terms.append(g_bias.reshape(1, -1, 1, 1).expand(go._shape))
        for t in terms:
            g_go = t if g_go is None else g_go + t
    g_x = g_w = None
    if need[1] and g_weight is not None:
        g_x = conv_bwd(go, x, g_weight, *params, (True, False, False))[0]
    if need[2] and g_input is not None:
        g_w = conv_bwd(go, g_input, w, *params, (False, True, False))[1]
    return (g_go, g_x, g_w)


def _flops_convolution_backward(
    result, grad_output, input, weight, stride, padding, dilation, groups, output_mask
) -> int:
    """A convolution's worth for each of grad_input and grad_weight, plus the bias sum (those
    that output_mask asks for)."""
    c_in_g, kh, kw = weight._shape[1:]
    n = grad_output.numel()
    return (output_mask[0] + output_mask[1]) * 2 * n * c_in_g * kh * kw + output_mask[2] * n


def _meta_conv1d(input, weight, bias, stride, padding, dilation, groups):
    shape, _ = _conv_spec("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)
    return (shape, input._dtype, _device_of("conv1d", input, weight, bias))


def _conv1d(input, weight, bias, stride, padding, dilation, groups):
    """1-D cross-correlation over (N, C_in, L) or unbatched (C_in, L) inputs, weight
    (C_out, C_in/groups, kL); padding an int, a 1-tuple, 'valid' or 'same'."""
    pad = (
        padding
        if isinstance(padding, str)
        else (0,) + to_int_list("conv1d", "padding", 5, padding, 1)
    )
    out = _op("conv2d")(
        input.unsqueeze(-2), weight.unsqueeze(2), bias, (1,) + stride, pad, (1,) + dilation, groups
    )
    return out.squeeze(-2)


# ---- pooling -----------------------------------------------------------------------------------


def window_stride(kernel_size: tuple, stride: tuple | None) -> tuple:
    """The stride pooling windows move by: `stride`, or `kernel_size` where it is omitted (None
    or an empty list, as PyTorch allows)."""
    return stride if stride else kernel_size


def _pool_params(op: str, kernel_size: tuple, stride, padding: tuple, dilation: tuple) -> tuple:
    """The window stride of a pool, after refusing what PyTorch refuses (its messages)."""
    if len(kernel_size) != 2:
        raise RuntimeError(
            f"{op}(): kernel_size must either be a single int, or a tuple of two "
            f"ints, got {list(kernel_size)}"
        )
    s = window_stride(kernel_size, stride)
    if len(s) != 2:
        raise RuntimeError(
            f"{op}(): stride must either be omitted, a single int, or a tuple of "
            f"two ints, got {list(s)}"
        )
    if len(padding) != 2:
        raise RuntimeError(
            f"{op}(): padding must either be a single int, or a tuple of two "
            f"ints, got {list(padding)}"
        )
    if len(dilation) != 2:
        raise RuntimeError(
            f"{op}(): dilation must be either a single int, or a tuple of two "
            f"ints, got {list(dilation)}"
        )
    k, d = kernel_size, dilation
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(
            f"{op}(): kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(
            f"{op}(): stride should be greater than zero, but got sH: {s[0]} sW: {s[1]}"
        )
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(
            f"{op}(): dilation should be greater than zero, but got dilationH: "
            f"{d[0]} dilationW: {d[1]}"
        )
    return s


def pool_output_size(
    size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool
) -> int:
    """PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the
    input or the left padding."""
    out = (
        size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    ) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_shape(op: str, self, k, s, p, d, ceil_mode) -> tuple:
    if len(self._shape) not in (3, 4) or shape_numel(self._shape[-3:]) == 0:
        raise RuntimeError(
            f"{op}(): non-empty 3D or 4D (batch mode) tensor expected for input, "
            f"got size {list(self._shape)}"
        )
    if self._dtype is dt.bool:
        raise RuntimeError(f"{op}(): not implemented for bool tensors")
    for i in range(2):
        if p[i] < 0 or p[i] > k[i] // 2:
            raise RuntimeError(
                f"{op}(): pad should be at most half of kernel size, but got "
                f"pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}"
            )
    h, w = self._shape[-2:]
    oh = pool_output_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_output_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    if oh < 1 or ow < 1:
        c = self._shape[-3]
        raise RuntimeError(
            f"{op}(): Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{oh}x{ow}). Output size is too small"
        )
    return self._shape[:-2] + (oh, ow)


def _meta_max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    op = "max_pool2d"
    s = _pool_params(op, kernel_size, stride, padding, dilation)
    shape = _pool_shape(op, self, kernel_size, s, padding, dilation, ceil_mode)
    return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)], (s,)


def _d_max_pool2d(ctx, grad, grad_indices=None):
    """Each output's gradient goes to the input element its index names (flat in H*W)."""
    return (
        _op("max_pool2d_with_indices_backward")(
            grad,
            ctx.self,
            ctx.kernel_size,
            window_stride(ctx.kernel_size, ctx.stride),
            ctx.padding,
            ctx.dilation,
            ctx.ceil_mode,
            ctx.result[1],
        ),
    )


def _meta_max_pool2d_backward(
    grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices
):
    op = "max_pool2d_with_indices_backward"
    s = _pool_params(op, kernel_size, stride, padding, dilation)
    expected = _pool_shape(op, self, kernel_size, s, padding, dilation, ceil_mode)
    if grad_output._shape != expected or indices._shape != expected:
        raise RuntimeError(
            f"{op}(): expected grad_output and indices of shape "
            f"{list(expected)}, got {list(grad_output._shape)} and "
            f"{list(indices._shape)}"
        )
    if indices._dtype is not dt.int64:
        raise RuntimeError(f"{op}(): expected int64 indices, got {indices._dtype.name}")
    return (self._shape, grad_output._dtype, common_device(op, grad_output, self, indices)), (s,)


def _d_max_pool2d_backward(ctx, grad):
    """Linear in grad_output: its adjoint reads the gradient back at each index."""
    idx = ctx.indices
    g = grad.flatten(-2).gather(-1, idx.flatten(-2)).reshape(idx._shape)
    return (g, None)


def _flops_pool(result, self, kernel_size, *args) -> int:
    """One per window element per output."""
    out = result[0] if isinstance(result, tuple) else result
    return out.numel() * kernel_size[0] * kernel_size[1]


def _max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """2-D max pooling over (N, C, H, W) or (C, H, W) inputs; with `return_indices` also the
    flat index of each maximum within its input plane."""
    values, indices = _op("max_pool2d_with_indices")(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def _check_divisor(op: str, divisor_override) -> None:
    if divisor_override == 0:
        raise RuntimeError(
            f"{op}(): divisor must be not zero (a non-zero int), got {divisor_override!r}"
        )


def _meta_avg_pool2d(
    self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    op = "avg_pool2d"
    s = _pool_params(op, kernel_size, stride, padding, (1, 1))
    _check_divisor(op, divisor_override)
    shape = _pool_shape(op, self, kernel_size, s, padding, (1, 1), ceil_mode)
    return (shape, self._dtype, self._device), (s,)


def _d_avg_pool2d(ctx, grad):
    return (
        _op("avg_pool2d_backward")(
            grad,
            ctx.self,
            ctx.kernel_size,
            window_stride(ctx.kernel_size, ctx.stride),
            ctx.padding,
            ctx.ceil_mode,
            ctx.count_include_pad,
            ctx.divisor_override,
        ),
    )


def _meta_avg_pool2d_backward(
    grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    op = "avg_pool2d_backward"
    s = _pool_params(op, kernel_size, stride, padding, (1, 1))
    _check_divisor(op, divisor_override)
    expected = _pool_shape(op, self, kernel_size, s, padding, (1, 1), ceil_mode)
    if grad_output._shape != expected:
        raise RuntimeError(
            f"{op}(): expected grad_output of shape {list(expected)}, got "
            f"{list(grad_output._shape)}"
        )
    return (self._shape, grad_output._dtype, common_device(op, grad_output, self)), (s,)


def _d_avg_pool2d_backward(ctx, grad):
    """avg_pool2d_backward is linear in grad_output; its adjoint is avg_pool2d."""
    return (
        _op("avg_pool2d")(
            grad,
            ctx.kernel_size,
            ctx.stride,
            ctx.padding,
            ctx.ceil_mode,
            ctx.count_include_pad,
            ctx.divisor_override,
        ),
        None,
    )


# ---- embedding ---------------------------------------------------------------------------------


def _meta_embedding(weight, indices, padding_idx, scale_grad_by_freq):
    if len(weight._shape) != 2:
        raise RuntimeError(
            f"embedding(): 'weight' must be 2-D (num_embeddings, embedding_dim), "
            f"got size {list(weight._shape)}"
        )
    if indices._dtype not in (dt.int64, dt.int32):
        raise RuntimeError(
            f"embedding(): Expected tensor for argument #1 'indices' to have one "
            f"of the following scalar types: Long, Int; but got "
            f"{indices._dtype.name} instead"
        )
    num = weight._shape[0]
    if padding_idx is not None and not -num <= padding_idx < num:
        raise AssertionError(
            f"embedding(): Padding_idx must be within num_embeddings ({num}), got {padding_idx}"
        )
    return (
        indices._shape + (weight._shape[1],),
        weight._dtype,
        common_device("embedding", weight, indices),
    )


def _embedding(weight, indices, padding_idx, scale_grad_by_freq):
    """Rows of `weight` (num_embeddings, embedding_dim) picked by the integer tensor `indices`:
    shape indices.shape + (embedding_dim,). The `padding_idx` row (negative counts from the end)
    gets no gradient; with `scale_grad_by_freq` each use's gradient is divided by how often its
    row is picked."""
    rows = weight.index_select(0, indices.reshape(-1))
    return rows.reshape(indices._shape + (weight._shape[1],))


def _d_embedding(ctx, grad):
    """Sum of the output gradients of each row's uses; the padding_idx row gets none."""
    weight, flat, pad = ctx.weight, ctx.indices.reshape(-1), ctx.padding_idx
    g = grad.reshape(-1, weight._shape[1])
    if pad is not None:
        g = g.masked_fill(flat.eq(pad % weight._shape[0]).unsqueeze(1), 0)
    if ctx.scale_grad_by_freq:
        uses = _op("zeros")((weight._shape[0],), dtype=g._dtype, device=g._device)
        uses = uses.index_add(0, flat, _op("ones")(flat._shape, dtype=g._dtype, device=g._device))
        g = g / uses.index_select(0, flat).unsqueeze(1)
    zeros = _op("zeros_like")(weight, dtype=g._dtype)
    return (zeros.index_add(0, flat, g), None)


def _declare_all() -> None:
    nn = dict(family="nn")
    fn: dict[str, Any] = dict(method=False, **nn)
    declare(
        "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
        "Any padding=0, int[2] dilation=1, int groups=1) -> Tensor",
        _meta_conv2d,
        precomputed=("pads",),
        out=False,
        derivative=_d_conv2d,
        saves=("input", "weight"),
        flops=flops_conv2d,
        doc="2-D cross-correlation over (N, C_in, H, W) or unbatched (C_in, H, W) inputs, "
        "weight (C_out, C_in/groups, kH, kW); padding an int, a pair, 'valid' or "
        "'same'.",
        **fn,
    )
    declare(
        "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
        "int[2] stride, int[2] padding, int[2] dilation, int groups, "
        "bool[3] output_mask=[True, True, True]) -> (Tensor, Tensor, Tensor)",
        _meta_convolution_backward,
        derivative=_d_convolution_backward,
        flops=_flops_convolution_backward,
        doc="(grad_input, grad_weight, grad_bias) of conv2d over a 4-D input with "
        "symmetric padding; those that output_mask leaves out are empty.",
        **fn,
    )
    declare(
        "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, "
        "Any padding=0, int[1] dilation=1, int groups=1) -> Tensor",
        _meta_conv1d,
        impl=_conv1d,
        out=False,
        **fn,
    )
    pool = "Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0"
    declare(
        f"max_pool2d_with_indices({pool}, int[2] dilation=1, bool ceil_mode=False) -> "
        f"(Tensor, Tensor)",
        _meta_max_pool2d_with_indices,
        precomputed=("window_stride",),
        derivative=_d_max_pool2d,
        saves=(),
        save_result=True,
        flops=_flops_pool,
        doc="(max over each window, flat H*W index of the max within its input plane).",
        **fn,
    )
    declare(
        "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, "
        "int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, "
        "Tensor indices) -> Tensor",
        _meta_max_pool2d_backward,
        precomputed=("window_stride",),
        derivative=_d_max_pool2d_backward,
        saves=("indices",),
        doc="The gradient of max_pool2d: each output's gradient added at the input element "
        "its index names.",
        **fn,
    )
    declare(
        f"max_pool2d({pool}, int[2] dilation=1, bool ceil_mode=False, "
        f"bool return_indices=False) -> Any",
        impl=_max_pool2d,
        **fn,
    )
    declare(
        f"avg_pool2d({pool}, bool ceil_mode=False, bool count_include_pad=True, "
        f"int? divisor_override=None) -> Tensor",
        _meta_avg_pool2d,
        precomputed=("window_stride",),
        derivative=_d_avg_pool2d,
        saves=(),
        flops=_flops_pool,
        doc="Mean over (kH, kW) windows of (N, C, H, W) or (C, H, W) inputs (integers: the "
        "sum divided with truncation toward zero).",
        **fn,
    )
    declare(
        "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
        "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, "
        "int? divisor_override) -> Tensor",
        _meta_avg_pool2d_backward,
        precomputed=("window_stride",),
        derivative=_d_avg_pool2d_backward,
        saves=(),
        doc="The gradient of avg_pool2d with respect to its input.",
        **fn,
    )
    declare(
        "embedding(Tensor weight, Tensor indices, int? padding_idx=None, "
        "bool scale_grad_by_freq=False) -> Tensor",
        _meta_embedding,
        impl=_embedding,
        out=False,
        derivative=_d_embedding,
        saves=("indices",),
        **fn,
    )


_declare_all()
