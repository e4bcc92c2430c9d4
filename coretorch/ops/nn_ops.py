"""Neural-network ops: conv2d (+ its backward), conv1d, max/avg pooling (+ backward), embedding
(softmax/log_softmax are in `softmax.py`).

The argument helpers (`pair`, `conv2d_padding`, `conv_output_size`, `pool2d_args`,
`pool_output_size`) are the one place these rules live; backend kernels receive the arguments as
the user gave them and normalize them with these helpers.
"""
from __future__ import annotations

from .. import dtypes as dt
from ..tensor.impl import TensorImpl, shape_numel
from .declare import EXPLICIT, IMPLICIT, declare, op_named as _op
from .derivative_utils import saves
from .meta_rules import common_device
from .meta_rules import need_tensor as _need_tensor

_T = TensorImpl

__all__ = ["pair", "conv2d_padding", "conv_output_size", "pool2d_args", "pool_output_size",
           "flops_conv2d"]


def pair(op: str, name: str, value) -> tuple:
    """An int or a sequence of one or two ints as a pair of ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) in (1, 2) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return (value[0], value[-1])
    raise RuntimeError(f"{op}(): {name} must either be a single int, or a tuple of two ints, "
                       f"got {value!r}")


# ---- conv2d ------------------------------------------------------------------------------------

def conv_output_size(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int,
                     dilation: int) -> int:
    """Output length of a convolution along one dim."""
    return (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1


def conv2d_padding(op: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """Explicit ((top, bottom), (left, right)) padding from an int, pair, 'valid' or 'same'.
    'same' with an even effective kernel pads one more at the bottom/right (as PyTorch)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding == "same":
            if stride != (1, 1):
                raise RuntimeError(f"{op}(): padding='same' is not supported for strided "
                                   f"convolutions")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise RuntimeError(f"{op}(): Invalid padding string: '{padding}' (expected 'valid' or "
                           f"'same')")
    ph, pw = pair(op, "padding", padding)
    if ph < 0 or pw < 0:
        raise RuntimeError(f"{op}(): negative padding is not supported, got {padding!r}")
    return ((ph, ph), (pw, pw))


def _conv_params(op: str, weight, stride, padding, dilation, groups):
    s, d = pair(op, "stride", stride), pair(op, "dilation", dilation)
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"{op}(): non-positive stride is not supported, got {stride!r}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"{op}(): dilation should be greater than zero, got {dilation!r}")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported, got {groups!r}")
    p = conv2d_padding(op, padding, weight._shape[2:], d, s)
    return s, p, d


def _conv_output_shape(op: str, input4, weight, s, p, d) -> tuple:
    n, _, h, w = input4._shape
    kh, kw = weight._shape[2:]
    ph, pw = h + p[0][0] + p[0][1], w + p[1][0] + p[1][1]
    if ph < d[0] * (kh - 1) + 1 or pw < d[1] * (kw - 1) + 1:
        raise RuntimeError(f"{op}(): Calculated padded input size per channel: ({ph} x {pw}). "
                           f"Kernel size: ({d[0] * (kh - 1) + 1} x {d[1] * (kw - 1) + 1}). "
                           f"Kernel size can't be greater than actual input size")
    return (n, weight._shape[0], conv_output_size(h, kh, s[0], p[0][0], p[0][1], d[0]),
            conv_output_size(w, kw, s[1], p[1][0], p[1][1], d[1]))


