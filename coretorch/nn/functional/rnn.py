"""Recurrent cells and multi-layer recurrent networks (Elman RNN, LSTM, GRU) written with
coretorch ops, so autograd and every backend work.

The math is PyTorch's, gate order included (LSTM: input, forget, cell, output; GRU: reset,
update, new), so parameters move between the two unchanged. A network's input projection is one
matrix product over the whole sequence; each time step then costs one matrix product with the
hidden-to-hidden weight and a few pointwise ops. Packed sequences (``data`` rows in time-major
order and ``batch_sizes`` per step) run the same steps on the shrinking batch.

These functions are the composite stand-ins of PyTorch's fused ``_VF.lstm`` / ``_VF.gru`` /
``_VF.rnn_tanh``. The LSTM cell's pointwise part is the op ``_lstm_cell`` (PyTorch's
``_thnn_fused_lstm_cell``), the GRU's ``_gru_cell``: a backend may register fused kernels.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...ops import aten
from ...tensor.tensor import Tensor
from ._split import split, unbind
from .dropout import dropout as _dropout
from .linear import linear

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn_forward", "GATES"]

# gates per hidden unit, by mode
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- one time step on a precomputed input projection ----------------------------------------
# `xp` is input @ w_ihᵀ + b_ih (plus b_hh where the mode allows folding it in), `state` the
# previous hidden state (a tensor, or (h, c) for LSTM). The hidden weights come transposed
# (made once per sequence, so their per-step gradients accumulate contiguous). Each returns the
# new state.


def _hidden(xp: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
    return aten.addmm(xp if b_hh is None else xp + b_hh, h, w_hh_t)


def _rnn_step(
    act: str,
    xp: Tensor,
    h: Tensor,
    w_hh_t: Tensor,
    b_hh: Tensor | None,
    w_hr_t: Tensor | None = None,
) -> Tensor:
    pre = _hidden(xp, h, w_hh_t, b_hh)
    return pre.tanh() if act == "tanh" else pre.relu()


def _lstm_step(
    xp: Tensor, state: tuple, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None = None
) -> tuple:
    h, c = state
    # the gates' pointwise work is one op (a backend may run it as one fused kernel)
    h, c, _ = aten._lstm_cell(_hidden(xp, h, w_hh_t, b_hh), c)
    if w_hr_t is not None:
        h = h.mm(w_hr_t)
    return h, c


def _gru_step(
    xp: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None, w_hr_t: Tensor | None = None
) -> Tensor:
    gh = h.mm(w_hh_t) if b_hh is None else aten.addmm(b_hh, h, w_hh_t)
    return aten._gru_cell(xp, gh, h)[0]


def _step_fn(mode: str):
    if mode == "LSTM":
        return _lstm_step
    if mode == "GRU":
        return _gru_step
    act = "tanh" if mode == "RNN_TANH" else "relu"
    return lambda xp, h, w_hh_t, b_hh, w_hr_t=None: _rnn_step(act, xp, h, w_hh_t, b_hh)


# ---- cells (the functional forms of RNNCell / LSTMCell / GRUCell) -----------------------------


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """h' = tanh(x w_ihᵀ + b_ih + h w_hhᵀ + b_hh) for (N, input) x and (N, hidden) h."""
    return _rnn_step("tanh", linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh)


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """h' = relu(x w_ihᵀ + b_ih + h w_hhᵀ + b_hh)."""
    return _rnn_step("relu", linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh)


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """One LSTM step: returns (h', c') from x and (h, c)."""
    return _lstm_step(linear(input, w_ih, b_ih), tuple(hx), w_hh.t(), b_hh)


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step: r, z = σ(...), n = tanh(x_n + r (h w_hnᵀ + b_hn)), h' = n + z (h - n)."""
    return _gru_step(linear(input, w_ih, b_ih), hx, w_hh.t(), b_hh)


# ---- whole sequences ---------------------------------------------------------------------------


def _project(
    mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None, b_hh: Tensor | None
) -> tuple[Tensor, Tensor | None]:
    """The input projection of every time step at once, and the hidden bias still to add per
    step (GRU keeps b_hh apart: its new gate scales h w_hhᵀ + b_hh by r)."""
    if mode == "GRU" or b_ih is None:
        return linear(x, w_ih, b_ih), b_hh
    assert b_hh is not None  # the biases come in pairs
    return linear(x, w_ih, b_ih + b_hh), None


