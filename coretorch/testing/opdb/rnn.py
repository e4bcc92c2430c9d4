"""OpInfos of the fused recurrent cells (coretorch/ops/rnn_cells.py): the LSTM cell's pointwise
part and its backward, with numpy references written from the cell's equations."""
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
    dc = grad_cy + grad_hy * o * (1 - t ** 2)
    grad_gates = np.concatenate([(dc * g + gi) * i * (1 - i), (dc * cx + gf) * f * (1 - f),
                                 (dc * i + gg) * (1 - g ** 2), (grad_hy * t + go) * o * (1 - o)],
                                axis=1)
    return grad_gates, dc * f


# ---- samples ------------------------------------------------------------------------------------

_SHAPES = (((3, 2), "contiguous", "batch3-hidden2"), ((1, 5), "contiguous", "one-row"),
           ((4, 3), "transposed", "transposed"), ((0, 3), "contiguous", "no-rows"))


def _lstm_cell_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:
        yield SampleInput(m.make((n, 4 * h), low=-3, high=3, layout=layout),
                          (m.make((n, h), layout=layout),), name=name)
    # saturated gates: σ and tanh at their flat ends stay finite
    yield SampleInput(m.make((2, 8), values=np.tile([-30.0, 30.0], 8)), (m.make((2, 2)),),
                      name="saturated")


def _lstm_cell_backward_samples(op, m, dtype):
    for (n, h), layout, name in _SHAPES:
        def state(cols=h):
            return m.make((n, cols), layout=layout)
        workspace = m.make((n, 4 * h), low=-1, high=1, layout=layout)
        yield SampleInput(state(), (state(), state(4 * h), state(), state(), workspace),
                          name=name)


def _lstm_cell_errors(op, m, dtype):
    gates = m.make((2, 8))
    yield ErrorInput(SampleInput(gates, (m.make((2, 3)),), name="hidden-mismatch"),
                     RuntimeError, r"expected gates of shape \(N, 4H\) and cx of shape \(N, H\)")
    yield ErrorInput(SampleInput(gates, (m.make((3, 2)),), name="batch-mismatch"),
                     RuntimeError, r"got gates \[2, 8\] and cx \[3, 2\]")
    yield ErrorInput(SampleInput(m.make((8,)), (m.make((2,)),), name="1-d"), RuntimeError,
                     r"expected gates of shape \(N, 4H\)")
    other = _dt.float64 if dtype is not _dt.float64 else _dt.float32
    yield ErrorInput(SampleInput(gates, (m.make((2, 2), dtype=other),), name="dtype-mismatch"),
                     RuntimeError, "expected cx to have the dtype of gates")
    ints = (m.make((2, 8), dtype=_dt.int64), m.make((2, 2), dtype=_dt.int64))
    yield ErrorInput(SampleInput(ints[0], ints[1:], name="integer"), RuntimeError,
                     "expected floating point tensors")


def _lstm_cell_backward_errors(op, m, dtype):
    s = m.make((2, 2))
    yield ErrorInput(SampleInput(s, (s, m.make((2, 8)), s, s, m.make((2, 6))),
                                 name="workspace-shape"), RuntimeError,
                     r"expected workspace of shape \(N, 4H\)")
    yield ErrorInput(SampleInput(s, (s, m.make((2, 4)), s, s, m.make((2, 8))),
                                 name="grad_workspace-shape"), RuntimeError,
                     "expected grad_workspace of the shape of workspace")


OPS: list[OpInfo] = [
    OpInfo("_lstm_cell", dtypes=FLOATS, ref=_lstm_cell_ref, torch_ref=None,
           sample_inputs_func=_lstm_cell_samples, error_inputs_func=_lstm_cell_errors),
    OpInfo("_lstm_cell_backward", dtypes=FLOATS, ref=_lstm_cell_backward_ref, torch_ref=None,
           sample_inputs_func=_lstm_cell_backward_samples,
           error_inputs_func=_lstm_cell_backward_errors),
]
