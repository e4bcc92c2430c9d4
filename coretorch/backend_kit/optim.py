"""Fused optimizer kernels on the array API: ``_fused_adam_``, ``_fused_adamw_``,
``_fused_sgd_``, ``_fused_adagrad_`` and ``_fused_rmsprop_`` update every parameter of the list
in one kernel call (no per-parameter dispatch), each with in-place ufuncs on its arrays; and
``_foreach_add_``, which the optimizers call on their step counters before a fused update.

Arithmetic runs in ``opmath`` of the parameter dtype (half precision in float32, written back
once), scalars in that dtype, in the order of the optimizers' single-tensor updates, so the
results equal the per-op path's to the last few ulps. The arguments arrive checked by the ops'
meta rules (`coretorch.ops.fused_optim`); a ``found_inf`` of 1 skips the update, ``grad_scale``
divides the gradients in place first.
"""

from __future__ import annotations

from coretorch.ops.foreach import per_tensor
from coretorch.ops.fused_optim import adagrad_clrs, adam_coefficients, skip_update

from . import pointwise
from .array_kit import compute_dtype, kit_of, opmath, scalar_as

_NUMBERS = (int, float, bool)

__all__ = [
    "KERNELS",
    "fused_adam",
    "fused_adamw",
    "fused_sgd",
    "fused_adagrad",
    "fused_rmsprop",
    "foreach_add_",
]


class _Param:
    """The arrays of one parameter and its buffers in the compute dtype `cd` (views where the
    tensor already has it, copies written back by `store` otherwise)."""

    def __init__(self, k, cd, tensors):
        self.k, self.tensors = k, tensors
        self.arrays = []
        for t in tensors:
            a = k.arr(t) if t is not None else None
            self.arrays.append(a if a is None or a.dtype == cd else a.astype(cd))

    def store(self, *which: int) -> None:
        """Write the compute copies of the buffers at positions `which` back."""
        for i in which:
            t, a = self.tensors[i], self.arrays[i]
            if t is not None and a is not None and t._dtype.numpy != a.dtype:
                self.k.write(t, a)


def _each(params, *lists):
    """(array module, scalar type of the compute dtype, `_Param`) for each parameter; lists
    may be empty (absent state)."""
    if not params:
        return
    k = kit_of(params[0])
    for i, p in enumerate(params):
        cd = opmath(p._dtype)
        yield k.xp, cd.type, _Param(k, cd, [p] + [ts[i] if ts else None for ts in lists])


def _grad(xp, c, q: _Param, scale, maximize: bool, weight_decay: float):
    """The gradient the update uses: unscaled in place (stored), negated for `maximize`, plus
    the L2 term ``weight_decay * p`` (new arrays: the stored gradient keeps its values)."""
    p, g = q.arrays[0], q.arrays[1]
    if scale is not None:
        xp.divide(g, c(scale), out=g)
        q.store(1)
    if maximize:
        g = xp.negative(g)
    if weight_decay != 0:
        g = xp.add(g, xp.multiply(p, c(weight_decay)))
    return g


def _scale_of(grad_scale):
    return None if grad_scale is None else float(grad_scale.item())


def _lerp_(xp, c, a, end, weight: float) -> None:
    """a = lerp(a, end, weight), from the nearer end (PyTorch's formula)."""
    d = xp.subtract(end, a)
    if abs(weight) < 0.5:
        xp.add(a, xp.multiply(d, c(weight)), out=a)
    else:
        xp.subtract(end, xp.multiply(d, c(1 - weight)), out=a)


def _addcmul_(xp, c, a, t1, t2, value: float) -> None:
    """a += value * t1 * t2"""
    xp.add(a, xp.multiply(xp.multiply(t1, c(value)), t2), out=a)


def _addcdiv_(xp, c, a, t1, t2, value: float) -> None:
    """a += value * t1 / t2"""
    xp.add(a, xp.divide(xp.multiply(t1, c(value)), t2), out=a)