def _run_padded(step, xp: Tensor, state, w_hh_t, b_hh, w_hr_t, reverse: bool):
    """Run one direction over a (T, N, G) projection; returns ((T, N, H) outputs, final state)."""
    outs = []
    steps = unbind(xp, 0)
    for x_t in reversed(steps) if reverse else steps:
        state = step(x_t, state, w_hh_t, b_hh, w_hr_t)
        outs.append(state[0] if isinstance(state, tuple) else state)
    if reverse:
        outs.reverse()
    return aten.stack(outs, 0), state


def _rows(state, lo: int, hi: int):
    if isinstance(state, tuple):
        return tuple(s[lo:hi] for s in state)
    return state[lo:hi]


def _cat_states(parts: list):
    if isinstance(parts[0], tuple):
        return tuple(aten.cat([p[i] for p in parts], 0) for i in range(len(parts[0])))
    return aten.cat(parts, 0)


def _run_packed(
    step, xp: Tensor, state, w_hh_t, b_hh, w_hr_t, reverse: bool, batch_sizes: list[int]
):
    """Run one direction over packed rows (time-major, batch_sizes[t] rows at step t, sorted by
    decreasing length); returns (packed outputs, final state of every sequence)."""
    steps = split(xp, batch_sizes, 0)
    outs = []
    if not reverse:
        finished = []
        cur = _rows(state, 0, batch_sizes[0])
        for t, b in enumerate(batch_sizes):
            rows = cur[0].shape[0] if isinstance(cur, tuple) else cur.shape[0]
            if b < rows:
                finished.append(_rows(cur, b, rows))
                cur = _rows(cur, 0, b)
            cur = step(steps[t], cur, w_hh_t, b_hh, w_hr_t)
            outs.append(cur[0] if isinstance(cur, tuple) else cur)
        finished.append(cur)
        final = _cat_states(finished[::-1])
    else:
        cur = _rows(state, 0, batch_sizes[-1])
        have = batch_sizes[-1]
        for t in range(len(batch_sizes) - 1, -1, -1):
            b = batch_sizes[t]
            if b > have:
                cur = _cat_states([cur, _rows(state, have, b)])
                have = b
            cur = step(steps[t], cur, w_hh_t, b_hh, w_hr_t)
            outs.append(cur[0] if isinstance(cur, tuple) else cur)
        outs.reverse()
        final = cur
    return aten.cat(outs, 0), final


def rnn_forward(
    mode: str,
    input: Tensor,
    hx,
    weights: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
    batch_sizes: list[int] | None = None,
    proj_size: int = 0,
):
    """A multi-layer (bidirectional) recurrent network over a whole sequence.

    `input` is (T, N, input_size) (or (N, T, ·) with `batch_first`), or packed rows with
    `batch_sizes`. `hx` is h0 (layers * directions, N, H), a pair (h0, c0) for LSTM. `weights`
    lists per layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` (PyTorch's
    ``_flat_weights``). Dropout with probability `dropout` applies to every layer's output but
    the last while `train`. Returns ``(output, h_n)``, or ``(output, h_n, c_n)`` for LSTM.
    """
    step = _step_fn(mode)
    lstm = mode == "LSTM"
    per = 2 + (2 if has_biases else 0) + (1 if proj_size else 0)
    dirs = 2 if bidirectional else 1
    packed = batch_sizes is not None
    x = input
    if not packed and batch_first:
        x = x.transpose(0, 1)
    h0 = hx[0] if lstm else hx
    c0: Any = hx[1] if lstm else None
    finals_h, finals_c = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = list(weights[k * per : (k + 1) * per])
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr_t = w[-1].t() if proj_size else None
            xp, b_step = _project(mode, x, w_ih, b_ih, b_hh)
            state = (h0[k], c0[k]) if lstm else h0[k]
            if batch_sizes is not None:  # packed
                out, final = _run_packed(
                    step, xp, state, w_hh.t(), b_step, w_hr_t, d == 1, batch_sizes
                )
            else:
                out, final = _run_padded(step, xp, state, w_hh.t(), b_step, w_hr_t, d == 1)
            outs.append(out)
            if lstm:
                finals_h.append(final[0])
                finals_c.append(final[1])
            else:
                finals_h.append(final)
        x = outs[0] if dirs == 1 else aten.cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    if not packed and batch_first:
        x = x.transpose(0, 1)
    h_n = aten.stack(finals_h, 0)
    if lstm:
        return x, h_n, aten.stack(finals_c, 0)
    return x, h_n
