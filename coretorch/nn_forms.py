"""The layer functions PyTorch also offers at the top level (``torch.conv3d``,
``torch.layer_norm``, ``torch.batch_norm``, ``torch.dropout``...): each is its
``nn.functional`` function, under the ATen signature PyTorch exposes there (``torch.batch_norm``
takes weight and bias before the running statistics; ``torch.dropout``'s `train` has no
default).
"""

from __future__ import annotations

from .nn import functional as F

__all__ = [
    "SAME_AS_FUNCTIONAL",
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "group_norm",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "adaptive_max_pool1d",
]

# names whose torch.X signature is nn.functional.X's (positionally)
SAME_AS_FUNCTIONAL = (
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "cosine_similarity",
    "pdist",
    "pairwise_distance",
    "bilinear",
    "prelu",
    "rms_norm",
    "channel_shuffle",
    "native_channel_shuffle",
    "adaptive_avg_pool1d",
    "avg_pool1d",
    "max_pool1d",
    "max_pool1d_with_indices",
)


def batch_norm(
    input,
    weight,
    bias,
    running_mean,
    running_var,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
):
    """``torch.batch_norm``: `F.batch_norm` with ATen's argument order (`cudnn_enabled` is a
    CUDA library switch and changes nothing here)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input,
    weight,
    bias,
    running_mean,
    running_var,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool = True,
):
    """``torch.instance_norm``: `F.instance_norm` with ATen's argument order."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def layer_norm(
    input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable: bool = True
):
    """``torch.layer_norm``: `F.layer_norm` (`cudnn_enable` changes nothing here)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(
    input, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled: bool = True
):
    """``torch.group_norm``: `F.group_norm` (`cudnn_enabled` changes nothing here)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def dropout(input, p: float, train: bool):
    """``torch.dropout``: `F.dropout` with `train` required."""
    return F.dropout(input, p, train)


def alpha_dropout(input, p: float, train: bool):
    """``torch.alpha_dropout``: `F.alpha_dropout` with `train` required."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p: float, train: bool):
    """``torch.feature_alpha_dropout``: `F.feature_alpha_dropout` with `train` required."""
    return F.feature_alpha_dropout(input, p, train)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: (values, indices), as ATen's returns both."""
    return F.adaptive_max_pool1d_with_indices(input, output_size)
