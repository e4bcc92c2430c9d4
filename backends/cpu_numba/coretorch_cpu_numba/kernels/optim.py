"""Fused optimizer kernels: one numba call updates every parameter of the list
(`optim_loops`), reading each buffer through its address.

Parameters whose buffers are all contiguous float32 or float64 go to the numba loop, one call
per dtype; the rest (half precision, strided buffers) to the backend kit's array-API kernel.
Scalars (bias corrections, decayed learning rates) are computed here once per parameter.
"""

from __future__ import annotations

import numpy as np

from coretorch import dtypes as dt
from coretorch.backend_kit import optim as kit
from coretorch.ops.fused_optim import adagrad_clrs, adam_coefficients, skip_update

from ..registry import kernel

_NO_COEF = np.zeros((0, 2))  # loops without per-parameter coefficients
_LOOP_DTYPES: dict[dt.dtype, np.dtype] = {
    dt.float32: np.dtype(np.float32),
    dt.float64: np.dtype(np.float64),
}
_loops = None


def _optim_loops():
    """The numba loop module, imported on first use (loading its compiled loop takes about a
    second: only a process that steps an optimizer pays it)."""
    global _loops
    if _loops is None:
        from .. import optim_loops

        _loops = optim_loops
    return _loops


def _partition(params, buffers) -> tuple[dict, list]:
    """Indices of the parameters the numba loop takes, by numpy dtype, and the others."""
    loop: dict[np.dtype, list[int]] = {}
    rest: list[int] = []
    for i, p in enumerate(params):
        npd = _LOOP_DTYPES.get(p._dtype)
        if (
            npd is not None
            and p.is_contiguous()
            and all(b[i].is_contiguous() for b in buffers if b)
        ):
            loop.setdefault(npd, []).append(i)
        else:
            rest.append(i)
    return loop, rest


def _run(algo: str, params, buffers, coef, hyper, flags, fallback) -> None:
    """Run numba loop `algo` (ADAM, SGD... of `optim_loops`) over the parameters it takes and
    `fallback(indices)` over the rest.

    `buffers` are the lists of the parameters' other buffers in the loop's order (gradient
    first; an empty list for absent state); `coef` is a (n, 2) float64 array of
    per-parameter coefficients."""
    loop, rest = _partition(params, buffers)
    for npd, idx in loop.items():
        addrs = np.zeros((len(idx), 5), np.int64)
        sizes = np.empty(len(idx), np.int64)
        for row, i in enumerate(idx):
            p = params[i]
            addrs[row, 0] = p.data_ptr()
            sizes[row] = p.numel()
            for col, b in enumerate(buffers, 1):
                if b:
                    addrs[row, col] = b[i].data_ptr()
        c = np.zeros((len(idx), 2), npd) if coef is _NO_COEF else coef[idx].astype(npd)
        loops = _optim_loops()
        loops.update(
            getattr(loops, algo),
            addrs,
            sizes,
            c,
            np.asarray(hyper, npd),
            np.asarray(flags, np.int64),
        )
    if rest:
        fallback(rest)


def _kit_fallback(fn, lists, scalars, grad_scale):
    """The kit kernel `fn` over the parameters at the given indices: `lists` are the op's list
    arguments, `scalars` its other arguments before grad_scale (found_inf was read already)."""

    def fallback(idx):
        fn(*[[ts[i] for i in idx] if ts else [] for ts in lists], *scalars, grad_scale, None)

    return fallback


def _grad_hyper(grad_scale, maximize: bool) -> tuple[list, list]:
    """The leading hyper-parameters and flags of every loop: unscaling and the sign."""
    scale = 1.0 if grad_scale is None else float(grad_scale.item())
    return [scale, -1.0 if maximize else 1.0], [grad_scale is not None]


