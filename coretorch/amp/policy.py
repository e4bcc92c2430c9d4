"""PyTorch's autocast op lists (``aten/src/ATen/autocast_mode.{h,cpp}``) and the casts they ask for.

Each device type maps op names (ATen's) to a policy:

- ``lower``: floating inputs are cast to the autocast dtype (matmul, conv, linear ...);
- ``fp32``: floating inputs are cast to float32 (losses, and on cuda exp, log, norms ...);
- ``fp32_opt_dtype``: ops with a ``dtype=`` argument (softmax, sum, cumsum ...) get
  ``dtype=float32`` when none is given;
- ``promote``: floating inputs are cast to the widest among them (cat, stack, addcmul ...).

Only "eligible" tensors are cast: floating, not float64, on the autocast device. The lists
differ per device, as PyTorch's do: on cpu, softmax, sum and layer_norm keep the low type.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..tensor.impl import TensorImpl
from ..tensor.tensor import Tensor
from .state import STATE

__all__ = ["POLICIES", "policy_of", "cast_record", "cast_tensors"]

_LOWER_COMMON = (
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "prelu",
    "addmm",
    "matmul",
    "mm",
    "linalg_vecdot",
    "linear",
    "addbmm",
    "baddbmm",
    "bmm",
    "scaled_dot_product_attention",
)
_CPU = {
    "lower": _LOWER_COMMON
    + ("_convolution", "_addmm_activation", "_native_multi_head_attention", "mkldnn_rnn_layer"),
    "fp32": (
        "avg_pool3d",
        "binary_cross_entropy",
        "grid_sampler",
        "polar",
        "prod",
        "quantile",
        "nanquantile",
        "stft",
        "cdist",
        "trace",
        "view_as_complex",
        "cholesky",
        "cholesky_inverse",
        "cholesky_solve",
        "inverse",
        "lu_solve",
        "orgqr",
        "ormqr",
        "pinverse",
        "max_pool3d",
        "max_unpool2d",
        "max_unpool3d",
        "adaptive_avg_pool3d",
        "reflection_pad1d",
        "reflection_pad2d",
        "replication_pad1d",
        "replication_pad2d",
        "replication_pad3d",
        "mse_loss",
        "cosine_embedding_loss",
        "nll_loss",
        "nll_loss2d",
        "hinge_embedding_loss",
        "poisson_nll_loss",
        "smooth_l1_loss",
        "cross_entropy_loss",
        "l1_loss",
        "huber_loss",
        "margin_ranking_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "ctc_loss",
        "kl_div",
        "multilabel_margin_loss",
        "binary_cross_entropy_with_logits",
        "fft_fft",
        "fft_ifft",
        "fft_fft2",
        "fft_ifft2",
        "fft_fftn",
        "fft_ifftn",
        "fft_rfft",
        "fft_irfft",
        "fft_rfft2",
        "fft_irfft2",
        "fft_rfftn",
        "fft_irfftn",
        "fft_hfft",
        "fft_ihfft",
        "linalg_cond",
        "linalg_matrix_rank",
        "linalg_solve",
        "linalg_cholesky",
        "linalg_svdvals",
        "linalg_eigvals",
        "linalg_eigvalsh",
        "linalg_inv",
        "linalg_householder_product",
        "linalg_tensorinv",
        "linalg_tensorsolve",
        "geqrf",
        "qr",
        "svd",
        "triangular_solve",
        "fractional_max_pool2d",
        "fractional_max_pool3d",
        "adaptive_max_pool3d",
        "linalg_qr",
        "linalg_cholesky_ex",
        "linalg_svd",
        "linalg_eig",
        "linalg_eigh",
        "linalg_lstsq",
        "linalg_inv_ex",
    ),
    "promote": ("stack", "cat", "index_copy"),
}
_CUDA = {
    "lower": _LOWER_COMMON
    + (
        "convolution",
        "addmv",
        "addr",
        "einsum",
        "mv",
        "chain_matmul",
        "linalg_multi_dot",
        "lstm_cell",
        "gru_cell",
        "rnn_tanh_cell",
        "rnn_relu_cell",
    ),
    "fp32": (
        "acos",
        "asin",
        "cosh",
        "erfinv",
        "exp",
        "expm1",
        "log",
        "log10",
        "log2",
        "log1p",
        "reciprocal",
        "rsqrt",
        "sinh",
        "tan",
        "pow",
        "softplus",
        "layer_norm",
        "native_layer_norm",
        "group_norm",
        "frobenius_norm",
        "nuclear_norm",
        "cosine_similarity",
        "poisson_nll_loss",
        "cosine_embedding_loss",
        "nll_loss",
        "nll_loss2d",
        "hinge_embedding_loss",
        "kl_div",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "mse_loss",
        "margin_ranking_loss",
        "multilabel_margin_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "binary_cross_entropy_with_logits",
        "dist",
        "pdist",
        "cdist",
        "renorm",
        "logsumexp",
        "upsample_nearest1d",
        "upsample_nearest2d",
        "upsample_nearest3d",
        "upsample_linear1d",
        "upsample_bilinear2d",
        "upsample_trilinear3d",
        "upsample_bicubic2d",
        "norm",
    ),
    "fp32_opt_dtype": (
        "prod",
        "softmax",
        "log_softmax",
        "cumprod",
        "cumsum",
        "linalg_vector_norm",
        "linalg_matrix_norm",
        "sum",
    ),
    "promote": (
        "addcdiv",
        "addcmul",
        "atan2",
        "bilinear",
        "cross",
        "dot",
        "vdot",
        "grid_sampler",
        "index_put",
        "tensordot",
        "scatter_add",
        "stack",
        "cat",
        "index_copy",
    ),
    # PyTorch refuses it under cuda autocast (a sigmoid before it is unsafe in float16)
    "banned": ("binary_cross_entropy",),
}

POLICIES: dict[str, dict[str, str]] = {
    dev: {name: kind for kind, names in lists.items() for name in names}
    for dev, lists in (("cpu", _CPU), ("cuda", _CUDA))
}

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_"
    "logits\nor torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits "
    "are\nsafe to autocast."
)


def policy_of(name: str, args) -> tuple[str, str, dt.dtype] | None:
    """(policy, device type, autocast dtype) for op `name` called with `args`, or None when
    autocast leaves the call alone (off for the arguments' device, or the op not listed)."""
    dev = _device_type(args)
    if dev is None or not STATE.enabled.get(dev):
        return None
    kind = POLICIES.get(dev, {}).get(name)
    if kind is None:
        return None
    if kind == "banned":
        raise RuntimeError(BANNED_MESSAGE)
    return kind, dev, STATE.dtype[dev]


def _device_type(args) -> str | None:
    for a in args:
        if isinstance(a, TensorImpl):
            return a._device.type
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, TensorImpl):
                    return b._device.type
    return None


