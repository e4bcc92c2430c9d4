"""Record PyTorch's results for the layer tests that must run without PyTorch.

Run from the repository root with PyTorch installed:
    .venv/bin/python tests/data/record_layers.py
It writes tests/data/layers_expected.json. Weights and inputs come from numpy generators with
fixed seeds (tests/nn_oracle.py: seeded, seeded_state), so the tests rebuild them exactly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from nn_oracle import EXPECTED, seeded, seeded_state  # noqa: E402


def _t(a):
    return torch.tensor(a, dtype=torch.float64)


def _seeded_module(module, seed: int):
    state = seeded_state({k: tuple(v.shape) for k, v in module.state_dict().items()}, seed)
    module.load_state_dict({k: _t(v) for k, v in state.items()})
    return module


def _list(t):
    return t.detach().tolist()


def record() -> dict:
    out = {}
    lstm = _seeded_module(
        torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=torch.float64), 1
    )
    x = _t(seeded((5, 2, 3), 2)).requires_grad_()
    y, (h, c) = lstm(x)
    (y * _t(seeded(tuple(y.shape), 3))).sum().backward()
    out["lstm"] = {
        "output": _list(y),
        "h_n": _list(h),
        "c_n": _list(c),
        "input_grad": _list(x.grad),
    }

    gru = _seeded_module(torch.nn.GRU(3, 4, batch_first=True, dtype=torch.float64), 4)
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        _t(seeded((2, 4, 3), 5)), [2, 4], batch_first=True, enforce_sorted=False
    )
    y, h = gru(packed)
    padded, _ = torch.nn.utils.rnn.pad_packed_sequence(y, batch_first=True)
    out["gru_packed"] = {"output": _list(padded), "h_n": _list(h)}

    layer = _seeded_module(
        torch.nn.TransformerDecoderLayer(
            4,
            2,
            8,
            dropout=0.0,
            activation="gelu",
            norm_first=True,
            batch_first=True,
            dtype=torch.float64,
        ),
        6,
    )
    tgt, mem = _t(seeded((2, 3, 4), 7)), _t(seeded((2, 5, 4), 8))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    y = layer(tgt, mem, tgt_mask=mask, memory_key_padding_mask=kpm)
    out["transformer_decoder_layer"] = {"output": _list(y)}

    xt = _t(seeded((1, 4, 3, 3), 9))
    wt = _t(seeded((4, 3, 3, 2), 10))
    y = F.conv_transpose2d(
        xt, wt, None, stride=2, padding=1, output_padding=1, groups=2, dilation=2
    )
    out["conv_transpose2d"] = {"output": _list(y)}

    xi = _t(seeded((1, 2, 3, 4), 11))
    out["interpolate"] = {
        "bilinear": _list(F.interpolate(xi, scale_factor=1.7, mode="bilinear")),
        "bicubic_corners": _list(
            F.interpolate(xi, size=(5, 7), mode="bicubic", align_corners=True)
        ),
        "nearest": _list(F.interpolate(xi, size=(4, 7), mode="nearest")),
    }

    lp = _t(seeded((6, 2, 4), 12)).log_softmax(2).detach().requires_grad_()
    targets = torch.tensor([[1, 2, 2], [3, 1, 0]])
    loss = F.ctc_loss(lp, targets, [6, 5], [3, 2], reduction="sum")
    loss.backward()
    out["ctc"] = {"loss": loss.item(), "grad": _list(lp.grad)}

    xm = _t(seeded((3, 4), 13))
    out["margin"] = {
        "multi_margin_p2": F.multi_margin_loss(xm, torch.tensor([0, 3, 1]), p=2, margin=0.7).item(),
        "multilabel_margin": _list(
            F.multilabel_margin_loss(
                xm, torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]]), reduction="none"
            )
        ),
    }
    return out


if __name__ == "__main__":
    with open(EXPECTED, "w") as f:
        json.dump(record(), f)
        f.write("\n")
    print(f"wrote {EXPECTED}")