def _adam(
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale,
    found_inf,
    decoupled: bool,
):
    if skip_update(found_inf):
        return
    sizes, sqrts = adam_coefficients([float(s.item()) for s in state_steps], lr, beta1, beta2)
    coef = np.array([[-s for s in sizes], sqrts], np.float64).T
    hyper, flags = _grad_hyper(grad_scale, maximize)
    l2 = 0.0 if decoupled else weight_decay
    w1 = 1 - beta1
    hyper += [l2, 1 - lr * weight_decay if decoupled else 1.0, w1, beta2, 1 - beta2, eps]
    flags += [l2 != 0, abs(w1) < 0.5, amsgrad]
    buffers = [grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else []]
    fallback = _kit_fallback(
        kit.fused_adamw if decoupled else kit.fused_adam,
        [self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps],
        (lr, beta1, beta2, weight_decay, eps, amsgrad, maximize),
        grad_scale,
    )
    _run("ADAM", self, buffers, coef, hyper, flags, fallback)


@kernel("_fused_adam_")
def fused_adam(
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale,
    found_inf,
):
    """Adam (L2 weight decay) over every parameter: one numba call per dtype"""
    _adam(
        self,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        lr,
        beta1,
        beta2,
        weight_decay,
        eps,
        amsgrad,
        maximize,
        grad_scale,
        found_inf,
        False,
    )


@kernel("_fused_adamw_")
def fused_adamw(
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale,
    found_inf,
):
    """AdamW (decoupled weight decay) over every parameter: one numba call per dtype"""
    _adam(
        self,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        lr,
        beta1,
        beta2,
        weight_decay,
        eps,
        amsgrad,
        maximize,
        grad_scale,
        found_inf,
        True,
    )


@kernel("_fused_sgd_")
def fused_sgd(
    self,
    grads,
    momentum_buffer_list,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
    is_first_step,
    grad_scale,
    found_inf,
):
    """SGD over every parameter: one numba call per dtype"""
    if skip_update(found_inf):
        return
    hyper, flags = _grad_hyper(grad_scale, maximize)
    hyper += [weight_decay, momentum, 1 - dampening, -lr]
    flags += [weight_decay != 0, momentum != 0, is_first_step, nesterov]
    bufs = momentum_buffer_list if momentum != 0 else []
    fallback = _kit_fallback(
        kit.fused_sgd,
        [self, grads, bufs],
        (weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step),
        grad_scale,
    )
    _run("SGD", self, [grads, bufs], _NO_COEF, hyper, flags, fallback)


@kernel("_fused_adagrad_")
def fused_adagrad(
    self,
    grads,
    state_sums,
    state_steps,
    lr,
    lr_decay,
    weight_decay,
    eps,
    maximize,
    grad_scale,
    found_inf,
):
    """Adagrad over every parameter: one numba call per dtype"""
    if skip_update(found_inf):
        return
    clrs = adagrad_clrs([float(s.item()) for s in state_steps], lr, lr_decay)
    coef = np.array([[-c for c in clrs], [0.0] * len(clrs)], np.float64).T
    hyper, flags = _grad_hyper(grad_scale, maximize)
    hyper += [weight_decay, eps]
    flags += [weight_decay != 0]
    fallback = _kit_fallback(
        kit.fused_adagrad,
        [self, grads, state_sums, state_steps],
        (lr, lr_decay, weight_decay, eps, maximize),
        grad_scale,
    )
    _run("ADAGRAD", self, [grads, state_sums], coef, hyper, flags, fallback)


@kernel("_fused_rmsprop_")
def fused_rmsprop(
    self,
    grads,
    square_avgs,
    grad_avgs,
    momentum_buffer_list,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    centered,
    maximize,
    grad_scale,
    found_inf,
):
    """RMSprop over every parameter: one numba call per dtype"""
    if skip_update(found_inf):
        return
    hyper, flags = _grad_hyper(grad_scale, maximize)
    hyper += [weight_decay, alpha, 1 - alpha, eps, momentum, -lr]
    flags += [weight_decay != 0, centered, momentum > 0, abs(1 - alpha) < 0.5]
    buffers = [
        grads,
        square_avgs,
        grad_avgs if centered else [],
        momentum_buffer_list if momentum > 0 else [],
    ]
    fallback = _kit_fallback(
        kit.fused_rmsprop,
        [self, grads, square_avgs, grad_avgs, momentum_buffer_list],
        (lr, alpha, eps, weight_decay, momentum, centered, maximize),
        grad_scale,
    )
    _run("RMSPROP", self, buffers, _NO_COEF, hyper, flags, fallback)
