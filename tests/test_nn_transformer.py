"""Transformer layers against PyTorch (float64, weights moved by state_dict): post-norm and
pre-norm, relu/gelu/callable activations, attention and key padding masks, causal detection,
the encoder's inference path that zeroes padded positions, gradients; recorded values without
PyTorch."""

from __future__ import annotations

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
import coretorch.nn.functional as F


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(norm_first=True, activation="gelu", batch_first=True),
        dict(activation="silu-callable", bias=False),
    ],
)
def test_transformer_matches_torch(kw):
    torch = torch_or_skip()
    kw_t, kw_c = dict(kw), dict(kw)
    if kw.get("activation") == "silu-callable":
        kw_t["activation"], kw_c["activation"] = torch.nn.functional.silu, F.silu
    torch.manual_seed(0)
    theirs = _quiet(torch.nn.Transformer, 8, 2, 2, 2, 16, dropout=0.0, dtype=torch.float64, **kw_t)
    ours = _quiet(nn.Transformer, 8, 2, 2, 2, 16, dropout=0.0, dtype=ct.float64, **kw_c)
    load_from_torch(ours, theirs)
    bf = kw.get("batch_first", False)
    src_shape, tgt_shape = ((3, 5, 8), (3, 4, 8)) if bf else ((5, 3, 8), (4, 3, 8))
    src = torch.randn(*src_shape, dtype=torch.float64, requires_grad=True)
    tgt = torch.randn(*tgt_shape, dtype=torch.float64, requires_grad=True)
    kpm = torch.tensor([[False] * 4 + [True], [False] * 5, [False] * 3 + [True] * 2])
    args = dict(
        tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
        src_key_padding_mask=kpm,
        memory_key_padding_mask=kpm,
    )
    out_t = theirs(src, tgt, **args)
    src_c, tgt_c = to_ct(src, True), to_ct(tgt, True)
    out_c = ours(src_c, tgt_c, **{k: to_ct(v) for k, v in args.items()})
    close(out_c, out_t)
    (out_t**2).sum().backward()
    (out_c**2).sum().backward()
    close(src_c.grad, src.grad, atol=1e-11)
    close(tgt_c.grad, tgt.grad, atol=1e-11)
    grads_close(ours.parameters(), theirs.parameters())


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_encoder_inference_zeroes_padded_positions_like_torch():
    torch = torch_or_skip()
    layer_t = torch.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, dtype=torch.float64
    )
    enc_t = torch.nn.TransformerEncoder(layer_t, 2).eval()
    layer_c = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=ct.float64)
    enc_c = nn.TransformerEncoder(layer_c, 2).eval()
    load_from_torch(enc_c, enc_t)
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    kpm = torch.tensor([[False] * 4 + [True], [False] * 5, [False] * 3 + [True] * 2])
    with torch.no_grad():
        out_t = enc_t(x, src_key_padding_mask=kpm)
    with ct.no_grad():
        out_c = enc_c(to_ct(x), src_key_padding_mask=to_ct(kpm))
    close(out_c, out_t)
    assert float(out_c[0, 4].abs().sum()) == 0.0
    # with gradients enabled PyTorch keeps the computed values at padded positions
    close(enc_c(to_ct(x), src_key_padding_mask=to_ct(kpm)), enc_t(x, src_key_padding_mask=kpm))


def test_encoder_causal_detection_and_bool_masks():
    torch = torch_or_skip()
    layer_t = torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, dtype=torch.float64)
    enc_t = _quiet(
        torch.nn.TransformerEncoder, layer_t, 1, torch.nn.LayerNorm(4, dtype=torch.float64)
    )
    enc_c = _quiet(
        nn.TransformerEncoder,
        nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, dtype=ct.float64),
        1,
        nn.LayerNorm(4, dtype=ct.float64),
    )
    load_from_torch(enc_c, enc_t)
    x = torch.randn(6, 2, 4, dtype=torch.float64)
    bool_mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
    close(enc_c(to_ct(x), mask=to_ct(bool_mask)), enc_t(x, mask=bool_mask))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)
    close(
        enc_c(to_ct(x), mask=to_ct(causal), is_causal=True), enc_t(x, mask=causal, is_causal=True)
    )


def test_generate_square_subsequent_mask_and_errors():
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype is ct.float32
    assert m.tolist() == [
        [0.0, float("-inf"), float("-inf")],
        [0.0, 0.0, float("-inf")],
        [0.0, 0.0, 0.0],
    ]
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    model = _quiet(nn.Transformer, 8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        model(ct.randn(5, 3, 8), ct.randn(4, 2, 8))
    with pytest.raises(RuntimeError, match="feature number of src and tgt"):
        model(ct.randn(5, 3, 8), ct.randn(4, 3, 6))
    with pytest.raises(AssertionError, match="only bool and floating types"):
        model.encoder(ct.randn(5, 3, 8), mask=ct.zeros(5, 5, dtype=ct.int64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1)
    assert any("enable_nested_tensor is True" in str(w.message) for w in caught)


def test_matrices_start_xavier_uniform():
    model = _quiet(nn.Transformer, 16, 2, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight
    bound = (6 / (16 + 32)) ** 0.5
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.8 * bound
    assert model.encoder.layers[0].linear1.bias is not None
    assert "encoder.layers.0.self_attn.in_proj_weight" in model.state_dict()


def test_recorded_decoder_layer():
    layer = nn.TransformerDecoderLayer(
        4, 2, 8, dropout=0.0, activation="gelu", norm_first=True, batch_first=True, dtype=ct.float64
    )
    state = seeded_state({k: tuple(v.shape) for k, v in layer.state_dict().items()}, 6)
    layer.load_state_dict({k: ct.tensor(v) for k, v in state.items()})
    tgt, mem = ct.tensor(seeded((2, 3, 4), 7)), ct.tensor(seeded((2, 5, 4), 8))
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ct.float64)
    kpm = ct.tensor([[False] * 5, [False] * 3 + [True] * 2])
    out = layer(tgt, mem, tgt_mask=mask, memory_key_padding_mask=kpm)
    np.testing.assert_allclose(
        to_np(out), expected()["transformer_decoder_layer"]["output"], rtol=1e-10, atol=1e-12
    )