def _check_conv_operands(op: str, input, weight, bias, groups) -> None:
    _need_tensor(op, input)
    _need_tensor(op, weight)
    if len(input._shape) not in (3, 4):
        raise RuntimeError(f"{op}(): Expected 3D (unbatched) or 4D (batched) input to {op}, but "
                           f"got input of size: {list(input._shape)}")
    if len(weight._shape) != 4:
        raise RuntimeError(f"{op}(): weight should have 4 dimensions (out_channels, "
                           f"in_channels/groups, kH, kW), got size {list(weight._shape)}")
    if input._dtype is not weight._dtype or input._dtype is dt.bool:
        raise RuntimeError(f"{op}(): expected input and weight of the same non-bool dtype, got "
                           f"input {input._dtype.name} and weight {weight._dtype.name}")
    c_out, c_in_g = weight._shape[:2]
    if isinstance(groups, int) and groups > 0:
        if c_out % groups:
            raise RuntimeError(f"{op}(): Given groups={groups}, expected weight to be divisible "
                               f"by {groups} at dimension 0, but got weight of size "
                               f"{list(weight._shape)} instead")
        if input._shape[-3] != c_in_g * groups:
            raise RuntimeError(f"{op}(): Given groups={groups}, weight of size "
                               f"{list(weight._shape)}, expected input{list(input._shape)} to "
                               f"have {c_in_g * groups} channels, but got {input._shape[-3]} "
                               f"channels instead")
    if bias is not None:
        _need_tensor(op, bias)
        if bias._shape != (c_out,):
            raise RuntimeError(f"{op}(): Given weight of size {list(weight._shape)}, expected "
                               f"bias to be 1-dimensional with {c_out} elements, but got bias of "
                               f"size {list(bias._shape)} instead")
        if bias._dtype is not input._dtype:
            raise RuntimeError(f"{op}(): Input type ({input._dtype.name}) and bias type "
                               f"({bias._dtype.name}) should be the same")


def _meta_conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    _check_conv_operands("conv2d", input, weight, bias, groups)
    s, p, d = _conv_params("conv2d", weight, stride, padding, dilation, groups)
    batched = len(input._shape) == 4
    x4 = input if batched else _Shape4(input._shape)
    shape = _conv_output_shape("conv2d", x4, weight, s, p, d)
    return (shape if batched else shape[1:], input._dtype,
            common_device("conv2d", input, weight, bias))


class _Shape4:
    """The 4-D shape of an unbatched (C, H, W) input, for the shape rules."""

    __slots__ = ("_shape",)

    def __init__(self, shape: tuple):
        self._shape = (1,) + shape


