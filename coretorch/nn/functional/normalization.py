"""Normalization functions of ``nn.functional`` (layer/group/batch norm, normalize), written with
coretorch reductions and pointwise ops."""

from __future__ import annotations

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...autograd.grad_mode import no_grad
from ...tensor.tensor import Tensor

__all__ = ["layer_norm", "group_norm", "batch_norm", "instance_norm", "normalize", "rms_norm"]


def as_normalized_shape(normalized_shape) -> tuple:
    """A `normalized_shape` (an int or a sequence of ints) as a tuple."""
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _affine(
    out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple | None = None
) -> Tensor:
    """``out * weight + bias``, each optional; `shape` reshapes per-channel weight and bias so
    they broadcast over (N, C, *)."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


def _check_per_channel(op: str, c: int, **tensors) -> None:
    """Per-channel weight, bias and running statistics hold one value per channel."""
    for name, t in tensors.items():
        if t is not None and t.numel() != c:
            raise RuntimeError(
                f"{op}(): {name} should contain {c} elements (one per channel) not {t.numel()}"
            )


@autocast_function("layer_norm")
def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims (biased variance), then scale and
    shift elementwise."""
    shape = as_normalized_shape(normalized_shape)
    n = len(shape)
    if n == 0 or tuple(input.shape[input.dim() - n :]) != shape:
        raise RuntimeError(
            f"layer_norm(): Given normalized_shape={list(shape)}, expected input "
            f"with shape [*, {', '.join(str(s) for s in shape)}], but got input of "
            f"size {list(input.shape)}"
        )
    dims = tuple(range(-n, 0))
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    var = (xc * xc).mean(dims, keepdim=True)
    return _affine(xc * (var + eps).rsqrt(), weight, bias)


def rms_norm(
    input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """x / sqrt(mean(x²) + eps) over the last dims, times `weight`."""
    dims = tuple(range(-len(as_normalized_shape(normalized_shape)), 0))
    if eps is None:
        eps = _dt.finfo(input.dtype).eps
    return _affine(input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt(), weight, None)


@autocast_function("group_norm")
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each group of C/num_groups channels of (N, C, *) over its channels and spatial
    positions, then scale and shift per channel."""
    if input.dim() < 2:
        raise RuntimeError(
            f"group_norm(): Expected at least 2 dimensions for input tensor but "
            f"received {input.dim()}"
        )
    n, c = input.shape[0], input.shape[1]
    _check_per_channel("group_norm", c, weight=weight, bias=bias)
    if c % num_groups:
        raise RuntimeError(
            f"group_norm(): Expected number of channels in input to be divisible "
            f"by num_groups, but got input of shape {list(input.shape)} and "
            f"num_groups={num_groups}"
        )
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    var = (xc * xc).mean(-1, keepdim=True)
    out = (xc * (var + eps).rsqrt()).reshape(input.shape)
    return _affine(out, weight, bias, (1, c) + (1,) * (input.dim() - 2))


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize (N, C, *) per channel: with batch statistics in training (updating the running
    stats in place: running = (1 - momentum) running + momentum * batch, with the unbiased batch
    variance), with the running stats in eval. An input with no elements (of any rank, as
    PyTorch allows) gives an empty result and leaves the running stats as they are."""
    if input.numel() == 0:
        out = input.clone()  # a copy, not a view: it keeps the gradient chain
        for param, combine in ((weight, "mul"), (bias, "add")):
            if param is not None and param.numel():
                out = getattr(out, combine)(param[0])
        return out
    if input.dim() < 2:
        raise ValueError(
            f"batch_norm(): expected at least 2D input (N, C, ...), got {input.dim()}D"
        )
    c = input.shape[1]
    _check_per_channel(
        "batch_norm",
        c,
        running_mean=running_mean,
        running_var=running_var,
        weight=weight,
        bias=bias,
    )
    shape = (1, c) + (1,) * (input.dim() - 2)
    dims = (0,) + tuple(range(2, input.dim()))
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input "
                f"size {list(input.shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        xc = input - mean
        var = (xc * xc).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            _update_running_stats(
                running_mean,
                running_var,
                mean.reshape(c),
                var.reshape(c) * (count / (count - 1)),
                momentum,
            )
        out = xc * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "batch_norm(): running_mean and running_var must be defined in evaluation mode"
            )
        out = _with_running_stats(input, running_mean, running_var, shape, eps)
    return _affine(out, weight, bias, shape)


def _update_running_stats(
    running_mean: Tensor | None,
    running_var: Tensor | None,
    mean: Tensor,
    unbiased_var: Tensor,
    momentum: float,
) -> None:
    """running = (1 - momentum) running + momentum * batch statistic, in place."""
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(unbiased_var, alpha=momentum)


def _with_running_stats(
    input: Tensor, running_mean: Tensor, running_var: Tensor, shape: tuple, eps: float
) -> Tensor:
    return (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each (sample, channel) plane of (N, C, *) over its spatial positions. With
    running stats and `use_input_stats`, they move toward the batch average of the per-instance
    mean and unbiased variance; without `use_input_stats` the running stats normalize."""
    if input.dim() < 3:
        raise ValueError(
            f"instance_norm(): expected input of at least 3 dimensions (N, C, *), "
            f"got {input.dim()}D"
        )
    n, c = input.shape[0], input.shape[1]
    _check_per_channel(
        "instance_norm",
        c,
        running_mean=running_mean,
        running_var=running_var,
        weight=weight,
        bias=bias,
    )
    shape = (1, c) + (1,) * (input.dim() - 2)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "instance_norm(): Expected running_mean and running_var to be "
                "defined when use_input_stats is false"
            )
        out = _with_running_stats(input, running_mean, running_var, shape, eps)
        return _affine(out, weight, bias, shape)
    count = input.numel() // max(n * c, 1)
    if count == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size "
            f"{list(input.shape)}"
        )
    dims = tuple(range(2, input.dim()))
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    var = (xc * xc).mean(dims, keepdim=True)
    if running_mean is not None or running_var is not None:
        _update_running_stats(
            running_mean,
            running_var,
            mean.reshape(n, c).mean(0),
            (var.reshape(n, c) * (count / (count - 1))).mean(0),
            momentum,
        )
    return _affine(xc * (var + eps).rsqrt(), weight, bias, shape)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """x / max(‖x‖_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    res = input / denom
    if out is not None:
        return out.copy_(res)
    return res
