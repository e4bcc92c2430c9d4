"""The pointwise part of an LSTM cell as one op (PyTorch's ``_thnn_fused_lstm_cell``):
``_lstm_cell(gates, cx) -> (hy, cy, workspace)`` and its backward ``_lstm_cell_backward``;
likewise ``_gru_cell(input_gates, hidden_gates, hx) -> (hy, workspace)`` (PyTorch's
``_thnn_fused_gru_cell``, whose new gate scales the hidden part by r, so the two projections come
apart) and ``_gru_cell_backward``.

`gates` (N, 4H) is the cell's pre-activation, ``x w_ihᵀ + h w_hhᵀ + biases``, in PyTorch's gate
order (input, forget, cell, output); `cx` (N, H) the previous cell state. The workspace holds
the activated gates (σ(i), σ(f), tanh(g), σ(o)), which is all the backward needs besides `cx`
and `cy`.

Both are composites written with pointwise ops, so every backend has them; a backend may
register one kernel for each (the cpu backend does: one numba pass instead of about eight ops
forward and fifteen autograd nodes backward per time step). `_lstm_cell` carries its own
derivative, which calls `_lstm_cell_backward`: under ``create_graph`` that op runs its
composite (a native kernel is not differentiable), recomputing the activations from `gates` so
the second derivative reaches them. Unlike PyTorch's, the workspace is differentiable like any
output (its gradient adds ``grad_workspace * activation'`` to the gates' gradient: the backward
kernel does it in the same pass), so every output passes a finite-difference check.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from .declare import REGISTRY, declare

__all__ = ["lstm_cell_flops", "gru_cell_flops"]


def _check_pair(op: str, gates_name: str, gates, other_name: str, other, gate_count: int):
    """`gates` (N, G*H) float and `other` (N, H) of its dtype and device."""
    if gates._dtype is not other._dtype:
        raise RuntimeError(
            f"{op}(): expected {other_name} to have the dtype of {gates_name} "
            f"({gates._dtype.name}), got {other._dtype.name}"
        )
    if not gates._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected floating point tensors, got {gates._dtype.name}")
    if gates._device != other._device:
        raise RuntimeError(
            f"{op}(): expected {other_name} on the device of {gates_name} "
            f"({gates._device}), got {other._device}"
        )
    if (
        other.ndim != 2
        or gates.ndim != 2
        or gates._shape != (other._shape[0], gate_count * other._shape[1])
    ):
        raise RuntimeError(
            f"{op}(): expected {gates_name} of shape (N, {gate_count}H) and "
            f"{other_name} of shape (N, H), got {gates_name} "
            f"{list(gates._shape)} and {other_name} {list(other._shape)}"
        )


def _check_same_shape(op: str, name: str, t, ref_name: str, ref) -> None:
    if t._shape != ref._shape:
        raise RuntimeError(
            f"{op}(): expected {name} of the shape of {ref_name} "
            f"{list(ref._shape)}, got {list(t._shape)}"
        )


# ---- LSTM -------------------------------------------------------------------------------------


def _meta_lstm_cell(gates, cx):
    _check_pair("_lstm_cell", "gates", gates, "cx", cx, 4)
    spec = (cx._shape, cx._dtype, cx._device)
    return [spec, spec, (gates._shape, gates._dtype, gates._device)]


def _activate(gates, h: int):
    """σ(i), σ(f), tanh(g), σ(o) of the (N, 4H) pre-activations."""
    i, f, g, o = gates.split(h, 1)
    return i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()


def _in_opmath(fn):
    """`fn` computing 16-bit floats in float32 and rounding the results back once, as the fused
    kernels do (rounding every intermediate would lose several bits)."""

    def run(*tensors):
        dtype = tensors[-1]._dtype
        compute = _dt.opmath_dtype(dtype)
        if compute is dtype:
            return fn(*tensors)
        return tuple(r.to(dtype) for r in fn(*(t.to(compute) for t in tensors)))

    run.__name__, run.__doc__ = fn.__name__, fn.__doc__
    run.__wrapped__ = fn  # type: ignore[attr-defined]  # a function attribute
    return run


@_in_opmath
def _lstm_cell(gates, cx):
    """hy, cy, workspace: cy = σ(f) cx + σ(i) tanh(g), hy = σ(o) tanh(cy), the workspace the
    activated gates (N, 4H)."""
    i, f, g, o = _activate(gates, cx._shape[1])
    cy = f * cx + i * g
    return o * cy.tanh(), cy, _cat([i, f, g, o])


def _cat(parts):
    return REGISTRY["cat"].op.entry(parts, 1)


def _d_lstm_cell(ctx, grad_hy, grad_cy, grad_workspace):
    _, cy, workspace = ctx.result
    if is_grad_enabled():  # create_graph: activations that lead back to `gates`
        workspace = _cat(list(_activate(ctx.gates, cy._shape[1])))
    return REGISTRY["_lstm_cell_backward"].op.entry(
        grad_hy, grad_cy, grad_workspace, ctx.cx, cy, workspace
    )


def _meta_lstm_cell_backward(grad_hy, grad_cy, grad_workspace, cx, cy, workspace):
    op = "_lstm_cell_backward"
    for name, t in (("cx", cx), ("grad_hy", grad_hy), ("grad_cy", grad_cy), ("cy", cy)):
        _check_pair(op, "workspace", workspace, name, t, 4)
    _check_same_shape(op, "grad_workspace", grad_workspace, "workspace", workspace)
    _check_pair(op, "grad_workspace", grad_workspace, "cx", cx, 4)
    return [
        (workspace._shape, workspace._dtype, workspace._device),
        (cx._shape, cx._dtype, cx._device),
    ]


@_in_opmath
def _lstm_cell_backward(grad_hy, grad_cy, grad_workspace, cx, cy, workspace):
    """(grad_gates, grad_cx) of `_lstm_cell`, from the activated gates in `workspace`."""
    i, f, g, o = workspace.split(cx._shape[1], 1)
    tcy = cy.tanh()
    grad_c = grad_cy + grad_hy * o * (1 - tcy * tcy)
    gi, gf, gg, go = grad_workspace.split(cx._shape[1], 1)
    parts = [
        (grad_c * g + gi) * i * (1 - i),
        (grad_c * cx + gf) * f * (1 - f),
        (grad_c * i + gg) * (1 - g * g),
        (grad_hy * tcy + go) * o * (1 - o),
    ]
    return _cat(parts), grad_c * f


# ---- GRU --------------------------------------------------------------------------------------


def _meta_gru_cell(input_gates, hidden_gates, hx):
    _check_pair("_gru_cell", "input_gates", input_gates, "hx", hx, 3)
    _check_same_shape("_gru_cell", "hidden_gates", hidden_gates, "input_gates", input_gates)
    _check_pair("_gru_cell", "hidden_gates", hidden_gates, "hx", hx, 3)
    h = hx._shape[1]
    return [(hx._shape, hx._dtype, hx._device), ((hx._shape[0], 4 * h), hx._dtype, hx._device)]


def _gru_activate(input_gates, hidden_gates, h: int):
    """r, z, n and the hidden part of the new gate hn (the workspace's four blocks)."""
    x_r, x_z, x_n = input_gates.split(h, 1)
    h_r, h_z, h_n = hidden_gates.split(h, 1)
    r, z = (x_r + h_r).sigmoid(), (x_z + h_z).sigmoid()
    return r, z, (x_n + r * h_n).tanh(), h_n


@_in_opmath
def _gru_cell(input_gates, hidden_gates, hx):
    """hy, workspace: r, z = σ(x_rz + h_rz), n = tanh(x_n + r h_n), hy = n + z (hx - n); the
    workspace (N, 4H) holds r, z, n and h_n."""
    r, z, n, h_n = _gru_activate(input_gates, hidden_gates, hx._shape[1])
    return n + z * (hx - n), _cat([r, z, n, h_n])


def _d_gru_cell(ctx, grad_hy, grad_workspace):
    workspace = ctx.result[1]
    if is_grad_enabled():  # create_graph: a workspace that leads back to the gates
        workspace = _cat(list(_gru_activate(ctx.input_gates, ctx.hidden_gates, ctx.hx._shape[1])))
    return REGISTRY["_gru_cell_backward"].op.entry(grad_hy, grad_workspace, ctx.hx, workspace)


def _meta_gru_cell_backward(grad_hy, grad_workspace, hx, workspace):
    op = "_gru_cell_backward"
    for name, t in (("hx", hx), ("grad_hy", grad_hy)):
        _check_pair(op, "workspace", workspace, name, t, 4)
    _check_same_shape(op, "grad_workspace", grad_workspace, "workspace", workspace)
    _check_pair(op, "grad_workspace", grad_workspace, "hx", hx, 4)
    gates = ((hx._shape[0], 3 * hx._shape[1]), hx._dtype, hx._device)
    return [gates, gates, (hx._shape, hx._dtype, hx._device)]


@_in_opmath
def _gru_cell_backward(grad_hy, grad_workspace, hx, workspace):
    """(grad_input_gates, grad_hidden_gates, grad_hx) of `_gru_cell`."""
    h = hx._shape[1]
    r, z, n, h_n = workspace.split(h, 1)
    g_r, g_z, g_n, g_hn = grad_workspace.split(h, 1)
    d_n = (grad_hy * (1 - z) + g_n) * (1 - n * n)
    d_r = (d_n * h_n + g_r) * r * (1 - r)
    d_z = (grad_hy * (hx - n) + g_z) * z * (1 - z)
    return (_cat([d_r, d_z, d_n]), _cat([d_r, d_z, d_n * r + g_hn]), grad_hy * z)


def lstm_cell_flops(result, gates, cx) -> int:
    """About 30 per hidden unit: four activations (~6 each) and the cell's multiply-adds."""
    return 30 * cx.numel()


def _lstm_cell_backward_flops(result, grad_hy, grad_cy, grad_workspace, cx, cy, workspace) -> int:
    return 25 * cx.numel()


def gru_cell_flops(result, input_gates, hidden_gates, hx) -> int:
    """About 25 per hidden unit: three activations and the interpolation."""
    return 25 * hx.numel()


def _gru_cell_backward_flops(result, grad_hy, grad_workspace, hx, workspace) -> int:
    return 20 * hx.numel()


def _declare_all() -> None:
    common: dict[str, Any] = dict(family="nn", method=False, out=False)
    declare(
        "_lstm_cell(Tensor gates, Tensor cx) -> (Tensor hy, Tensor cy, Tensor workspace)",
        _meta_lstm_cell,
        impl=_lstm_cell,
        derivative=_d_lstm_cell,
        saves=("gates", "cx"),
        save_result=True,
        flops=lstm_cell_flops,
        **common,
    )
    declare(
        "_lstm_cell_backward(Tensor grad_hy, Tensor grad_cy, Tensor grad_workspace, "
        "Tensor cx, Tensor cy, Tensor workspace) -> (Tensor grad_gates, Tensor grad_cx)",
        _meta_lstm_cell_backward,
        impl=_lstm_cell_backward,
        flops=_lstm_cell_backward_flops,
        **common,
    )
    declare(
        "_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx) -> "
        "(Tensor hy, Tensor workspace)",
        _meta_gru_cell,
        impl=_gru_cell,
        derivative=_d_gru_cell,
        saves=("input_gates", "hidden_gates", "hx"),
        save_result=True,
        flops=gru_cell_flops,
        **common,
    )
    declare(
        "_gru_cell_backward(Tensor grad_hy, Tensor grad_workspace, Tensor hx, "
        "Tensor workspace) -> (Tensor grad_input_gates, Tensor grad_hidden_gates, "
        "Tensor grad_hx)",
        _meta_gru_cell_backward,
        impl=_gru_cell_backward,
        flops=_gru_cell_backward_flops,
        **common,
    )


_declare_all()
