"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (mirrors
``torch.nn.utils.fusion``): the normalization y = (x - mean) / sqrt(var + eps) * w + b is
affine, so it becomes part of the layer's weight and bias and inference runs one layer."""

from __future__ import annotations

import copy

from ...tensor.tensor import Tensor

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _eval_only(layer, bn) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _bn_scale(bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None) -> Tensor:
    """w / sqrt(var + eps): the factor BatchNorm multiplies each channel by."""
    s = (bn_rv + bn_eps).rsqrt()
    return s if bn_w is None else bn_w * s


def _parameters(w: Tensor, b: Tensor, like_w: Tensor, like_b: Tensor | None):
    from ..parameter import Parameter

    return (
        Parameter(w.to(like_w.dtype), like_w.requires_grad),
        Parameter(
            b.to(like_w.dtype if like_b is None else like_b.dtype),
            like_w.requires_grad if like_b is None else like_b.requires_grad,
        ),
    )


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
):
    """(weight, bias) Parameters of the convolution that computes conv followed by BatchNorm
    (with its running statistics). `transpose`: the weight is a transposed convolution's
    (channels on dim 1)."""
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    bias = conv_b if conv_b is not None else bn_rm.new_zeros(bn_rm.shape)
    fused_b = (bias - bn_rm) * scale
    if bn_b is not None:
        fused_b = fused_b + bn_b
    return _parameters(conv_w * scale.reshape(shape), fused_b, conv_w, conv_b)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A new convolution computing ``bn(conv(x))`` of the eval-mode `conv` and `bn`.

    Raises:
        AssertionError: a module in training mode, or a BatchNorm without running statistics.
    """
    _eval_only(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
):
    """(weight, bias) Parameters of the linear layer that computes linear followed by
    BatchNorm over its output features."""
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    bias = linear_b if linear_b is not None else bn_rm.new_zeros(bn_rm.shape)
    return _parameters(
        linear_w * scale.unsqueeze(-1), (bias - bn_rm) * scale + bn_b, linear_w, linear_b
    )


def fuse_linear_bn_eval(linear, bn):
    """A new Linear computing ``bn(linear(x))`` of the eval-mode `linear` and `bn`.

    Raises:
        AssertionError: a module in training mode, a BatchNorm without running statistics, or
            a BatchNorm whose features are neither the layer's outputs nor one.
    """
    _eval_only(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            f"To fuse, linear.out_features == bn.num_features or "
            f"bn.num_features == 1, got linear.out_features="
            f"{linear.out_features} and bn.num_features={bn.num_features}"
        )
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
