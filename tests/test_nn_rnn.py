"""Recurrent layers and nn.utils.rnn against PyTorch (float64, weights moved by state_dict):
outputs, final states and gradients; packed sequences; parameter layout and initialization;
errors. The recorded-value checks at the end run without PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from nn_oracle import (
    close,
    expected,
    grads_close,
    load_from_torch,
    seeded,
    seeded_state,
    to_ct,
    to_np,
    torch_or_skip,
)

import coretorch as ct
import coretorch.nn as nn

CONFIGS = [
    ("RNN", dict(num_layers=2, nonlinearity="relu")),
    ("RNN", dict(bidirectional=True, bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3)),
    ("LSTM", dict(batch_first=True, num_layers=2)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
]


def _pair(kind: str, kw: dict, input_size: int = 4, hidden: int = 5):
    torch = torch_or_skip()
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(input_size, hidden, dtype=torch.float64, **kw)
    ours = getattr(nn, kind)(input_size, hidden, dtype=ct.float64, **kw)
    load_from_torch(ours, theirs)
    return ours, theirs, torch


def _state_sum(h):
    return h[0].sum() + 3 * (h[1] * h[1]).sum() if isinstance(h, tuple) else (h * h).sum()


@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_sequence_matches_torch(kind, kw):
    ours, theirs, torch = _pair(kind, kw)
    bf = kw.get("batch_first", False)
    shape = (3, 6, 4) if bf else (6, 3, 4)
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    xc = to_ct(x, True)
    out_t, h_t = theirs(x)
    out_c, h_c = ours(xc)
    close(out_c, out_t)
    for a, b in zip(
        h_c if isinstance(h_c, tuple) else (h_c,), h_t if isinstance(h_t, tuple) else (h_t,)
    ):
        close(a, b)
    w = torch.randn(out_t.shape, dtype=torch.float64)
    ((out_t * w).sum() + _state_sum(h_t)).backward()
    ((out_c * to_ct(w)).sum() + _state_sum(h_c)).backward()
    close(xc.grad, x.grad, atol=1e-11)
    grads_close(ours.parameters(), theirs.parameters())


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_initial_state_and_unbatched_input(kind):
    kw = dict(num_layers=2, bidirectional=True) | (dict(proj_size=2) if kind == "LSTM" else {})
    ours, theirs, torch = _pair(kind, kw)
    x = torch.randn(5, 4, dtype=torch.float64)
    real = 2 if kind == "LSTM" else 5
    h0 = torch.randn(4, real, dtype=torch.float64, requires_grad=True)
    hx_t = (
        (h0, torch.randn(4, 5, dtype=torch.float64, requires_grad=True)) if kind == "LSTM" else h0
    )
    hx_c = tuple(to_ct(h, True) for h in hx_t) if kind == "LSTM" else to_ct(h0, True)
    out_t, h_t = theirs(x, hx_t)
    out_c, h_c = ours(to_ct(x), hx_c)
    assert tuple(out_c.shape) == tuple(out_t.shape) == (5, 2 * real)
    close(out_c, out_t)
    (out_t.sum() + _state_sum(h_t)).backward()
    (out_c.sum() + _state_sum(h_c)).backward()
    for a, b in zip(hx_c if kind == "LSTM" else (hx_c,), hx_t if kind == "LSTM" else (hx_t,)):
        close(a.grad, b.grad, atol=1e-11)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_sequence_matches_torch(kind):
    ours, theirs, torch = _pair(kind, dict(num_layers=2, bidirectional=True))
    x = torch.randn(6, 4, 4, dtype=torch.float64, requires_grad=True)
    xc = to_ct(x, True)
    lengths = [3, 6, 1, 6]
    pt = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    pc = nn.utils.rnn.pack_padded_sequence(xc, lengths, enforce_sorted=False)
    assert pc.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert pc.sorted_indices.tolist() == pt.sorted_indices.tolist()
    out_t, h_t = theirs(pt)
    out_c, h_c = ours(pc)
    assert isinstance(out_c, nn.utils.rnn.PackedSequence)
    close(out_c.data, out_t.data)
    padded_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(
        out_t, batch_first=True, padding_value=-1.0
    )
    padded_c, len_c = nn.utils.rnn.pad_packed_sequence(out_c, batch_first=True, padding_value=-1.0)
    close(padded_c, padded_t)
    assert len_c.tolist() == len_t.tolist() == lengths
    (padded_t.sum() + _state_sum(h_t)).backward()
    (padded_c.sum() + _state_sum(h_c)).backward()
    close(xc.grad, x.grad, atol=1e-11)
    grads_close(ours.parameters(), theirs.parameters())


def test_packing_utilities_match_torch():
    torch = torch_or_skip()
    seqs = [torch.randn(n, 2, dtype=torch.float64) for n in (2, 5, 3)]
    ours = [to_ct(s) for s in seqs]
    R = nn.utils.rnn
    for bf in (False, True):
        for side in ("right", "left"):
            close(
                R.pad_sequence(ours, bf, 7.0, side),
                torch.nn.utils.rnn.pad_sequence(seqs, bf, 7.0, side),
            )
    packed_t = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    packed_c = R.pack_sequence(ours, enforce_sorted=False)
    close(packed_c.data, packed_t.data)
    assert packed_c.unsorted_indices.tolist() == packed_t.unsorted_indices.tolist()
    for a, b in zip(R.unpack_sequence(packed_c), seqs):
        close(a, b)
    padded, lengths = R.pad_packed_sequence(packed_c, total_length=7)
    assert tuple(padded.shape) == (7, 3, 2)
    for a, b in zip(R.unpad_sequence(padded, lengths), seqs):
        close(a, b)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_sequence(ours)
    with pytest.raises(ValueError, match="total_length"):
        R.pad_packed_sequence(packed_c, total_length=2)
    with pytest.raises(RuntimeError, match="empty list"):
        R.pad_sequence([])
    assert R.invert_permutation(ct.tensor([2, 0, 1])).tolist() == [1, 2, 0]


@pytest.mark.parametrize(
    "kind,batch,hidden",
    [
        ("RNNCell", 2, 4),
        ("LSTMCell", 2, 4),
        ("GRUCell", 2, 4),
        # batch * hidden >= 65536: the cpu backend's fused cells run their rows in parallel
        ("LSTMCell", 64, 1024),
        ("GRUCell", 64, 1024),
    ],
)
def test_cells_match_torch(kind, batch, hidden):
    torch = torch_or_skip()
    theirs = getattr(torch.nn, kind)(3, hidden, dtype=torch.float64)
    ours = getattr(nn, kind)(3, hidden, dtype=ct.float64)
    load_from_torch(ours, theirs)
    x = torch.randn(batch, 3, dtype=torch.float64, requires_grad=True)
    xc = to_ct(x, True)
    h_t, h_c = theirs(x), ours(xc)
    if kind == "LSTMCell":
        h_t = theirs(x, h_t)
        h_c = ours(xc, h_c)
    for a, b in zip(
        h_c if isinstance(h_c, tuple) else (h_c,), h_t if isinstance(h_t, tuple) else (h_t,)
    ):
        close(a, b)
    _state_sum(h_t).backward()
    _state_sum(h_c).backward()
    close(xc.grad, x.grad)
    grads_close(ours.parameters(), theirs.parameters())
    single = ours(xc[0].detach())  # unbatched
    assert tuple((single[0] if isinstance(single, tuple) else single).shape) == (hidden,)


def test_dropout_between_layers_in_training():
    torch = torch_or_skip()
    ours, theirs, _ = _pair("LSTM", dict(num_layers=2, dropout=1.0))
    x = torch.randn(4, 2, 4, dtype=torch.float64)
    ours.train()
    theirs.train()
    # p = 1 zeroes the first layer's output: deterministic in both
    close(ours(to_ct(x))[0], theirs(x)[0])
    ours.eval()
    theirs.eval()
    close(ours(to_ct(x))[0], theirs(x)[0])


def test_parameter_layout_and_initialization():
    torch = torch_or_skip()
    for kind, kw in CONFIGS:
        theirs = getattr(torch.nn, kind)(4, 5, **kw)
        ours = getattr(nn, kind)(4, 5, **kw)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()
        ]
        bound = 1 / math.sqrt(5)
        for p in ours.parameters():
            assert float(p.abs().max()) <= bound
        assert repr(ours) == repr(theirs)
    lstm = nn.LSTM(4, 5, num_layers=2, bidirectional=True)
    assert [len(w) for w in lstm.all_weights] == [4, 4, 4, 4]


def test_errors_name_the_problem():
    lstm = nn.LSTM(4, 5)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(ct.randn(3, 2, 6))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size"):
        lstm(ct.randn(3, 2, 4), (ct.zeros(1, 3, 5), ct.zeros(1, 2, 5)))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        lstm(ct.randn(3, 2, 4, dtype=ct.float64))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D"):
        nn.GRU(4, 5)(ct.randn(4))
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(4, 5, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(4, 5, nonlinearity="gelu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.GRU(4, 5, dropout=0.5)
    assert any("num_layers greater than 1" in str(w.message) for w in caught)


# ---- recorded from PyTorch (runs without it) ---------------------------------------------------


def _seeded_module(module, seed: int):
    state = seeded_state({k: tuple(v.shape) for k, v in module.state_dict().items()}, seed)
    module.load_state_dict({k: ct.tensor(v) for k, v in state.items()})
    return module


def test_recorded_lstm_and_packed_gru():
    rec = expected()
    lstm = _seeded_module(
        nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=ct.float64), 1
    )
    x = ct.tensor(seeded((5, 2, 3), 2)).requires_grad_()
    out, (h, c) = lstm(x)
    np.testing.assert_allclose(to_np(out), rec["lstm"]["output"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(to_np(h), rec["lstm"]["h_n"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(to_np(c), rec["lstm"]["c_n"], rtol=1e-10, atol=1e-13)
    (out * ct.tensor(seeded(tuple(out.shape), 3))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), rec["lstm"]["input_grad"], rtol=1e-10, atol=1e-13)
    gru = _seeded_module(nn.GRU(3, 4, batch_first=True, dtype=ct.float64), 4)
    xs = ct.tensor(seeded((2, 4, 3), 5))
    packed = nn.utils.rnn.pack_padded_sequence(xs, [2, 4], batch_first=True, enforce_sorted=False)
    out, h = gru(packed)
    padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    np.testing.assert_allclose(to_np(padded), rec["gru_packed"]["output"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(to_np(h), rec["gru_packed"]["h_n"], rtol=1e-10, atol=1e-13)