def _conv2d_args(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return input, weight, bias, stride, padding, dilation, groups


def _pad_high(x, extra_h: int, extra_w: int):
    """Zero-pad a 4-D tensor at the bottom/right (for the extra row/col of padding='same')."""
    if extra_h:
        n, c, _, w = x._shape
        x = _op("cat")([x, _op("zeros")((n, c, extra_h, w), dtype=x._dtype,
                                        device=x._device)], 2)
    if extra_w:
        n, c, h, _ = x._shape
        x = _op("cat")([x, _op("zeros")((n, c, h, extra_w), dtype=x._dtype,
                                        device=x._device)], 3)
    return x


def _d_conv2d(ctx, grad):
    input, weight, bias, stride, padding, dilation, groups = _conv2d_args(*ctx.args, **ctx.kwargs)
    s, p, d = _conv_params("conv2d", weight, stride, padding, dilation, groups)
    batched = len(input._shape) == 4
    x = input if batched else input.unsqueeze(0)
    g = grad if batched else grad.unsqueeze(0)
    (pt, pb), (pl, pr) = p
    h, w = x._shape[2:]
    x = _pad_high(x, pb - pt, pr - pl)
    gi, gw, gb = _op("convolution_backward")(g, x, weight, s, (pt, pl), d, groups)
    if pb != pt or pr != pl:
        gi = gi.narrow(2, 0, h).narrow(3, 0, w)
    if not batched:
        gi = gi.squeeze(0)
    need = ctx.needs_input_grad
    return (gi if need[0] else None, gw if len(need) > 1 and need[1] else None,
            gb if bias is not None and len(need) > 2 and need[2] else None)


def flops_conv2d(result, input, weight, bias=None, *args, **kwargs) -> int:
    """2 * out.numel() * C_in/groups * kH * kW, plus one per output element for the bias."""
    c_in_g, kh, kw = weight._shape[1:]
    n = result.numel()
    return 2 * n * c_in_g * kh * kw + (n if bias is not None else 0)


# ---- convolution_backward -----------------------------------------------------------------------

def _meta_convolution_backward(grad_output, input, weight, stride, padding, dilation, groups):
    op = "convolution_backward"
    for t in (grad_output, input, weight):
        _need_tensor(op, t)
    if len(input._shape) != 4 or len(grad_output._shape) != 4:
        raise RuntimeError(f"{op}(): expected 4-D grad_output and input, got "
                           f"{len(grad_output._shape)}-D and {len(input._shape)}-D")
    _check_conv_operands(op, input, weight, None, groups)
    s, p, d = _conv_params(op, weight, stride, padding, dilation, groups)
    expected = _conv_output_shape(op, input, weight, s, p, d)
    if grad_output._shape != expected:
        raise RuntimeError(f"{op}(): expected grad_output of shape {list(expected)}, got "
                           f"{list(grad_output._shape)}")
    dev = common_device(op, grad_output, input, weight)
    return [(input._shape, input._dtype, dev), (weight._shape, weight._dtype, dev),
            ((weight._shape[0],), weight._dtype, dev)]


def _conv_bwd_args(grad_output, input, weight, stride, padding, dilation, groups):
    return grad_output, input, weight, stride, padding, dilation, groups


def _d_convolution_backward(ctx, g_input, g_weight, g_bias):
    """Double backward of a convolution: everything is bilinear, so each term is a convolution
    or a convolution gradient again."""
    go, x, w, stride, padding, dilation, groups = _conv_bwd_args(*ctx.args, **ctx.kwargs)
    need = ctx.needs_input_grad
    conv_bwd, conv = _op("convolution_backward"), _op("conv2d")
    g_go = None
    if need[0]:
        terms = []
        if g_input is not None:
            terms.append(conv(g_input, w, None, stride, padding, dilation, groups))
        if g_weight is not None:
            terms.append(conv(x, g_weight, None, stride, padding, dilation, groups))
        if g_bias is not None:
            terms.append(g_bias.reshape(1, -1, 1, 1).expand(go._shape))
        for t in terms:
            g_go = t if g_go is None else g_go + t
    g_x = g_w = None
    if len(need) > 1 and need[1] and g_weight is not None:
        g_x = conv_bwd(go, x, g_weight, stride, padding, dilation, groups)[0]
    if len(need) > 2 and need[2] and g_input is not None:
        g_w = conv_bwd(go, g_input, w, stride, padding, dilation, groups)[1]
    return (g_go, g_x, g_w)


def _flops_convolution_backward(result, grad_output, input, weight, *args, **kwargs) -> int:
    """Two convolutions' worth (grad_input and grad_weight) plus the bias sum."""
    c_in_g, kh, kw = weight._shape[1:]
    n = grad_output.numel()
    return 4 * n * c_in_g * kh * kw + n


def _conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or unbatched (C, L) input, computed as conv2d."""
    _need_tensor("conv1d", input)
    _need_tensor("conv1d", weight)
    if len(input._shape) not in (2, 3):
        raise RuntimeError(f"conv1d(): Expected 2D (unbatched) or 3D (batched) input to conv1d, "
                           f"but got input of size: {list(input._shape)}")
    if len(weight._shape) != 3:
        raise RuntimeError(f"conv1d(): weight should have 3 dimensions (out_channels, "
                           f"in_channels/groups, kL), got size {list(weight._shape)}")

    def one(name, v):
        if isinstance(v, (tuple, list)):
            if len(v) != 1:
                raise RuntimeError(f"conv1d(): {name} must be an int or a tuple of one int, got "
                                   f"{v!r}")
            return v[0]
        return v
    pad = padding if isinstance(padding, str) else (0, one("padding", padding))
    out = _op("conv2d")(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, one("stride", stride)),
                        pad, (1, one("dilation", dilation)), groups)
    return out.squeeze(-2)


# ---- pooling -----------------------------------------------------------------------------------

def pool2d_args(op: str, kernel_size, stride, padding, dilation=1) -> tuple:
    """(kernel, stride, padding, dilation) as pairs; stride None or [] means kernel_size."""
    k = pair(op, "kernel_size", kernel_size)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else pair(
        op, "stride", stride)
    p, d = pair(op, "padding", padding), pair(op, "dilation", dilation)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"{op}(): kernel size should be greater than zero, but got "
                           f"kH: {k[0]} kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"{op}(): stride should be greater than zero, but got sH: {s[0]} "
                           f"sW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"{op}(): dilation should be greater than zero, but got dilationH: "
                           f"{d[0]} dilationW: {d[1]}")
    return k, s, p, d


def pool_output_size(size: int, kernel: int, stride: int, pad: int, dilation: int,
                     ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the
    input or the left padding."""
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) \
        // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_shape(op: str, self, k, s, p, d, ceil_mode) -> tuple:
    _need_tensor(op, self)
    if len(self._shape) not in (3, 4) or shape_numel(self._shape[-3:]) == 0:
        raise RuntimeError(f"{op}(): non-empty 3D or 4D (batch mode) tensor expected for input, "
                           f"got size {list(self._shape)}")
    if self._dtype is dt.bool:
        raise RuntimeError(f"{op}(): not implemented for bool tensors")
    for i in range(2):
        if p[i] < 0 or p[i] > k[i] // 2:
            raise RuntimeError(f"{op}(): pad should be at most half of kernel size, but got "
                               f"pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}")
    h, w = self._shape[-2:]
    oh = pool_output_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_output_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    if oh < 1 or ow < 1:
        c = self._shape[-3]
        raise RuntimeError(f"{op}(): Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return self._shape[:-2] + (oh, ow)


def _meta_max_pool2d_with_indices(self, kernel_size, stride=None, padding=0, dilation=1,
                                  ceil_mode=False):
    op = "max_pool2d"
    k, s, p, d = pool2d_args(op, kernel_size, stride, padding, dilation)
    shape = _pool_shape(op, self, k, s, p, d, ceil_mode)
    return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]