def _eligible(t, dev: str) -> bool:
    d = t._dtype
    return d.is_floating_point and d is not dt.float64 and t._device.type == dev


def _cast(t, to: dt.dtype, dev: str, lower: dt.dtype):
    if not isinstance(t, Tensor) or t._dtype is to or not _eligible(t, dev):
        return t
    # as PyTorch (and Apex): float32 leaf parameters keep their low-precision copy for the
    # region, so a weight used by several ops (or several steps of an RNN) is cast once
    cacheable = (
        to is lower
        and t._dtype is dt.float32
        and STATE.cache_enabled
        and t.requires_grad
        and t.grad_fn is None
        and t._base is None
    )
    if cacheable:
        hit = STATE.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
    out = t.to(to)
    if cacheable:
        STATE.cache[id(t)] = (t, out)  # holding `t` keeps its id from being reused
    return out


def _widest(values, dev: str, lower: dt.dtype) -> dt.dtype:
    # PyTorch's prioritize(): float32 wins over the low type; float64 inputs are left out
    for t in values:
        if isinstance(t, TensorImpl) and _eligible(t, dev) and t._dtype is not lower:
            return dt.float32
    return lower


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def cast_tensors(kind: str, dev: str, lower: dt.dtype, args, kwargs: dict | None = None):
    """`args` (and `kwargs`) with their tensors (and tensors in lists) cast for policy `kind`
    (``lower``, ``fp32`` or ``promote``; a Python function's optional dtype is not rewritten, so
    ``fp32_opt_dtype`` casts as ``fp32``)."""
    kwargs = kwargs or {}
    if kind == "lower":
        to = lower
    elif kind in ("fp32", "fp32_opt_dtype"):
        to = dt.float32
    else:
        to = _widest((*_flat(args), *_flat(kwargs.values())), dev, lower)

    def conv(a: Any):
        if isinstance(a, (list, tuple)):
            return type(a)(_cast(b, to, dev, lower) for b in a)
        return _cast(a, to, dev, lower)

    return tuple(conv(a) for a in args), {k: conv(v) for k, v in kwargs.items()}


def cast_record(op, kind: str, dev: str, lower: dt.dtype, record: tuple) -> tuple:
    """A dispatcher argument record of `op` cast for policy `kind`; ``fp32_opt_dtype`` sets the
    record's ``dtype`` to float32 when it is None and the input is eligible."""
    if kind == "fp32_opt_dtype":
        i = op.schema.argument("dtype").index
        if record[i] is None and isinstance(record[0], TensorImpl) and _eligible(record[0], dev):
            return record[:i] + (dt.float32,) + record[i + 1 :]
        return record
    return cast_tensors(kind, dev, lower, record)[0]
