"""`gradcheck` / `gradgradcheck`: compare autograd's Jacobians with central finite differences.

Use float64 (or complex128) inputs on a device with data. The numerical Jacobian perturbs each
input element in place by ±eps (inputs keep requires_grad, so `gradgradcheck` can differentiate
inside `func`); the analytical one comes from `autograd.grad` with one-hot output gradients.

Complex tensors are compared in complex, PyTorch's convention: each complex number is its
(real, imaginary) pair, so the Jacobians are those of the real and imaginary parts, and the
gradient autograd gives for a complex input is read as ``dL/dreal + 1j * dL/dimag`` (the
conjugate Wirtinger derivative times 2), for one-hot real or imaginary output gradients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..device import get_device_type
from ..tensor.impl import TensorImpl, requires_grad as _requires_grad

if TYPE_CHECKING:
    from ..tensor.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` when the Jacobians differ."""


def _tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _read(t: Tensor) -> np.ndarray:
    """The values of `t` in float64; a complex tensor as (real, imaginary) pairs (a last dim of
    size 2)."""
    a = np.asarray(get_device_type(t._device).read_numpy(t.detach()))
    if t._dtype.is_complex:
        return np.stack([a.real, a.imag], -1).astype(np.float64)
    return np.array(a, dtype=np.float64)


def _write(t: Tensor, values: np.ndarray) -> None:
    """Write float64 `values` (pairs for a complex `t`, as `_read` gives) into `t`."""
    if t._dtype.is_complex:
        values = values[..., 0] + 1j * values[..., 1]
    get_device_type(t._device).write_numpy(t, values.astype(t._dtype.numpy))


def _nreal(t: Tensor) -> int:
    """How many real numbers `t` holds (two per complex element)."""
    return t.numel() * (2 if t._dtype.is_complex else 1)


def _float_outputs(outs: Sequence) -> list:
    return [
        i
        for i, o in enumerate(outs)
        if isinstance(o, TensorImpl) and (o._dtype.is_floating_point or o._dtype.is_complex)
    ]


def _numerical(func: Callable, inputs: tuple, diff_idx: list, out_idx: list, eps: float) -> list:
    """jac[k][j]: d output out_idx[k] / d input diff_idx[j], shape (out numel, in numel)."""
    outs0 = _tuple(func(*inputs))
    jac = [[np.zeros((_nreal(outs0[o]), _nreal(inputs[j]))) for j in diff_idx] for o in out_idx]
    for jj, j in enumerate(diff_idx):
        x = inputs[j]
        orig = _read(x)
        flat = orig.reshape(-1)
        for k in range(flat.size):
            vals = []
            for sign in (1.0, -1.0):
                pert = flat.copy()
                pert[k] += sign * eps
                _write(x, pert.reshape(orig.shape))
                outs = _tuple(func(*inputs))
                vals.append([_read(outs[o]).reshape(-1) for o in out_idx])
            _write(x, orig)
            for kk in range(len(out_idx)):
                jac[kk][jj][:, k] = (vals[0][kk] - vals[1][kk]) / (2 * eps)
    return jac


def _analytical(func: Callable, inputs: tuple, diff_idx: list, out_idx: list) -> list:
    from ..ops.declare import REGISTRY
    from .engine import grad

    outs = _tuple(func(*inputs))
    diff_inputs = [inputs[j] for j in diff_idx]
    jac = [[np.zeros((_nreal(outs[o]), _nreal(inputs[j]))) for j in diff_idx] for o in out_idx]
    for kk, o in enumerate(out_idx):
        out = outs[o]
        if not _requires_grad(out):
            continue
        pairs = out._shape + ((2,) if out._dtype.is_complex else ())
        for r in range(_nreal(out)):
            onehot = np.zeros(_nreal(out))
            onehot[r] = 1.0
            go = REGISTRY["zeros"].op(out._shape, dtype=out._dtype, device=out._device)
            _write(go, onehot.reshape(pairs))
            grads = grad(out, diff_inputs, go, retain_graph=True, allow_unused=True)
            for jj, g in enumerate(grads):
                if g is not None:
                    if g._shape != diff_inputs[jj]._shape:
                        raise GradcheckError(
                            f"Gradient for input {diff_idx[jj]} has shape {list(g._shape)}, "
                            f"expected {list(diff_inputs[jj]._shape)}"
                        )
                    if g._dtype is not diff_inputs[jj]._dtype:
                        raise GradcheckError(
                            f"Gradient for input {diff_idx[jj]} has dtype {g._dtype.name}, "
                            f"expected {diff_inputs[jj]._dtype.name}"
                        )
                    jac[kk][jj][r, :] = _read(g).reshape(-1)
    return jac


def gradcheck(
    func: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of `func` at `inputs` (tensors requiring grad, ideally float64) against
    central differences; True if they match, else raise `GradcheckError` (or return False).

    Examples:
        >>> import coretorch
        >>> x = coretorch.tensor([1., 2.], dtype=coretorch.float64, requires_grad=True)
        >>> coretorch.autograd.gradcheck(lambda t: (t ** 2).sum(), (x,))
        True
    """
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck(): forward-mode AD and batched gradients are not supported by coretorch"
        )
    inputs = _tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, TensorImpl) and _requires_grad(x)]
    if not diff_idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but "
            "none of the them have requires_grad=True."
        )
    for i in diff_idx:
        x = inputs[i]
        if not get_device_type(x._device).has_data:
            raise RuntimeError(
                f"gradcheck(): input {i} is on {x._device}, which holds no data; "
                f"use a data device such as 'cpu'"
            )
        if not (x._dtype.is_floating_point or x._dtype.is_complex):
            raise ValueError(
                f"gradcheck(): input {i} must be floating point or complex, got {x._dtype.name}"
            )
    outs = _tuple(func(*inputs))
    out_idx = _float_outputs(outs)
    analytical = _analytical(func, inputs, diff_idx, out_idx)
    numerical = _numerical(func, inputs, diff_idx, out_idx, eps)
    for kk, o in enumerate(out_idx):
        for jj, j in enumerate(diff_idx):
            a, n = analytical[kk][jj], numerical[kk][jj]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                msg = (
                    f"Jacobian mismatch for output {o} with respect to input {j},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(
    func: Callable,
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``grad(func(inputs), inputs, grad_outputs,
    create_graph=True)`` with respect to `inputs` and `grad_outputs`."""
    from .engine import grad

    inputs = _tuple(inputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, TensorImpl) and _requires_grad(x)]
    outs = _tuple(func(*inputs))
    out_idx = [i for i in _float_outputs(outs) if _requires_grad(outs[i])]
    if grad_outputs is None:
        from ..ops.declare import REGISTRY

        rng = np.random.default_rng(0)
        gos = []
        for i in out_idx:
            o = outs[i]
            g = REGISTRY["zeros"].op(o._shape, dtype=o._dtype, device=o._device)
            _write(g, rng.standard_normal(o._shape + ((2,) if o._dtype.is_complex else ())))
            gos.append(g.requires_grad_(True))
        grad_outputs = tuple(gos)
    grad_outputs = _tuple(grad_outputs)

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        o = [_tuple(func(*ins))[i] for i in out_idx]
        gs = grad(o, [ins[i] for i in diff_idx], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
