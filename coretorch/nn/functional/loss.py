"""Loss functions of ``nn.functional``, written with coretorch ops (so autograd and every backend
work) and following PyTorch's formulas, including its weighting and ignore_index rules."""

from __future__ import annotations

import warnings

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...autograd.function import Function
from ...ops import aten
from ...tensor.tensor import Tensor
from ._reduction import reduce_loss, resolve

__all__ = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]


def _check_same_size(name: str, input: Tensor, target: Tensor) -> None:
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            f"{name}(): expected input and target to be Tensors, got "
            f"{type(input).__name__} and {type(target).__name__}"
        )
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            f"broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


@autocast_function("mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error: (input - target)² reduced."""
    _check_same_size("mse_loss", input, target)
    reduction = resolve(size_average, reduce, reduction)
    d = input - target
    return reduce_loss(_weighted(d * d, weight), reduction)


@autocast_function("l1_loss")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error: |input - target| reduced."""
    _check_same_size("l1_loss", input, target)
    reduction = resolve(size_average, reduce, reduction)
    return reduce_loss(_weighted((input - target).abs(), weight), reduction)


@autocast_function("smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d² / beta where |d| < beta, else |d| - 0.5 beta (plain L1 for beta == 0)."""
    _check_same_size("smooth_l1_loss", input, target)
    reduction = resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    ad = (input - target).abs()
    if beta == 0:
        return reduce_loss(ad, reduction)
    loss = aten.where(ad < beta, ad * ad * (0.5 / beta), ad - 0.5 * beta)
    return reduce_loss(loss, reduction)


@autocast_function("huber_loss")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_same_size("huber_loss", input, target)
    reduction = resolve(None, None, reduction)
    ad = (input - target).abs()
    loss = aten.where(ad < delta, ad * ad * 0.5, (ad - 0.5 * delta) * delta)
    return reduce_loss(_weighted(loss, weight), reduction)


@autocast_function("kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """KL(target ‖ exp(input)) pointwise: target (log target - input); 'batchmean' divides the sum
    by the batch size."""
    if reduction == "batchmean":
        red = "sum"
    else:
        red = resolve(size_average, reduce, reduction)
        if red == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and "
                "the support size.'batchmean' divides only by the batch size, and "
                "aligns with the KL div math definition.'mean' will be changed to "
                "behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = aten.xlogy(target, target) - target * input
    out = reduce_loss(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.size(0)
    return out


# ---- classification --------------------------------------------------------------------------


def _class_dim(name: str, input: Tensor) -> int:
    if input.dim() == 0:
        raise ValueError(
            f"{name}(): expected input to have at least 1 dimension (the classes), got a 0-d tensor"
        )
    return 0 if input.dim() == 1 else 1


def _check_index_target(name: str, input: Tensor, target: Tensor, class_dim: int) -> None:
    if target.dtype.is_floating_point or target.dtype is _dt.bool:
        raise RuntimeError(
            f"{name}(): expected target of class indices to have an integer "
            f"dtype (Long), got {target.dtype.name}"
        )
    if class_dim == 0:
        if target.dim() != 0:
            raise RuntimeError(
                f"{name}(): for an unbatched input of shape {list(input.shape)} "
                f"the target must be 0-d, got shape {list(target.shape)}"
            )
        return
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        if target.dim() >= 1 and target.shape[0] != input.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target "
                f"batch_size ({target.shape[0]})."
            )
        raise RuntimeError(
            f"{name}(): expected target of shape {list(expected)} for input of "
            f"shape {list(input.shape)}, got {list(target.shape)}"
        )


def _contains(t: Tensor, value: int) -> bool:
    """Whether `value` occurs in the integer tensor `t` (True on shape-only devices such as meta,
    which cannot be asked: the masked form that True selects has the same shapes). While
    `coretorch.compile` captures, the answer becomes a guard its replays check on the new
    targets, or, where it cannot (targets computed in the step), True: the masked form is right
    for every target."""
    from ...device import get_device_type
    from ...record_function import state

    dt = get_device_type(t.device)
    if not dt.has_data:
        return True
    if state.capture is not None:
        seen = state.capture.value_guard(
            t,
            lambda a: bool((a == value).any()),
            f"whether the targets contain ignore_index={value}",
        )
        return True if seen is None else seen
    # one host read instead of two dispatched ops: targets are small and sync anyway
    return bool((dt.read_numpy(t) == value).any())


def _pick(input: Tensor, target: Tensor, class_dim: int, keepdim: bool = False) -> Tensor:
    """input[..., target, ...] along the class dim, with PyTorch's out-of-range error."""
    try:
        out = input.gather(class_dim, target.unsqueeze(class_dim))
    except (RuntimeError, IndexError):
        n = input.shape[class_dim]
        bad = target.masked_select((target < 0) | (target >= n))
        if bad.numel():
            raise IndexError(f"Target {int(bad[0])} is out of bounds.") from None
        raise
    return out if keepdim else out.squeeze(class_dim)


def _nll(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    class_dim: int,
) -> Tensor:
    """nll_loss on checked arguments."""
    if weight is not None and weight.shape != (input.shape[class_dim],):
        raise RuntimeError(
            f"nll_loss(): weight tensor should be defined either for all "
            f"{input.shape[class_dim]} classes or no classes but got weight "
            f"tensor of shape: {list(weight.shape)}"
        )
    has_ignore = _contains(target, ignore_index)
    if not has_ignore and weight is None:
        # the common case in as few ops as possible: -sum(picked) / n
        if reduction == "mean":
            return _pick(input, target, class_dim, keepdim=True).sum().div(-target.numel())
        if reduction == "sum":
            return -_pick(input, target, class_dim, keepdim=True).sum()
        return -_pick(input, target, class_dim)
    keep = target != ignore_index
    safe = target.masked_fill(~keep, 0) if has_ignore else target
    picked = _pick(input, safe, class_dim)
    if weight is not None:
        w = weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
        if has_ignore:
            w = w * keep
    else:
        w = keep.to(input.dtype)
    loss = -(picked * w)
    if has_ignore:  # ignored targets get no gradient at all, even when 'mean' divides by 0
        loss = aten.where(keep, loss, 0.0)
    if reduction == "mean":
        return loss.sum() / w.sum()
    if reduction == "sum":
        return loss.sum()
    return loss


@autocast_function("nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of the target classes given log-probabilities `input` (N, C, ...).

    Targets equal to `ignore_index` contribute nothing; with `weight`, each sample is weighted by
    its class's weight and 'mean' divides by the total weight (as PyTorch)."""
    reduction = resolve(size_average, reduce, reduction)
    class_dim = _class_dim("nll_loss", input)
    _check_index_target("nll_loss", input, target, class_dim)
    return _nll(input, target, weight, ignore_index, reduction, class_dim)


@autocast_function("cross_entropy_loss")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits `input` (N, C, ...) and class indices or class probabilities.

    A target with the input's shape holds probabilities; otherwise it holds class indices (with
    `ignore_index`). `label_smoothing` mixes the target with the uniform distribution.

    Args:
        input: unnormalized scores (logits), class dimension 1 (or 0 for a single sample).
        target: class indices of shape (N, ...) or class probabilities of the input's shape.
        weight: a rescaling weight per class, shape (C,).
        ignore_index: a target index that contributes nothing (nor to the mean's divisor).
        reduction: ``"mean"`` (weighted), ``"sum"`` or ``"none"``.
        label_smoothing: in [0, 1].

    Raises:
        RuntimeError: for `label_smoothing` outside [0, 1].
        ValueError: when the input's and the target's batch sizes differ.
        IndexError: for a class index outside [0, C).

    Examples:
        >>> import coretorch
        >>> import coretorch.nn.functional as F
        >>> logits = coretorch.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
        >>> F.relu(logits)
        tensor([[2.0000, 0.0000, 0.0000],
                [0.5000, 0.5000, 0.5000]])
        >>> F.softmax(logits, dim=1)
        tensor([[0.8438, 0.1142, 0.0420],
                [0.3333, 0.3333, 0.3333]])
        >>> F.cross_entropy(logits, coretorch.tensor([0, 2]))
        tensor(0.6342)
        >>> F.cross_entropy(logits, coretorch.tensor([0, 2]), reduction="none")
        tensor([0.1698, 1.0986])
        >>> F.cross_entropy(logits, coretorch.tensor([0, 3]))
        Traceback (most recent call last):
            ...
        IndexError: Target 3 is out of bounds.
    """
    reduction = resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"cross_entropy(): label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    class_dim = _class_dim("cross_entropy", input)
    n_classes = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    wshape = [1] * input.dim()
    wshape[class_dim] = n_classes
    if target.shape == input.shape and target.dtype.is_floating_point:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.view(wshape)
        if reduction == "mean":
            return -prod.sum() / (input.numel() // n_classes)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum(class_dim)
    _check_index_target("cross_entropy", input, target, class_dim)
    nll = _nll(logp, target, weight, ignore_index, reduction, class_dim)
    if label_smoothing <= 0:
        return nll
    ignore = target == ignore_index
    smooth = (
        -(logp * weight.view(wshape)).sum(class_dim) if weight is not None else -logp.sum(class_dim)
    )
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            safe = target.masked_fill(ignore, 0)
            wsum = weight.index_select(0, safe.reshape(-1)).masked_fill(ignore.reshape(-1), 0.0)
            smooth = smooth.sum() / wsum.sum()
        else:
            smooth = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


@autocast_function("binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) with the logs clamped at -100, as PyTorch."""
    reduction = resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input "
            f"size ({input.shape}) is deprecated. Please ensure they have the same "
            f"size."
        )
    return reduce_loss(_weighted(_BinaryCrossEntropy.apply(input, target), weight), reduction)


class _BinaryCrossEntropy(Function):
    """Elementwise -(t log x + (1 - t) log(1 - x)) with PyTorch's derivative
    (x - t) / max(x (1 - x), 1e-12): finite at x = 0 and x = 1, where differentiating the
    clamped logs would give 0 * inf = NaN."""

    @staticmethod
    def forward(ctx, x: Tensor, t: Tensor):
        ctx.save_for_backward(x, t)
        # the logs are clamped at -100, as PyTorch's: the loss is never inf
        return -(t * x.log().clamp(min=-100.0) + (1 - t) * (1 - x).log().clamp(min=-100.0))

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_tensors
        gx = g * (x - t) / (x * (1 - x)).clamp(min=1e-12)
        return gx, g * ((-x).log1p() - x.log())  # unclamped, as PyTorch's target gradient


@autocast_function("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """BCE of sigmoid(input) computed stably: (1 - t) x - w_p log σ(x), with
    log σ(x) = -(relu(-x) + log1p(exp(-|x|)))."""
    reduction = resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    neg_log_sigmoid = (-input).relu() + (-input.abs()).exp().log1p()
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * neg_log_sigmoid
    else:
        loss = (1 - target) * input + neg_log_sigmoid
    return reduce_loss(_weighted(loss, weight), reduction)
