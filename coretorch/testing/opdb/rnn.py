"""OpInfos of the fused recurrent cells (coretorch/ops/rnn_cells.py): the LSTM and GRU cells'
pointwise parts and their backwards, with numpy references written from the cells' equations."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import FLOATS, ErrorInput, OpInfo, SampleInput

# ---- numpy references -------------------------------------------------------------------------


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_cell_ref(gates, cx):
    i, f, g, o = np.split(gates, 4, axis=1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    cy = f * cx + i * g
    return o * np.tanh(cy), cy, np.concatenate([i, f, g, o], axis=1)


def _lstm_cell_backward_ref(grad_hy, grad_cy, grad_workspace, cx, cy, workspace):
    i, f, g, o = np.split(workspace, 4, axis=1)
    gi, gf, gg, go = np.split(grad_workspace, 4, axis=1)
    t = np.tanh(cy)
    dc = grad_cy + grad_hy * o * (1 - t**2)
    grad_gates = np.concatenate(
        [
            (dc * g + gi) * i * (1 - i),
            (dc * cx + gf) * f * (1 - f),
            (dc * i + gg) * (1 - g**2),
            (grad_hy * t + go) * o * (1 - o),
        ],
        axis=1,
    )
    return grad_gates, dc * f


def _gru_cell_ref(input_gates, hidden_gates, hx):
    x_r, x_z, x_n = np.split(input_gates, 3, axis=1)
    h_r, h_z, h_n = np.split(hidden_gates, 3, axis=1)
    r, z = _sigmoid(x_r + h_r), _sigmoid(x_z + h_z)
    n = np.tanh(x_n + r * h_n)
    return n + z * (hx - n), np.concatenate([r, z, n, h_n], axis=1)


def _gru_cell_backward_ref(grad_hy, grad_workspace, hx, workspace):
    r, z, n, h_n = np.split(workspace, 4, axis=1)
    g_r, g_z, g_n, g_hn = np.split(grad_workspace, 4, axis=1)
    d_n = (grad_hy * (1 - z) + g_n) * (1 - n**2)
    d_r = (d_n * h_n + g_r) * r * (1 - r)
    d_z = (grad_hy * (hx - n) + g_z) * z * (1 - z)
    return (
        np.concatenate([d_r, d_z, d_n], axis=1),
        np.concatenate([d_r, d_z, d_n * r + g_hn], axis=1),
        grad_hy * z,
    )


# ---- samples ------------------------------------------------------------------------------------

_SHAPES = (
    ((3, 2), "contiguous", "batch3-hidden2"),
    ((1, 5), "contiguous", "one-row"),
    ((4, 3), "transposed", "transposed"),
    ((0, 3), "contiguous", "no-rows"),
)


def _lstm_cell_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:
        yield SampleInput(
            m.make((n, 4 * h), low=-3, high=3, layout=layout),
            (m.make((n, h), layout=layout),),
            name=name,
        )
    # saturated gates: σ and tanh at their flat ends stay finite
    yield SampleInput(
        m.make((2, 8), values=np.tile([-30.0, 30.0], 8)), (m.make((2, 2)),), name="saturated"
    )


def _lstm_cell_backward_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:

        def state(cols=h):
            return m.make((n, cols), layout=layout)

        workspace = m.make((n, 4 * h), low=-1, high=1, layout=layout)
        yield SampleInput(state(), (state(), state(4 * h), state(), state(), workspace), name=name)


def _gru_cell_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:
        yield SampleInput(
            m.make((n, 3 * h), low=-3, high=3, layout=layout),
            (m.make((n, 3 * h), low=-3, high=3, layout=layout), m.make((n, h), layout=layout)),
            name=name,
        )


def _gru_cell_backward_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:
        workspace = m.make((n, 4 * h), low=-1, high=1, layout=layout)
        yield SampleInput(
            m.make((n, h), layout=layout),
            (m.make((n, 4 * h), layout=layout), m.make((n, h), layout=layout), workspace),
            name=name,
        )


def _lstm_cell_errors(op, m, dtype):
    gates = m.make((2, 8))
    yield ErrorInput(
        SampleInput(gates, (m.make((2, 3)),), name="hidden-mismatch"),
        RuntimeError,
        r"expected gates of shape \(N, 4H\) and cx of shape \(N, H\)",
    )
    yield ErrorInput(
        SampleInput(gates, (m.make((3, 2)),), name="batch-mismatch"),
        RuntimeError,
        r"got gates \[2, 8\] and cx \[3, 2\]",
    )
    yield ErrorInput(
        SampleInput(m.make((8,)), (m.make((2,)),), name="1-d"),
        RuntimeError,
        r"expected gates of shape \(N, 4H\)",
    )
    other = _dt.float64 if dtype is not _dt.float64 else _dt.float32
    yield ErrorInput(
        SampleInput(gates, (m.make((2, 2), dtype=other),), name="dtype-mismatch"),
        RuntimeError,
        "expected cx to have the dtype of gates",
    )
    ints = (m.make((2, 8), dtype=_dt.int64), m.make((2, 2), dtype=_dt.int64))
    yield ErrorInput(
        SampleInput(ints[0], ints[1:], name="integer"),
        RuntimeError,
        "expected floating point tensors",
    )


def _lstm_cell_backward_errors(op, m, dtype):
    s = m.make((2, 2))
    yield ErrorInput(
        SampleInput(s, (s, m.make((2, 8)), s, s, m.make((2, 6))), name="workspace-shape"),
        RuntimeError,
        r"expected workspace of shape \(N, 4H\)",
    )
    yield ErrorInput(
        SampleInput(s, (s, m.make((2, 4)), s, s, m.make((2, 8))), name="grad_workspace-shape"),
        RuntimeError,
        "expected grad_workspace of the shape of workspace",
    )


def _gru_cell_errors(op, m, dtype):
    gates, hx = m.make((2, 6)), m.make((2, 2))
    yield ErrorInput(
        SampleInput(gates, (m.make((2, 3)), hx), name="hidden_gates-shape"),
        RuntimeError,
        r"expected hidden_gates of the shape of input_gates \[2, 6\]",
    )
    yield ErrorInput(
        SampleInput(gates, (gates, m.make((2, 3))), name="hx-shape"),
        RuntimeError,
        r"expected input_gates of shape \(N, 3H\) and hx of shape \(N, H\)",
    )


def _gru_cell_backward_errors(op, m, dtype):
    s = m.make((2, 2))
    yield ErrorInput(
        SampleInput(s, (m.make((2, 6)), s, m.make((2, 8))), name="grad_workspace-shape"),
        RuntimeError,
        "expected grad_workspace of the shape of workspace",
    )


OPS: list[OpInfo] = [
    OpInfo(
        "_lstm_cell",
        dtypes=FLOATS,
        ref=_lstm_cell_ref,
        torch_ref=None,
        sample_inputs_func=_lstm_cell_samples,
        error_inputs_func=_lstm_cell_errors,
    ),
    OpInfo(
        "_lstm_cell_backward",
        dtypes=FLOATS,
        ref=_lstm_cell_backward_ref,
        torch_ref=None,
        sample_inputs_func=_lstm_cell_backward_samples,
        error_inputs_func=_lstm_cell_backward_errors,
    ),
    OpInfo(
        "_gru_cell",
        dtypes=FLOATS,
        ref=_gru_cell_ref,
        torch_ref=None,
        sample_inputs_func=_gru_cell_samples,
        error_inputs_func=_gru_cell_errors,
    ),
    OpInfo(
        "_gru_cell_backward",
        dtypes=FLOATS,
        ref=_gru_cell_backward_ref,
        torch_ref=None,
        sample_inputs_func=_gru_cell_backward_samples,
        error_inputs_func=_gru_cell_backward_errors,
    ),
]
