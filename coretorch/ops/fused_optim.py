"""Fused optimizer updates: ``_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_``,
``_fused_adagrad_`` (PyTorch's schemas) and ``_fused_rmsprop_`` (coretorch's, in the same form).

Each updates every parameter of a list, with its state, in one call. They are composites: the
implementation written here is the per-op math over lists (the ``_foreach_*`` ops), the same
steps as the optimizers' single-tensor updates, so every backend has them. A backend that
registers its own kernel for one (the backend kit's array-API kernels, the cpu backend's numba
loop over all the buffers) offers the *fused* update; the optimizers use it by default only
where a backend does (`coretorch.optim` checks with `has_fused_kernel`).

The meta rules are the only validators: list lengths, one float dtype, shape and device per
parameter across its gradient and state, one-element step counters, one-element float32 scaler
tensors.
``grad_scale`` divides the gradients in place first (unscaling, as a GradScaler's); a
``found_inf`` holding 1 skips the update.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from ..device import get_device_type
from ..dispatch.keys import BACKEND_MASK, DispatchKey
from ..tensor.impl import device_key_bits
from .declare import REGISTRY, declare

__all__ = [
    "adam_coefficients",
    "adagrad_clrs",
    "skip_update",
    "host_value",
    "has_fused_kernel",
    "fused_devices",
]


def _op(name: str):
    return REGISTRY[name].op.entry


# ---- coefficients every implementation shares -------------------------------------------------


def adam_coefficients(steps, lr: float, beta1: float, beta2: float) -> tuple[list, list]:
    """Per parameter at step t: the step size ``lr / (1 - β1^t)`` and ``sqrt(1 - β2^t)`` (in
    double precision, as PyTorch's updates compute them)."""
    sizes = [lr / (1 - beta1**s) for s in steps]
    sqrts = [math.sqrt(1 - beta2**s) for s in steps]
    return sizes, sqrts


def adagrad_clrs(steps, lr: float, lr_decay: float) -> list:
    """Adagrad's decayed learning rate ``lr / (1 + (t - 1) lr_decay)`` per parameter."""
    return [lr / (1 + (s - 1) * lr_decay) for s in steps]


def host_value(t, default: float = 1.0) -> float:
    """The value of one-element tensor `t` (a step counter, a scaler's scale); `default` on a
    shape-only device such as meta, whose results do not depend on values."""
    if not get_device_type(t._device).has_data:
        return default
    return float(t.item())


def skip_update(found_inf) -> bool:
    """A GradScaler found an inf/NaN gradient: the update is skipped (PyTorch's kernels return
    when ``found_inf`` is 1)."""
    return found_inf is not None and host_value(found_inf, 0.0) == 1.0


def has_fused_kernel(name: str, tensor) -> bool:
    """Whether the backend of `tensor` registers its own kernel for fused op `name` (else the
    op runs its per-op composite, and the optimizers do not pick it by default)."""
    return _kernel_at(name, tensor._keys & BACKEND_MASK)


def fused_devices(name: str) -> list[str]:
    """The device types whose backend registers its own kernel for fused op `name`."""
    return [dev for dev, bits in device_key_bits.items() if _kernel_at(name, bits)]


def _kernel_at(name: str, bits: int) -> bool:
    if not bits:
        return False
    return REGISTRY[name].op.has_kernel(DispatchKey._by_bit[bits.bit_length() - 1])


# ---- meta rules ----------------------------------------------------------------------------


def _check_buffers(op: str, params: tuple, lists: dict, optional: dict) -> None:
    """Each list of `lists` holds one tensor per parameter (those of `optional` may also be
    empty) with the parameter's shape, dtype and device; parameters are float, on one
    device."""
    n = len(params)
    for name, ts in {**lists, **optional}.items():
        if len(ts) != n and not (name in optional and len(ts) == 0):
            raise RuntimeError(
                f"{op}(): expected {name} to hold {n} tensors (one per parameter), got {len(ts)}"
            )
    buffers = [(name, ts) for name, ts in {**lists, **optional}.items() if len(ts)]
    dev = params[0]._device if params else None
    for i, p in enumerate(params):
        d = p._dtype
        if p._device is not dev and p._device != dev:
            raise RuntimeError(
                f"{op}(): expected every parameter on one device, got {dev} and {p._device}"
            )
        if not d.is_floating_point:
            raise NotImplementedError(
                f"{op}(): not implemented for '{d.name}' parameters; "
                f"expected float tensors (self[{i}] is {d.name})"
            )
        for name, ts in buffers:
            t = ts[i]
            if (
                t._dtype is d
                and t._shape == p._shape
                and (t._device is p._device or t._device == p._device)
            ):
                continue
            for what, got, want in (
                ("dtype", t._dtype.name, d.name),
                ("shape", list(t._shape), list(p._shape)),
                ("device", t._device, p._device),
            ):
                if got != want:
                    raise RuntimeError(
                        f"{op}(): expected {name}[{i}] to have the {what} of "
                        f"self[{i}] ({want}), got {got}"
                    )


def _check_scalar(op: str, name: str, t, float32: bool = False) -> None:
    """Step counters hold one float value; scaler tensors one float32 value (as PyTorch's
    GradScaler keeps them, and its fused kernels require)."""
    if t is None:
        return
    want = "float32" if float32 else "float"
    if t.numel() != 1 or not (t._dtype is _dt.float32 if float32 else t._dtype.is_floating_point):
        raise RuntimeError(
            f"{op}(): expected {name} to be a one-element {want} tensor, got "
            f"shape {list(t._shape)} and dtype {t._dtype.name}"
        )


def _check_steps_and_scaler(op: str, params: tuple, state_steps, grad_scale, found_inf) -> None:
    if state_steps is not None:
        if len(state_steps) != len(params):
            raise RuntimeError(
                f"{op}(): expected state_steps to hold {len(params)} tensors "
                f"(one per parameter), got {len(state_steps)}"
            )
        for i, t in enumerate(state_steps):
            _check_scalar(op, f"state_steps[{i}]", t)
    _check_scalar(op, "grad_scale", grad_scale, float32=True)
    _check_scalar(op, "found_inf", found_inf, float32=True)


def _meta_adam(op: str):
    def meta(
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
        _check_buffers(
            op,
            self,
            {"grads": grads, "exp_avgs": exp_avgs, "exp_avg_sqs": exp_avg_sqs},
            {"max_exp_avg_sqs": max_exp_avg_sqs},
        )
        if amsgrad and len(max_exp_avg_sqs) != len(self):
            raise RuntimeError(
                f"{op}(): amsgrad=True needs max_exp_avg_sqs (one per "
                f"parameter), got {len(max_exp_avg_sqs)}"
            )
        _check_steps_and_scaler(op, self, state_steps, grad_scale, found_inf)

    meta.__name__ = f"meta{op}"
    return meta


def _meta_sgd(
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
    op = "_fused_sgd_"
    _check_buffers(op, self, {"grads": grads}, {"momentum_buffer_list": momentum_buffer_list})
    if momentum != 0 and len(momentum_buffer_list) != len(self):
        raise RuntimeError(
            f"{op}(): momentum={momentum} needs momentum_buffer_list (one per "
            f"parameter), got {len(momentum_buffer_list)}"
        )
    _check_steps_and_scaler(op, self, None, grad_scale, found_inf)


def _meta_adagrad(
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
    op = "_fused_adagrad_"
    _check_buffers(op, self, {"grads": grads, "state_sums": state_sums}, {})
    _check_steps_and_scaler(op, self, state_steps, grad_scale, found_inf)


def _meta_rmsprop(
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
    op = "_fused_rmsprop_"
    _check_buffers(
        op,
        self,
        {"grads": grads, "square_avgs": square_avgs},
        {"grad_avgs": grad_avgs, "momentum_buffer_list": momentum_buffer_list},
    )
    if centered and len(grad_avgs) != len(self):
        raise RuntimeError(
            f"{op}(): centered=True needs grad_avgs (one per parameter), got {len(grad_avgs)}"
        )
    if momentum > 0 and len(momentum_buffer_list) != len(self):
        raise RuntimeError(
            f"{op}(): momentum={momentum} needs momentum_buffer_list (one per "
            f"parameter), got {len(momentum_buffer_list)}"
        )
    _check_steps_and_scaler(op, self, None, grad_scale, found_inf)


# ---- the per-op implementations (every backend; the optimizers' foreach=True path) ------------


def _prepared_grads(params, grads, weight_decay, maximize, grad_scale):
    """Unscale the gradients in place, then negate (maximize) and add the L2 term in new
    tensors: the gradients' own values stay as the caller left them (but unscaled)."""
    if grad_scale is not None:
        _op("_foreach_div_")(grads, host_value(grad_scale))
    if maximize:
        grads = _op("_foreach_neg")(grads)
    if weight_decay != 0:
        grads = _op("_foreach_add")(grads, params, alpha=weight_decay)
    return grads


def _adam_impl(
    params,
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
    if decoupled:
        grads = _prepared_grads(params, grads, 0, maximize, grad_scale)
        if weight_decay != 0:
            _op("_foreach_mul_")(params, 1 - lr * weight_decay)
    else:
        grads = _prepared_grads(params, grads, weight_decay, maximize, grad_scale)
    _op("_foreach_lerp_")(exp_avgs, grads, 1 - beta1)
    _op("_foreach_mul_")(exp_avg_sqs, beta2)
    _op("_foreach_addcmul_")(exp_avg_sqs, grads, grads, 1 - beta2)
    step_sizes, bc2_sqrts = adam_coefficients(
        [host_value(s) for s in state_steps], lr, beta1, beta2
    )
    second = exp_avg_sqs
    if amsgrad:
        _op("_foreach_maximum_")(max_exp_avg_sqs, exp_avg_sqs)
        second = max_exp_avg_sqs
    denom = _op("_foreach_sqrt")(second)
    _op("_foreach_div_")(denom, bc2_sqrts)
    _op("_foreach_add_")(denom, eps)
    _op("_foreach_addcdiv_")(params, exp_avgs, denom, [-s for s in step_sizes])


def _fused_adam_(
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
    """Adam over lists (L2 weight decay), per-op."""
    _adam_impl(
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


def _fused_adamw_(
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
    """AdamW over lists (decoupled weight decay), per-op."""
    _adam_impl(
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


def _fused_sgd_(
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
    """SGD over lists, per-op; with `is_first_step` the momentum buffers are set to the
    gradients."""
    if skip_update(found_inf):
        return
    grads = _prepared_grads(self, grads, weight_decay, maximize, grad_scale)
    if momentum != 0:
        bufs = momentum_buffer_list
        if is_first_step:
            for b, g in zip(bufs, grads):
                b.copy_(g)
        else:
            _op("_foreach_mul_")(bufs, momentum)
            _op("_foreach_add_")(bufs, grads, alpha=1 - dampening)
        grads = _op("_foreach_add")(grads, bufs, alpha=momentum) if nesterov else bufs
    _op("_foreach_add_")(self, grads, alpha=-lr)


def _fused_adagrad_(
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
    """Adagrad over lists, per-op."""
    if skip_update(found_inf):
        return
    grads = _prepared_grads(self, grads, weight_decay, maximize, grad_scale)
    clrs = adagrad_clrs([host_value(s) for s in state_steps], lr, lr_decay)
    _op("_foreach_addcmul_")(state_sums, grads, grads, 1)
    std = _op("_foreach_sqrt")(state_sums)
    _op("_foreach_add_")(std, eps)
    _op("_foreach_addcdiv_")(self, grads, std, [-c for c in clrs])


def _fused_rmsprop_(
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
    """RMSprop over lists, per-op."""
    if skip_update(found_inf):
        return
    grads = _prepared_grads(self, grads, weight_decay, maximize, grad_scale)
    _op("_foreach_mul_")(square_avgs, alpha)
    _op("_foreach_addcmul_")(square_avgs, grads, grads, 1 - alpha)
    if centered:
        _op("_foreach_lerp_")(grad_avgs, grads, 1 - alpha)
        avg = _op("_foreach_addcmul")(square_avgs, grad_avgs, grad_avgs, -1)
        _op("_foreach_sqrt_")(avg)
    else:
        avg = _op("_foreach_sqrt")(square_avgs)
    _op("_foreach_add_")(avg, eps)
    if momentum > 0:
        _op("_foreach_mul_")(momentum_buffer_list, momentum)
        _op("_foreach_addcdiv_")(momentum_buffer_list, grads, avg)
        _op("_foreach_add_")(self, momentum_buffer_list, alpha=-lr)
    else:
        _op("_foreach_addcdiv_")(self, grads, avg, -lr)


_SCALER = "Tensor? grad_scale=None, Tensor? found_inf=None"
_ADAM = (
    "(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
    "Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, "
    "float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, "
    f"bool maximize, {_SCALER}) -> ()"
)


def _declare_all() -> None:
    kw: dict[str, Any] = dict(family="fused_optim", method=False, out=False, differentiable=False)
    declare("_fused_adam_" + _ADAM, _meta_adam("_fused_adam_"), impl=_fused_adam_, **kw)
    declare("_fused_adamw_" + _ADAM, _meta_adam("_fused_adamw_"), impl=_fused_adamw_, **kw)
    declare(
        "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, "
        "Tensor(c!)[] momentum_buffer_list, *, float weight_decay, float momentum, "
        "float lr, float dampening, bool nesterov, bool maximize, bool is_first_step, "
        f"{_SCALER}) -> ()",
        _meta_sgd,
        impl=_fused_sgd_,
        **kw,
    )
    declare(
        "_fused_adagrad_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] state_sums, "
        "Tensor(d!)[] state_steps, *, float lr, float lr_decay, float weight_decay, "
        f"float eps, bool maximize, {_SCALER}) -> ()",
        _meta_adagrad,
        impl=_fused_adagrad_,
        **kw,
    )
    declare(
        "_fused_rmsprop_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] square_avgs, "
        "Tensor(d!)[] grad_avgs, Tensor(e!)[] momentum_buffer_list, *, float lr, "
        "float alpha, float eps, float weight_decay, float momentum, bool centered, "
        f"bool maximize, {_SCALER}) -> ()",
        _meta_rmsprop,
        impl=_fused_rmsprop_,
        **kw,
    )


_declare_all()