@saves()
def _d_max_pool2d(ctx, grad, grad_indices=None):
    """Each output's gradient goes to the input element its index names (flat in H*W)."""
    self = ctx.args[0]
    indices = ctx.result[1]
    flat = self._shape[:-2] + (self._shape[-2] * self._shape[-1],)
    zeros = _op("zeros")(flat, dtype=grad._dtype, device=grad._device)
    return (zeros.scatter_add(-1, indices.flatten(-2), grad.flatten(-2)).reshape(self._shape),)


def _flops_pool(result, self, kernel_size, *args, **kwargs) -> int:
    """One per window element per output."""
    out = result[0] if isinstance(result, tuple) else result
    k = pair("pool", "kernel_size", kernel_size)
    return out.numel() * k[0] * k[1]


def _max_pool2d(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W); with `return_indices` also the flat index
    of each maximum within its input plane."""
    values, indices = _op("max_pool2d_with_indices")(self, kernel_size, stride, padding, dilation,
                                                     ceil_mode)
    return (values, indices) if return_indices else values


def _check_divisor(op: str, divisor_override) -> None:
    if divisor_override is not None and (not isinstance(divisor_override, int)
                                         or divisor_override == 0):
        raise RuntimeError(f"{op}(): divisor must be not zero (a non-zero int), got "
                           f"{divisor_override!r}")


def _meta_avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                     count_include_pad=True, divisor_override=None):
    op = "avg_pool2d"
    k, s, p, d = pool2d_args(op, kernel_size, stride, padding)
    _check_divisor(op, divisor_override)
    shape = _pool_shape(op, self, k, s, p, d, ceil_mode)
    return (shape, self._dtype, self._device)


def _avg_pool_args(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
    return (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@saves()
def _d_avg_pool2d(ctx, grad):
    args = _avg_pool_args(*ctx.args, **ctx.kwargs)
    return (_op("avg_pool2d_backward")(grad, *args),)


def _meta_avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override):
    op = "avg_pool2d_backward"
    _need_tensor(op, grad_output)
    k, s, p, d = pool2d_args(op, kernel_size, stride, padding)
    _check_divisor(op, divisor_override)
    expected = _pool_shape(op, self, k, s, p, d, ceil_mode)
    if grad_output._shape != expected:
        raise RuntimeError(f"{op}(): expected grad_output of shape {list(expected)}, got "
                           f"{list(grad_output._shape)}")
    return (self._shape, grad_output._dtype, common_device(op, grad_output, self))


@saves()
def _d_avg_pool2d_backward(ctx, grad):
    """avg_pool2d_backward is linear in grad_output; its adjoint is avg_pool2d."""
    _, _, *rest = _avg_bwd_args(*ctx.args, **ctx.kwargs)
    return (_op("avg_pool2d")(grad, *rest), None)


def _avg_bwd_args(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    return (grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
            divisor_override)


# ---- embedding ---------------------------------------------------------------------------------

def _embedding_check(weight, indices, padding_idx):
    _need_tensor("embedding", weight)
    _need_tensor("embedding", indices)
    if len(weight._shape) != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D (num_embeddings, embedding_dim), "
                           f"got size {list(weight._shape)}")
    if indices._dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"embedding(): Expected tensor for argument #1 'indices' to have one "
                           f"of the following scalar types: Long, Int; but got "
                           f"{indices._dtype.name} instead")
    if padding_idx is None:
        return None
    num = weight._shape[0]
    if not -num <= padding_idx < num:
        raise AssertionError(f"embedding(): Padding_idx must be within num_embeddings "
                             f"({num}), got {padding_idx}")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _embedding(weight, indices, padding_idx=None):
    """Rows of `weight` picked by `indices`: shape indices.shape + (embedding_dim,)."""
    _embedding_check(weight, indices, padding_idx)
    rows = weight.index_select(0, indices.reshape(-1))
    return rows.reshape(indices._shape + (weight._shape[1],))


def _embedding_args(weight, indices, padding_idx=None):
    return weight, indices, padding_idx


@saves(1)
def _d_embedding(ctx, grad):
    """Sum of the output gradients of each row's uses; the padding_idx row gets none."""
    weight, indices, padding_idx = _embedding_args(*ctx.args, **ctx.kwargs)
    pad = _embedding_check(weight, indices, padding_idx)
    flat = indices.reshape(-1)
    g = grad.reshape(-1, weight._shape[1])
    if pad is not None:
        g = g.masked_fill(flat.eq(pad).unsqueeze(1), 0)
    zeros = _op("zeros_like")(weight, dtype=g._dtype)
    return (zeros.index_add(0, flat, g), None)


def _declare_all() -> None:
    nn = dict(family="nn")
    declare("conv2d", _meta_conv2d, method=False, derivative=_d_conv2d, flops=flops_conv2d,
            **nn)
    declare("convolution_backward", _meta_convolution_backward, method=False,
            derivative=_d_convolution_backward, flops=_flops_convolution_backward, **nn)
    declare("max_pool2d_with_indices", _meta_max_pool2d_with_indices, method=False,
            derivative=_d_max_pool2d, save_result=True, flops=_flops_pool, **nn)
    declare("avg_pool2d", _meta_avg_pool2d, method=False, derivative=_d_avg_pool2d,
            flops=_flops_pool, **nn)
    declare("avg_pool2d_backward", _meta_avg_pool2d_backward, method=False,
            derivative=_d_avg_pool2d_backward, **nn)
    declare("embedding", kind=EXPLICIT, impl=_embedding, method=False, out=False,
            derivative=_d_embedding, **nn)
    comp = dict(kind=IMPLICIT, method=False, out=False, **nn)
    declare("conv1d", impl=_conv1d, **comp)
    declare("max_pool2d", impl=_max_pool2d, **comp)


_declare_all()