def _adam(
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
) -> None:
    if skip_update(found_inf):
        return
    sizes, sqrts = adam_coefficients([float(s.item()) for s in state_steps], lr, beta1, beta2)
    scale = _scale_of(grad_scale)
    l2 = 0 if decoupled else weight_decay
    lists = (grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else ())
    for i, (xp, c, q) in enumerate(_each(params, *lists)):
        p, _, m, v, vmax = q.arrays
        g = _grad(xp, c, q, scale, maximize, l2)
        if decoupled and weight_decay != 0:
            xp.multiply(p, c(1 - lr * weight_decay), out=p)
        _lerp_(xp, c, m, g, 1 - beta1)
        xp.multiply(v, c(beta2), out=v)
        _addcmul_(xp, c, v, g, g, 1 - beta2)
        second = v
        if vmax is not None:
            xp.maximum(vmax, v, out=vmax)
            second = vmax
        denom = xp.add(xp.divide(xp.sqrt(second), c(sqrts[i])), c(eps))
        _addcdiv_(xp, c, p, m, denom, -sizes[i])
        q.store(0, 2, 3, 4)


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
    """Adam (L2 weight decay) over every parameter of the list."""
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
    """AdamW (decoupled weight decay) over every parameter of the list."""
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
    """SGD with momentum, dampening, Nesterov and weight decay over every parameter."""
    if skip_update(found_inf):
        return
    scale = _scale_of(grad_scale)
    bufs = momentum_buffer_list if momentum != 0 else ()
    for xp, c, q in _each(self, grads, bufs):
        p, _, buf = q.arrays
        g = _grad(xp, c, q, scale, maximize, weight_decay)
        if buf is not None:
            if is_first_step:
                buf[...] = g
            else:
                xp.multiply(buf, c(momentum), out=buf)
                xp.add(buf, xp.multiply(g, c(1 - dampening)), out=buf)
            g = xp.add(g, xp.multiply(buf, c(momentum))) if nesterov else buf
            q.store(2)
        xp.add(p, xp.multiply(g, c(-lr)), out=p)
        q.store(0)


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
    """Adagrad over every parameter of the list."""
    if skip_update(found_inf):
        return
    clrs = adagrad_clrs([float(s.item()) for s in state_steps], lr, lr_decay)
    scale = _scale_of(grad_scale)
    for i, (xp, c, q) in enumerate(_each(self, grads, state_sums)):
        p, _, total = q.arrays
        g = _grad(xp, c, q, scale, maximize, weight_decay)
        _addcmul_(xp, c, total, g, g, 1)
        _addcdiv_(xp, c, p, g, xp.add(xp.sqrt(total), c(eps)), -clrs[i])
        q.store(0, 2)


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
    """RMSprop (centered, with momentum) over every parameter of the list."""
    if skip_update(found_inf):
        return
    scale = _scale_of(grad_scale)
    lists = (
        grads,
        square_avgs,
        grad_avgs if centered else (),
        momentum_buffer_list if momentum > 0 else (),
    )
    for xp, c, q in _each(self, *lists):
        p, _, sq, gavg, buf = q.arrays
        g = _grad(xp, c, q, scale, maximize, weight_decay)
        xp.multiply(sq, c(alpha), out=sq)
        _addcmul_(xp, c, sq, g, g, 1 - alpha)
        if gavg is not None:
            _lerp_(xp, c, gavg, g, 1 - alpha)
            avg = xp.add(xp.sqrt(xp.subtract(sq, xp.multiply(gavg, gavg))), c(eps))
        else:
            avg = xp.add(xp.sqrt(sq), c(eps))
        if buf is not None:
            xp.multiply(buf, c(momentum), out=buf)
            _addcdiv_(xp, c, buf, g, avg, 1)
            xp.add(p, xp.multiply(buf, c(-lr)), out=p)
        else:
            _addcdiv_(xp, c, p, g, avg, -lr)
        q.store(0, 2, 3, 4)


def foreach_add_(self, other, alpha):
    """s += alpha * o for each element of the list, in one kernel call, each element computed
    as ``add_`` computes it (a number added to a float32/float64 tensor in place directly);
    returns the list."""
    k = kit_of(self[0])
    for t, o in zip(self, per_tensor("_foreach_add_", "other", other, len(self), tensor=True)):
        if o.__class__ in _NUMBERS and t._dtype.is_floating_point and t._dtype.itemsize > 2:
            a = k.arr(t)
            b = a.dtype.type(o)
            k.xp.add(a, b if alpha == 1 else b * a.dtype.type(alpha), out=a)
            continue
        d = compute_dtype(t, o)
        if d is t._dtype:
            pointwise.add(t, t, o, alpha)
            continue
        cn = opmath(d)
        b = k.operand(o, cn)
        if alpha != 1:
            b = k.xp.multiply(b, scalar_as(alpha, cn), dtype=cn)
        k.write(t, k.xp.add(k.operand(t, cn), b, dtype=cn))
    return list(self)


KERNELS = {
    "_foreach_add_": foreach_add_,
    "_fused_adam_": fused_adam,
    "_fused_adamw_": fused_adamw,
    "_fused_sgd_": fused_sgd,
    "_fused_adagrad_": fused_adagrad,
    "_fused_rmsprop_": fused_rmsprop,
}
